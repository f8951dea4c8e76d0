// `chalk serving frontier`: the latency-cost frontier over batch and chips per replica
// (the fast and slow modes read off it: cmd_serving_modes.cc). Shared options and helpers:
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
  nlohmann::json j = pipeline_json(l.shown, pipeline_args(l), n_layers(l.model));
  j["pipeline"]["why"] = pipeline_args(l).why;
  return j;
}

std::string pipeline_head_text(const Loaded& l, int64_t context) {
  return describe_text_with_warnings(l.shown, context) + pipeline_text(l.shown, pipeline_args(l), {}, n_layers(l.model));
}

Loaded load(const ServingArgs& a) {
  forbid_chips(a);
  Loaded l{load_model(a.deployment.model), load_system(a.deployment.hardware), {}, {}};
  l.base = base_options(a.deployment);
  const int64_t context = single_int(a.context, "--context", 1, 1LL << 30);
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
  o.context = single_int(a.context, "--context", 1, 1LL << 30);
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

}  // namespace chalk::cli::serving_cli
