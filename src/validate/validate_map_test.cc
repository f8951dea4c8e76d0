// How measurement rows map to chalk's inputs (validate_map.cc).
#include <gtest/gtest.h>

#include "validate_internal.h"

namespace chalk::detail {
namespace {

const Measurement& find(const std::vector<Measurement>& rows, const std::string& id) {
  for (const auto& r : rows) {
    if (r.id == id) return r;
  }
  throw std::runtime_error("no row " + id);
}

TEST(ValidateMap, Numbers) {
  EXPECT_EQ(first_number("16,384 tokens per GPU"), 16384);
  EXPECT_EQ(first_number("~290 tokens avg"), 290);
  EXPECT_EQ(first_number("large (512)"), 512);
  EXPECT_EQ(first_number("average KV-cache length per output token 4,989"), 4989);
  EXPECT_EQ(first_number("TP8 x 3 chips"), 3);  // "TP8" is a name, not a number
  EXPECT_FALSE(first_number("OpenOrca prompts"));
  EXPECT_EQ(single_number("24524.9"), 24524.9);
  EXPECT_EQ(single_number("22,282"), 22282);
  EXPECT_FALSE(single_number("77 ; 114"));
  EXPECT_FALSE(single_number("3000 GB/s ; 660 TFLOPS"));
  EXPECT_FALSE(single_number(""));
}

TEST(ValidateMap, StatusByKind) {
  const auto rows = builtin_measurements();
  EXPECT_EQ(plan_row(find(rows, "LLAMA3-1"), rows).status, RowStatus::not_modelled);
  EXPECT_EQ(plan_row(find(rows, "LLAMA3-1"), rows).reason, "training: not modelled yet");
  EXPECT_EQ(plan_row(find(rows, "MAMF-BF16-H100"), rows).status, RowStatus::calibration);
  Measurement odd = find(rows, "POPE-1");
  odd.model = "Gopher 280B";
  const auto m = plan_row(odd, rows);
  EXPECT_EQ(m.status, RowStatus::unmapped);
  EXPECT_NE(m.reason.find("model: no built-in model for 'Gopher 280B'"), std::string::npos) << m.reason;
  odd = find(rows, "POPE-1");
  odd.value = "fast";
  EXPECT_NE(plan_row(odd, rows).reason.find("value: expected one positive number"), std::string::npos);
  odd = find(rows, "POPE-1");
  odd.hardware = "Cerebras WSE-3";
  EXPECT_NE(plan_row(odd, rows).reason.find("hardware: no built-in system"), std::string::npos);
}

TEST(ValidateMap, TensorRtDeepSeekR1) {
  const auto rows = builtin_measurements();
  const auto m = plan_row(find(rows, "TRT-R1-B200-MINLAT-NOMTP"), rows);
  ASSERT_TRUE(m.plan);
  const RowPlan& p = *m.plan;
  EXPECT_EQ(p.model, "deepseek-r1");
  EXPECT_EQ(p.hardware, "b200");
  EXPECT_EQ(p.chips, 8);
  EXPECT_EQ(p.w_attention, DType::bf16);  // "BF16 attention modules"
  EXPECT_EQ(p.w_experts, DType::nvfp4);   // "NVFP4 for dense+MoE FFN"
  EXPECT_EQ(p.kv, DType::bf16);
  EXPECT_EQ(p.layout.tp_attention, 8);  // "attention TP8"
  EXPECT_EQ(p.layout.tp_expert, 4);     // "MoE mixed TP4xEP2"
  EXPECT_EQ(p.layout.ep, 2);
  EXPECT_EQ(p.layout.tp_ffn, 8);  // "shared expert TP8"
  EXPECT_EQ(p.context, 2048);     // 1024 in + 2048 out / 2
  EXPECT_EQ(p.target, Target::per_user_tokens_per_s);
  EXPECT_TRUE(p.assumptions.empty());
}

TEST(ValidateMap, ReferencesToOtherRows) {
  const auto rows = builtin_measurements();
  const auto m = plan_row(find(rows, "SGL-H100-DECODE-MTP"), rows);
  ASSERT_TRUE(m.plan);
  // parallelism "as SGL-H100-DECODE with attention artificially slowed to emulate MTP"
  EXPECT_EQ(m.plan->layout.ep, 72);
  EXPECT_EQ(m.plan->layout.tp_attention, 1);
  EXPECT_TRUE(m.plan->layout.overlap_micro_batches);
  EXPECT_EQ(m.plan->attention_tokens, 2);
  EXPECT_EQ(m.plan->batch, 128 * 72);
  // precision "as above": FP8 dispatch, BF16 combine, KV bf16.
  EXPECT_EQ(m.plan->layout.dispatch_bytes_per_element, 1);
  EXPECT_EQ(m.plan->layout.combine_bytes_per_element, 2);
  EXPECT_EQ(m.plan->per_chips, -1);  // per node
}

TEST(ValidateMap, ProductionPrefillTakesItsSiblingsContext) {
  const auto rows = builtin_measurements();
  const auto m = plan_row(find(rows, "DS-SERVE-PREFILL"), rows);
  ASSERT_TRUE(m.plan);
  // 4989 tokens (DS-SERVE-DECODE, same source), 56.3% of them cached: 2809 + 2180.
  EXPECT_EQ(m.plan->prefix, 2809);
  EXPECT_EQ(m.plan->prompt, 2180);
  EXPECT_EQ(m.plan->prefill_layout.ep, 32);
  EXPECT_EQ(m.plan->prefill_layout.tp_attention, 1);
  EXPECT_EQ(m.plan->batch, 7 * 32);  // floor(16384 / 2180) prompts per chip (assumed chunk)
  EXPECT_EQ(m.plan->assumptions.size(), 3u);
}

TEST(ValidateMap, PopeLayouts) {
  const auto rows = builtin_measurements();
  const auto p2 = plan_row(find(rows, "POPE-2"), rows).plan;
  ASSERT_TRUE(p2);
  EXPECT_EQ(p2->w_ffn, DType::int8);
  EXPECT_EQ(p2->layout.tp_attention, 64);  // WS 2D read as TP over all chips
  EXPECT_TRUE(p2->layout.kv_sharded_by_batch);
  EXPECT_EQ(p2->target, Target::decode_total_s);
  EXPECT_EQ(p2->output, 64);
  const auto p7 = plan_row(find(rows, "POPE-7"), rows).plan;
  ASSERT_TRUE(p7);
  EXPECT_TRUE(p7->prefill_layout.weight_gathered);  // "WG XYZ prefill"
  EXPECT_FALSE(p7->layout.weight_gathered);         // "WS 2D decode"
  EXPECT_EQ(p7->target, Target::serving_mfu);
  const auto p6 = plan_row(find(rows, "POPE-6"), rows).plan;
  ASSERT_TRUE(p6);
  EXPECT_EQ(p6->prompt, 64);
  EXPECT_EQ(p6->prefix, 1920);
  EXPECT_EQ(p6->decode_batch, 64);  // "batch 32-64 decode"
}

TEST(ValidateMap, UnstatedInputsAreAssumptions) {
  const auto rows = builtin_measurements();
  const auto p = plan_row(find(rows, "MLPERF41-L70B-H100x8"), rows).plan;
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->batch_from_capacity);
  EXPECT_EQ(p->prompt, 512);
  EXPECT_EQ(p->output, 290);
  EXPECT_EQ(p->kv, DType::fp8);
  EXPECT_EQ(p->assumptions.size(), 5u);  // weights, KV unverified; layout; batch; input
  const auto t = plan_row(find(rows, "TRTPERF-L8B-H100"), rows).plan;
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kv, DType::fp8);  // "KV default" with FP8 activations
  EXPECT_EQ(t->requests_cap, 3000);
}

}  // namespace
}  // namespace chalk::detail
