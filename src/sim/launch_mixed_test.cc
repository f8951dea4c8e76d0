// Launch files of a mixed-chip plan (launch.h mixed_launch_files): each pool's files from its
// own chip, the front end between them, every flag one the engine defines.
#include "chalk/sim/launch.h"

#include <gtest/gtest.h>

#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

/// A dense model's disaggregated choice: prefill 1 x TP2 (8 GB of weights a chip), decode
/// 2 x TP4 (4 GB a chip), 10 chips.
PlanCandidate mixed_candidate() {
  PlanCandidate c;
  c.disaggregated = true;
  c.replica_chips = 2, c.replicas = 1, c.decode_replica_chips = 4, c.decode_replicas = 2, c.chips = 10;
  c.max_sequences = 128, c.max_batched_tokens = 8192;
  c.layout = "TP2", c.decode_layout = "TP4";
  c.parallel.tp_attention = 2, c.parallel.tp_ffn = 2;
  c.decode_parallel.tp_attention = 4, c.decode_parallel.tp_ffn = 4;
  c.weight_bytes_per_chip = 8e9, c.decode_weight_bytes_per_chip = 4e9;
  return c;
}

std::string yaml_value(const LaunchFile* f, const std::string& key) {
  for (const auto& [k, v] : launch_yaml_keys(f->text)) {
    if (k == key) return v;
  }
  return "";
}

TEST(LaunchMixed, EachPoolLaunchesOnItsOwnChipBehindOneFrontEnd) {
  LaunchTarget pre = launch_test_target(), dec = launch_test_target();
  pre.system_name = "h200", pre.hbm_bytes_per_chip = 141e9;
  dec.system_name = "b200", dec.hbm_bytes_per_chip = 180e9;
  const auto l = mixed_launch_files(mixed_candidate(), pre, dec);
  ASSERT_EQ(l.size(), 3U);
  for (const auto& e : l) EXPECT_TRUE(e.problem.empty()) << e.engine << ": " << e.problem;
  // vLLM: the two pools and NixlConnector's proxy; no Dynamo manifest over two chip types.
  EXPECT_EQ(l[0].engine, "vllm");
  ASSERT_EQ(l[0].files.size(), 3U);
  EXPECT_EQ(l[0].files[0].path, "vllm/prefill.sh");
  EXPECT_EQ(launch_file_at(l, "vllm/dynamo.yaml"), nullptr);
  EXPECT_NE(launch_file_at(l, "vllm/proxy.sh"), nullptr);
  const std::string p = launch_file_at(l, "vllm/prefill.sh")->text, d = launch_file_at(l, "vllm/decode.sh")->text;
  EXPECT_NE(p.find(" on h200, disaggregated, 10 chips in all."), std::string::npos) << p;
  EXPECT_NE(p.find("--tensor-parallel-size 2 \\\n"), std::string::npos) << p;
  EXPECT_NE(d.find(" on b200, disaggregated, 10 chips in all."), std::string::npos) << d;
  EXPECT_NE(d.find("--tensor-parallel-size 4 \\\n"), std::string::npos) << d;
  // TensorRT-LLM's KV fraction per pool from its own chip's HBM, reserve 0.10:
  // prefill (0.9 x 141 - 8) / (141 - 8) = 118.9 / 133 = 0.894; decode (0.9 x 180 - 4) /
  // (180 - 4) = 158 / 176 = 0.898.
  EXPECT_EQ(yaml_value(launch_file_at(l, "trtllm/prefill.yaml"), "kv_cache_config.free_gpu_memory_fraction"), "0.894");
  EXPECT_EQ(yaml_value(launch_file_at(l, "trtllm/decode.yaml"), "kv_cache_config.free_gpu_memory_fraction"), "0.898");
  EXPECT_NE(launch_file_at(l, "trtllm/disagg.yaml"), nullptr);
  EXPECT_NE(launch_file_at(l, "sglang/router.sh"), nullptr);
  EXPECT_GE(launch_check_against_engines(l), 60);
}

TEST(LaunchMixed, PoolsOnTwoGpuBuildsGetNoFiles) {
  // H200 prefill, MI300X decode: CUDA and ROCm builds; no engine documents KV between them,
  // and TensorRT-LLM runs on NVIDIA only.
  LaunchTarget pre = launch_test_target(), dec = launch_test_target();
  pre.system_name = "h200";
  dec.system_name = "mi300x", dec.accelerator = "amd";
  const auto l = mixed_launch_files(mixed_candidate(), pre, dec);
  for (const auto& e : l) {
    EXPECT_TRUE(e.files.empty()) << e.engine;
    const std::string want = e.engine == "trtllm" ? "TensorRT-LLM runs on NVIDIA GPUs only, not mi300x"
                                                  : "the pools run different GPU builds (h200: nvidia, mi300x: amd); no engine documents its KV transfer between them";
    EXPECT_EQ(e.problem, want) << e.engine;
  }
}

}  // namespace
}  // namespace chalk::sim
