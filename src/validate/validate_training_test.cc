// Training rows written in the measurement format by hand: each metric from the same step,
// the engine's FLOP convention, and the error paths (docs/accuracy.md, "Training rows").
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/goodput.h"
#include "chalk/training/plan.h"
#include "chalk/validate/validate.h"

namespace chalk {
namespace {

constexpr const char* kTrainingHeader =
    "id,kind,model,hardware,chips,tp,pp,dp,batch,batch_per,input_tokens,engine,microbatch,recompute,zero,train_tokens,metric,value\n";

ValidationReport run_rows(const std::string& rows, bool keep_going = false) {
  return validate_measurements(parse_measurements(std::string(kTrainingHeader) + rows, "t.csv").rows, keep_going);
}

const Prediction& row(const ValidationReport& r, const std::string& id) {
  for (const auto& p : r.rows) {
    if (p.id == id) return p;
  }
  throw std::runtime_error("no row " + id);
}

/// Expects `csv` to be refused with an error containing `want`.
void fails(const std::string& csv, const std::string& want) {
  try {
    validate_measurements(parse_measurements(csv, "t.csv").rows, false);
    ADD_FAILURE() << "no error for " << want;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(ValidateTraining, EveryMetricComesFromTheSameStep) {
  // Llama 3.1 8B on 8 H100, DP8, 64 sequences of 4096 (262,144 tokens per step).
  const std::string plan = "llama-3.1-8b,h100-sxm,8,1,1,8,64,run,4096,,1,full,1,";
  const auto r = run_rows("S,training," + plan + ",step_s,1\n" + "T,training," + plan + ",train_tok_per_s,1\n" +
                     "C,training," + plan + ",train_tok_per_s_per_chip,1\n" + "M,training," + plan + ",mfu_pct,1\n" +
                     "F,training," + plan + ",tflop_per_s_per_chip,1\n" +
                     "H,run,llama-3.1-8b,h100-sxm,8,1,1,8,64,run,4096,,1,full,1,1e12,gpu_hours,1\n" +
                     "W,run,llama-3.1-8b,h100-sxm,8,1,1,8,64,run,4096,,1,full,1,1e12,wall_hours,1\n");
  for (const auto& p : r.rows) ASSERT_EQ(p.status, RowStatus::predicted) << p.id << ": " << p.reason;
  const double step = row(r, "S").predicted;
  EXPECT_NEAR(row(r, "T").predicted, 262144 / step, 1e-6 * 262144 / step);
  EXPECT_NEAR(row(r, "C").predicted, 262144 / step / 8, 1e-6 * 262144 / step);
  // MFU (%) = TFLOP/s per chip / 989.4 x 100 (the catalog's bf16 dense peak is the denominator).
  EXPECT_NEAR(row(r, "M").predicted, row(r, "F").predicted / 989.4 * 100, 1e-6);
  // A run of 1e12 tokens: wall = 1e12 / (262144 / step) / goodput seconds; chip-hours = 8 x
  // wall. The goodput is the interruption model's for 8 chips checkpointing 8.03e9 params x
  // 14 B (training/goodput.h): 1 - sqrt(2 x 0.0562 s x 4.88e-8/s) - 4.88e-8 x 763 = 0.99989.
  const double g = interruption_goodput(8, checkpoint_bytes(load_model("llama-3.1-8b"), parse_state_bytes("adam18", "state"))).goodput;
  EXPECT_NEAR(g, 0.99989, 2e-5);
  EXPECT_NEAR(row(r, "W").predicted, 1e12 / (262144 / step) / g / 3600, 1e-6 * row(r, "W").predicted);
  EXPECT_NEAR(row(r, "H").predicted, 8 * row(r, "W").predicted, 1e-6 * row(r, "H").predicted);
  // Stated inputs are not assumptions; the empty compute and cp are.
  const auto& a = row(r, "S").assumptions;
  EXPECT_EQ(a.size(), 2u);
}

TEST(ValidateTraining, MegatronCountsTheRecomputedForward) {
  // The same plan, engine megatron: Narayanan et al. 2021 Eq. 3 counts 4 forwards (full
  // recomputation) of non-causal attention, the LM head 3 times; the default counts the
  // model's 3 with causal attention. Llama 3.1 8B at 4096 (FlashAttention off for
  // megatron, so the steps differ: compare FLOPs per step = TFLOP/s x step).
  const std::string tail = ",h100-sxm,8,1,1,8,64,run,4096,";
  const auto r = run_rows("A,training,llama-3.1-8b" + tail + ",1,full,1,,tflop_per_s_per_chip,1\n" +
                     "B,training,llama-3.1-8b" + tail + "megatron,1,full,1,,tflop_per_s_per_chip,1\n" +
                     "SA,training,llama-3.1-8b" + tail + ",1,full,1,,step_s,1\n" +
                     "SB,training,llama-3.1-8b" + tail + "megatron,1,full,1,,step_s,1\n");
  const double fa = row(r, "A").predicted * row(r, "SA").predicted, fb = row(r, "B").predicted * row(r, "SB").predicted;
  // Per token: matmuls M = 2 x (32 x 218.1e6 + 4096 x 128256 LM head) = 1.5009e10, of
  // which the head H = 1.0506e9; attention 4 x 4096 per attended position per layer x 32
  // layers: non-causal x 4096 = 2.1475e9, causal x 2048.5 = 1.0738e9. Megatron: 4 (M - H +
  // A_nc) + 3 H = 6.7575e10; default: 3 (M + A_c) = 4.8248e10; ratio 1.4006.
  EXPECT_NEAR(fb / fa, 1.4006, 0.002);
}

TEST(ValidateTraining, BadPlansAreRejectedOrUnreadable) {
  // tp 3 does not divide Llama's 32 heads: the training module refuses the stated plan.
  const auto r = run_rows("A,training,llama-3.1-8b,h100-sxm,24,3,1,8,64,run,4096,,1,full,1,,step_s,1\n");
  EXPECT_EQ(row(r, "A").status, RowStatus::rejected);
  EXPECT_NE(row(r, "A").reason.find("tp: 3 does not divide the 32 query heads"), std::string::npos) << row(r, "A").reason;
  // Degrees that do not multiply to the chips name the row and the column.
  const std::string bad = "B,training,llama-3.1-8b,h100-sxm,16,1,1,8,64,run,4096,,1,full,1,,step_s,1\n";
  try {
    run_rows(bad);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    // ... with the file, the line and the product: tp x pp x cp x dp = 1 x 1 x 1 x 8 = 8.
    EXPECT_NE(std::string(e.what()).find("t.csv: line 2: B: chips: the stated degrees do not multiply to 16 chips: tp x pp x cp x dp = 1 x 1 "
                                         "x 1 x 8 = 8"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(row(run_rows(bad, true), "B").status, RowStatus::unreadable);
  // 64 sequences do not split over dp x microbatch = 8 x 3: predicted at the nearest plan
  // (72 sequences; validate_defaults_test.cc), not rejected.
  const auto m = run_rows("C,training,llama-3.1-8b,h100-sxm,8,1,1,8,64,run,4096,,3,full,1,,step_s,1\n");
  EXPECT_EQ(row(m, "C").status, RowStatus::predicted) << row(m, "C").reason;
}

TEST(ValidateTraining, Fp8RecipeColumn) {
  // The same FP8 step of Llama 3.1 8B on 8 H100 under delayed scaling (the default, printed
  // as an assumption) and current scaling (tensorwise: an amax pass before each cast, so
  // fewer tokens per second).
  const std::string head = "id,kind,model,hardware,chips,dp,batch,batch_per,input_tokens,compute,fp8_recipe,metric,value\n";
  const std::string plan = ",training,llama-3.1-8b,h100-sxm,8,8,64,run,4096,";
  auto run = [&](const std::string& rows) { return validate_measurements(parse_measurements(head + rows, "t.csv").rows, false); };
  const auto r = run("D" + plan + "fp8,,train_tok_per_s,1\n" + "T" + plan + "fp8,tensorwise,train_tok_per_s,1\n");
  EXPECT_LT(row(r, "T").predicted, row(r, "D").predicted);
  bool said = false;
  for (const auto& a : row(r, "D").assumptions) said = said || a.find("fp8_recipe: empty, delayed") != std::string::npos;
  EXPECT_TRUE(said);
  // A recipe on a bf16 row names the row and the column; a value outside the four names the
  // column's vocabulary.
  fails(head + "B" + plan + "bf16,tensorwise,train_tok_per_s,1\n", "B: fp8_recipe: 'tensorwise' scales FP8 GEMMs; the row's compute is 'bf16'");
  fails(head + "C" + plan + "fp8,current,train_tok_per_s,1\n", "C: fp8_recipe: 'current' is not one of delayed, tensorwise, mxfp8, blockwise");
  // A serving row has no training recipe.
  fails("id,kind,model,hardware,chips,batch,batch_per,context,fp8_recipe,metric,value\n"
        "S,decode,llama-3.1-8b,h100-sxm,1,8,run,2048,tensorwise,tpot_ms,20\n",
        "S: fp8_recipe: 'tensorwise' is a training recipe");
}

TEST(ValidateTraining, SequenceParallelColumn) {
  // Llama 3.1 8B on 8 H100 at TP8, 8 sequences of 4096, no recomputation. Without sequence
  // parallelism (Megatron-LM before Korthikanti et al. 2022) every TP rank runs the norms,
  // dropout-free residual adds and their backward on the full hidden instead of 1/8 of the
  // tokens, and the activations outside the GEMMs are stored whole: the step is slower, and
  // the row says why in its notes.
  const std::string head = "id,kind,model,hardware,chips,tp,dp,batch,batch_per,input_tokens,recompute,sequence_parallel,metric,value\n";
  const std::string plan = ",training,llama-3.1-8b,h100-sxm,8,8,1,8,run,4096,none,";
  auto run = [&](const std::string& rows) { return validate_measurements(parse_measurements(head + rows, "t.csv").rows, false); };
  const auto r = run("E" + plan + ",step_s,1\n" + "Y" + plan + "yes,step_s,1\n" + "N" + plan + "no,step_s,1\n");
  // Empty and yes are the same plan; no is slower by the replicated elementwise work.
  EXPECT_DOUBLE_EQ(row(r, "E").predicted, row(r, "Y").predicted);
  EXPECT_GT(row(r, "N").predicted, row(r, "Y").predicted * 1.005);
  bool said = false;
  for (const auto& n : row(r, "N").notes) said = said || n.find("sequence_parallel no: TP8 all-reduces its activations") != std::string::npos;
  EXPECT_TRUE(said);
  // yes needs tensor parallelism; a value outside yes/no names the vocabulary; a serving row
  // leaves the column empty.
  fails(head + "A,training,llama-3.1-8b,h100-sxm,8,1,8,8,run,4096,none,yes,step_s,1\n",
        "A: sequence_parallel: 'yes' shards activations over the tensor-parallel ranks; the row's tp is 1 (expected tp > 1)");
  fails(head + "B" + plan + "maybe,step_s,1\n", "B: sequence_parallel: 'maybe' is not one of yes, no");
  fails("id,kind,model,hardware,chips,batch,batch_per,context,sequence_parallel,metric,value\n"
        "S,decode,llama-3.1-8b,h100-sxm,1,8,run,2048,no,tpot_ms,20\n",
        "S: sequence_parallel: 'no' is a training plan's setting; a serving row leaves it empty");
}

TEST(ValidateTraining, CompileColumn) {
  // torchtitan's Table 1 plan (Llama 3.1 8B, FSDP over 8 H100, 2 sequences of 8192 per GPU,
  // op-level selective checkpointing): eager (no, and empty: torchtitan's default, printed
  // as an assumption) moves eager_extra_bytes more per token and layer than compiled (yes):
  // 32 x 16,384 x (2 x 401,408 + 901,120) bytes = 893.4 GB at 3.35e12 x 0.87 B/s = 0.3065 s
  // more a step (eager_kernels_test.cc), so fewer tokens per second.
  const std::string head = "id,kind,model,hardware,chips,dp,batch,batch_per,input_tokens,engine,compile,microbatch,recompute,zero,metric,value\n";
  const std::string plan = ",training,llama-3.1-8b,h100-sxm,8,8,16,run,8192,";
  const std::string rest = ",2,selective,fsdp,step_s,1\n";
  auto run = [&](const std::string& rows) { return validate_measurements(parse_measurements(head + rows, "t.csv").rows, false); };
  const auto r = run("E" + plan + "torchtitan," + rest + "N" + plan + "torchtitan,no" + rest + "Y" + plan + "torchtitan,yes" + rest);
  EXPECT_DOUBLE_EQ(row(r, "E").predicted, row(r, "N").predicted);
  // Plus eager's extra kernels' fixed time: 32 layers x (2 x 19 forward and rerun + 32
  // backward) x 1.27 us = 2.84 ms (kernel_fixed_time.h).
  EXPECT_NEAR(row(r, "N").predicted - row(r, "Y").predicted, 32.0 * 16384 * (2 * 401408 + 901120) / (3.35e12 * 0.87) + 32 * 70 * 1.27e-6, 0.002);
  bool said = false;
  for (const auto& a : row(r, "E").assumptions) said = said || a.find("compile: empty, no (torchtitan's default") != std::string::npos;
  EXPECT_TRUE(said);
  // Another engine runs fused kernels of its own; a serving row leaves the column empty; a
  // value outside yes/no names the vocabulary.
  fails(head + "M" + plan + "nemo,no" + rest, "M: compile: 'no' says whether torchtitan runs its blocks under torch.compile; engine 'nemo' runs fused kernels of its own");
  fails(head + "B" + plan + "torchtitan,maybe" + rest, "B: compile: 'maybe' is not one of yes, no");
  fails("id,kind,model,hardware,chips,batch,batch_per,context,compile,metric,value\n"
        "S,decode,llama-3.1-8b,h100-sxm,1,8,run,2048,yes,tpot_ms,20\n",
        "S: compile: 'yes' says whether a torchtitan training run compiles its blocks; a serving row leaves it empty");
}

TEST(ValidateTraining, ComputeColumnTakesNvfp4) {
  // compute=nvfp4 on a training row (issue 33) runs the step's GEMMs at the chip's fp4 rate,
  // as `train step --compute fp4` does; mxfp4 is the same rate. Llama 3.1 8B, DP8 over 8
  // B200, 8 sequences of 4,096 per GPU, no recomputation, so the model FLOPs the metric
  // counts are at most the executed ones. A bf16 fallback could reach at most B200's bf16
  // MAMF rate, 2,250 x 0.776 = 1,746 TFLOP/s (data/hardware/b200.json), an FP8 one at most
  // 4,500 x 0.763 = 3,433.5; the fp4 rate is 9,000 x 0.436 = 3,924. The step's GEMMs run at
  // the fp4 rate, its attention core and memory-bound kernels do not: above the bf16 bound,
  // above the same step in FP8, below the fp4 rate.
  const std::string head = "id,kind,model,hardware,chips,dp,batch,batch_per,input_tokens,compute,metric,value\n";
  const std::string plan = ",training,llama-3.1-8b,b200,8,8,64,run,4096,";
  auto run = [&](const std::string& rows) { return validate_measurements(parse_measurements(head + rows, "t.csv").rows, false); };
  const auto r = run("N" + plan + "nvfp4,tflop_per_s_per_chip,1\n" + "M" + plan + "mxfp4,tflop_per_s_per_chip,1\n" + "F" + plan +
                     "fp8,tflop_per_s_per_chip,1\n");
  ASSERT_EQ(row(r, "N").status, RowStatus::predicted);
  EXPECT_DOUBLE_EQ(row(r, "N").predicted, row(r, "M").predicted);
  EXPECT_GT(row(r, "N").predicted, 2250 * 0.776);
  EXPECT_GT(row(r, "N").predicted, row(r, "F").predicted);
  EXPECT_LT(row(r, "N").predicted, 9000 * 0.436);
  // A chip without FP4 tensor cores rejects the row, naming the column and the chip.
  const auto h = run("H,training,llama-3.1-8b,h100-sxm,8,8,64,run,4096,nvfp4,tflop_per_s_per_chip,1\n");
  ASSERT_EQ(row(h, "H").status, RowStatus::rejected);
  EXPECT_NE(row(h, "H").reason.find("compute: H100 SXM has no dense fp4 matmul rate"), std::string::npos) << row(h, "H").reason;
}

TEST(ValidateTraining, MegatronInterleavesOnlyWhenTheRowSaysSo) {
  // Megatron-LM interleaves only under --num-layers-per-virtual-pipeline-stage (default
  // None: arguments.py @aed2f75e20; the SC21 paper's own scripts, examples/sc21/run_table_1.sh
  // @6985e58938, pass it for the 76B to 530B rows and not for 1T). So a megatron row that
  // leaves the schedule empty runs 1F1B, as one that states it; another engine's takes
  // PTD-P's interleaved v2. Llama 3.1 8B on 16 H100, PP2 x DP8, 64 sequences: m = 8
  // microbatches per replica, so the bubble is (p - 1) / m = 1/8 = 12% of the work under
  // 1F1B and (p - 1) / (v m) = 1/16 = 6% interleaved (Narayanan et al. 2021 section 2.2).
  const std::string head = "id,kind,model,hardware,chips,tp,pp,dp,batch,batch_per,input_tokens,engine,microbatch,schedule,recompute,metric,value\n";
  const std::string plan = ",training,llama-3.1-8b,h100-sxm,16,1,2,8,64,run,4096,";
  const auto r = validate_measurements(parse_measurements(head + "A" + plan + "megatron,1,,full,step_s,1\n" + "B" + plan +
                                                              "megatron,1,1f1b,full,step_s,1\n" + "C" + plan + ",1,,full,step_s,1\n",
                                                          "t.csv")
                                           .rows,
                                       false);
  for (const auto& p : r.rows) ASSERT_EQ(p.status, RowStatus::predicted) << p.id << ": " << p.reason;
  EXPECT_DOUBLE_EQ(row(r, "A").predicted, row(r, "B").predicted);
  EXPECT_NE(row(r, "A").layout.find("PP2 (1f1b)"), std::string::npos) << row(r, "A").layout;
  EXPECT_NE(row(r, "C").layout.find("PP2 (interleaved v2)"), std::string::npos) << row(r, "C").layout;
  bool said = false;
  for (const auto& a : row(r, "A").assumptions) said = said || a.rfind("schedule: empty, 1f1b (Megatron-LM's default", 0) == 0;
  EXPECT_TRUE(said);
  auto has = [](const Prediction& p, const std::string& text) {
    for (const auto& n : p.notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(row(r, "A"), "(12%)"));
  EXPECT_TRUE(has(row(r, "C"), "(6%)"));
}

}  // namespace
}  // namespace chalk
