// Launch files (launch.h) of expert-parallel and multi-host data-parallel replicas (review 8
// H2, H3): the all-to-all backend whose kernels chalk's step prices, and vLLM's data-parallel
// ranks spread over the hosts of a replica, each flag one the engine defines
// (tests/data/engine-args/).
#include "chalk/sim/launch.h"

#include <gtest/gtest.h>

#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

bool file_says(const LaunchFile* f, const std::string& text) { return f && f->text.find(text) != std::string::npos; }

TEST(LaunchEp, EveryExpertParallelFileNamesTheDeepEpAllToAllItsStepPriced) {
  LaunchTarget t = launch_test_target();
  t.moe = true;
  PlanCandidate c = launch_dp_attention_moe();  // attention TP2 x DP4, experts EP8 on 8 chips
  c.parallel.overlap_micro_batches = true;      // two micro-batches: vLLM --enable-dbo, SGLang TBO
  auto l = launch_files(c, t);
  EXPECT_GT(launch_check_against_engines(l), 0);
  const LaunchFile* vl = launch_file_at(l, "vllm/serve.sh");
  const LaunchFile* sg = launch_file_at(l, "sglang/serve.sh");
  ASSERT_NE(vl, nullptr);
  ASSERT_NE(sg, nullptr);
  // vLLM asserts a DeepEP backend under --enable-dbo (its default allgather_reducescatter
  // fails at start-up); an aggregated replica runs the decode (low-latency) kernels.
  EXPECT_TRUE(file_says(vl, "--all2all-backend deepep_low_latency \\\n  --enable-dbo")) << vl->text;
  // SGLang raises under --enable-two-batch-overlap with --moe-a2a-backend none; auto is
  // DeepEP normal for a step with prompt chunks, low-latency for a pure decode step.
  EXPECT_TRUE(file_says(sg, "--moe-a2a-backend deepep \\\n  --deepep-mode auto \\\n  --enable-two-batch-overlap")) << sg->text;
  // Disaggregated: the prefill pool runs the normal (high-throughput) kernels, the decode pool
  // the low-latency ones, without micro-batches too.
  c.parallel.overlap_micro_batches = false;
  c.disaggregated = true;
  c.decode_replica_chips = 8;
  c.decode_replicas = 1;
  c.decode_parallel = c.parallel;
  l = launch_files(c, t);
  launch_check_against_engines(l);
  EXPECT_TRUE(file_says(launch_file_at(l, "vllm/prefill.sh"), "--all2all-backend deepep_high_throughput")) << launch_file_at(l, "vllm/prefill.sh")->text;
  EXPECT_TRUE(file_says(launch_file_at(l, "vllm/decode.sh"), "--all2all-backend deepep_low_latency"));
  EXPECT_TRUE(file_says(launch_file_at(l, "sglang/prefill.sh"), "--moe-a2a-backend deepep"));
  // A dense model has no all-to-all: no backend flag.
  t.moe = false;
  c = launch_dp_attention_moe();
  c.parallel = {};
  c.parallel.tp_attention = 8, c.parallel.tp_ffn = 8;
  l = launch_files(c, t);
  EXPECT_FALSE(file_says(launch_file_at(l, "vllm/serve.sh"), "--all2all-backend"));
  EXPECT_FALSE(file_says(launch_file_at(l, "sglang/serve.sh"), "--moe-a2a-backend"));
}

TEST(LaunchEp, VllmTensorParallelExpertsCarryNoAllToAllBackend) {
  // Review 10 L6: DeepSeek-V3 on 8 B200 as attention TP8, experts EP8 (one DP rank) wrote
  // --all2all-backend deepep_low_latency, which vLLM ignores there: v0.11's
  // FusedMoEParallelConfig.use_all2all_kernels is dp_size > 1 and use_ep, so TP8 x DP1 runs
  // the all-reduce path. The file leaves the flag out and says why; DP4 keeps it (above).
  LaunchTarget t = launch_test_target();
  t.moe = true;
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 8;
  c.parallel.tp_ffn = 8;
  c.layout = "attention TP8, experts EP8";
  auto l = launch_files(c, t);
  const LaunchFile* vl = launch_file_at(l, "vllm/serve.sh");
  ASSERT_NE(vl, nullptr);
  EXPECT_TRUE(file_says(vl, "--tensor-parallel-size 8")) << vl->text;
  EXPECT_FALSE(file_says(vl, "--data-parallel-size")) << vl->text;
  EXPECT_TRUE(file_says(vl, "--enable-expert-parallel")) << vl->text;
  EXPECT_FALSE(file_says(vl, "--all2all-backend deepep")) << vl->text;  // the flag, not the comment naming it
  EXPECT_TRUE(file_says(vl, "# No --all2all-backend: with one data-parallel rank")) << vl->text;
  // Two micro-batches on one DP rank keep it: vLLM asserts a DeepEP backend under --enable-dbo.
  c.parallel.overlap_micro_batches = true;
  l = launch_files(c, t);
  vl = launch_file_at(l, "vllm/serve.sh");
  ASSERT_NE(vl, nullptr);
  EXPECT_TRUE(file_says(vl, "--all2all-backend deepep_low_latency")) << vl->text;
}

TEST(LaunchEp, SglangTwoBatchesWithExpertsOnFewerChipsThanTheStageIsRefused) {
  // SGLang's DeepEP backend sets the expert-parallel size to --tp-size: EP4 on 8 chips with
  // two micro-batches has no flags, so no file is written and the reason is given.
  LaunchTarget t = launch_test_target();
  t.moe = true;
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.ep = 4;
  c.parallel.overlap_micro_batches = true;
  for (const auto& e : launch_files(c, t)) {
    if (e.engine != "sglang") continue;
    EXPECT_NE(e.problem.find("two micro-batches need its DeepEP all-to-all"), std::string::npos) << e.problem;
  }
}

TEST(LaunchEp, VllmDataParallelRanksOverSeveralHostsStartThereNotAllOnTheHead) {
  // GB200 NVL72 trays hold 4 GPUs: an 8-chip DP8 x TP1 replica spans 2 hosts, 8 / 2 = 4 ranks
  // a host. Without --data-parallel-size-local vLLM's local DP size defaults to the global 8,
  // 8 engine cores on the 4-GPU head.
  LaunchTarget t = launch_test_target();
  t.moe = true;
  t.system_name = "gb200-nvl72";
  t.chips_per_host = 4;
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 1, c.parallel.tp_ffn = 1;  // DP8, EP8
  auto l = launch_files(c, t);
  EXPECT_GT(launch_check_against_engines(l), 0);
  const LaunchFile* vl = launch_file_at(l, "vllm/serve.sh");
  ASSERT_NE(vl, nullptr);
  EXPECT_TRUE(file_says(vl, "--data-parallel-size 8")) << vl->text;
  EXPECT_TRUE(file_says(vl, "--data-parallel-size-local 4 \\\n  --data-parallel-backend ray")) << vl->text;
  EXPECT_FALSE(file_says(vl, "--distributed-executor-backend")) << vl->text;
  EXPECT_TRUE(file_says(vl, "2 hosts of 4 GPUs, 4 data-parallel ranks a host")) << vl->text;
  // 64 chips, DP64: 16 hosts, still 4 ranks a host.
  c.replica_chips = 64, c.chips = 128, c.parallel.ep = 64;
  l = launch_files(c, t);  // kept: launch_file_at points into it
  vl = launch_file_at(l, "vllm/serve.sh");
  EXPECT_TRUE(file_says(vl, "--data-parallel-size-local 4")) << vl->text;
  // One engine's TP8 over 2 hosts has no DP ranks: its workers go on the Ray cluster.
  c = launch_dp_attention_moe();
  c.parallel.tp_attention = 8, c.parallel.tp_ffn = 8;
  l = launch_files(c, t);
  vl = launch_file_at(l, "vllm/serve.sh");
  EXPECT_TRUE(file_says(vl, "--distributed-executor-backend ray")) << vl->text;
  EXPECT_FALSE(file_says(vl, "--data-parallel-size-local")) << vl->text;
}

}  // namespace
}  // namespace chalk::sim
