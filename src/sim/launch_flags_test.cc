// Launch files (launch.h): every flag, YAML key and choice value they write is one the engine
// defines (tests/data/engine-args/, read from each engine's own argument definitions), in
// hand-made deployments and in a plan's own choice; and (review 10 H1) replicas that share a
// host bind distinct ports without edits: the scripts run under /bin/sh with `exec` turned into
// `echo`, so the tests read the ports each engine would get.
#include "chalk/sim/launch.h"

#include <cstdio>
#include <fstream>
#include <regex>
#include <tuple>

#include <unistd.h>

#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

TEST(Launch, EveryFlagKeyAndChoiceWrittenIsOneTheEngineDefines) {
  int checked = 0;
  LaunchTarget t = launch_test_target();
  PlanCandidate c = launch_dp_attention_moe();
  t.moe = true;
  // Aggregated, online FP8 weights and FP8 KV, DP attention with two micro-batches.
  t.weights = DType::fp8;
  t.kv = DType::fp8;
  c.parallel.tp_attention = 1;
  c.parallel.tp_ffn = 1;
  c.parallel.overlap_micro_batches = true;
  t.eplb = true;  // EPLB simulated: each engine's load-balancer flags (review 4 M4)
  const auto agg = launch_files(c, t);
  checked += launch_check_against_engines(agg);
  for (const auto& [file, want] : std::vector<std::pair<std::string, std::string>>{
           {"vllm/serve.sh", "--enable-eplb \\\n  --num-redundant-experts 8 \\\n"},
           {"sglang/serve.sh", "--enable-eplb \\\n  --ep-num-redundant-experts 8 \\\n"}}) {
    const auto* f = launch_file_at(agg, file);
    ASSERT_NE(f, nullptr) << file;
    EXPECT_NE(f->text.find(want), std::string::npos) << file << "\n" << f->text;
  }
  t.eplb = false;
  // Disaggregated, KV reserved to completion, whole prompts, SGLang simulated, NVFP4 KV.
  c.parallel.overlap_micro_batches = false;
  c.disaggregated = true;
  c.decode_replica_chips = 8;
  c.decode_replicas = 3;
  c.decode_parallel = c.parallel;
  c.reserve_to_completion = true;
  t.policy = engine_policy("sglang");
  t.policy.chunked_prefill = false;
  t.kv = DType::nvfp4;
  checked += launch_check_against_engines(launch_files(c, t));
  t.kv = DType::bf16;
  t.policy = engine_policy("trtllm");
  const auto l = launch_files(c, t);
  checked += launch_check_against_engines(l);
  ASSERT_EQ(l.size(), 3u);
  for (const auto& e : l) EXPECT_TRUE(e.problem.empty()) << e.engine << ": " << e.problem;
  EXPECT_NE(launch_file_at(l, "vllm/proxy.sh"), nullptr);
  ASSERT_NE(launch_file_at(l, "vllm/decode.sh"), nullptr);
  EXPECT_NE(launch_file_at(l, "vllm/decode.sh")->text.find("# Run once per decode replica: 3 replicas x 8 chips"), std::string::npos)
      << launch_file_at(l, "vllm/decode.sh")->text;  // review 4 L2
  EXPECT_NE(launch_file_at(l, "sglang/router.sh"), nullptr);
  EXPECT_NE(launch_file_at(l, "trtllm/disagg.yaml"), nullptr);
  EXPECT_GE(checked, 150);
}

TEST(Launch, APlansChoiceLaunchesWithItsOwnCapAndLayout) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  TrafficSpec ts;
  ts.rate_per_s = 20;
  ts.requests = 300;
  ts.input = {LengthDist::Kind::fixed, 1024, 1, 0, 0};
  ts.output = {LengthDist::Kind::fixed, 128, 1, 0, 0};
  const auto reqs = generate_traffic(ts);
  PlanOptions o;
  o.chip_budget = 4;
  o.slo.ttft_s = 0.5;
  o.aggregated = true;
  o.disaggregated = false;
  const PlanReport r = plan_deployment(m, s, base, reqs, o);
  ASSERT_TRUE(r.best.has_value()) << r.why_none;
  const PlanCandidate& b = r.evaluated[*r.best];
  LaunchTarget t = launch_test_target();
  t.model = "meta-llama/Meta-Llama-3.1-8B";
  const auto l = launch_files(b, t);
  const std::string v = launch_file_at(l, "vllm/serve.sh")->text;
  EXPECT_NE(v.find("--tensor-parallel-size " + std::to_string(b.parallel.tp_attention > 0 ? b.parallel.tp_attention : b.replica_chips) + " \\\n"),
            std::string::npos) << v;
  EXPECT_NE(v.find("--max-num-seqs " + std::to_string(b.max_sequences) + " \\\n"), std::string::npos) << v;
  EXPECT_NE(v.find("--max-num-batched-tokens 8192 \\\n"), std::string::npos) << v;
  EXPECT_GT(launch_check_against_engines(l), 30);
}

TEST(Launch, OnlyTheGpusEachEngineRunsOnGetFiles) {
  // TPUs, Trainium and Gaudi run plugin builds whose flags chalk does not check: no engine
  // writes files, each says why. TensorRT-LLM needs an NVIDIA GPU, and FP8 tensor cores for
  // fp8 (an A100 has none); vLLM and SGLang run on AMD's ROCm builds, without Dynamo's CUDA
  // images.
  EXPECT_EQ(launch_accelerator("tpu-v5e"), "");
  EXPECT_EQ(launch_accelerator("gaudi-3"), "");
  EXPECT_EQ(launch_accelerator("trn2"), "");
  EXPECT_EQ(launch_accelerator("mi300x"), "amd");
  EXPECT_EQ(launch_accelerator("h100-sxm"), "nvidia");
  const PlanCandidate c = launch_dp_attention_moe();
  LaunchTarget tpu = launch_test_target();
  tpu.system_name = "tpu-v5e";
  tpu.accelerator = "";
  tpu.moe = true;
  for (const auto& e : launch_files(c, tpu)) {
    EXPECT_TRUE(e.files.empty()) << e.engine;
    EXPECT_NE(e.problem.find("plugin build"), std::string::npos) << e.problem;
  }
  LaunchTarget amd = launch_test_target();
  amd.system_name = "mi300x";
  amd.accelerator = "amd";
  amd.moe = true;
  for (const auto& e : launch_files(c, amd)) {
    if (e.engine == "trtllm") {
      EXPECT_TRUE(e.files.empty());
      EXPECT_EQ(e.problem, "TensorRT-LLM runs on NVIDIA GPUs only, not mi300x");
    } else {
      EXPECT_FALSE(e.files.empty()) << e.engine << ": " << e.problem;
      for (const auto& f : e.files) EXPECT_FALSE(f.path.ends_with("dynamo.yaml")) << f.path;
    }
  }
  LaunchTarget a100 = launch_test_target();
  a100.system_name = "a100-80gb";
  a100.chip_has_fp8 = false;
  a100.moe = true;
  a100.kv = DType::fp8;
  for (const auto& e : launch_files(c, a100)) {
    if (e.engine == "trtllm") EXPECT_NE(e.problem.find("FP8 tensor cores"), std::string::npos) << e.problem;
    else EXPECT_FALSE(e.files.empty()) << e.engine << ": " << e.problem;
  }
}

}  // namespace
}  // namespace chalk::sim

namespace chalk::sim {
namespace {

using namespace launch_testing;

TEST(Launch, EagerSimulationLaunchesEagerEngines) {
  // A plan simulated with --enforce-eager launches each engine without CUDA graphs: vLLM
  // --enforce-eager; SGLang --disable-prefill-cuda-graph and --disable-decode-cuda-graph
  // (its disable_cuda_graph field has no flag); TensorRT-LLM cuda_graph_config: null. Each
  // is one the engine defines (tests/data/engine-args/).
  LaunchTarget t = launch_test_target();
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 8;
  c.parallel.tp_ffn = 8;
  c.parallel.ep = 1;
  c.parallel.tp_expert = 8;
  const auto graphs = launch_files(c, t);
  t.enforce_eager = true;
  const auto eager = launch_files(c, t);
  EXPECT_GE(launch_check_against_engines(eager), 20);
  auto text = [](const std::vector<EngineLaunch>& l, const std::string& path) {
    const LaunchFile* f = launch_file_at(l, path);
    return f ? f->text : std::string();
  };
  EXPECT_EQ(text(graphs, "vllm/serve.sh").find("--enforce-eager"), std::string::npos);
  EXPECT_NE(text(eager, "vllm/serve.sh").find("--enforce-eager"), std::string::npos);
  EXPECT_NE(text(eager, "sglang/serve.sh").find("--disable-decode-cuda-graph"), std::string::npos);
  EXPECT_NE(text(eager, "sglang/serve.sh").find("--disable-prefill-cuda-graph"), std::string::npos);
  EXPECT_EQ(text(graphs, "trtllm/extra_llm_api_options.yaml").find("cuda_graph_config"), std::string::npos);
  EXPECT_NE(text(eager, "trtllm/extra_llm_api_options.yaml").find("cuda_graph_config: null"), std::string::npos);
}


TEST(Launch, APipelineLaunchesItsStagesWithEachEnginesFlag) {
  // Llama 3.1 405B bf16 on 16 H100 as `plan` chooses it, PP2 x (TP8): each engine states 2
  // stages of TP8 (vLLM --pipeline-parallel-size 2 --tensor-parallel-size 8, SGLang
  // --tp-size 8 --pp-size 2, trtllm-serve --tp_size 8 --pp_size 2), never TP16 over two
  // hosts; every flag is one the engine defines (tests/data/engine-args/).
  LaunchTarget t = launch_test_target();
  PlanCandidate c;
  c.replica_chips = 16;
  c.replicas = 1;
  c.chips = 16;
  c.pp = 2;
  c.max_sequences = 256;
  c.max_batched_tokens = 8192;
  c.layout = "PP2 x (TP8)";
  c.parallel.tp_attention = 8;
  c.parallel.tp_ffn = 8;
  c.weight_bytes_per_chip = 50.8e9;
  const auto l = launch_files(c, t);
  EXPECT_GE(launch_check_against_engines(l), 20);
  auto text = [&](const std::string& path) {
    const LaunchFile* f = launch_file_at(l, path);
    return f ? f->text : std::string();
  };
  const std::string v = text("vllm/serve.sh"), g = text("sglang/serve.sh"), r = text("trtllm/serve.sh");
  EXPECT_NE(v.find("--pipeline-parallel-size 2 \\\n  --tensor-parallel-size 8 \\\n"), std::string::npos) << v;
  EXPECT_NE(g.find("--tp-size 8 \\\n"), std::string::npos) << g;
  EXPECT_NE(g.find("--pp-size 2 \\\n"), std::string::npos) << g;
  EXPECT_NE(r.find("--tp_size 8 \\\n"), std::string::npos) << r;
  EXPECT_NE(r.find("--pp_size 2 \\\n"), std::string::npos) << r;
  EXPECT_EQ(v.find("--tensor-parallel-size 16"), std::string::npos) << v;
}

/// What /bin/sh prints for `script` with REPLICA=`replica` (none when < 0) and `env` (VAR=value
/// words) set: its command line after "ARGS",
/// then "SIDE=" and the NIXL side-channel port it exports ("" when none).
std::string launch_ports_run(const std::string& script, int64_t replica, const std::string& env = "") {
  std::string text = std::regex_replace(script, std::regex("(^|\n)exec "), "$1echo ARGS ");
  text += "echo \"SIDE=${VLLM_NIXL_SIDE_CHANNEL_PORT:-}\"\n";
  // One file a process: ctest runs each test in its own process, several at once.
  const std::string path = ::testing::TempDir() + "chalk_launch_ports_" + std::to_string(::getpid()) + ".sh";
  std::ofstream(path) << text;
  const std::string cmd = "env -i PATH=/usr/bin:/bin " + env + (replica >= 0 ? " REPLICA=" + std::to_string(replica) : std::string()) + " sh " + path;
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (fgets(buf, sizeof buf, f)) out += buf;
    EXPECT_EQ(pclose(f), 0) << out;
  }
  return out;
}

/// The first number after `key` in `out`, or -1.
int64_t launch_ports_number(const std::string& out, const std::string& key) {
  std::smatch m;
  return std::regex_search(out, m, std::regex(key + "[ \"]*([0-9]+)")) ? std::stoll(m[1]) : -1;
}

/// The review's plan: llama-3.1-70b on H100, 7 prefill replicas of TP2 and 1 decode replica of
/// TP4, 18 GPUs over 3 hosts of 8, so at least one host runs several replicas.
PlanCandidate launch_ports_review10_plan() {
  PlanCandidate c;
  c.disaggregated = true;
  c.replica_chips = 2, c.replicas = 7, c.decode_replica_chips = 4, c.decode_replicas = 1, c.chips = 18;
  c.max_sequences = 128, c.max_batched_tokens = 8192;
  c.layout = "TP2", c.decode_layout = "TP4";
  c.parallel.tp_attention = 2, c.parallel.tp_ffn = 2;
  c.decode_parallel.tp_attention = 4, c.decode_parallel.tp_ffn = 4;
  return c;
}

TEST(LaunchPorts, ReplicasSharingAHostBindDistinctPortsWithoutEdits) {
  const PlanCandidate c = launch_ports_review10_plan();
  const auto l = launch_files(c, launch_test_target());
  for (const std::string engine : {"vllm", "sglang", "trtllm"}) {
    std::map<int64_t, std::string> bound;  // port -> the replica binding it
    std::vector<int64_t> prefill_port, prefill_bootstrap, decode_port;
    for (const auto& [role, n, chips] : {std::tuple{std::string("prefill"), c.replicas, c.replica_chips},
                                         std::tuple{std::string("decode"), c.decode_replicas, c.decode_replica_chips}}) {
      const LaunchFile* f = launch_file_at(l, engine + "/" + role + ".sh");
      ASSERT_NE(f, nullptr) << engine << " " << role;
      for (int64_t i = 0; i < n; ++i) {
        const std::string out = launch_ports_run(f->text, i);
        const std::string who = engine + " " + role + " " + std::to_string(i);
        std::vector<int64_t> ports = {launch_ports_number(out, "--port")};
        ASSERT_GT(ports[0], 0) << who << "\n" << out;
        (role == "prefill" ? prefill_port : decode_port).push_back(ports[0]);
        if (const int64_t b = launch_ports_number(out, "--disaggregation-bootstrap-port"); b > 0) {
          ports.push_back(b);
          if (role == "prefill") prefill_bootstrap.push_back(b);
        }
        // vLLM's NixlConnector: the side channel's port and the ones after it, one per GPU
        // (port + dp_rank x tp_size, its workers on the following ones).
        if (const int64_t side = launch_ports_number(out, "SIDE="); side > 0) {
          for (int64_t k = 0; k < chips; ++k) ports.push_back(side + k);
        } else {
          EXPECT_NE(engine, "vllm") << who << ": no VLLM_NIXL_SIDE_CHANNEL_PORT\n" << out;
        }
        for (const int64_t p : ports) {
          const auto [it, fresh] = bound.emplace(p, who);
          EXPECT_TRUE(fresh) << "port " << p << " bound by " << it->second << " and " << who;
        }
      }
    }
    // SGLang: every prefill server has its own bootstrap port; the router gives each one's.
    if (engine == "sglang") {
      ASSERT_EQ(prefill_bootstrap.size(), 7u);
      const std::string router = launch_ports_run(launch_file_at(l, "sglang/router.sh")->text, -1);
      for (int64_t i = 0; i < c.replicas; ++i) {
        const std::string want = "--prefill http://localhost:" + std::to_string(prefill_port[i]) + " " + std::to_string(prefill_bootstrap[i]) + " ";
        EXPECT_NE(router.find(want), std::string::npos) << want << "\n" << router;
      }
      EXPECT_NE(router.find("--decode http://localhost:" + std::to_string(decode_port[0])), std::string::npos) << router;
    }
    // vLLM: the proxy's default ports are the replicas'.
    if (engine == "vllm") {
      const std::string proxy = launch_ports_run(launch_file_at(l, "vllm/proxy.sh")->text, -1, "VLLM_SRC=/vllm");
      std::string ports;
      for (const int64_t p : prefill_port) ports += " " + std::to_string(p);
      EXPECT_NE(proxy.find("--prefiller-ports" + ports + " --decoder-hosts"), std::string::npos) << ports << "\n" << proxy;
      EXPECT_NE(proxy.find("--decoder-ports " + std::to_string(decode_port[0])), std::string::npos) << proxy;
    }
    // TensorRT-LLM: disagg.yaml's urls are the servers' ports.
    if (engine == "trtllm") {
      const std::string y = launch_file_at(l, "trtllm/disagg.yaml")->text;
      for (const int64_t p : prefill_port) EXPECT_NE(y.find("- \"localhost:" + std::to_string(p) + "\""), std::string::npos) << p << "\n" << y;
      EXPECT_NE(y.find("- \"localhost:" + std::to_string(decode_port[0]) + "\""), std::string::npos) << y;
    }
  }
}

// Every environment variable the scripts export is one the engine reads (vllm.txt's `env`
// lines, from vllm/envs.py).
TEST(LaunchPorts, ExportedVariablesAreTheEnginesOwn) {
  const auto l = launch_files(launch_ports_review10_plan(), launch_test_target());
  const LaunchEngineArgs a = launch_engine_args("vllm");
  int checked = 0;
  for (const char* path : {"vllm/prefill.sh", "vllm/decode.sh"}) {
    std::smatch m;
    const std::string text = launch_file_at(l, path)->text;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\nexport ([^\n]*)\n"))) << text;
    std::istringstream in(m[1].str());
    for (std::string name; in >> name; ++checked) {
      EXPECT_TRUE(a.names.count("env") && a.names.at("env").count(name)) << path << ": " << name << " is not in vllm.txt's env lines";
    }
  }
  EXPECT_EQ(checked, 4);  // VLLM_NIXL_SIDE_CHANNEL_PORT and _HOST, in each file
}

}  // namespace
}  // namespace chalk::sim
