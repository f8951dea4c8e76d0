// The engine's host work per step (host_time.h) inside the engine step (overhead.h):
// hidden below the GPU step when overlapped, the whole step above it, added when not
// overlapped; per sequence of the busiest data-parallel rank.
#include "chalk/engine/host_time.h"

#include <gtest/gtest.h>

#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk {
namespace {

using chalk::testing::engine_deploy;

TEST(HostTime, EnginesPublishedFigures) {
  // vLLM issue #10634: 5.5 ms between decode steps at batch 256 -> 21.484375 us per sequence.
  EXPECT_DOUBLE_EQ(engine_host_time("vllm").s_per_sequence, 21.484375e-6);
  EXPECT_DOUBLE_EQ(engine_host_time("sglang").s_per_sequence, 21.484375e-6);
  // TensorRT-LLM PR #10273: 45.11 ms at 1,536 sequences per rank -> 29.368 us.
  EXPECT_NEAR(engine_host_time("trtllm").s_per_sequence, 29.368489583e-6, 1e-15);
  EXPECT_NEAR(engine_host_time("trtllm-1.0").s_per_sequence, 29.368489583e-6, 1e-15);  // a release keeps the family's figure
  EXPECT_TRUE(engine_host_time("vllm").overlap);
  EXPECT_EQ(engine_host_time("fastertransformer").s_per_sequence, 0);
  EXPECT_EQ(engine_host_time("").s_per_sequence, 0);
  // max(GPU, host) overlapped, GPU + host not.
  EXPECT_EQ(step_with_host(0.010, 0.004, true), 0.010);
  EXPECT_EQ(step_with_host(0.010, 0.015, true), 0.015);
  EXPECT_DOUBLE_EQ(step_with_host(0.010, 0.004, false), 0.014);
}

TEST(HostTime, HiddenBelowTheGpuStepGoverningAboveIt) {
  Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  Deployment bare = d;
  bare.mechanisms.host.s_per_sequence = 0;
  // Batch 8 at 2,048 tokens: host 8 x 21.484 us = 0.172 ms, far below the GPU step
  // (weights alone: 16 GB / 3.35 TB/s ~ 5 ms): hidden, the step is the GPU's.
  const auto small = engine_step(d, StepShape{8, 2048});
  EXPECT_NEAR(small.t_host.value(), 8 * 21.484375e-6, 1e-15);
  EXPECT_EQ(small.t_step.value(), engine_step(bare, StepShape{8, 2048}).t_step.value());
  EXPECT_NE(small.governs, "host");
  // Batch 4,096 at 64 tokens: host 4,096 x 21.484 us = 88.0 ms. Whichever is longer is the
  // step; where it is the host's, governs says so.
  const auto big = engine_step(d, StepShape{4096, 64});
  const double gpu = engine_step(bare, StepShape{4096, 64}).t_step.value();
  EXPECT_NEAR(big.t_host.value(), 0.088, 1e-12);
  EXPECT_DOUBLE_EQ(big.t_step.value(), std::max(gpu, 0.088));
  EXPECT_EQ(big.governs == "host", 0.088 >= gpu);
  // Not overlapped (vLLM before 0.14): host after the GPU step, always paid.
  Deployment sync = d;
  sync.mechanisms.host.overlap = false;
  EXPECT_NEAR(engine_step(sync, StepShape{8, 2048}).t_step.value(), engine_step(bare, StepShape{8, 2048}).t_step.value() + 8 * 21.484375e-6,
              1e-15);
  // decode_step reports it.
  EXPECT_NEAR(decode_step(sync, 8, 2048).t_host.value(), 8 * 21.484375e-6, 1e-15);
}

TEST(HostTime, EachDataParallelRankSchedulesItsOwnSequences) {
  // DeepSeek-V3 on 8 H200 as attention DP8 (TP1 x 8 ranks), experts EP8: 800 sequences are
  // 100 per rank, each rank's scheduler handles its 100: host = 100 x 21.484 us = 2.148 ms.
  ParallelLayout dp;
  dp.tp_attention = 1;
  dp.tp_ffn = 1;
  const Deployment d = engine_deploy("deepseek-v3", "h200", 8, dp);
  EXPECT_NEAR(engine_step(d, StepShape{800, 1024}).t_host.value(), 100 * 21.484375e-6, 1e-15);
  // As TP8 (one rank): all 800.
  const Deployment tp = engine_deploy("deepseek-v3", "h200", 8);
  EXPECT_NEAR(engine_step(tp, StepShape{800, 1024}).t_host.value(), 800 * 21.484375e-6, 1e-15);
}

}  // namespace
}  // namespace chalk
