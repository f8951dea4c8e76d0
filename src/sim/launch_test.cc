// Launch files (launch.h): the simulated deployment's dtype, parallelism and budgets are all
// in them, as sh that continues its lines and YAML TensorRT-LLM reads. Flag names against the
// engines' own: launch_flags_test.cc.
#include "chalk/sim/launch.h"

#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

TEST(Launch, TheSimulatedDtypeParallelismAndBudgetsAreAllInTheFiles) {
  LaunchTarget t = launch_test_target();
  t.moe = true;
  t.weights = DType::fp8;  // over a bf16 checkpoint
  t.kv = DType::fp8;
  const PlanCandidate c = launch_dp_attention_moe();
  const auto l = launch_files(c, t);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].engine, "vllm");  // the engine simulated comes first
  EXPECT_TRUE(l[0].simulated);
  // MoE, attention TP2 x 4 groups, experts EP8: vLLM TP2 x DP4 with expert parallelism
  // (EP = TP x DP = 8), online FP8 weights, FP8 KV, memory 1 - 0.10, the cap and budget;
  // vLLM applies them per DP rank: 256 / 4 = 64 sequences and 8,192 / 4 = 2,048 tokens.
  const std::string v = launch_file_at(l, "vllm/serve.sh")->text;
  for (const char* want : {"MODEL=\"${MODEL:-org/m}\"", "exec vllm serve \"$MODEL\" \\\n", "--tensor-parallel-size 2 \\\n  --data-parallel-size 4 \\\n  --enable-expert-parallel \\\n",
                           "--quantization fp8 \\\n", "--kv-cache-dtype fp8 \\\n", "--gpu-memory-utilization 0.9 \\\n", "--max-num-seqs 64 \\\n",
                           "--max-num-batched-tokens 2048 \\\n", "--block-size 16 \\\n", "--enable-chunked-prefill \\\n", "--max-model-len 4096\n",
                           "Run once per replica: 2 replicas x 8 chips"}) {
    EXPECT_NE(v.find(want), std::string::npos) << want << "\n" << v;
  }
  // SGLang: all 8 chips in TP, DP attention over 4 groups, EP8; FP8 E4M3 KV.
  const std::string s = launch_file_at(l, "sglang/serve.sh")->text;
  for (const char* want : {"--model-path \"$MODEL\"", "--tp-size 8 \\\n  --dp-size 4 \\\n  --enable-dp-attention \\\n  --ep-size 8 \\\n", "--quantization fp8",
                           "--kv-cache-dtype fp8_e4m3", "--mem-fraction-static 0.9", "--max-running-requests 256", "--chunked-prefill-size 8192",
                           "--context-length 4096"}) {
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  }
  // vLLM's 16-token blocks were simulated: every engine's file runs them (issue 30).
  EXPECT_NE(s.find("--page-size 16"), std::string::npos) << s;
  EXPECT_NE(launch_file_at(l, "sglang/router.sh")->text.find("--worker-urls \\\n    \"${WORKER_URL_0:-http://localhost:30000}\" \\\n    \"${WORKER_URL_1:-http://localhost:30001}\" \\\n"),
            std::string::npos);
  // TensorRT-LLM cannot run attention TP2 x 4 (its attention DP is TP1 per rank).
  EXPECT_EQ(l[2].engine, "trtllm");
  EXPECT_EQ(l[2].problem, "TensorRT-LLM cannot run this layout: attention TP2 x 4 (enable_attention_dp runs attention TP1 on every rank)");
  EXPECT_TRUE(l[2].files.empty());
}

TEST(Launch, TensorRtLlmSettingsAreARealYamlFile) {
  LaunchTarget t = launch_test_target();
  t.moe = true;
  t.kv = DType::fp8;
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 1;  // attention DP over all 8 chips
  c.parallel.tp_ffn = 1;
  const auto l = launch_files(c, t);
  const std::string serve = launch_file_at(l, "trtllm/serve.sh")->text;
  // Review 7 H1: under enable_attention_dp TensorRT-LLM caps each of the 8 ranks, so the
  // replica's 256 sequences and 8,192 tokens a step are 256 / 8 = 32 and 8,192 / 8 = 1,024 per
  // rank (the file once wrote 256 and 8,192: 8x the simulated).
  for (const char* want : {"--tp_size 8 \\\n  --ep_size 8 \\\n", "--max_batch_size 32 \\\n", "--max_num_tokens 1024 \\\n", "--max_seq_len 4096", "--enable_chunked_prefill",
                           "caps each of the 8 attention-DP ranks",
                           "--extra_llm_api_options \"$(dirname \"$0\")/extra_llm_api_options.yaml\"\n"}) {
    EXPECT_NE(serve.find(want), std::string::npos) << want << "\n" << serve;
  }
  // The KV cache's share of what 35 GB of weights leave of 80 GB: (72 - 35) / (80 - 35) = 0.822.
  const std::string y = launch_file_at(l, "trtllm/extra_llm_api_options.yaml")->text;
  const auto keys = launch_yaml_keys(y);
  const std::map<std::string, std::string> kv(keys.begin(), keys.end());
  EXPECT_EQ(kv.at("enable_attention_dp"), "true");
  EXPECT_EQ(kv.at("kv_cache_config.dtype"), "fp8");
  EXPECT_EQ(kv.at("kv_cache_config.free_gpu_memory_fraction"), "0.822");
  EXPECT_EQ(kv.at("scheduler_config.capacity_scheduler_policy"), "MAX_UTILIZATION");  // KV on demand, as simulated
  // Reserved to completion: TensorRT-LLM's GUARANTEED_NO_EVICT; vLLM says it has no flag.
  c.reserve_to_completion = true;
  const auto r = launch_files(c, t);
  EXPECT_NE(launch_file_at(r, "trtllm/extra_llm_api_options.yaml")->text.find("capacity_scheduler_policy: GUARANTEED_NO_EVICT\n"), std::string::npos);
  EXPECT_NE(launch_file_at(r, "vllm/serve.sh")->text.find("# Simulated with KV reserved to completion at admission; vLLM takes KV blocks on demand"),
            std::string::npos);
}

TEST(Launch, DisaggregatedPlansGetTheRouterEachEngineDocuments) {
  LaunchTarget t = launch_test_target();
  PlanCandidate c;
  c.disaggregated = true;
  c.replica_chips = 2, c.replicas = 1, c.decode_replica_chips = 4, c.decode_replicas = 2, c.chips = 10;
  c.max_sequences = 128, c.max_batched_tokens = 8192;
  c.layout = "TP2", c.decode_layout = "TP4";
  c.parallel.tp_attention = 2, c.parallel.tp_ffn = 2;
  c.decode_parallel.tp_attention = 4, c.decode_parallel.tp_ffn = 4;
  const auto l = launch_files(c, t);
  const std::string pre = launch_file_at(l, "vllm/prefill.sh")->text, dec = launch_file_at(l, "vllm/decode.sh")->text;
  EXPECT_NE(pre.find("--tensor-parallel-size 2 \\\n"), std::string::npos) << pre;
  EXPECT_NE(dec.find("--tensor-parallel-size 4 \\\n"), std::string::npos) << dec;
  EXPECT_NE(dec.find("--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'\n"), std::string::npos) << dec;
  const std::string proxy = launch_file_at(l, "vllm/proxy.sh")->text;
  // Review 7 L1: the proxy's flags are toy_proxy_server.py's (vllm.txt's `proxy` @ 030ea52), not arg_utils.py's.
  EXPECT_NE(proxy.find("# Flags checked against github.com/vllm-project/vllm @ 030ea52effcb05071543c8c42b8f0145e94cee43"), std::string::npos) << proxy;
  EXPECT_EQ(proxy.find("arg_utils.py"), std::string::npos) << proxy;
  EXPECT_NE(proxy.find("--prefiller-ports \\\n    \"${PREFILL_PORT_0:-8100}\" \\\n  --decoder-hosts"), std::string::npos) << proxy;
  EXPECT_NE(proxy.find("--decoder-ports \\\n    \"${DECODE_PORT_0:-8200}\" \\\n    \"${DECODE_PORT_1:-8201}\"\n"), std::string::npos) << proxy;
  const std::string router = launch_file_at(l, "sglang/router.sh")->text;
  EXPECT_NE(router.find("--pd-disaggregation \\\n  --prefill \"${PREFILL_URL_0:-http://localhost:30000}\" \"${PREFILL_BOOTSTRAP_PORT_0:-8998}\" \\\n  --decode "), std::string::npos) << router;
  EXPECT_NE(launch_file_at(l, "sglang/decode.sh")->text.find("--disaggregation-mode decode"), std::string::npos);
  const auto d = launch_yaml_keys(launch_file_at(l, "trtllm/disagg.yaml")->text);
  const std::map<std::string, std::string> m(d.begin(), d.end());
  EXPECT_EQ(m.at("context_servers.num_instances"), "1");
  EXPECT_EQ(m.at("generation_servers.num_instances"), "2");
  EXPECT_NE(launch_file_at(l, "trtllm/decode.yaml")->text.find("cache_transceiver_config:\n  backend: DEFAULT\n"), std::string::npos);
  EXPECT_NE(launch_file_at(l, "trtllm/router.sh")->text.find("exec trtllm-serve disaggregated \\\n  -c \"$(dirname \"$0\")/disagg.yaml\"\n"), std::string::npos);
  // The same deployment for Kubernetes as Dynamo writes it: a frontend, a prefill and a decode
  // worker service running dynamo.vllm with the engine's arguments.
  const std::string k = launch_file_at(l, "vllm/dynamo.yaml")->text;
  for (const char* want : {"kind: DynamoGraphDeployment\n", "    VllmPrefillWorker:\n", "      subComponentType: prefill\n      replicas: 1\n",
                           "          gpu: \"2\"\n", "      subComponentType: decode\n      replicas: 2\n", "          gpu: \"4\"\n",
                           "            - --model\n            - \"org/m\"\n", "            - --tensor-parallel-size\n            - \"4\"\n",
                           "            - --is-prefill-worker\n"}) {
    EXPECT_NE(k.find(want), std::string::npos) << want << "\n" << k;
  }
  EXPECT_EQ(k.find("--kv-transfer-config"), std::string::npos) << k;  // Dynamo sets NIXL itself
  // A replica over one 8-GPU pod, or a model without a repo id: no manifest.
  c.decode_replica_chips = 16, c.decode_parallel.tp_attention = 16, c.decode_parallel.tp_ffn = 16;
  EXPECT_EQ(launch_file_at(launch_files(c, t), "vllm/dynamo.yaml"), nullptr);
  c.decode_replica_chips = 4, c.decode_parallel.tp_attention = 4, c.decode_parallel.tp_ffn = 4;
  // A GB200 NVL72 host (compute tray) has 4 GPUs: the 4-chip decode replica still fits one pod,
  // an 8-chip one would ask a pod for 8 GPUs no node has, so no manifest.
  t.chips_per_host = 4;
  EXPECT_NE(launch_file_at(launch_files(c, t), "vllm/dynamo.yaml"), nullptr);
  c.decode_replica_chips = 8, c.decode_parallel.tp_attention = 8, c.decode_parallel.tp_ffn = 8;
  EXPECT_EQ(launch_file_at(launch_files(c, t), "vllm/dynamo.yaml"), nullptr);
  t.chips_per_host = 8;
  EXPECT_NE(launch_file_at(launch_files(c, t), "vllm/dynamo.yaml"), nullptr);
  c.decode_replica_chips = 4, c.decode_parallel.tp_attention = 4, c.decode_parallel.tp_ffn = 4;
  t.model = "/models/m";
  EXPECT_EQ(launch_file_at(launch_files(c, t), "vllm/dynamo.yaml"), nullptr);
}

TEST(Launch, LinesContinueWithABackslashAndOnlyTheLastEndsTheCommand) {
  LaunchTarget t = launch_test_target();
  const auto l = launch_files(launch_dp_attention_moe(), t);
  for (const auto& e : l) {
    for (const auto& f : e.files) {
      if (!f.executable) continue;
      EXPECT_EQ(f.text.rfind("#!/bin/sh\n", 0), 0u) << f.path;
      const auto at = f.text.find("\nexec ");
      ASSERT_NE(at, std::string::npos) << f.path;
      std::istringstream in(f.text.substr(at + 1));
      std::vector<std::string> lines;
      for (std::string x; std::getline(in, x);) lines.push_back(x);
      ASSERT_GE(lines.size(), 2u) << f.path;
      for (std::size_t i = 0; i + 1 < lines.size(); ++i) EXPECT_EQ(lines[i].substr(lines[i].size() - 2), " \\") << f.path << ": " << lines[i];
      EXPECT_NE(lines.back().back(), '\\') << f.path;
    }
  }
}

TEST(Launch, EveryLineFitsChalksHundredColumns) {
  // chalk's text output fits 100 columns (apps/chalk/wrap.h); the files it prints do too, so
  // the wrapper never breaks a line of them. A disaggregated MoE plan with every note.
  LaunchTarget t = launch_test_target();
  t.model = "meta-llama/Llama-4-Maverick-17B-128E-Instruct";
  t.model_name = "llama-4-maverick-17b-128e";
  t.system_name = "gb200-nvl72";
  t.moe = true;
  t.weights = DType::nvfp4;
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 1, c.parallel.tp_ffn = 1;
  c.replicas = 12;
  std::vector<EngineLaunch> all = launch_files(c, t);  // aggregated: SGLang's router over 12 replicas
  c.disaggregated = true, c.decode_replica_chips = 8, c.decode_replicas = 12, c.decode_parallel = c.parallel;
  c.reserve_to_completion = true;
  for (auto& e : launch_files(c, t)) all.push_back(e);
  int lines = 0;
  for (const auto& e : all) {
    for (const auto& f : e.files) {
      std::istringstream in(f.text);
      for (std::string x; std::getline(in, x); ++lines) EXPECT_LE(x.size(), 100u) << f.path << ": " << x;
    }
  }
  EXPECT_GT(lines, 250);
}

TEST(Launch, Fp8OverA16BitRepositoryIsSaidAndAKnownFp8CheckpointServed) {
  // Review 7 M4: the plan simulated fp8 over a bf16 repository. vLLM and SGLang quantize at
  // load (--quantization fp8) and say so; TensorRT-LLM reads the quantization from the
  // checkpoint, so its MODEL defaults to the fp8 checkpoint chalk knows (served.json), named.
  LaunchTarget t = launch_test_target();
  t.weights = DType::fp8;
  t.fp8_checkpoint = "org/m-FP8";
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel = {};
  c.parallel.tp_attention = 8, c.parallel.tp_ffn = 8;
  const auto l = launch_files(c, t);
  for (const char* path : {"vllm/serve.sh", "sglang/serve.sh"}) {
    const std::string v = launch_file_at(l, path)->text;
    EXPECT_NE(v.find("\nMODEL=\"${MODEL:-org/m}\"\n"), std::string::npos) << v;
    EXPECT_NE(v.find("# The repository's weights are bf16 and chalk simulated fp8:"), std::string::npos) << v;
    EXPECT_NE(v.find("--quantization fp8"), std::string::npos) << v;
  }
  const std::string trt = launch_file_at(l, "trtllm/serve.sh")->text;
  EXPECT_NE(trt.find("\nMODEL=\"${MODEL:-org/m-FP8}\"\n"), std::string::npos) << trt;
  EXPECT_NE(trt.find("checkpoint: MODEL\n# defaults to org/m-FP8, an fp8 checkpoint of org/m"), std::string::npos) << trt;  // wrapped at 98
  // The checkpoint's own format simulated: no note, no other default.
  t.weights.reset();
  const std::string plain = launch_file_at(launch_files(c, t), "trtllm/serve.sh")->text;
  EXPECT_NE(plain.find("\nMODEL=\"${MODEL:-org/m}\"\n"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("fp8 checkpoint"), std::string::npos) << plain;
}

TEST(Launch, WeightsTheEngineCannotQuantizeOnlineNeedAStatedCheckpoint) {
  LaunchTarget t = launch_test_target();
  t.weights = DType::nvfp4;  // over a bf16 checkpoint: no engine quantizes to NVFP4 on load here
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel = {};
  c.parallel.tp_attention = 8, c.parallel.tp_ffn = 8;
  auto l = launch_files(c, t);
  const std::string v = launch_file_at(l, "vllm/serve.sh")->text;
  EXPECT_NE(v.find("\nMODEL=\"${MODEL:?set MODEL to a checkpoint with nvfp4 weights}\"\n"), std::string::npos) << v;
  EXPECT_NE(v.find("# chalk simulated nvfp4 weights and vLLM quantizes online only to fp8, from a 16-bit"), std::string::npos) << v;
  EXPECT_EQ(v.find("--quantization"), std::string::npos);
  // TensorRT-LLM reads the quantization from the checkpoint, even for FP8.
  t.weights = DType::fp8;
  l = launch_files(c, t);
  EXPECT_NE(launch_file_at(l, "trtllm/serve.sh")->text.find("MODEL=\"${MODEL:?set MODEL to a checkpoint with fp8 weights}\""), std::string::npos);
  EXPECT_NE(launch_file_at(l, "trtllm/serve.sh")->text.find("name a checkpoint of org/m in fp8 (chalk knows none)."),
            std::string::npos);
  EXPECT_NE(launch_file_at(l, "vllm/serve.sh")->text.find("--quantization fp8"), std::string::npos);
  // No repository known: the scripts ask for one.
  t.weights.reset();
  t.model.reset();
  l = launch_files(c, t);
  EXPECT_NE(launch_file_at(l, "sglang/serve.sh")->text.find("MODEL=\"${MODEL:?set MODEL to the HF repo id or local directory of m}\""), std::string::npos);
  // A KV format an engine lacks: that engine writes nothing and says why.
  t.kv = DType::int8;
  l = launch_files(c, t);
  EXPECT_EQ(l[0].problem, "vLLM has no int8 KV cache (--kv-cache-dtype takes auto, fp8, fp8_e5m2, fp8_e4m3)");
  EXPECT_TRUE(l[0].files.empty());
}

TEST(Launch, EachEngineStatesTheSimulatedLayoutOrSaysItCannot) {
  LaunchTarget t = launch_test_target();
  t.moe = true;
  PlanCandidate c = launch_dp_attention_moe();
  c.replicas = 1;
  // Experts EP4 x TP2 on 8 chips: vLLM's expert parallelism spans all TP x DP ranks.
  c.parallel = {};
  c.parallel.tp_attention = 8, c.parallel.tp_ffn = 8, c.parallel.ep = 4, c.parallel.tp_expert = 2;
  auto l = launch_files(c, t);
  EXPECT_EQ(l[0].problem, "vLLM cannot run this layout: EP4 over 8 chips (--enable-expert-parallel spreads experts over all TP x DP ranks)");
  EXPECT_NE(launch_file_at(l, "trtllm/serve.sh")->text.find("--tp_size 8 \\\n  --ep_size 4 \\\n"), std::string::npos);
  EXPECT_EQ(launch_file_at(l, "sglang/router.sh"), nullptr);  // one replica: no router
  // A dense model's attention TP1 x 3 under FFN TP3: no engine's flags say it.
  t.moe = false;
  c.replica_chips = 3;
  c.parallel = {};
  c.parallel.tp_attention = 1, c.parallel.tp_ffn = 3;
  l = launch_files(c, t);
  for (const auto& e : l) EXPECT_NE(e.problem.find("cannot run this layout: attention TP1 x 3 under one FFN TP3"), std::string::npos) << e.engine;
}

// The simulated KV block size reaches every engine (issue 30: it was vLLM's alone), within
// each engine's own rule: vLLM's 16, 32, 64, 128 (multiples of 16); SGLang any page size;
// TensorRT-LLM a power of two above 1. Where an engine has no such block, a comment says so.
TEST(Launch, EveryEngineRunsTheSimulatedKvBlock) {
  LaunchTarget t = launch_test_target();
  PlanCandidate c = launch_dp_attention_moe();
  t.moe = true;
  c.parallel.tp_attention = 1;  // attention DP: a layout all three engines run
  c.parallel.tp_ffn = 1;
  t.policy = engine_policy("trtllm");  // 32-token blocks
  auto l = launch_files(c, t);
  EXPECT_NE(launch_file_at(l, "vllm/serve.sh")->text.find("--block-size 32 \\\n"), std::string::npos);
  EXPECT_NE(launch_file_at(l, "sglang/serve.sh")->text.find("--page-size 32 \\\n"), std::string::npos);
  EXPECT_NE(launch_file_at(l, "trtllm/extra_llm_api_options.yaml")->text.find("  tokens_per_block: 32\n"), std::string::npos);
  t.policy.block_size = 24;
  l = launch_files(c, t);
  const std::string v = launch_file_at(l, "vllm/serve.sh")->text, y = launch_file_at(l, "trtllm/extra_llm_api_options.yaml")->text;
  EXPECT_EQ(v.find("  --block-size "), std::string::npos) << v;  // the comment names the flag; no argument line
  EXPECT_NE(v.find("Simulated with 24-token KV blocks; vLLM's attention backends take 16, 32, 64"), std::string::npos) << v;
  EXPECT_NE(launch_file_at(l, "sglang/serve.sh")->text.find("--page-size 24 \\\n"), std::string::npos);
  EXPECT_EQ(y.find("tokens_per_block:"), std::string::npos) << y;
  EXPECT_NE(y.find("# 24-token KV blocks simulated; tokens_per_block takes powers of two > 1"), std::string::npos) << y;
  EXPECT_GT(launch_check_against_engines(l), 30);
  // SGLang's 1-token pages (review 2026-12-06): vLLM's flag accepts 1, but its CUDA
  // attention backends raise "Block size must be a multiple of 16", so vLLM gets none.
  t.policy = engine_policy("sglang");
  ASSERT_EQ(t.policy.block_size, 1);
  l = launch_files(c, t);
  const std::string v1 = launch_file_at(l, "vllm/serve.sh")->text;
  EXPECT_EQ(v1.find("  --block-size "), std::string::npos) << v1;
  EXPECT_NE(v1.find("Simulated with 1-token KV blocks"), std::string::npos) << v1;
  EXPECT_NE(launch_file_at(l, "sglang/serve.sh")->text.find("--page-size 1 \\\n"), std::string::npos);
}

}  // namespace
}  // namespace chalk::sim
