// `chalk serving sweep`, `balance` and `window`: decode step time, speed and cost against
// batch and context; where decode turns compute-bound; the batching window. One deployment,
// a fixed chip count. Shared options and helpers: serving_cli.h.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "chalk/serving/explain.h"
#include "chalk/serving/serving.h"
#include "deployment_options.h"
#include "explain_cli.h"
#include "pipeline_cli.h"
#include "serving_cli.h"
#include "table.h"

namespace chalk::cli::serving_cli {
namespace {

// No such batch or context: "-" in the table, null in JSON (docs/output-schema.md), never the string "none".
Cell opt_cell(const std::optional<int64_t>& v) { return v ? Cell(*v) : Cell{}; }

/// The deployment `serving balance` and `window` price: with no -n and no lever, the busiest
/// stage of the pipeline resolve() chooses when no replica within the scale-up domain holds
/// the model (`p` set: Llama 3.1 405B on H100 is PP2 x TP8, as `serving sweep` prices it;
/// review 5 M1: they priced TP16 across two hosts and named another command's --pp), else
/// resolve()'s replica.
Deployment balance_deployment(const ServingArgs& a, int64_t context, std::optional<ReplicaNote>& note, std::optional<PipelineArgs>& p) {
  DeploymentArgs da = a.deployment;
  da.prices_pipeline = a.deployment.chips == 0 && a.levers.draft == 0 && !a.levers.sparse_top_k && !a.levers.sparse_sqrt;
  Deployment d = resolve(da, context, &note);
  p = chosen_pipeline(da, std::nullopt, note, context);
  if (!p) return d;
  p->why = "no replica within the scale-up domain holds the model: each stage's figures below, as `serving sweep` prices the pipeline";
  return resolve_pipeline_stage(da, *p, context);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// sweep

Table sweep_table(const Deployment& d, const std::vector<ServingPoint>& pts, const ServingLevers& lev) {
  Table t;
  t.columns = {{"chips", "chips"},
               {"batch", "batch"},
               {"context_tokens", "context"},
               {"kv_read_tokens", "KV read"},
               {"t_compute_ms", "compute ms"},
               {"t_weights_ms", "weights ms"},
               {"t_kv_ms", "KV ms"},
               {"t_operations_ms", "ops ms"},
               {"t_comm_ms", "comm ms"},
               {"t_overhead_ms", "overhead ms"},
               {"t_host_ms", "host ms"},
               {"t_launch_ms", "launch ms"},
               {"graph_batch", "graph"},
               {"t_draft_ms", "draft ms"},
               {"t_step_ms", "step ms"},
               {"t_step_roofline_ms", "roofline ms"},
               {"bound", "bound"},
               {"tok_per_s", "tok/s"},
               {"tok_per_s_per_user", "tok/s/user"},
               {"tok_per_s_per_chip", "tok/s/chip"},
               {"cost_usd_per_mtok", "$/Mtok"},
               {"cost_compute_usd_per_mtok", "compute $/Mtok"},
               {"cost_weights_usd_per_mtok", "weights $/Mtok"},
               {"cost_kv_usd_per_mtok", "KV $/Mtok"},
               {"cost_comm_usd_per_mtok", "comm $/Mtok"},
               {"cost_overhead_usd_per_mtok", "overhead $/Mtok"},
               {"memory_fits", "fits"}};
  t.set_priority({"chips", "batch", "context_tokens"}, 0);
  t.set_priority({"kv_read_tokens", "t_compute_ms", "t_weights_ms", "t_kv_ms", "t_operations_ms", "t_comm_ms", "t_overhead_ms", "t_host_ms", "t_launch_ms", "graph_batch", "t_draft_ms",
                  "cost_compute_usd_per_mtok", "cost_weights_usd_per_mtok", "cost_kv_usd_per_mtok", "cost_comm_usd_per_mtok",
                  "cost_overhead_usd_per_mtok"},
                 2);
  add_pipeline_columns(t);  // one set of columns whatever the layout (review 4 M6)
  const Deployment lower = roofline_of(d);
  for (const auto& p : pts) {
    const auto& s = p.step;
    const double roofline_ms = to_ms(decode_step(lower, p.batch, p.context, resolve_levers(lev, p.context)).t_step);
    // A row whose batch the replica cannot hold has no price (issue 30: batch 512 on 8 H100
    // once read $0.599/Mtok, cheaper than any row that fits); run_sweep's warning names it.
    auto c = [&](UsdPerToken TermCosts::*m) { return p.cost && p.fits ? Cell(to_usd_per_mtok((*p.cost).*m)) : Cell{}; };
    std::vector<Cell> row{d.n_chips, p.batch, p.context, p.tokens_read, to_ms(s.t_compute), to_ms(s.t_weights), to_ms(s.t_kv),
           to_ms(s.t_operations), to_ms(s.t_comm), to_ms(s.t_overhead), to_ms(s.t_host), to_ms(s.t_launch), s.graph_batch, to_ms(s.t_draft), to_ms(s.t_step), roofline_ms, std::string(to_string(s.bound)),
           s.tokens_per_s.value(),
           s.tokens_per_s_per_user.value(), s.tokens_per_s_per_chip.value(), c(&TermCosts::total), c(&TermCosts::compute),
           c(&TermCosts::weights), c(&TermCosts::kv), c(&TermCosts::comm), c(&TermCosts::overhead), std::string(p.fits ? "yes" : "no")};
    for (auto& x : one_stage_cells(p.batch, to_ms(s.t_step), memory_plan(d, p.batch, p.context))) row.push_back(std::move(x));
    t.add(std::move(row));
  }
  return t;
}

void run_sweep(const ServingArgs& a) {
  const ServingLevers lev = levers_of(a.levers, a.deployment);
  const auto contexts = parse_int_list(a.context, "--context", 1, 1LL << 30);
  const int64_t max_context = *std::max_element(contexts.begin(), contexts.end());
  // Pipeline stages when no domain holds the model, as `layouts` ranks them (review 2 H1),
  // or --pp N: the pipelined decode table of `decode --pp` (pipeline_cli.h).
  DeploymentArgs da = a.deployment;
  // --explain and the levers explain and price a step without stages: with them the default
  // keeps one replica, and the note names the pipeline (review 4 L4: --explain exited 2 on a
  // pipeline the user had not asked for).
  da.prices_pipeline = !a.pp && !a.explain && a.levers.draft == 0 && !a.levers.sparse_top_k && !a.levers.sparse_sqrt;
  std::optional<ReplicaNote> note;
  refuse_beyond_max_context(da, load_model(da.model), max_context, "--context");
  std::optional<Deployment> single;
  if (!a.pp) single = resolve(da, max_context, &note);
  if (const auto p = chosen_pipeline(da, a.pp, note, max_context)) {
    if (a.levers.draft > 0 || a.levers.sparse_top_k || a.levers.sparse_sqrt) {
      throw InputError("--pp", fmt::format("{} stages: speculative drafting and sparse attention are priced without a pipeline; "
                                           "give --pp 1 with them",
                                           p->pp));
    }
    if (a.explain) throw InputError("--explain", fmt::format("explains a step without a pipeline; give --pp 1 with it (--pp {} chosen)", p->pp));
    if (note && da.chips == 0) da.chips = note->choice.n_chips;
    PipelineCommand c;
    c.name = "serving sweep";
    c.title = "chalk serving sweep: ";
    c.note = note;
    c.cap_batches_at_memory_full = !a.batch_stated;
    // The columns alone (no rows): any deployment of the model gives the same set.
    c.columns = sweep_table(single ? *single : resolve_pipeline_stage(da, *p, max_context), {}, lev).columns;
    return run_pipeline_decode(da, *p, a.output, batch_list(a), contexts, c);
  }
  if (!single) single = resolve(da, max_context, &note);
  const Deployment& d = *single;
  auto batches = batch_list(a);
  if (!a.batch_stated) {
    // Unstated batches stop at the batch that fills HBM at the longest context, which
    // closes the list: every row fits (issue 30: 10 of 17 default rows once did not).
    const int64_t full = memory_plan(d, 0, max_context).max_batch;
    if (full >= 1 && full < *std::max_element(batches.begin(), batches.end())) {
      std::erase_if(batches, [&](int64_t b) { return b > full; });
      if (batches.empty() || batches.back() < full) batches.push_back(full);
    }
  }
  if (batches.size() * contexts.size() > 200000) {
    throw InputError("--batch", fmt::format("{} batches x {} contexts is more than 200,000 rows; narrow --batch or --context",
                                            batches.size(), contexts.size()));
  }
  const auto pts = serving_sweep(d, batches, contexts, lev);
  nlohmann::json head = describe_json(d);
  head["replica_choice"] = replica_note_json(note);
  head["levers"] = levers_json(lev);
  std::vector<std::pair<int64_t, int64_t>> unfit;
  for (const auto& p : pts) {
    if (!p.fits) unfit.emplace_back(p.batch, p.context);
  }
  std::string warning_text;
  if (auto w = unfit_rows_warning(a.deployment, d, unfit)) {
    head["warnings"] = nlohmann::json::array({*w});
    warning_text = "warning     " + *w + "\n";
  }
  std::string explain_text;
  if (a.explain) {
    head["explanations"] = nlohmann::json::array();
    for (const auto& p : pts) {
      const auto xs = explain_serving_point(d, p);
      head["explanations"].push_back({{"batch", p.batch}, {"context_tokens", p.context}, {"figures", explanations_json(xs)}});
      explain_text += fmt::format("\nHow the figures of batch {}, context {} are computed:\n", p.batch, p.context) + explanations_text(xs);
    }
  }
  print("serving sweep", a, sweep_table(d, pts, lev), head,
        "chalk serving sweep: decode step time, speed and cost against batch and context, each term apart\n" +
            std::string(d.mechanisms.enabled
                        ? "(lecture 7:46-15:30; with mechanisms T_step = T_ops + T_comm + T_overhead, T_ops the sum over kernels of "
                          "max(compute, memory); cost per term = n price T_term / tokens)\n"
                        : "(lecture 7:46-15:30; T_step = max(T_compute, T_weights + T_kv); cost per term = n price T_term / tokens)\n") +
            describe_text_with_warnings(d, max_context) + replica_note_text(note) + "levers      " + describe_levers(lev) + "\n" +
            warning_text,
        explain_text);
}

// ---------------------------------------------------------------------------------------
// balance

void run_balance(const ServingArgs& a) {
  const ServingLevers lev = levers_of(a.levers, a.deployment);
  const int64_t s = single_int(a.context, "--context", 1, 1LL << 30);
  std::optional<ReplicaNote> note;
  refuse_beyond_max_context(a.deployment, load_model(a.deployment.model), s, "--context");
  std::optional<PipelineArgs> pipe;
  // A pipeline's balance points are its busiest stage's, per microbatch (a stage steps one
  // microbatch at a time: the batch here is a microbatch's).
  const Deployment d = balance_deployment(a, s, note, pipe);
  const BalancePoints b = balance_points(d, s, a.crossover_batch, lev);
  Table t;
  t.columns = {{"quantity", "quantity"}, {"value", "value", 4}, {"unit", "unit"}, {"how", "how"}};
  t.add({std::string("lecture balance batch, peak F/W"), b.lecture_batch_peak, std::string("sequences"),
         std::string("N_total b_w F / (2 N_active W) (lecture 15:53)")});
  t.add({std::string("lecture balance batch, achievable F/W"), b.lecture_batch_effective, std::string("sequences"),
         std::string("same with F x eff_mm, W x eff_hbm")});
  t.add({std::string("compute-bound from batch, no KV"), opt_cell(b.batch_without_kv), std::string("sequences"),
         std::string("smallest B with T_compute >= T_weights at context 0, solved on the step")});
  t.add({std::string("compute-bound from batch, with KV"), opt_cell(b.batch_with_kv), std::string("sequences"),
         fmt::format("smallest B with T_compute >= T_weights + T_kv at context {}", s)});
  t.add({std::string("context beyond which never compute-bound"), opt_cell(b.context_never_compute_bound), std::string("tokens"),
         std::string("one sequence's KV read outlasts its compute (lecture 11:00)")});
  t.add({std::string("context where KV fetch overtakes weight fetch"), opt_cell(b.kv_overtakes_weights_context),
         std::string("tokens"), fmt::format("smallest S with T_kv >= T_weights at batch {}", b.crossover_batch)});
  std::string explain_text;
  nlohmann::json explanations;
  if (a.explain) {
    const auto xs = explain_balance(d, b, lev);
    explanations = explanations_json(xs);
    explain_text = "\nHow the figures are computed:\n" + explanations_text(xs);
  }
  nlohmann::json head = pipe ? pipeline_json(d, *pipe, n_layers(load_model(a.deployment.model))) : describe_json(d);
  if (pipe) head["pipeline"]["why"] = pipe->why;
  head["replica_choice"] = replica_note_json(note);
  head["levers"] = levers_json(lev);
  head["balance"] = {{"context_tokens", s},
                     {"lecture_batch_peak", b.lecture_batch_peak},
                     {"lecture_batch_effective", b.lecture_batch_effective},
                     {"batch_without_kv", opt_json(b.batch_without_kv)},
                     {"batch_with_kv", opt_json(b.batch_with_kv)},
                     {"context_never_compute_bound_tokens", opt_json(b.context_never_compute_bound)},
                     {"crossover_batch", b.crossover_batch},
                     {"kv_overtakes_weights_context_tokens", opt_json(b.kv_overtakes_weights_context)}};
  if (a.explain) head["explanations"] = explanations;
  print("serving balance", a, t, head,
        "chalk serving balance: where decode turns compute-bound (lecture 15:53-19:52) and where KV overtakes weights\n" +
            describe_text_with_warnings(d, s) + replica_note_text(note) + (pipe ? pipeline_text(d, *pipe, {}, n_layers(load_model(a.deployment.model))) : std::string()) +
            "levers      " + describe_levers(lev) + "\n",
        explain_text);
}

// ---------------------------------------------------------------------------------------
// window

nlohmann::json window_json(const BatchingWindow& w, const Deployment& d, const ServingLevers& lev, int64_t pp) {
  nlohmann::json j = {{"context_tokens", w.context},
                      {"hbm_sweep_peak_ms", to_ms(w.hbm_sweep_peak)},
                      {"hbm_sweep_effective_ms", to_ms(w.hbm_sweep_effective)},
                      {"weights_fit", w.weights_fit},
                      {"max_batch_at_context", w.max_batch_at_context}};
  if (w.step) {
    j["t_step_ms"] = to_ms(w.step->t_step);
    PipelineShape shape;
    shape.stages = shape.microbatches = pp;
    j["t_step_roofline_ms"] = pp > 1 ? to_ms(pipeline_decode(roofline_of(d), shape, w.step->batch, w.context).cycle)
                                     : to_ms(decode_step(roofline_of(d), w.step->batch, w.context, resolve_levers(lev, w.context)).t_step);
    j["t_compute_ms"] = to_ms(w.step->t_compute);
    j["t_weights_ms"] = to_ms(w.step->t_weights);
    j["t_kv_ms"] = to_ms(w.step->t_kv);
    j["bound"] = to_string(w.step->bound);
    j["steps_per_s"] = w.steps_per_second;
    j["tok_per_s"] = w.replica_tokens_per_s.value();
    j["tok_per_s_per_user"] = w.tokens_per_s_per_user.value();
    j["cost_usd_per_mtok"] = w.step->cost_per_token ? nlohmann::json(to_usd_per_mtok(*w.step->cost_per_token)) : nlohmann::json();
  }
  return j;
}

void run_window(const ServingArgs& a) {
  const ServingLevers lev = levers_of(a.levers, a.deployment);
  const auto contexts = parse_int_list(a.context, "--context", 1, 1LL << 30);
  const int64_t max_context = *std::max_element(contexts.begin(), contexts.end());
  std::optional<ReplicaNote> note;
  refuse_beyond_max_context(a.deployment, load_model(a.deployment.model), max_context, "--context");
  std::optional<PipelineArgs> pipe;
  const Deployment d = balance_deployment(a, max_context, note, pipe);
  Table t;
  t.columns = {{"context_tokens", "context"},
               {"hbm_sweep_peak_ms", "HBM sweep ms (peak)"},
               {"hbm_sweep_effective_ms", "HBM sweep ms (achievable)"},
               {"max_batch_at_context", "max batch"},
               {"t_step_ms", "step ms"},
               {"t_step_roofline_ms", "roofline ms"},
               {"bound", "bound"},
               {"steps_per_s", "steps/s"},
               {"tok_per_s", "tok/s per replica"},
               {"tok_per_s_per_user", "tok/s/user"},
               {"cost_usd_per_mtok", "$/Mtok"}};
  nlohmann::json windows = nlohmann::json::array();
  for (int64_t s : contexts) {
    BatchingWindow w = batching_window(d, s, lev);
    if (pipe && w.step) {
      // A pipeline departs a microbatch per stage step; a user's token comes once per cycle,
      // the replica's batch (every stage's HBM full) once per cycle too (pipeline_decode).
      PipelineShape shape;
      shape.stages = shape.microbatches = pipe->pp;
      const PipelineDecode r = pipeline_decode(d, shape, w.max_batch_at_context, s);
      w.step = r.stage;
      w.step->batch = w.max_batch_at_context;
      w.step->t_step = r.cycle;
      w.step->cost_per_token = r.cost_per_token;
      w.steps_per_second = 1 / r.cycle.value();
      w.replica_tokens_per_s = r.tokens_per_s;
      w.tokens_per_s_per_user = r.tokens_per_s_per_user;
    }
    windows.push_back(window_json(w, d, lev, pipe ? pipe->pp : 1));
    if (w.step) {
      t.add({s, to_ms(w.hbm_sweep_peak), to_ms(w.hbm_sweep_effective), w.max_batch_at_context, to_ms(w.step->t_step),
             windows.back()["t_step_roofline_ms"].get<double>(), std::string(to_string(w.step->bound)), w.steps_per_second, w.replica_tokens_per_s.value(),
             w.tokens_per_s_per_user.value(), cost_cell(w.step->cost_per_token)});
    } else {
      t.add({s, to_ms(w.hbm_sweep_peak), to_ms(w.hbm_sweep_effective), int64_t{0}, Cell{}, Cell{}, std::string("does not fit"), Cell{},
             Cell{}, Cell{}, Cell{}});
    }
  }
  nlohmann::json head = pipe ? pipeline_json(d, *pipe, n_layers(load_model(a.deployment.model))) : describe_json(d);
  if (pipe) head["pipeline"]["why"] = pipe->why;
  head["replica_choice"] = replica_note_json(note);
  head["levers"] = levers_json(lev);
  head["windows"] = windows;
  const TokensPerSecond lecture = deployment_tokens_per_s(2000, seconds(1.0 / 64));
  print("serving window", a, t, head,
        "chalk serving window: how often the train departs (lecture 21:51-27:38)\n" + describe_text_with_warnings(d, max_context) + replica_note_text(note) +
            (pipe ? pipeline_text(d, *pipe, {}, n_layers(load_model(a.deployment.model))) + "            the HBM sweep is one stage's; the step is the cycle a user waits (every stage once), "
                                                  "tok/s the whole pipeline's\n"
                  : std::string()) +
            "levers      " +
            describe_levers(lev) +
            fmt::format("\nA step that reads all of HBM takes capacity / bandwidth; a replica holding the largest batch that "
                        "fits runs one such step per departure, and a deployment's tokens/s is batch x steps/s per replica "
                        "(the lecture: 2,000 x 64 = {} tok/s). More users than one batch need more replicas, not a "
                        "longer wait.\n",
                        format_count(lecture.value(), 3)));
}

}  // namespace chalk::cli::serving_cli
