// Materialised attention scores (no FlashAttention): their HBM traffic in the step,
// against a hand count (step.h, kScoreBytesForward / kScoreBytesBackward).
#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TrainingStep step(bool flash, Recompute rc) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec a100 = load_system("a100-80gb");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 2048;
  p.flash_attention = flash;
  p.recompute = rc;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(a100, p.compute);
  return training_step(c, s, p, check_plan(m, a100, 1, p));
}

TEST(TrainingScores, MaterialisedScoresCrossHbm32BytesPerElement) {
  // Llama 3.1 8B, one sequence of 2048 on one A100: 32 heads x 32 layers x 2048 x 2048 =
  // 4.295e9 score elements; forward 13 + backward 19 = 32 bytes each = 137.4 GB at
  // 2.039 TB/s x 0.87 (the catalog's HBM efficiency) = 1.774e12 B/s -> 77.48 ms. Without
  // FlashAttention the elementwise traffic grows by exactly that, and the scores no
  // longer count among the stored activations (FlashAttention's own traffic is the rest).
  const double elements = 32.0 * 32 * 2048 * 2048;
  const double expected = elements * 32 / (2.039e12 * 0.87);
  EXPECT_NEAR(expected, 0.07748, 1e-4);
  const TrainingStep plain = step(false, Recompute::none), flash = step(true, Recompute::none);
  EXPECT_NEAR((plain.t_elementwise - flash.t_elementwise).value(), expected, 1e-6);
  EXPECT_DOUBLE_EQ(scores_hbm_bytes(1, 2, false), 13);
  EXPECT_DOUBLE_EQ(scores_hbm_bytes(1, 2, true), 19);
  EXPECT_DOUBLE_EQ(scores_hbm_bytes(1, 4, true), 38);  // fp32 activations: twice the bytes
  // Selective recomputation reruns the forward score chain (13 bytes per element) with
  // the attention core: 4.295e9 x 13 / 1.774e12 = 31.47 ms more recompute than flash's none.
  const TrainingStep sel = step(false, Recompute::selective);
  EXPECT_NEAR(sel.t_recompute.value() - plain.t_recompute.value(), elements * 13 / (2.039e12 * 0.87) + sel.t_attention.value() / 3, 1e-6);
}

}  // namespace
}  // namespace chalk
