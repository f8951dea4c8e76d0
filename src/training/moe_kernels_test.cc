// The MoE router's memory-bound kernels in a training step against hand counts (kernels.h,
// elementwise_bytes).
#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/kernels.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(TrainingKernels, MoeRouterScoresInFp32) {
  // Qwen3-30B-A3B: 48 MoE layers of 128 experts, top-8. The router's kernels per token per
  // layer: forward 4 bytes x (4 x 128 + 3 x 8) = 4 x 536 = 2144, backward 4 x (512 + 8) =
  // 2080, in fp32 whatever the activations' width, on every TP rank's tokens unless sequence
  // parallelism splits them. Without the router (width 0 and no picks) the rest is unchanged.
  const TrainingCosts c = make_training_costs(load_model("qwen3-30b-a3b"), 4096);
  TrainingCosts none = c;
  none.moe_router_width = 0;
  none.routed_tokens_per_token = 0;
  TrainingPlan p;
  p.activation_bytes = 1;  // the router's bytes do not follow it
  EXPECT_DOUBLE_EQ(c.moe_router_width, 128);
  EXPECT_NEAR(elementwise_bytes(c, p).forward - elementwise_bytes(none, p).forward, 2144, 1e-9);
  EXPECT_NEAR(elementwise_bytes(c, p).backward - elementwise_bytes(none, p).backward, 2080, 1e-9);
  p.tp = 4;
  p.sequence_parallel = true;  // SP: each TP rank routes its quarter of the tokens
  EXPECT_NEAR(elementwise_bytes(c, p).forward - elementwise_bytes(none, p).forward, 2144.0 / 4, 1e-9);
  // A dense model has no router.
  EXPECT_EQ(make_training_costs(load_model("llama-3.1-8b"), 4096).moe_router_width, 0);
}

TEST(TrainingKernels, AlltoallDispatcherSortsByLocalExpert) {
  // Qwen3-30B-A3B (h 2048, top-8 of 128 experts) at bf16 (e = 2): under the alltoall
  // dispatcher with EP16, each rank holds 8 local experts, so the arrived tokens are sorted
  // by local expert and restored before the combine: forward 2 sorts x (read + write) x k h e
  // = 4 x 8 x 2048 x 2 = 131,072 B per token per layer more than under DeepEP; backward the
  // same. With one local expert per rank (EP128) there is nothing to sort, nor under DeepEP.
  const TrainingCosts c = make_training_costs(load_model("qwen3-30b-a3b"), 4096);
  TrainingPlan deepep;
  deepep.ep = 16;
  deepep.dp = 16;
  TrainingPlan a2a = deepep;
  a2a.ep_dispatcher = EpDispatcher::all_to_all;
  EXPECT_NEAR(elementwise_bytes(c, a2a).forward - elementwise_bytes(c, deepep).forward, 131072, 1e-6);
  EXPECT_NEAR(elementwise_bytes(c, a2a).backward - elementwise_bytes(c, deepep).backward, 131072, 1e-6);
  a2a.ep = deepep.ep = 128;
  EXPECT_DOUBLE_EQ(elementwise_bytes(c, a2a).forward, elementwise_bytes(c, deepep).forward);
  a2a.ep = deepep.ep = 1;  // no expert parallelism: no all-to-all
  EXPECT_DOUBLE_EQ(elementwise_bytes(c, a2a).forward, elementwise_bytes(c, deepep).forward);
}

}  // namespace
}  // namespace chalk
