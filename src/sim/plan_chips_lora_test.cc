// The planner over chip types with LoRA adapters (plan_chips.h, plan_lora.h): every pair,
// mixed ones included, searches --max-loras as the one-system plan does.
#include "chalk/sim/plan_chips.h"

#include <gtest/gtest.h>

#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

/// Llama 3.1 8B, 4 adapters of rank 16, 60 requests at 5/s of 256 + 16 tokens (plan_lora_test's
/// case), on one-chip replicas within 2 chips, TTFT p90 <= 100 ms.
struct ChipsLoraCase {
  ModelSpec m = load_model("llama-3.1-8b");
  std::vector<SystemSpec> systems;
  std::vector<Request> reqs;
  PlanOptions o;
  DeploymentOptions base;
  ChipsLoraCase() {
    base.mechanisms.enabled = true;
    SystemSpec cheap = load_system("h100-sxm");
    cheap.name = "h100-cheap";
    cheap.price_per_chip = UsdPerSecond(1.5 / 3600.0);  // the same chip at $1.50 per chip-hour
    systems = {load_system("h100-sxm"), cheap};
    TrafficSpec t;
    t.rate_per_s = 5;
    t.requests = 60;
    t.input = {LengthDist::Kind::fixed, 256};
    t.output = {LengthDist::Kind::fixed, 16};
    reqs = generate_traffic(t);
    o.chip_budget = 2;
    o.replica_chips = {1};
    o.max_sequences = {64};
    o.slo.ttft_s = 0.1;
    o.lora = parse_lora("4:16", "--lora");
    apply_lora_traffic(reqs, o.lora, t.seed);
  }
};

TEST(PlanChipsLora, EveryPairSearchesMaxLorasAsOneSystemDoes) {
  const ChipsLoraCase k;
  const ChipChoicePlan p = plan_chip_types(k.m, k.systems, k.base, k.reqs, k.o);
  ASSERT_EQ(p.pairs.size(), 4U);
  // (h100-sxm, h100-sxm) is plan_lora on h100-sxm itself: the same values, the same choice.
  const LoraPlan one = plan_lora(k.m, k.systems[0], k.base, k.reqs, k.o, lora_search_cap(k.o));
  EXPECT_EQ(lora_search_cap(k.o), 64);
  EXPECT_EQ(p.pairs[0].max_loras, one.max_loras);
  ASSERT_EQ(p.pairs[0].max_loras_tried.size(), one.tried.size());
  for (std::size_t i = 0; i < one.tried.size(); ++i) EXPECT_EQ(p.pairs[0].max_loras_tried[i].met, one.tried[i].met) << i;
  for (const ChipPairPlan& x : p.pairs) {
    SCOPED_TRACE(x.prefill_hardware + " prefill, " + x.decode_hardware + " decode");
    ASSERT_TRUE(x.refused.empty()) << x.refused;
    // 4 adapters under a cap of 64: 1, 2, 4 (max_loras_candidates).
    ASSERT_EQ(x.max_loras_tried.size(), 3U);
    EXPECT_EQ(x.max_loras_tried[0].max_loras, 1);
    EXPECT_EQ(x.max_loras_tried[2].max_loras, 4);
    if (!x.report.best) continue;
    const PlanCandidate& c = x.report.evaluated[*x.report.best];
    ASSERT_TRUE(c.lora.has_value());
    EXPECT_EQ(c.lora->max_loras, x.max_loras);  // the report is the chosen value's plan
    for (const MaxLorasTry& t : x.max_loras_tried) {
      if (t.met) {
        EXPECT_LE(*c.usd_per_hour, *t.usd_per_hour + 1e-9) << t.max_loras;
      }
    }
  }
  // The mixed pair (h100-sxm prefill, h100-cheap decode) prices each pool at its chip's own
  // rate: one chip each at least, $2.35 + $1.50 = $3.85 for 1 + 1.
  const ChipPairPlan& mixed = p.pairs[1];
  ASSERT_TRUE(mixed.report.best.has_value()) << mixed.report.why_none;
  const PlanCandidate& mc = mixed.report.evaluated[*mixed.report.best];
  EXPECT_TRUE(mc.disaggregated);
  EXPECT_NEAR(*mc.usd_per_hour, 2.35 * static_cast<double>(mc.replica_chips * mc.replicas) + 1.5 * static_cast<double>(mc.decode_replica_chips * mc.decode_replicas), 1e-9);
}

TEST(PlanChipsLora, AStatedMaxLorasIsEveryPairsOnly) {
  ChipsLoraCase k;
  k.o.lora = parse_lora("4:16,max-loras:2", "--lora");
  const ChipChoicePlan p = plan_chip_types(k.m, k.systems, k.base, k.reqs, k.o);
  for (const ChipPairPlan& x : p.pairs) {
    EXPECT_TRUE(x.max_loras_tried.empty());
    EXPECT_EQ(x.max_loras, 0);
    for (const PlanCandidate& c : x.report.evaluated) {
      ASSERT_TRUE(c.lora.has_value());
      EXPECT_EQ(c.lora->max_loras, 2);
    }
  }
}

}  // namespace
}  // namespace chalk::sim
