// `chalk plan --rate-curve FILE` (plan_day_cli.h): each rate of a diurnal curve planned as
// `plan --rate R` would, the hours with their choices, the day's chip-hours and cost.
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/trace_formats.h"
#include "commands.h"
#include "envelope.h"
#include "plan_day_cli.h"

namespace chalk::cli {

void check_day_flags(const TrafficArgs& t, bool launch_dir) {
  auto refuse = [](const char* flag, const char* why) { throw InputError(flag, std::string(why) + "; --rate-curve gives the day's rates"); };
  if (t.rate) refuse("--rate", "states one rate");
  if (t.rate_per_min) refuse("--rate-per-min", "states one rate");
  if (!t.trace.empty()) refuse("--trace", "states one traffic");
  if (!t.shared_prefix.empty()) refuse("--shared-prefix", "shapes one traffic's prompts, which a day plan does not draw");
  if (!t.sessions.empty()) refuse("--sessions", "shapes one traffic's prompts, which a day plan does not draw");
  if (!t.lora.empty()) refuse("--lora", "names one traffic's adapters, which a day plan does not draw");
  if (!(t.prefix_hit_rate >= 0 && t.prefix_hit_rate < 1)) {
    throw InputError("--prefix-hit-rate", "must be a fraction in [0, 1), got " + format_number(t.prefix_hit_rate, 4));
  }
  if (launch_dir) refuse("--launch-dir", "writes one deployment's files, and a day has one per rate (plan at that rate with --rate)");
}

namespace {

Table hours_table(const sim::RateCurve& curve, const sim::DayPlan& d) {
  Table t;
  t.columns = {{"hour", "hour"},
               {"request_rate_per_s", "req/s"},
               {"mode", "mode"},
               {"chips", "chips"},
               {"replica_chips", "replica"},
               {"replicas", "replicas"},
               {"decode_replica_chips", "decode replica"},
               {"decode_replicas", "decode replicas"},
               {"max_sequences", "max seqs"},
               {"cost_usd_per_hour", "$/hour"},
               {"ttft_at_percentile_ms", "TTFT@p ms"},
               {"tpot_at_percentile_ms", "TPOT@p ms"},
               {"meets_slo", "meets"},
               {"layout", "layout"}};
  t.set_priority({"hour", "request_rate_per_s", "chips", "meets_slo"}, 0);
  t.set_priority({"decode_replica_chips", "decode_replicas", "max_sequences", "layout"}, 2);
  for (std::size_t h = 0; h < 24; ++h) {
    const int li = d.level_of_hour[h];
    const int64_t hour = static_cast<int64_t>(h);
    // Mode "none": no traffic (no deployment, no cost), or no deployment meets the SLO at
    // the hour's rate (chips and cost unknown: null).
    const int64_t zero = 0;
    if (li < 0) {
      t.add({hour, 0.0, std::string("none"), zero, zero, zero, Cell{}, Cell{}, zero, 0.0, Cell{}, Cell{}, std::string("yes"), Cell{}});
      continue;
    }
    const sim::PlanReport& p = d.plans[static_cast<std::size_t>(li)];
    if (!p.best) {
      t.add({hour, curve.rate_per_s[h], std::string("none"), Cell{}, zero, zero, Cell{}, Cell{}, zero, Cell{}, Cell{}, Cell{}, std::string("no"), Cell{}});
      continue;
    }
    const sim::PlanCandidate& c = p.evaluated[*p.best];
    t.add({hour, curve.rate_per_s[h], std::string(c.disaggregated ? "disaggregated" : "aggregated"), c.chips, c.replica_chips, c.replicas,
           c.disaggregated ? Cell(c.decode_replica_chips) : Cell{}, c.disaggregated ? Cell(c.decode_replicas) : Cell{}, c.max_sequences, c.usd_per_hour ? Cell(*c.usd_per_hour) : Cell{},
           c.summary.ttft.count > 0 ? Cell(c.summary.ttft_at_slo_percentile_s * 1e3) : Cell{},
           c.summary.tpot.count > 0 ? Cell(c.summary.tpot_at_slo_percentile_s * 1e3) : Cell{}, std::string("yes"), c.layout});
  }
  return t;
}

}  // namespace

void run_plan_day(const DayPlanInputs& in) {
  std::string text;
  try {
    text = read_file(in.curve_file);
  } catch (const InputError& e) {
    throw InputError("--rate-curve", std::string(e.what()));
  }
  // A curve file, or a trace with a time of day whose hours give the curve.
  std::string_view head(text);
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  const bool is_curve = head.substr(0, 15) == "hour,rate_per_s" || head.substr(0, 1) == "#" || head.empty();
  std::string from_trace;
  sim::RateCurve curve;
  if (is_curve) {
    curve = sim::parse_rate_curve(text, in.curve_file);
  } else {
    const sim::Trace trace = sim::read_trace(text, in.curve_file);
    if (!trace.start_of_day_s) {
      throw InputError("--rate-curve", in.curve_file + " is a " + sim::trace_format_name(trace.format) +
                                           " trace, which states no time of day; expected 'hour,rate_per_s' rows or an Azure or BurstGPT trace");
    }
    curve = sim::rate_curve_from_trace(trace.requests, *trace.start_of_day_s);
    from_trace = fmt::format(" (by hour of day from the {} trace's {} requests)", sim::trace_format_name(trace.format), trace.requests.size());
  }
  const sim::TrafficSpec shape = traffic_shape_from(in.traffic);
  const sim::DayPlan d = sim::plan_day(in.model, in.system, in.base, curve, shape, in.options);
  int64_t simulations = 0;
  std::string why_none;
  for (std::size_t i = 0; i < d.plans.size(); ++i) {
    simulations += d.plans[i].simulations;
    if (!d.plans[i].best && why_none.empty()) why_none = fmt::format("at {} req/s: {}", format_number(d.levels[i], 4), d.plans[i].why_none);
  }
  if (!d.all_met) {
    command_outcome() = {kExitNoDeployment, "plan: no deployment meets the SLO " + why_none + " (exit status " + std::to_string(kExitNoDeployment) + ")"};
  }
  const std::string traffic = fmt::format("day curve {}{}: {} rates from {} to {} req/s; each drawn as {} requests, {} arrivals, input {}, output {}",
                                          in.curve_file, from_trace, d.levels.size(), format_number(d.levels.front(), 4), format_number(d.levels.back(), 4),
                                          shape.requests, in.traffic.arrivals, in.traffic.input, in.traffic.output);
  const Table t = hours_table(curve, d);
  if (in.output.csv) {
    print_csv(std::cout, t, {});
    return;
  }
  if (in.output.json) {
    nlohmann::json j;
    const nlohmann::json described = describe_json(make_deployment(in.model, in.system, in.base));
    j["model"] = described["model"];
    j["hardware"] = described["hardware"];
    j["traffic"] = traffic;
    j["engine"] = sim::release_name(in.policy);
    j["kv_admission"] = in.policy.reserve_to_completion ? "to_completion" : "on_demand";
    j["max_batched_tokens"] = in.policy.max_batched_tokens;
    j["block_size_tokens"] = in.policy.block_size;
    j["gpu_memory_utilization"] = in.gpu_memory_utilization;
    j["engine_profile"] = engine_profile_json(in.policy_args.profile);
    j["slo"] = {{"ttft_slo_ms", in.options.slo.ttft_s ? nlohmann::json(*in.options.slo.ttft_s * 1e3) : nlohmann::json(nullptr)},
                {"tpot_slo_ms", in.options.slo.tpot_s ? nlohmann::json(*in.options.slo.tpot_s * 1e3) : nlohmann::json(nullptr)},
                {"percentile", in.options.slo.percentile}};
    j["chip_budget"] = d.plans.front().chip_budget;
    j["simulations"] = simulations;
    j["chip_hours"] = d.chip_hours;
    j["cost_usd_per_day"] = d.usd_per_day ? nlohmann::json(*d.usd_per_day) : nlohmann::json(nullptr);
    j["why_none"] = why_none;
    j["rows"] = to_json(t);
    print_json(std::cout, envelope("plan", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk plan: a day of {} on {} within {} chips, hour by hour: each rate planned as `plan --rate R` "
                           "(docs/simulator.md, \"Planning a day\")\n",
                           in.model.name, in.system.name, d.plans.front().chip_budget)
            << "traffic     " << traffic << '\n'
            << fmt::format("searched    {} rates, {} replica runs, engine {}\n", d.levels.size(), simulations, sim::release_name(in.policy));
  if (!why_none.empty()) std::cout << "no deployment " << why_none << '\n';
  std::cout << '\n';
  print_table(std::cout, t);
  std::cout << fmt::format("\nday         {:g} chip-hours, {}\n", d.chip_hours,
                           d.usd_per_day ? fmt::format("${:.2f}", *d.usd_per_day) + " per day (each hour's chips x 1 h x the price per chip-hour)"
                                         : std::string("no cost (no price, or an hour without a deployment)"));
}

}  // namespace chalk::cli
