// The planner choosing chip types as well as counts (plan_chips.h; docs/simulator.md,
// "Planning over chip types"): picks derivable by hand from the chips' prices and HBM rates.
#include "chalk/sim/plan_chips.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

/// 40 requests at 2 per second, 512 tokens in and 64 out: light, decode-heavy traffic.
std::vector<Request> chips_traffic() {
  TrafficSpec t;
  t.rate_per_s = 2;
  t.requests = 40;
  t.input = {LengthDist::Kind::fixed, 512};
  t.output = {LengthDist::Kind::fixed, 64};
  return generate_traffic(t);
}

/// An H200 under another name at another price per chip-hour (and, with `hbm_scale`, another
/// HBM bandwidth): the same chip otherwise.
SystemSpec priced_h200(const std::string& name, double usd_per_hour, double hbm_scale = 1) {
  SystemSpec s = load_system("h200");
  s.name = name;
  s.price_per_chip = UsdPerSecond(usd_per_hour / 3600.0);
  s.chip.hbm_bandwidth = BytesPerSecond(s.chip.hbm_bandwidth.value() * hbm_scale);
  return s;
}

PlanOptions chips_plan() {
  PlanOptions o;
  o.chip_budget = 4;
  o.replica_chips = {1, 2};
  o.max_sequences = {64};
  return o;
}

DeploymentOptions chips_engine() {
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  return base;
}

TEST(PlanChips, TheSameChipAtHalfThePriceWinsAtHalfTheCost) {
  // Two H200s, one at the catalog's $4.54 and one renamed at $2.27 per chip-hour. The
  // (cheap, cheap) pair's search is the (h200, h200) search chip for chip, so its best has
  // the same chips at half the dollars: chips x $2.27. It is the choice: every deployment
  // of another pair has at least one pool at $4.54 per chip and no fewer chips.
  const std::vector<SystemSpec> systems = {load_system("h200"), priced_h200("h200-cheap", 2.27)};
  PlanOptions o = chips_plan();
  o.slo.tpot_s = 0.03;
  const ChipChoicePlan p = plan_chip_types(load_model("llama-3.1-8b"), systems, chips_engine(), chips_traffic(), o);
  ASSERT_EQ(p.pairs.size(), 4U);
  EXPECT_EQ(p.pairs[1].prefill_hardware, "h200");
  EXPECT_EQ(p.pairs[1].decode_hardware, "h200-cheap");
  ASSERT_TRUE(p.best.has_value());
  EXPECT_EQ(*p.best, 3U);  // (h200-cheap, h200-cheap)
  const PlanCandidate& full = p.pairs[0].report.evaluated[*p.pairs[0].report.best];
  const PlanCandidate& cheap = p.pairs[3].report.evaluated[*p.pairs[3].report.best];
  EXPECT_EQ(cheap.chips, full.chips);
  EXPECT_NEAR(*cheap.usd_per_hour, 2.27 * static_cast<double>(cheap.chips), 1e-9);
  EXPECT_NEAR(*full.usd_per_hour, 4.54 * static_cast<double>(full.chips), 1e-9);
  ASSERT_TRUE(p.runner_up.has_value());
  EXPECT_NE(*p.runner_up, *p.best);
  // Mixed pairs search disaggregated deployments only, each pool at its own price:
  // (h200 prefill, cheap decode) = prefill chips x $4.54 + decode chips x $2.27.
  ASSERT_FALSE(p.pairs[1].report.evaluated.empty());
  for (const PlanCandidate& c : p.pairs[1].report.evaluated) {
    EXPECT_TRUE(c.disaggregated);
    EXPECT_EQ(c.prefill_hardware, "h200");
    EXPECT_EQ(c.decode_hardware, "h200-cheap");
    EXPECT_NEAR(*c.usd_per_hour, 4.54 * static_cast<double>(c.replica_chips * c.replicas) +
                                     2.27 * static_cast<double>(c.decode_replica_chips * c.decode_replicas), 1e-9);
  }
}

TEST(PlanChips, ADecodeBoundWorkloadPicksTheCheaperBandwidthPerDollar) {
  // Llama 3.1 8B streams its 16.06 GB of bf16 weights every decode step. One H200 reads
  // HBM at 4.8 TB/s x 0.84 achieved = 4.03 TB/s: 3.98 ms a step for the weights alone, 5.68
  // ms at TPOT p90 with the engine's fixed work (`chalk simulate -n 1`), over a 4.5 ms
  // target; TP2 halves each chip's share (1.99 ms; 4.20 ms at p90) and meets it on 2 chips,
  // $9.08/hour. "h200-2x-hbm" (9.6 TB/s at $6.81: 1.5x the price for 2x the bandwidth, 1.33x
  // the bandwidth per dollar) streams them in 1.99 ms on one chip (3.83 ms at p90), $6.81.
  // So the plan picks it for both pools on one chip, aggregated; the runner-up is the plain
  // H200 on 2 chips (TP2) at $9.08. A mixed pair needs a chip per pool: at least
  // $4.54 + $6.81 = $11.35.
  const std::vector<SystemSpec> systems = {load_system("h200"), priced_h200("h200-2x-hbm", 6.81, 2.0)};
  PlanOptions o = chips_plan();
  o.slo.tpot_s = 0.0045;
  const ChipChoicePlan p = plan_chip_types(load_model("llama-3.1-8b"), systems, chips_engine(), chips_traffic(), o);
  ASSERT_TRUE(p.best.has_value());
  EXPECT_EQ(p.pairs[*p.best].prefill_hardware, "h200-2x-hbm");
  EXPECT_EQ(p.pairs[*p.best].decode_hardware, "h200-2x-hbm");
  const PlanCandidate& b = p.pairs[*p.best].report.evaluated[*p.pairs[*p.best].report.best];
  EXPECT_FALSE(b.disaggregated);
  EXPECT_EQ(b.chips, 1);
  EXPECT_NEAR(*b.usd_per_hour, 6.81, 1e-9);
  ASSERT_TRUE(p.runner_up.has_value());
  const PlanCandidate& r = p.pairs[*p.runner_up].report.evaluated[*p.pairs[*p.runner_up].report.best];
  EXPECT_EQ(p.pairs[*p.runner_up].decode_hardware, "h200");
  EXPECT_EQ(r.chips, 2);
  EXPECT_NEAR(*r.usd_per_hour, 9.08, 1e-9);
  // (h200 prefill, h200-2x-hbm decode): one chip each, disaggregated.
  ASSERT_TRUE(p.pairs[1].report.best.has_value());
  const PlanCandidate& mixed = p.pairs[1].report.evaluated[*p.pairs[1].report.best];
  EXPECT_EQ(mixed.chips, 2);
  EXPECT_NEAR(*mixed.usd_per_hour, 4.54 + 6.81, 1e-9);
}

TEST(PlanChips, ADollarBudgetHoldsEveryPairToTheSameDollars) {
  // $6 per hour, no chip budget, H200 at $4.54 and a renamed one at $2.27, TPOT <= 30 ms
  // (one chip of either meets it: TheSameChipAtHalfThePrice...). (h200, h200) buys
  // floor(6 / 4.54) = 1 chip: $4.54; (cheap, cheap) floor(6 / 2.27) = 2 chips, best 1 chip
  // $2.27: the choice, the runner-up $4.54. A mixed pair buys 2 chips of the cheaper one, but
  // its every deployment has a chip of each ($4.54 + $2.27 = $6.81 > $6): kept, over the
  // budget, never chosen, so the pair has no best.
  const std::vector<SystemSpec> systems = {load_system("h200"), priced_h200("h200-cheap", 2.27)};
  PlanOptions o = chips_plan();
  o.chip_budget = 0;
  o.usd_per_hour_budget = 6;
  o.slo.tpot_s = 0.03;
  const ChipChoicePlan p = plan_chip_types(load_model("llama-3.1-8b"), systems, chips_engine(), chips_traffic(), o);
  ASSERT_TRUE(p.best.has_value() && p.runner_up.has_value());
  EXPECT_EQ(*p.best, 3U);
  EXPECT_EQ(*p.runner_up, 0U);
  EXPECT_EQ(p.pairs[0].report.chip_budget, 1);
  EXPECT_EQ(p.pairs[3].report.chip_budget, 2);
  EXPECT_NEAR(*p.pairs[3].report.evaluated[*p.pairs[3].report.best].usd_per_hour, 2.27, 1e-9);
  for (const std::size_t k : {1U, 2U}) {
    const PlanReport& r = p.pairs[k].report;
    EXPECT_EQ(r.chip_budget, 2);
    EXPECT_FALSE(r.best.has_value());
    ASSERT_FALSE(r.evaluated.empty());
    for (const PlanCandidate& c : r.evaluated) {
      EXPECT_TRUE(c.over_budget);
      EXPECT_NEAR(*c.usd_per_hour, 6.81, 1e-9);
    }
    EXPECT_NE(r.why_none.find(" within $6 per hour"), std::string::npos) << r.why_none;
  }
}

/// The field of the InputError `f` throws ("" when it throws none).
template <class F>
std::string chips_refusal(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

TEST(PlanChips, ListsThatCannotBePricedOrExchangeKvAreRefused) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const auto reqs = chips_traffic();
  PlanOptions o = chips_plan();
  o.slo.tpot_s = 0.03;
  const DeploymentOptions base = chips_engine();
  const auto plan = [&](std::vector<SystemSpec> s, const PlanOptions& po = {}, const DeploymentOptions& b = {}) {
    return [&, s, po, b] { plan_chip_types(m, s, b, reqs, po); };
  };
  const SystemSpec h200 = load_system("h200");
  EXPECT_EQ(chips_refusal(plan({h200}, o, base)), "hardware");  // one system: nothing to choose
  EXPECT_EQ(chips_refusal(plan({h200, h200}, o, base)), "hardware");  // listed twice
  SystemSpec unpriced = priced_h200("h200-unpriced", 1);
  unpriced.price_per_chip.reset();
  EXPECT_EQ(chips_refusal(plan({h200, unpriced}, o, base)), "hardware");
  SystemSpec no_nic = priced_h200("h200-no-nic", 1);
  no_nic.scale_out_bandwidth_per_direction = BytesPerSecond(0);
  EXPECT_EQ(chips_refusal(plan({h200, no_nic}, o, base)), "hardware");
  DeploymentOptions priced = base;
  priced.price_per_chip = UsdPerSecond(1.0 / 3600);
  EXPECT_EQ(chips_refusal(plan({h200, priced_h200("b", 1)}, o, priced)), "price_per_chip");
  // A dollar budget below one chip of the cheaper system buys nothing.
  PlanOptions dollars = o;
  dollars.chip_budget = 0;
  dollars.usd_per_hour_budget = 0.5;
  EXPECT_EQ(chips_refusal(plan({h200, priced_h200("b", 1)}, dollars, base)), "usd_budget");
  // Two systems for one pool pair without disaggregated serving: plan_pools refuses.
  PlanOptions agg = o;
  agg.disaggregated = false;
  EXPECT_EQ(chips_refusal([&] { plan_pools(m, h200, priced_h200("b", 1), base, reqs, agg); }), "modes");
  // Every pair refused: Llama 3.1 70B's 141 GB of bf16 weights fit no one 141 GB H200, so
  // a budget of 1 chip holds it on neither system; the first pair's error is thrown.
  PlanOptions tiny = o;
  tiny.chip_budget = 1;
  tiny.replica_chips.clear();
  const std::vector<SystemSpec> two = {h200, priced_h200("b", 1)};
  EXPECT_EQ(chips_refusal([&] { plan_chip_types(load_model("llama-3.1-70b"), two, base, reqs, tiny); }), "chips");
}

TEST(PlanChips, EachPairIsReportedAsItEnds) {
  // Review 9 L4: two systems with both modes are 2 x 2 = 4 ordered pairs, each reported once
  // as it ends, in the order of `pairs`, against the total up front; aggregated only, one
  // pair a system: 2.
  const std::vector<SystemSpec> systems = {load_system("h200"), priced_h200("h200-cheap", 2.27)};
  PlanOptions o = chips_plan();
  o.slo.tpot_s = 0.03;
  std::vector<std::string> seen;
  std::vector<std::size_t> dones, totals;
  const auto note = [&](const ChipPairPlan& x, std::size_t done, std::size_t total) {
    seen.push_back(x.prefill_hardware + "/" + x.decode_hardware);
    dones.push_back(done);
    totals.push_back(total);
  };
  const ChipChoicePlan p = plan_chip_types(load_model("llama-3.1-8b"), systems, chips_engine(), chips_traffic(), o, {}, note);
  EXPECT_EQ(seen, (std::vector<std::string>{"h200/h200", "h200/h200-cheap", "h200-cheap/h200", "h200-cheap/h200-cheap"}));
  EXPECT_EQ(dones, (std::vector<std::size_t>{1, 2, 3, 4}));
  EXPECT_EQ(totals, (std::vector<std::size_t>(4, 4)));
  ASSERT_EQ(p.pairs.size(), 4U);
  o.disaggregated = false;
  totals.clear();
  plan_chip_types(load_model("llama-3.1-8b"), systems, chips_engine(), chips_traffic(), o, {}, note);
  EXPECT_EQ(totals, (std::vector<std::size_t>(2, 2)));
}

}  // namespace
}  // namespace chalk::sim
