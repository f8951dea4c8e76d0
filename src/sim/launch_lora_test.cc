// Launch files of a plan with LoRA adapters (launch.h, LaunchTarget::lora_adapters): vLLM's
// and SGLang's LoRA flags carry the simulated slots, rank and adapter count, each flag and
// choice one the engine defines (tests/data/engine-args/); TensorRT-LLM and Dynamo say why
// they have none.
#include <sstream>

#include <gtest/gtest.h>

#include "chalk/sim/launch.h"
#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

/// A dense 8-chip TP8 replica (two of them), its LoRA run simulated with `slots` HBM slots.
PlanCandidate lora_candidate(int64_t slots) {
  PlanCandidate c = launch_dp_attention_moe();
  c.layout = "TP8";
  c.parallel = {};
  c.parallel.tp_attention = 8;
  c.parallel.tp_ffn = 8;
  c.lora = PlanLora{};
  c.lora->max_loras = slots;
  return c;
}

std::string text_of(const std::vector<EngineLaunch>& l, const std::string& path) {
  const LaunchFile* f = launch_file_at(l, path);
  return f ? f->text : std::string();
}

TEST(LaunchLora, VllmAndSglangServeThePlannedSlotsRankAndAdapters) {
  LaunchTarget t = launch_test_target();
  const auto plain = launch_files(lora_candidate(4), t);
  EXPECT_EQ(text_of(plain, "vllm/serve.sh").find("--enable-lora"), std::string::npos);
  EXPECT_NE(launch_file_at(plain, "vllm/dynamo.yaml"), nullptr);  // a repo id on 8-GPU pods
  // 16 adapters of rank 32, the plan's 4 slots: vLLM --max-loras 4, every adapter in host
  // memory (--max-cpu-loras 16 >= 4); SGLang --max-loras-per-batch 4, --max-loaded-loras 16.
  t.lora_adapters = 16;
  t.lora_rank = 32;
  const auto l = launch_files(lora_candidate(4), t);
  const std::string v = text_of(l, "vllm/serve.sh"), g = text_of(l, "sglang/serve.sh");
  for (const char* want : {"--enable-lora \\\n", "--max-loras 4 \\\n", "--max-lora-rank 32 \\\n", "--max-cpu-loras 16 \\\n",
                           "--lora-modules $LORA_MODULES", "LORA_MODULES=\"${LORA_MODULES:?set LORA_MODULES: the 16 adapters as name=path"}) {
    EXPECT_NE(v.find(want), std::string::npos) << want << "\n" << v;
  }
  for (const char* want : {"--enable-lora \\\n", "--max-loras-per-batch 4 \\\n", "--max-lora-rank 32 \\\n", "--max-loaded-loras 16 \\\n",
                           "--lora-paths $LORA_PATHS", "LORA_PATHS=\"${LORA_PATHS:?"}) {
    EXPECT_NE(g.find(want), std::string::npos) << want << "\n" << g;
  }
  // Every flag (and --max-lora-rank's choice, vLLM's MaxLoRARanks) is the engine's own: 33
  // in vLLM's and SGLang's serve.sh and SGLang's router.sh (TensorRT-LLM writes none).
  EXPECT_EQ(launch_check_against_engines(l), 33);
  for (const auto& e : l) {
    if (e.engine != "trtllm") continue;
    EXPECT_TRUE(e.files.empty());
    EXPECT_NE(e.problem.find("lora_config"), std::string::npos) << e.problem;
  }
  EXPECT_EQ(launch_file_at(l, "vllm/dynamo.yaml"), nullptr);  // the adapters' paths are the operator's
  for (const auto& e : l) {  // chalk's 100 columns, the LoRA lines included
    for (const auto& f : e.files) {
      std::istringstream in(f.text);
      for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 100U) << f.path << ": " << line;
    }
  }
}

TEST(LaunchLora, ARankVllmDoesNotTakeFailsTheChoiceCheck) {
  // The check is live: rank 24 is no MaxLoRARanks value (1, 8, 16, 32, 64, 128, 256, 320, 512).
  const LaunchEngineArgs a = launch_engine_args("vllm");
  ASSERT_TRUE(a.values.count("--max-lora-rank"));
  EXPECT_TRUE(a.values.at("--max-lora-rank").count("320"));
  EXPECT_FALSE(a.values.at("--max-lora-rank").count("24"));
  for (const char* flag : {"--enable-lora", "--max-loras", "--max-lora-rank", "--max-cpu-loras", "--lora-modules"}) {
    EXPECT_TRUE(a.names.at("serve").count(flag)) << flag;
  }
  const LaunchEngineArgs s = launch_engine_args("sglang");
  for (const char* flag : {"--enable-lora", "--max-loras-per-batch", "--max-lora-rank", "--max-loaded-loras", "--lora-paths"}) {
    EXPECT_TRUE(s.names.at("serve").count(flag)) << flag;
  }
}

TEST(LaunchLora, BothPoolsOfAMixedPairServeTheAdapters) {
  // Prefill runs the adapters too (the prompt's projections are adapted): H200 prefill and
  // H100 decode each carry the flags, with the decode candidate's 2 slots.
  PlanCandidate c = lora_candidate(2);
  c.disaggregated = true;
  c.decode_replica_chips = 8;
  c.decode_replicas = 1;
  c.decode_parallel = c.parallel;
  LaunchTarget pre = launch_test_target(), dec = launch_test_target();
  pre.system_name = "h200";
  pre.hbm_bytes_per_chip = 141e9;
  for (LaunchTarget* t : {&pre, &dec}) {
    t->lora_adapters = 3;
    t->lora_rank = 8;
  }
  const auto l = mixed_launch_files(c, pre, dec);
  for (const char* path : {"vllm/prefill.sh", "vllm/decode.sh"}) {
    EXPECT_NE(text_of(l, path).find("--max-loras 2 \\\n"), std::string::npos) << path;
    EXPECT_NE(text_of(l, path).find("--max-cpu-loras 3 \\\n"), std::string::npos) << path;
  }
  for (const char* path : {"sglang/prefill.sh", "sglang/decode.sh"}) {
    EXPECT_NE(text_of(l, path).find("--max-loras-per-batch 2 \\\n"), std::string::npos) << path;
  }
  EXPECT_GE(launch_check_against_engines(l), 40);
}

}  // namespace
}  // namespace chalk::sim
