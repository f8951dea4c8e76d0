// Several models on one cluster (fleet.h): the fleet file's reader and its errors, each
// model's cheapest system, the fleet's sum and its dollar budget.
#include "chalk/sim/fleet.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

TEST(Fleet, ReadsTheFileAndNamesEachBadField) {
  const auto rows = parse_fleet_csv(
      "# two models\nmodel,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms\n"
      "llama-3.1-8b,2,,512,64,500,\nqwen2.5-7b,0.5,200,uniform:100:300,32,,40\n",
      "f.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].model, "llama-3.1-8b");
  EXPECT_DOUBLE_EQ(rows[0].rate_per_s, 2);
  EXPECT_EQ(rows[0].requests, 1000);  // empty: the default
  EXPECT_EQ(rows[0].input.value, 512);
  EXPECT_DOUBLE_EQ(*rows[0].ttft_slo_s, 0.5);
  EXPECT_FALSE(rows[0].tpot_slo_s);
  EXPECT_EQ(rows[1].requests, 200);
  EXPECT_EQ(rows[1].input.kind, LengthDist::Kind::uniform);
  EXPECT_DOUBLE_EQ(*rows[1].tpot_slo_s, 0.04);
  const std::string h = "model,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms\n";
  const auto error_of = [](const std::string& text) {
    try {
      parse_fleet_csv(text, "f.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(h + "m,fast,,512,64,500,\n"), "f.csv: line 2: rate_per_s: expected a number > 0 (requests per second), got 'fast'");
  EXPECT_EQ(error_of(h + "m,1,2.5,512,64,500,\n"), "f.csv: line 2: requests: expected a whole number 1..10000000 or empty (1000), got '2.5'");
  EXPECT_EQ(error_of(h + "m,1,,512,64,,\n"), "f.csv: line 2: ttft_slo_ms: state a TTFT or a TPOT target (tpot_slo_ms), or both");
  EXPECT_EQ(error_of(h + "m,1,,512,64,-3,\n"), "f.csv: line 2: ttft_slo_ms: expected milliseconds > 0 or empty, got '-3'");
  EXPECT_EQ(error_of(h + "m,1,,512,64,500,\nm,2,,512,64,500,\n"),
            "f.csv: line 3: model: 'm' is listed twice; give each model one line (its whole traffic)");
  EXPECT_EQ(error_of(h + "m,1,,512,64,500\n"), "f.csv: line 2: expected 7 fields (" + h.substr(0, h.size() - 1) + "), got 6");
  EXPECT_EQ(error_of("model,rate\n"), "f.csv: line 1: expected the header '" + h.substr(0, h.size() - 1) + "', got 'model,rate'");
  EXPECT_EQ(error_of(h), "f.csv: no model after the header");
  EXPECT_NE(error_of(h + "m,1,,zero,64,500,\n").find("f.csv: line 2: input: "), std::string::npos);
}

FleetModel small_model(const std::string& name, uint64_t seed) {
  TrafficSpec t;
  t.rate_per_s = 2;
  t.requests = 60;
  t.seed = seed;
  t.input = {LengthDist::Kind::fixed, 512};
  t.output = {LengthDist::Kind::fixed, 32};
  return FleetModel{name, load_model(name), generate_traffic(t), Slo{0.5, std::nullopt, 90}};
}

PlanOptions one_chip_replicas() {
  PlanOptions o;
  o.chip_budget = 2;
  o.replica_chips = {1};
  o.max_sequences = {256};
  o.disaggregated = false;
  return o;
}

// Two 8B-class models at 2 req/s of 512-token prompts: each is served by one chip of either
// system within a 500 ms TTFT (a 512-token prefill takes tens of ms), so each model's
// cheapest deployment is one chip of the system with the lower price per chip-hour, and the
// fleet is their sum: 2 chips at twice that price.
TEST(Fleet, EachModelOnItsCheapestSystemAndTheFleetTheirSum) {
  const std::vector<FleetModel> models = {small_model("llama-3.1-8b", 1), small_model("qwen2.5-7b", 2)};
  const std::vector<SystemSpec> systems = {load_system("h200"), load_system("h100-sxm")};
  const DeploymentOptions base;
  const FleetReport f = plan_fleet(models, systems, base, one_chip_replicas());
  ASSERT_TRUE(f.all_met) << f.why_none;
  const double h100 = systems[1].price_per_chip->value() * 3600, h200 = systems[0].price_per_chip->value() * 3600;
  ASSERT_LT(h100, h200);
  ASSERT_EQ(f.models.size(), 2u);
  for (const auto& c : f.models) {
    ASSERT_TRUE(c.system);
    EXPECT_EQ(*c.system, 1u);  // h100-sxm
    EXPECT_EQ(c.chips, 1);
    EXPECT_NEAR(*c.usd_per_hour, h100, 1e-12);
    const auto& r = c.plans[1];
    EXPECT_TRUE(r.evaluated[*r.best].meets_slo);
    EXPECT_LE(r.evaluated[*r.best].summary.ttft_at_slo_percentile_s, 0.5);
  }
  EXPECT_EQ(f.chips, 2);
  EXPECT_NEAR(*f.usd_per_hour, 2 * h100, 1e-12);
  // A dollar budget below the sum: no cheaper fleet exists, and the reason names the total.
  PlanOptions tight = one_chip_replicas();
  tight.usd_per_hour_budget = 1.5 * h100;
  const FleetReport over = plan_fleet(models, systems, base, tight);
  EXPECT_FALSE(over.all_met);
  EXPECT_NE(over.why_none.find("over the budget"), std::string::npos) << over.why_none;
}

TEST(Fleet, AModelThatFitsNoSystemIsNamed) {
  // Llama 3.1 70B in bf16 (141 GB) on one-chip H100 replicas with a one-chip budget: the
  // plan's own error is kept for that system, and the fleet is not met.
  std::vector<FleetModel> models = {small_model("llama-3.1-70b", 3)};
  PlanOptions o = one_chip_replicas();
  o.chip_budget = 1;
  const FleetReport f = plan_fleet(models, {load_system("h100-sxm")}, DeploymentOptions{}, o);
  EXPECT_FALSE(f.all_met);
  ASSERT_EQ(f.models[0].problems.size(), 1u);
  EXPECT_FALSE(f.models[0].problems[0].empty());
  EXPECT_NE(f.why_none.find("llama-3.1-70b: no deployment meets its SLO (h100-sxm: "), std::string::npos) << f.why_none;
  EXPECT_THROW(plan_fleet({}, {load_system("h100-sxm")}, DeploymentOptions{}, o), InputError);
  EXPECT_THROW(plan_fleet(models, {}, DeploymentOptions{}, o), InputError);
}

}  // namespace
}  // namespace chalk::sim
