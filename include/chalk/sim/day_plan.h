// A day of traffic planned hour by hour (docs/simulator.md, "Planning a day"): a diurnal
// rate curve, the cheapest deployment at each of its rates (plan.h), and the replicas by
// hour and the cost of the day.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/sim/plan.h"
#include "chalk/sim/traffic.h"

namespace chalk::sim {

/// Requests per second in each hour of a day, hour 0 = 00:00-01:00 on the curve's clock.
/// 0: no traffic that hour (no deployment, no cost).
struct RateCurve {
  std::array<double, 24> rate_per_s{};
};

/// Reads a rate curve CSV: the header `hour,rate_per_s`, then rows of an integer hour 0..23
/// (each at most once, any order) and its mean arrival rate in requests per second (a number
/// >= 0, at most 1e6); hours not listed have rate 0; `#` lines and one final empty line are
/// skipped; at least one rate must be above 0. Throws InputError naming `source`, the line,
/// the column, the text and what was expected ("day.csv: line 3: hour: expected an integer
/// 0..23 not listed before, got '7'").
RateCurve parse_rate_curve(std::string_view text, const std::string& source);

/// The curve a trace implies (a trace with a time of day: trace_formats.h, Trace::
/// start_of_day_s): for each hour of day, the requests that arrived in it / the seconds of it
/// the trace covers (from its first to its last arrival, every day it spans); hours it does
/// not cover read 0. Throws InputError("trace") when the trace spans no time.
RateCurve rate_curve_from_trace(std::span<const Request> requests, double start_of_day_s);

/// The day's plan.
struct DayPlan {
  std::vector<double> levels;        ///< the curve's distinct rates above 0, ascending
  std::vector<PlanReport> plans;     ///< plan_deployment at each level, in the same order
  std::array<int, 24> level_of_hour{};  ///< index into levels; -1 for an hour of rate 0
  /// Sum over the hours with traffic of the chosen deployment's chips x 1 h.
  double chip_hours = 0;
  /// Sum over the hours with traffic of the chosen deployment's cost_usd_per_hour x 1 h;
  /// nullopt without a price or when some level has no deployment meeting the SLO.
  std::optional<double> usd_per_day;
  bool all_met = false;  ///< every level has a deployment meeting the SLO
};

/// Plans each distinct rate of `curve` once: `shape` (lengths, arrival process, request
/// count, seed) drawn at that rate (generate_traffic), then plan_deployment(m, s, base, it,
/// o), exactly as `chalk plan --rate R` with the same flags would; each hour takes its
/// rate's choice. A deployment is sized to the hour's mean rate, held for the whole hour
/// (replicas change on the hour; the time to start one is not modelled). Throws as
/// generate_traffic and plan_deployment do, and InputError("rate_curve") for a curve with
/// no rate above 0.
DayPlan plan_day(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const RateCurve& curve, const TrafficSpec& shape,
                 const PlanOptions& o);

}  // namespace chalk::sim
