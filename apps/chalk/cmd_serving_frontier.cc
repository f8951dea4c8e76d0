// `chalk serving frontier` and `modes`: the latency-cost frontier over batch and chips
// per replica, and the fast and slow modes read off it. Shared options and helpers:
// serving_cli.h.
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
// frontier

/// A warning when --replica-chips asks for replicas wider than the scale-up domain but the
/// plain roofline, which has no scale-out term, prices them.
std::string scale_out_warning(const Loaded& l, const ServingArgs& a) {
  const auto sizes = replica_list(a);
  const int64_t widest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  if (l.base.mechanisms.enabled || widest <= l.system.scale_up_domain) return "";
  return fmt::format("warning     replicas of up to {} chips span more than one scale-up domain of {}: the roofline prices them "
                     "without the scale-out network (about 8x slower, lecture 39:00); drop --roofline\n",
                     widest, l.system.scale_up_domain);
}

double RooflineBeside::t_step_ms(int64_t chips, int64_t batch, int64_t context) {
  auto it = deps_.find(chips);
  if (it == deps_.end()) {
    DeploymentOptions o = l_.base;
    o.n_chips = l_.pp > 1 ? chips / l_.pp : chips;
    o.mechanisms = Mechanisms{};
    it = deps_.emplace(chips, make_deployment(l_.pp > 1 ? pipeline_stage_model(l_.model, l_.pp) : l_.model, l_.system, o)).first;
  }
  if (l_.pp > 1) {
    PipelineShape shape;
    shape.stages = shape.microbatches = l_.pp;
    return to_ms(pipeline_decode(it->second, shape, batch, context).cycle);
  }
  return to_ms(decode_step(it->second, batch, context, resolve_levers(lev_, context)).t_step);
}

Table frontier_table(const std::vector<FrontierPoint>& pts, RooflineBeside& lower, int64_t context) {
  Table t;
  t.columns = {{"chips", "chips"},
               {"layout", "layout"},
               {"batch", "batch"},
               {"memory_full", "fills HBM"},
               {"t_compute_ms", "compute ms"},
               {"t_weights_ms", "weights ms"},
               {"t_kv_ms", "KV ms"},
               {"t_comm_ms", "comm ms"},
               {"t_overhead_ms", "overhead ms"},
               {"t_host_ms", "host ms"},
               {"t_step_ms", "step ms"},
               {"t_step_roofline_ms", "roofline ms"},
               {"bound", "bound"},
               {"tok_per_s_per_user", "tok/s/user"},
               {"tok_per_s_per_chip", "tok/s/chip"},
               {"cost_usd_per_mtok", "$/Mtok"},
               {"on_frontier", "frontier"},
               // decode's and sweep's pipeline columns (add_pipeline_columns), one set whatever the
               // layout: pp 1, one microbatch, no hop without stages (review 5 M1).
               {"pp", "pp"},
               {"microbatches", "microbatches"},
               {"microbatch", "seqs/microbatch"},
               {"t_stage_ms", "stage ms"},
               {"t_hop_ms", "hop ms"},
               {"t_pass_ms", "pass ms"},
               {"stage_busy", "stage busy"}};
  t.set_priority({"chips", "batch"}, 0);
  t.set_priority({"t_compute_ms", "t_weights_ms", "t_kv_ms", "t_comm_ms", "t_overhead_ms", "t_host_ms", "memory_full"}, 2);
  t.set_priority({"pp", "microbatches", "microbatch", "t_stage_ms", "t_hop_ms", "t_pass_ms", "stage_busy"}, 3);
  for (const auto& p : pts) {
    t.add({p.n_chips, p.layout.empty() ? Cell{} : Cell(p.layout), p.batch, std::string(p.memory_full ? "yes" : "no"), to_ms(p.t_compute), to_ms(p.t_weights),
           to_ms(p.t_kv), to_ms(p.t_comm), to_ms(p.t_overhead), to_ms(p.t_host), to_ms(p.t_step), lower.t_step_ms(p.n_chips, p.batch, context),
           std::string(to_string(p.bound)), p.tokens_per_s_per_user.value(),
           p.tokens_per_s_per_chip.value(), cost_cell(p.cost_per_token), std::string(p.on_frontier ? "yes" : "no"), p.pp, p.microbatches,
           p.microbatch, to_ms(p.t_stage), to_ms(p.t_hop), to_ms(p.t_pass), p.stage_busy});
  }
  return t;
}

nlohmann::json excluded_json(const std::vector<ExcludedReplica>& ex) {
  auto j = nlohmann::json::array();
  for (const auto& e : ex) j.push_back({{"chips", e.n_chips}, {"reason", e.reason}});
  return j;
}

FrontierDefault frontier_default(const ServingArgs& a, int64_t context) {
  FrontierDefault f;
  if (!a.replica_chips.empty() || a.deployment.roofline) return f;
  const bool levers = a.levers.draft > 0 || a.levers.sparse_top_k || a.levers.sparse_sqrt;
  DeploymentArgs da = a.deployment;
  da.chips = 0;
  da.prices_pipeline = !levers;
  std::optional<ReplicaNote> note;
  try {
    (void)resolve(da, context, &note);
  } catch (const InputError&) {
    return f;  // nothing holds it: the frontier's own error names the sizes tried
  }
  if (!note || note->fallback.empty()) return f;
  if (note->pp > 1) {
    f.pp = note->pp;
  } else {
    f.replica_chips = note->choice.n_chips;  // DeepSeek-V3 on H100: EP16 over two domains
  }
  return f;
}

PipelineArgs pipeline_args(const Loaded& l) {
  PipelineArgs p;
  p.pp = l.pp;
  p.why = fmt::format("no replica within the {}-chip scale-up domain holds {}: each replica is {} pipeline stages, as `chalk layouts` "
                      "ranks it and `serving sweep` prices it; --replica-chips prices replicas without stages",
                      l.system.scale_up_domain, l.model.name, l.pp);
  return p;
}

nlohmann::json pipeline_head(const Loaded& l) {
  nlohmann::json j = pipeline_json(l.shown, pipeline_args(l));
  j["pipeline"]["why"] = pipeline_args(l).why;
  return j;
}

std::string pipeline_head_text(const Loaded& l, int64_t context) {
  return describe_text_with_warnings(l.shown, context) + pipeline_text(l.shown, pipeline_args(l), {});
}

Loaded load(const ServingArgs& a) {
  forbid_chips(a);
  Loaded l{load_model(a.deployment.model), load_system(a.deployment.hardware), {}, {}};
  l.base = base_options(a.deployment);
  const int64_t context = single_int(a.context, "--context", 0, 1LL << 30);
  const FrontierDefault fd = frontier_default(a, context);
  l.pp = fd.pp;
  l.wide_replica = fd.replica_chips;
  if (l.pp > 1) {
    PipelineArgs p;
    p.pp = l.pp;
    DeploymentArgs da = a.deployment;
    da.chips = 0;
    l.shown = resolve_pipeline_stage(da, p, context);
    return l;
  }
  DeploymentOptions o = l.base;
  // The header describes the widest replica tried, so that its warnings (weights that do
  // not fit) speak of a size the command prices, never of a --chips it does not take.
  const auto sizes = replica_list(a);
  o.n_chips = l.wide_replica > 0 ? l.wide_replica : sizes.empty() ? l.system.scale_up_domain : *std::max_element(sizes.begin(), sizes.end());
  l.shown = make_deployment(l.model, l.system, o);
  return l;
}

FrontierOptions frontier_options(const ServingArgs& a, const ServingLevers& lev) {
  FrontierOptions o;
  o.context = single_int(a.context, "--context", 0, 1LL << 30);
  o.batches = batch_list(a);
  o.replica_chips = replica_list(a);
  o.levers = lev;
  return o;
}

void run_frontier(const ServingArgs& a) {
  const ServingLevers lev = levers_of(a.levers, a.deployment);
  const Loaded l = load(a);
  FrontierOptions o = frontier_options(a, lev);
  o.pipeline_stages = l.pp;
  if (l.wide_replica > 0) o.replica_chips = {l.wide_replica};
  const Frontier f = latency_cost_frontier(l.model, l.system, l.base, o);
  RooflineBeside lower(l, lev);
  const auto& shown = a.all_points ? f.points : f.frontier;
  Table t = frontier_table(shown, lower, f.context);
  // One layout on every row is said once above the table, and its column gives way to
  // $/Mtok and tok/s/chip at 100 columns (review M5); differing layouts stay as detail.
  const bool one_layout = !shown.empty() && std::all_of(shown.begin(), shown.end(), [&](const auto& p) { return p.layout == shown.front().layout; });
  t.set_priority({"layout"}, one_layout ? 3 : 2);
  nlohmann::json head = l.pp > 1 ? pipeline_head(l) : describe_json(l.shown);
  head["assumptions"]["chips"] = nullptr;  // varied: see each row's chips
  head["assumptions"]["chips_varied"] = l.pp > 1 ? "each row's chips: every stage's (chips per stage 1..scale-up domain)"
                                                 : "each row's chips (replica sizes from --replica-chips, default 1..scale-up domain)";
  head["levers"] = levers_json(lev);
  head["context_tokens"] = f.context;
  head["excluded_replicas"] = excluded_json(f.excluded);
  head["points_evaluated"] = f.points.size();
  head["points_beyond_memory"] = f.points_beyond_memory;
  std::string text = fmt::format(
      "chalk serving frontier: tokens/s per user against cost per token over batch and chips per replica, at {} tokens "
      "of context\n{}levers      {}\n{} points fit in HBM ({} beyond memory dropped); {} on the frontier{}\n",
      f.context, (l.pp > 1 ? pipeline_head_text(l, f.context) : describe_text_with_warnings(l.shown, f.context)) + scale_out_warning(l, a), describe_levers(lev), f.points.size(), f.points_beyond_memory, f.frontier.size(),
      a.all_points ? "" : " (--all-points lists every point)");
  if (one_layout && !shown.front().layout.empty()) text += fmt::format("layout      {} (every row)\n", shown.front().layout);
  for (const auto& e : f.excluded) text += fmt::format("excluded    {}: {}\n", counted(e.n_chips, "chip"), e.reason);
  std::set<int64_t> tried;
  for (const auto& p : f.points) tried.insert(p.n_chips);
  for (const auto& e : f.excluded) tried.insert(e.n_chips);
  if (l.wide_replica > 0) {
    text += fmt::format("replicas    {} chips: no replica within the {}-chip scale-up domain holds {}, so the smallest replica that "
                        "does, as `serving sweep` and `prices forward` price it; --replica-chips prices others\n",
                        l.wide_replica, l.system.scale_up_domain, l.model.name);
  } else if (a.replica_chips.empty()) {
    text += fmt::format("replicas    sizes tried: {} ({}those an engine can run: whole heads or whole experts per chip; "
                        "--replica-chips for others)\n",
                        fmt::join(tried, ", "), l.pp > 1 ? fmt::format("every chip of {} stages; ", l.pp) : std::string());
  }
  head["replica_sizes"] = tried;
  print("serving frontier", a, t, head, text);
}

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
  o.context = single_int(a.context, "--context", 0, 1LL << 30);
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
