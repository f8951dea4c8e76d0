// A day planned hour by hour (day_plan.h): each hour takes the single-rate plan of its rate,
// and the day costs the sum of its hours.
#include "chalk/sim/day_plan.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

std::string rate_curve_error(const std::string& text) {
  try {
    parse_rate_curve(text, "day.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DayPlan, TwoLevelsTakeTheSingleRatePlansAndTheDayCostsTheirSumOverTheHours) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  ASSERT_TRUE(s.price_per_chip.has_value());
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  TrafficSpec shape;
  shape.requests = 150;
  shape.input = {LengthDist::Kind::fixed, 1000};
  shape.output = {LengthDist::Kind::fixed, 100};
  PlanOptions o;
  o.chip_budget = 8;
  o.slo.ttft_s = 0.5;
  o.slo.tpot_s = 0.03;
  o.replica_chips = {1};
  o.max_sequences = {256};
  o.disaggregated = false;
  // Night (hours 0-7): 2 requests/s; day (8-23): 60/s.
  const RateCurve curve = parse_rate_curve("hour,rate_per_s\n# night\n" + [] {
    std::string rows;
    for (int h = 0; h < 24; ++h) rows += std::to_string(h) + (h < 8 ? ",2\n" : ",60\n");
    return rows;
  }(), "day.csv");
  const DayPlan d = plan_day(m, s, base, curve, shape, o);
  ASSERT_EQ(d.levels.size(), 2u);
  EXPECT_EQ(d.levels[0], 2.0);
  EXPECT_EQ(d.levels[1], 60.0);
  EXPECT_EQ(d.level_of_hour[0], 0);
  EXPECT_EQ(d.level_of_hour[8], 1);
  ASSERT_TRUE(d.all_met);
  // Each level's choice is what the single-rate plan (`plan --rate R`) chooses.
  int64_t replicas[2] = {0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    TrafficSpec t = shape;
    t.rate_per_s = d.levels[i];
    const PlanReport single = plan_deployment(m, s, base, generate_traffic(t), o);
    ASSERT_TRUE(single.best.has_value());
    const PlanCandidate& want = single.evaluated[*single.best];
    const PlanCandidate& got = d.plans[i].evaluated[*d.plans[i].best];
    EXPECT_EQ(got.replicas, want.replicas);
    EXPECT_EQ(got.chips, want.chips);
    replicas[i] = got.replicas;
  }
  // 60 requests/s of 1,000 + 100 tokens needs more one-chip replicas than 2/s.
  EXPECT_GT(replicas[1], replicas[0]);
  // The day: 8 h at the night's chips and 16 h at the day's, each chip-hour at the H100's
  // catalog price: (8 n_night + 16 n_day) x price per chip-hour.
  const double price = s.price_per_chip->value() * 3600.0;
  ASSERT_TRUE(d.usd_per_day.has_value());
  EXPECT_NEAR(*d.usd_per_day, (8.0 * static_cast<double>(replicas[0]) + 16.0 * static_cast<double>(replicas[1])) * price, 1e-9);
  EXPECT_DOUBLE_EQ(d.chip_hours, 8.0 * static_cast<double>(replicas[0]) + 16.0 * static_cast<double>(replicas[1]));
}

TEST(DayPlan, HoursLeftOutHaveNoTrafficAndCostNothing) {
  const RateCurve c = parse_rate_curve("hour,rate_per_s\r\n9,1.5\r\n10,0\r\n", "day.csv");
  EXPECT_DOUBLE_EQ(c.rate_per_s[9], 1.5);
  EXPECT_DOUBLE_EQ(c.rate_per_s[10], 0.0);
  EXPECT_DOUBLE_EQ(c.rate_per_s[0], 0.0);
}

TEST(DayPlan, RateCurveFromATraceCountsEachHourOverTheSecondsItCovers) {
  // A trace starting at 10:30:00 (start_of_day 37,800 s): 3 requests in 10:30-11:00 (1,800 s
  // covered: 3 / 1,800 per s), then 2 at 11:00 and 11:59:59... ending at 12:15:00 with one:
  // hour 11 covers 3,600 s with 2 requests, hour 12 covers 900 s with 1.
  std::vector<Request> r(6);
  const double at[] = {0, 600, 1200, 1800, 5399, 6300};
  for (std::size_t i = 0; i < 6; ++i) r[i].arrival_s = at[i];
  const RateCurve c = rate_curve_from_trace(r, 37800);
  EXPECT_DOUBLE_EQ(c.rate_per_s[10], 3.0 / 1800);
  EXPECT_DOUBLE_EQ(c.rate_per_s[11], 2.0 / 3600);
  EXPECT_DOUBLE_EQ(c.rate_per_s[12], 1.0 / 900);
  EXPECT_DOUBLE_EQ(c.rate_per_s[13], 0.0);
  std::vector<Request> one(1);
  EXPECT_THROW(rate_curve_from_trace(one, 0), InputError);
}

TEST(DayPlan, RateCurveErrorsNameTheLineTheColumnAndWhatWasExpected) {
  EXPECT_EQ(rate_curve_error("hour,rate\n"), "day.csv: line 1: expected the header 'hour,rate_per_s', got 'hour,rate'");
  EXPECT_EQ(rate_curve_error(""), "day.csv: empty rate curve; expected the header 'hour,rate_per_s'");
  EXPECT_EQ(rate_curve_error("hour,rate_per_s\n24,1\n"), "day.csv: line 2: hour: expected an integer 0..23 not listed before, got '24'");
  EXPECT_EQ(rate_curve_error("hour,rate_per_s\n7,1\n7,2\n"), "day.csv: line 3: hour: expected an integer 0..23 not listed before, got '7'");
  EXPECT_EQ(rate_curve_error("hour,rate_per_s\n7,-1\n"), "day.csv: line 2: rate_per_s: expected requests per second 0..1000000, got '-1'");
  EXPECT_EQ(rate_curve_error("hour,rate_per_s\n7,fast\n"), "day.csv: line 2: rate_per_s: expected requests per second 0..1000000, got 'fast'");
  EXPECT_EQ(rate_curve_error("hour,rate_per_s\n7\n"), "day.csv: line 2: expected 2 fields (hour,rate_per_s), got '7'");
  EXPECT_EQ(rate_curve_error("hour,rate_per_s\n7,0\n"), "day.csv: no hour has a rate above 0; expected at least one");
}

}  // namespace
}  // namespace chalk::sim
