// `chalk serving modes`: the fast and slow modes read off the latency-cost frontier
// (cmd_serving_frontier.cc). Shared options and helpers: serving_cli.h.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/serving.h"
#include "chalk/engine/pipeline.h"
#include "envelope.h"
#include "pipeline_cli.h"
#include "deployment_options.h"
#include "serving_cli.h"
#include "table.h"

namespace chalk::cli::serving_cli {

// ---------------------------------------------------------------------------------------
// modes

namespace {

nlohmann::json point_json(const ModePoint& p, RooflineBeside& lower) {
  return {{"chips", p.n_chips},
          {"pp", p.pp},
          {"layout", p.layout.empty() ? nlohmann::json() : nlohmann::json(p.layout)},
          {"batch", p.batch},
          {"t_step_ms", to_ms(p.step.t_step)},
          {"t_step_roofline_ms", lower.t_step_ms(p.n_chips, p.batch, p.step.context)},
          {"t_compute_ms", to_ms(p.step.t_compute)},
          {"t_weights_ms", to_ms(p.step.t_weights)},
          {"t_kv_ms", to_ms(p.step.t_kv)},
          {"t_comm_ms", to_ms(p.step.t_comm)},
          {"t_overhead_ms", to_ms(p.step.t_overhead)},
          {"t_host_ms", to_ms(p.step.t_host)},
          {"bound", to_string(p.step.bound)},
          {"tok_per_s_per_user", p.tokens_per_s_per_user.value()},
          {"tok_per_s_per_chip", p.tokens_per_s_per_chip.value()},
          {"cost_usd_per_mtok", p.cost_per_token ? nlohmann::json(to_usd_per_mtok(*p.cost_per_token)) : nlohmann::json()}};
}

}  // namespace

nlohmann::json modes_json(const ModesReport& r, RooflineBeside& lower) {
  nlohmann::json fast = nlohmann::json::array(), budget = nlohmann::json::array();
  for (const auto& q : r.fast) {
    fast.push_back({{"speed_multiple", q.speed_multiple},
                    {"reachable", q.point.has_value()},
                    {"price_multiple", q.point ? nlohmann::json(q.price_multiple) : nlohmann::json()},
                    {"point", q.point ? point_json(*q.point, lower) : nlohmann::json()}});
  }
  for (const auto& q : r.budget) {
    budget.push_back({{"price_multiple", q.price_multiple},
                      {"speed_multiple", q.speed_multiple},
                      {"price_multiple_used", q.price_multiple_used},
                      {"capped_by_fastest", q.capped_by_fastest},
                      {"below_floor", q.below_floor},
                      {"point", point_json(q.point, lower)}});
  }
  return {{"context_tokens", r.context},
          {"baseline_rule", r.baseline_rule},
          {"baseline", point_json(r.baseline, lower)},
          {"fast_mode", fast},
          {"budget", budget},
          {"fastest", point_json(r.fastest, lower)},
          {"max_speed_multiple", r.max_speed_multiple},
          {"price_multiple_at_fastest", r.price_multiple_at_fastest},
          {"what_stops_it", r.what_stops_it},
          {"slow_mode",
           {{"cheapest", point_json(r.cheapest, lower)},
            {"asymptotic_tok_per_s_per_chip", r.asymptotic_tokens_per_s_per_chip.value()},
            {"asymptotic_cost_usd_per_mtok",
             r.asymptotic_cost_per_token ? nlohmann::json(to_usd_per_mtok(*r.asymptotic_cost_per_token)) : nlohmann::json()},
            {"floor_gap", r.floor_gap},
            {"price_multiple", r.slow_price_multiple},
            {"speed_multiple", r.slow_speed_multiple}}},
          {"excluded_replicas", excluded_json(r.excluded)}};
}

namespace {

std::string cost_text(const std::optional<UsdPerToken>& c) {
  return c ? fmt::format("${:.4g}/Mtok", to_usd_per_mtok(*c)) : std::string("(no price)");
}

std::string point_text(const ModePoint& p) {
  return fmt::format("batch {} on {}{}: {:.4g} tok/s/user, step {:.3g} ms ({}), {:.4g} tok/s/chip, {}", p.batch, counted(p.n_chips, "chip"),
                     p.layout.empty() ? "" : " (" + p.layout + ")", p.tokens_per_s_per_user.value(), to_ms(p.step.t_step),
                     to_string(p.step.bound), p.tokens_per_s_per_chip.value(), cost_text(p.cost_per_token));
}

}  // namespace

std::string modes_text(const ModesReport& r) {
  // Every multiple at 4 significant digits, as the tok/s figures it divides (point_text):
  // at 3 a budget's 2.497x printed as 2.5x beside the fast mode's 2.5x at a higher price,
  // though 62.14 / 24.89 tok/s/user on the lines themselves is 2.497 (QA).
  std::string s;
  s += fmt::format("baseline    {}\n            {}\n", r.baseline_rule, point_text(r.baseline));
  s += "fast mode\n";
  for (const auto& q : r.fast) {
    if (q.point) {
      s += fmt::format("  {:g}x the speed costs {:.4g}x the price: {}\n", q.speed_multiple, q.price_multiple, point_text(*q.point));
    } else {
      s += fmt::format("  {:g}x the speed is out of reach: the fastest point is {:.4g}x\n", q.speed_multiple, r.max_speed_multiple);
    }
  }
  for (const auto& q : r.budget) {
    if (q.below_floor) {
      s += fmt::format("  {:g}x the price is out of reach: the cost floor is {:.4g}x the baseline's price\n", q.price_multiple,
                       q.price_multiple_used);
      continue;
    }
    s += fmt::format("  {:g}x the price buys {:.4g}x the speed (using {:.4g}x){}: {}\n", q.price_multiple, q.speed_multiple,
                     q.price_multiple_used, q.capped_by_fastest ? ", capped by the fastest point" : "", point_text(q.point));
  }
  s += fmt::format("  fastest: {:.4g}x the speed at {:.4g}x the price: {}\n", r.max_speed_multiple, r.price_multiple_at_fastest,
                   point_text(r.fastest));
  s += "  what stops it: " + r.what_stops_it + "\n";
  s += "slow mode\n";
  s += fmt::format("  cost floor within HBM: {}\n", point_text(r.cheapest));
  s += fmt::format("  = {:.4g}x the baseline price at {:.4g}x its speed\n", r.slow_price_multiple, r.slow_speed_multiple);
  s += fmt::format("  floor of the hyperbola (batch -> infinity on {} chips, memory unlimited): {:.4g} tok/s/chip, {}; "
                   "the HBM-full batch costs {:.4g}x that\n",
                   r.cheapest.n_chips, r.asymptotic_tokens_per_s_per_chip.value(), cost_text(r.asymptotic_cost_per_token),
                   r.floor_gap);
  for (const auto& e : r.excluded) s += fmt::format("  excluded {}: {}\n", counted(e.n_chips, "chip"), e.reason);
  return s;
}

namespace {

/// One row per mode point (the baseline, each fast-mode speed multiple it reaches, each budget
/// multiple above the floor, the fastest point and the cost floor): the table `--csv` prints
/// and the JSON's `rows`, the same figures `modes` holds as objects.
Table modes_table(const ModesReport& r, RooflineBeside& lower) {
  Table t;
  t.columns = {{"mode_point", "mode"},
               {"speed_multiple", "speed x", 4},
               {"price_multiple", "price x", 4},
               {"chips", "chips"},
               {"pp", "pp"},
               {"layout", "layout"},
               {"batch", "batch"},
               {"t_step_ms", "step ms"},
               {"t_step_roofline_ms", "roofline ms"},
               {"bound", "bound"},
               {"tok_per_s_per_user", "tok/s/user", 4},
               {"tok_per_s_per_chip", "tok/s/chip", 4},
               {"cost_usd_per_mtok", "$/Mtok", 4}};
  auto add = [&](const std::string& mode, double speed, double price, const ModePoint& p) {
    t.add({mode, speed, price, p.n_chips, p.pp, p.layout.empty() ? Cell{} : Cell(p.layout), p.batch, to_ms(p.step.t_step),
           lower.t_step_ms(p.n_chips, p.batch, p.step.context), std::string(to_string(p.step.bound)), p.tokens_per_s_per_user.value(),
           p.tokens_per_s_per_chip.value(), cost_cell(p.cost_per_token)});
  };
  add("baseline", 1, 1, r.baseline);
  for (const auto& q : r.fast) {
    if (q.point) add(fmt::format("fast {:g}x speed", q.speed_multiple), q.speed_multiple, q.price_multiple, *q.point);
  }
  for (const auto& q : r.budget) {
    if (!q.below_floor) add(fmt::format("budget {:g}x price", q.price_multiple), q.speed_multiple, q.price_multiple_used, q.point);
  }
  add("fastest", r.max_speed_multiple, r.price_multiple_at_fastest, r.fastest);
  add("cost floor", r.slow_speed_multiple, r.slow_price_multiple, r.cheapest);
  return t;
}

}  // namespace

ModesOptions modes_options(const ServingArgs& a, const ServingLevers& lev) {
  ModesOptions o;
  o.context = single_int(a.context, "--context", 1, 1LL << 30);
  o.replica_chips = replica_list(a);
  o.levers = lev;
  o.speed_multiples = parse_positive_list(a.speed_multiples, "--speed-multiple");
  o.price_multiples = parse_positive_list(a.price_multiples, "--price-multiple");
  o.baseline_tokens_per_s_per_user = a.baseline_speed;
  o.baseline_cost_tolerance = a.baseline_tolerance;
  if (a.baseline_speed && (!(*a.baseline_speed > 0) || !std::isfinite(*a.baseline_speed))) {
    throw InputError("--baseline-tok-per-s-per-user", "must be positive, got " + format_number(*a.baseline_speed, 4));
  }
  return o;
}

void run_modes(const ServingArgs& a) {
  const ServingLevers lev = levers_of(a.levers, a.deployment);
  const Loaded l = load(a);
  ModesOptions mo = modes_options(a, lev);
  mo.pipeline_stages = l.pp;
  if (l.wide_replica > 0) mo.replica_chips = {l.wide_replica};
  const ModesReport r = fast_and_slow_modes(l.model, l.system, l.base, mo);
  if (a.output.csv) {
    RooflineBeside lower(l, lev);
    print_csv(std::cout, modes_table(r, lower));
    return;
  }
  if (a.output.json) {
    nlohmann::json j = l.pp > 1 ? pipeline_head(l) : describe_json(l.shown);
    j["assumptions"]["chips"] = nullptr;
    j["assumptions"]["chips_varied"] = l.pp > 1 ? "every stage's chips (chips per stage 1..scale-up domain)" : "1..scale-up domain unless --replica-chips";
    j["levers"] = levers_json(lev);
    RooflineBeside lower(l, lev);
    j["modes"] = modes_json(r, lower);
    const Table t = modes_table(r, lower);  // the same points as rows, as --csv prints them
    j["rows"] = to_json(t);
    print_json(std::cout, envelope("serving modes", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format(
                   "chalk serving modes: what a faster or a cheaper mode costs (the lecture's opening question), at {} "
                   "tokens of context\n",
                   r.context)
            << (l.pp > 1 ? pipeline_head_text(l, r.context) : describe_text_with_warnings(l.shown, r.context)) << scale_out_warning(l, a)
            << "levers      " << describe_levers(lev) << "\n"
            << (l.pp > 1 ? fmt::format("replicas    {} pipeline stages, each stage every size from 1 chip to the scale-up domain; ", l.pp)
                : l.wide_replica > 0
                    ? fmt::format("replicas    {} chips: no replica within the scale-up domain holds the model, so the smallest that does; ", l.wide_replica)
                    : std::string("replicas    every size from 1 chip to the scale-up domain unless --replica-chips; "))
            << (l.shown.mechanisms.enabled ? "each size tries its derived layout and, unless --tp is given, data-parallel attention "
                                             "with and without two micro-batches (MoE) or the FFN over the whole replica (dense); "
                                             "each answer names its layout\n\n"
                                           : "roofline only\n\n")
            << modes_text(r);
  if (quiet_tables()) {  // -q: the report's points as one table (the text above is muted)
    RooflineBeside lower(l, lev);
    print_table(std::cout, modes_table(r, lower));
  }
}

}  // namespace chalk::cli::serving_cli
