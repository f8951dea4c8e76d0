// `chalk prices forward`: the input and output prices a deployment implies, beside a
// provider's sheet. Shared options and helpers: prices_cli.h.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <variant>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "chalk/prices/prices.h"
#include "chalk/serving/serving_speed.h"
#include "envelope.h"
#include "pipeline_cli.h"
#include "deployment_options.h"
#include "prices_cli.h"
#include "table.h"

namespace chalk::cli::prices_cli {

namespace {

/// The figures `prices forward` prints, from one replica or from a pipeline of stages.
struct Forward {
  Deployment shown;           ///< the replica, or the pipeline's busiest stage
  ForwardPrices f, lower;     ///< the engine step's prices and the roofline's at the same batches
  Seconds t_decode, t_decode_roofline;  ///< the decode step, or the pipeline's TPOT (its cycle)
  Seconds t_prefill;          ///< the prefill step, or the pipeline's TTFT of its prefill batch
  Cell energy;
  std::optional<PipelineArgs> pipeline;
};

/// One replica without stages (forward_prices).
Forward forward_replica(const ForwardArgs& a, const Deployment& d, const std::optional<ReplicaNote>& note, const Facility& facility,
                        const std::optional<ChipPower>& power) {
  ForwardAssumptions fa;
  // With the replica chosen for the user, its batch too: the chosen replica's cheapest
  // (memory-full) batch, the figure the choice was made on (issue 30).
  fa.decode_batch = a.batch == 0 && note ? note->choice.batch : a.batch;
  fa.decode_context_tokens = a.context;
  fa.prompt_tokens = a.prompt;
  fa.prefill_batch = a.prefill_batch;
  fa.utilization = a.utilization;
  fa.gross_margin = a.margin;
  Forward r{d, forward_prices(d, fa), {}, {}, {}, {}, {}, std::nullopt};
  const ForwardPrices& f = r.f;
  if (!f.memory_fits && !a.deployment.allow_infeasible) {
    // A batch the replica cannot hold is not a price (issue 30, review 2 H3: --batch 1024 on
    // 8 H100, which hold 324, once led with $2.169/Mtok out, below the feasible $2.573).
    throw InputError("--batch", fmt::format("batch {} at context {} does not fit on {} x {} (at most {} sequences){}; "
                                            "--allow-infeasible prints the prices anyway",
                                            f.decode_batch, a.context, d.n_chips, d.system.chip.name,
                                            memory_plan(d, 0, a.context).max_batch,
                                            replica_that_holds(a.deployment, d, {{f.decode_batch, a.context}})));
  }
  // The roofline's prices, the lower bound beside the engine step's headline, at the same
  // decode and prefill batches as the headline: left at 0 the roofline would pick its own
  // cost-optimal batch (2314 where the engine step picked 1848 for deepseek-v3 on 8 H100),
  // and the row would print a bound for a batch it does not state.
  ForwardAssumptions at_same_batch = fa;
  at_same_batch.decode_batch = f.decode_batch;
  at_same_batch.prefill_batch = f.prefill_batch;
  r.lower = forward_prices(roofline_of(d), at_same_batch);
  r.t_decode = f.decode.t_step;
  r.t_decode_roofline = r.lower.decode.t_step;
  r.t_prefill = f.prefill.t_step;
  // Energy per output token of the decode step, its chips busy back to back (power.h).
  if (power) {
    r.energy = energy_j_per_token(*power, facility, static_cast<double>(d.n_chips), f.decode.t_step, f.decode.t_compute, f.decode.t_memory,
                                  static_cast<double>(f.decode.batch) * f.decode.tokens_per_sequence);
  }
  return r;
}

/// A pipeline of p.pp stages (engine/pipeline.h; docs/formulas.md, "Pipelines in inference"),
/// priced as `decode --pp` and `prefill --pp` price it: output cost = every stage's chips x
/// price x the cycle (the time between two tokens of a user) / batch; input cost = the same
/// chips over a steady stream of prefills, one microbatch of the stage's layout-filling
/// prompts per stage. The batch is the one the busiest stage's HBM holds (or the note's, the
/// batch `chalk layouts` ranked it at). A token's cache read and storage cost what they cost
/// on one replica of these chips: per chip, price over bandwidth or capacity, times the
/// whole model's KV per token.
Forward forward_pipeline(const ForwardArgs& a, const DeploymentArgs& da, const PipelineArgs& p, const std::optional<ReplicaNote>& note,
                         const Facility& facility, const std::optional<ChipPower>& power) {
  const Deployment st = resolve_pipeline_stage(da, p, a.context);
  const ModelSpec full = load_model(da.model);
  const int64_t chips = st.n_chips * p.pp;
  ForwardAssumptions fa;
  fa.decode_batch = a.batch > 0 ? a.batch
                    : note && note->pp == p.pp ? note->choice.batch
                                               : std::clamp<int64_t>(memory_plan(st, 0, a.context).max_batch, 1, int64_t{1} << 24);
  fa.decode_context_tokens = a.context;
  fa.prompt_tokens = a.prompt;
  fa.prefill_batch = a.prefill_batch;
  fa.utilization = a.utilization;
  fa.gross_margin = a.margin;
  Forward r{st, forward_prices(st, fa), {}, {}, {}, {}, {}, p};
  ForwardPrices& f = r.f;
  const PipelineShape shape{p.pp, p.microbatches.value_or(p.pp)};
  const PipelineDecode dec = pipeline_decode(st, shape, f.decode_batch, a.context);
  if (!dec.stage_memory.fits && !da.allow_infeasible) {
    throw InputError("--batch", fmt::format("batch {} at context {} does not fit on {} stages of {} x {} (at most {} sequences); "
                                            "--allow-infeasible prints the prices anyway",
                                            f.decode_batch, a.context, p.pp, st.n_chips, st.system.chip.name,
                                            memory_plan(st, 0, a.context).max_batch));
  }
  f.prefill_batch = a.prefill_batch > 0 ? a.prefill_batch : f.prefill_batch * shape.microbatches;
  const PipelinePrefill pre = pipeline_prefill(st, shape, f.prefill_batch, a.prompt);
  const PipelineDecode dec_lower = pipeline_decode(roofline_of(st), shape, f.decode_batch, a.context);
  const BytesPerToken kv_full = kv_bytes_per_token(full, a.context, st.kv);
  const double whole = f.kv_bytes_per_token.value() > 0 ? kv_full.value() / f.kv_bytes_per_token.value() : 1;
  f.model = full.name;
  f.n_chips = chips;
  f.decode = dec.stage;
  f.prefill = pre.stage;
  f.output_cost = *dec.cost_per_token;
  f.input_cost = *pre.cost_per_token;
  f.output = f.output_cost * f.markup;
  f.input = f.input_cost * f.markup;
  f.cache_read = f.cache_read * whole;
  f.storage_hbm = f.storage_hbm * whole;
  f.kv_bytes_per_token = kv_full;
  f.memory_fits = dec.stage_memory.fits;
  r.lower = f;
  r.lower.output_cost = *dec_lower.cost_per_token;
  r.t_decode = dec.cycle;
  r.t_decode_roofline = dec_lower.cycle;
  r.t_prefill = pre.ttft;
  if (power) {
    // Every stage's chips over one cycle, each busy with its microbatches' steps.
    const double mb = static_cast<double>(dec.microbatches);
    r.energy = energy_j_per_token(*power, facility, static_cast<double>(chips), dec.cycle, dec.stage.t_compute * mb,
                                  dec.stage.t_memory * mb, static_cast<double>(f.decode_batch) * dec.stage.tokens_per_sequence);
  }
  return r;
}

/// What the per-user speed floor did to the headline (--min-tok-per-s-per-user; review 3 M4:
/// the memory-full batch of 8B on L4 streams 10.3 tok/s per user, a service no host sells).
struct SpeedFloorOutcome {
  double asked = 0;   ///< tok/s per user; 0: no floor (a stated -b, or --min-tok-per-s-per-user 0)
  bool met = true;    ///< false: nothing reaches it, the headline is the memory-full batch
  std::string why_not;  ///< when not met: the fastest speed there is, for people
};

/// "the fastest is 13.6 tok/s per user (8 chips at batch 1)".
std::string fastest_text(const ModePoint& p) {
  return fmt::format("the fastest is {} tok/s per user ({} at batch 1)", format_number(p.tokens_per_s_per_user.value(), 3),
                     counted(static_cast<double>(p.n_chips), "chip"));
}

/// Applies the floor to a single replica (a pipeline keeps its memory-full batch): with no
/// chips stated, the replica and batch `prices compare` would price a host at that speed
/// (cheapest_replica_at_speed: on each replica size the largest batch with 1 / T_step >= v,
/// then the most tok/s per chip); with -n, the largest such batch on those chips
/// (largest_batch_at_speed). The memory-full choice becomes the note's runner-up. Sets
/// *batch (0: unchanged) and may replace *single. Throws InputError when a stated floor is
/// out of reach; the default floor out of reach leaves the memory-full batch, said so.
SpeedFloorOutcome apply_speed_floor(const ForwardArgs& a, const DeploymentArgs& da, std::optional<Deployment>& single,
                                    std::optional<ReplicaNote>& note, int64_t* batch) {
  SpeedFloorOutcome out;
  if (!std::isfinite(a.min_speed) || a.min_speed < 0) {
    throw InputError("--min-tok-per-s-per-user", fmt::format("must be >= 0 tok/s per user (0: no floor), got {:g}", a.min_speed));
  }
  if (a.batch > 0 || a.min_speed == 0) return out;
  out.asked = a.min_speed;
  const TokensPerSecond v(a.min_speed);
  std::optional<ModePoint> fastest;
  bool staged = false;  // the search's answer is a pipeline, which this single replica is not: its own batch instead
  if (note) {
    DeploymentOptions o = options_from(da);
    o.mechanisms.enabled = true;  // chosen under the engine step whatever view prints, as resolve() chooses
    const SpeedChoice sc = cheapest_serving_replica(single->model, single->system, o, note->context, {0, v});
    staged = sc.stages > 1;
    if (sc.point && !staged) {
      Deployment dep = *sc.deployment;
      dep.mechanisms.layout.description =
          fmt::format("searched: {} (the most decode tok/s per chip at {} tok/s per user or more, context {})", sc.point->layout,
                      fmt::format("{:g}", a.min_speed), note->context);
      single = da.roofline ? roofline_of(dep) : dep;
      note->runner_up = std::exchange(note->choice, *sc.point);
      note->min_tok_per_s_per_user = a.min_speed;
      *batch = sc.point->batch;
      return out;
    }
    fastest = sc.fastest;
  }
  if (!note || staged) {
    const Deployment& d = *single;
    const int64_t cap = std::clamp<int64_t>(memory_plan(d, 0, a.context).max_batch, 1, int64_t{1} << 24);
    if (const int64_t b = largest_batch_at_speed(d, a.context, {}, v, cap); b >= 1) {
      *batch = b;
      return out;
    }
    const DecodeStep one = decode_step(d, 1, a.context);
    fastest = ModePoint{};
    fastest->n_chips = d.n_chips;
    fastest->batch = 1;
    fastest->tokens_per_s_per_user = one.tokens_per_s_per_user;
  }
  const std::string where = fmt::format("no {} of {} on {} reaches {} tok/s per user; {}", note ? "replica" : "batch", single->model.name,
                                        note ? single->system.name : fmt::format("{} x {}", single->n_chips, single->system.chip.name),
                                        fmt::format("{:g}", a.min_speed), fastest ? fastest_text(*fastest) : std::string("none fits"));
  if (a.min_speed_given) throw InputError("--min-tok-per-s-per-user", where + "; a lower floor, or 0 for none");
  out.met = false;
  out.why_not = where;
  return out;
}

/// With -b and no chips stated, the replica an operator would run at that batch: the
/// cheapest size within the scale-up domain whose HBM holds it, the runner-up the cheapest
/// other size (cheapest_serving_replica, the page's cost headline's rule too; issue 30 item 1:
/// `prices forward -b 64` priced the memory-full choice's 8 H100 where 4 are cheaper at that
/// batch). Where no size holds the batch the memory-full choice stays, and forward_replica
/// says the batch does not fit.
void choose_at_batch(const ForwardArgs& a, const DeploymentArgs& da, std::optional<Deployment>& single, std::optional<ReplicaNote>& note) {
  if (a.batch <= 0 || !note || !note->fallback.empty() || note->rule == ReplicaRule::smallest || note->pp > 1 || !note->pipeline.empty()) {
    return;
  }
  DeploymentOptions o = options_from(da);
  o.mechanisms.enabled = true;  // chosen under the engine step whatever view prints, as resolve() chooses
  const SpeedChoice sc = cheapest_serving_replica(single->model, single->system, o, note->context, {a.batch, {}});
  if (!sc.point) return;
  Deployment dep = *sc.deployment;
  dep.mechanisms.layout.description =
      fmt::format("searched: {} (the most decode tok/s per chip at batch {}, context {})", sc.point->layout, a.batch, note->context);
  single = da.roofline ? roofline_of(dep) : dep;
  note->choice = *sc.point;
  note->runner_up = sc.runner_up;
  note->replica_sizes = sc.replica_sizes;
  note->at_batch = a.batch;
}

}  // namespace

void run_forward(const ForwardArgs& a) {
  const Facility facility = facility_from(a.energy);
  // Pipeline stages when no domain holds the model, as `layouts` ranks them (review 2 H1:
  // 405B on 16 H100 led with TP16 across two hosts at $13.27/Mtok against PP2 x (TP8)'s
  // $3.88), or --pp N.
  DeploymentArgs da = a.deployment;
  da.prices_pipeline = !a.pp;
  refuse_beyond_max_context(da, load_model(da.model), a.context, "--context");
  std::optional<ReplicaNote> note;
  std::optional<Deployment> single;
  if (!a.pp) single = resolve(da, a.context, &note);
  const auto p = chosen_pipeline(da, a.pp, note, a.context);
  if (p && note && da.chips == 0) da.chips = note->choice.n_chips;
  if (!p && !single) single = resolve(da, a.context, &note);
  // The per-user speed floor (review 3 M4), on one replica; a pipeline keeps its batch.
  ForwardArgs at = a;
  SpeedFloorOutcome floor;
  if (!p) {
    choose_at_batch(a, da, single, note);
    floor = apply_speed_floor(a, da, single, note, &at.batch);
  } else if (!std::isfinite(a.min_speed) || a.min_speed < 0) {
    apply_speed_floor(a, da, single, note, &at.batch);  // throws: the same message
  }
  const SystemSpec system = p ? load_system(da.hardware) : single->system;
  const std::optional<ChipPower> power = chip_power_from(a.energy, system);
  const Forward fw = p ? forward_pipeline(at, da, *p, note, facility, power) : forward_replica(at, *single, note, facility, power);
  const Deployment& d = fw.shown;
  const ForwardPrices& f = fw.f;
  const ForwardPrices& lower = fw.lower;
  const Cell& energy = fw.energy;
  Table t;
  t.columns = {{"source", "source"},
               {"input_usd_per_mtok", "$/Mtok in", 4},
               {"output_usd_per_mtok", "$/Mtok out", 4},
               {"output_to_input_ratio", "out/in", 3},
               {"cache_read_usd_per_mtok", "$/Mtok hit", 4},
               {"cache_storage_usd_per_mtok_per_hour", "$/Mtok/h stored", 4},
               {"long_context_threshold_tokens", "step at"},
               {"energy_j_per_output_token", "J/out tok", 3}};
  t.set_count({"long_context_threshold_tokens"});  // "200K", not "200000" (review L2)
  t.add({fmt::format("chalk: {} on {} x {}", f.model, f.n_chips, f.system), mtok(f.input), mtok(f.output), f.output / f.input,
         mtok(f.cache_read), to_usd_per_mtok_per_hour(f.storage_hbm),
         f.long_context_threshold_tokens ? Cell(*f.long_context_threshold_tokens) : Cell{}, energy});
  if (!a.compare.empty()) {
    const PriceSheet s = load_price_sheet(a.compare);
    t.add({fmt::format("{}: {} ({})", s.provider, s.model, s.date), mtok(s.input), mtok(s.output), s.output / s.input,
           opt_mtok(s.cache.read), s.cache.storage ? Cell(to_usd_per_mtok_per_hour(*s.cache.storage)) : Cell{},
           s.long_context.empty() ? Cell{} : Cell(s.long_context.front().threshold_tokens), Cell{}});
  }
  if (a.output.csv) {
    print_csv(std::cout, t);
    return;
  }
  if (a.output.json) {
    auto j = p ? pipeline_json(d, *p, n_layers(load_model(da.model))) : describe_json(d);
    j["replica_choice"] = replica_note_json(note);
    j["forward"] = {{"decode_batch", f.decode_batch},
                    {"decode_context_tokens", a.context},
                    {"prompt_tokens", a.prompt},
                    {"prefill_batch", f.prefill_batch},
                    {"utilization", a.utilization},
                    {"gross_margin", a.margin},
                    {"markup", f.markup},
                    {"kv_bytes_per_token", f.kv_bytes_per_token.value()},
                    {"decode_t_step_ms", to_ms(fw.t_decode)},
                    {"decode_t_step_roofline_ms", to_ms(fw.t_decode_roofline)},
                    {"output_cost_roofline_usd_per_mtok", mtok(lower.output_cost)},
                    {"decode_bound", to_string(f.decode.bound)},
                    {"prefill_bound", to_string(f.prefill.bound)},
                    {"input_cost_usd_per_mtok", mtok(f.input_cost)},
                    {"output_cost_usd_per_mtok", mtok(f.output_cost)},
                    {"memory_fits", f.memory_fits},
                    {"tok_per_s_per_user", f.decode.tokens_per_sequence / fw.t_decode.value()},
                    {"min_tok_per_s_per_user", floor.asked > 0 ? nlohmann::json(floor.asked) : nlohmann::json()},
                    {"speed_floor_met", floor.met}};
    j["energy"] = energy_assumptions_json(power, facility);
    j["rows"] = to_json(t);  // the prices: implied, then the sheets compared
    print_json(std::cout, envelope("prices forward", std::move(j), column_keys(t)));
    return;
  }
  std::cout << "chalk prices forward: the prices a deployment implies (cost per token = n price t_step / B, x markup), "
            << view_name(d) << "\n" << describe_text(d) << replica_note_text(note)
            << (p ? pipeline_text(d, *p, {f.decode_batch}, n_layers(load_model(da.model))) : std::string());
  // The headline cost is the step's own (output_cost_usd_per_mtok, before the markup); the
  // roofline's, beside it, is its lower bound (docs/formulas.md, "Prices read backwards, and forward").
  std::cout << fmt::format("decode      batch {} at context {}: {} {} ms, {}-bound, output cost ${}/Mtok{}{}\n", f.decode_batch, a.context,
                           p ? "TPOT (the pipeline's cycle)" : "step", format_number(to_ms(fw.t_decode), 4),
                           to_string(f.decode.bound), format_number(mtok(f.output_cost), 4),
                           f.memory_fits ? "" : " (DOES NOT FIT in HBM)",
                           d.mechanisms.enabled ? fmt::format("; roofline at achievable rates {} ms, output cost ${}/Mtok",
                                                              format_number(to_ms(fw.t_decode_roofline), 4), format_number(mtok(lower.output_cost), 4))
                                                : std::string());
  if (!floor.met) std::cout << "speed floor " << floor.why_not << ": priced at the batch that fills HBM\n";
  if (p && a.batch == 0 && a.min_speed > 0) {
    std::cout << "speed floor not applied: a pipeline is priced at the batch its busiest stage's HBM holds (-b sets another)\n";
  }
  std::cout << fmt::format("prefill     {} x {} tokens: {} {} ms, {}-bound\n", f.prefill_batch, a.prompt, p ? "TTFT through the stages" : "step",
                           format_number(to_ms(fw.t_prefill), 4), to_string(f.prefill.bound));
  std::cout << energy_assumptions_text(power, facility);
  if (const auto* j = std::get_if<double>(&energy)) {
    std::cout << fmt::format("            the decode step: {} J per output token, its chips busy back to back\n", format_number(*j, 3));
  }
  std::cout << fmt::format("markup      x{} = 1 / (utilization {} x (1 - margin {})){}\n", format_number(f.markup, 4),
                           format_number(a.utilization, 3), format_number(a.margin, 3),
                           f.markup == 1 ? ": the cost, as hosts price near it (`prices compare` sets their sheets beside it)" : "");
  // Review 9 M3: the headline is the cost by default; a host's markup is the second line,
  // at a stated utilization and margin, never the headline.
  if (f.markup == 1) {
    constexpr double kHostUtilization = 0.5, kHostMargin = 0.5;
    const double x = 1 / (kHostUtilization * (1 - kHostMargin));
    std::cout << fmt::format("            at utilization {} and margin {} (x{}, --utilization and --margin): $/Mtok in {}, out {}\n",
                             format_number(kHostUtilization, 3), format_number(kHostMargin, 3), format_number(x, 4),
                             format_number(mtok(f.input_cost) * x, 4), format_number(mtok(f.output_cost) * x, 4));
  }
  std::cout << "\n";
  print_table(std::cout, t);
}

}  // namespace chalk::cli::prices_cli
