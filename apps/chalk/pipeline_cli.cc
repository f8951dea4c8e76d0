#include "envelope.h"
#include "pipeline_cli.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/default_layout.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "table.h"

namespace chalk::cli {

namespace {

// Why a pipeline's stages have the chips they have when -n is not given (review 4 L5).
constexpr const char* kSmallestStagesWhy = "each stage on the smallest replica that holds its layers; -n sets every stage's chips";

// Stated chips whose stages cannot hold their layers, said in the units the user gave (review
// 4 M7: "4 x H100 cannot hold ... (1 of 2 pipeline stages); the smallest replica is -n 8" to a
// user who passed -n 8 --pp 2): every stage's chips, the stage's layers, and the -n of the
// smallest pipeline of as many stages that holds them. Returns when the stage holds its
// weights (the refusal was something else: a split no engine runs), else throws.
void pipeline_stage_unfit(const ModelSpec& full, const ModelSpec& stage, const DeploymentArgs& per_stage, const PipelineArgs& p, int64_t context) {
  DeploymentArgs study = per_stage;
  study.allow_infeasible = true;
  const Deployment d = resolve_model(stage, study, context);
  const MemoryPlan mem = memory_plan(d, 1, context);
  if (mem.weights_fit) return;
  const double n = static_cast<double>(std::max<int64_t>(d.n_chips, 1));
  std::string fix;
  try {
    DeploymentArgs smallest = per_stage;
    smallest.chips = 0;
    const int64_t each = resolve_model(stage, smallest, context).n_chips;
    fix = fmt::format("the smallest pipeline of {} stages that holds them is -n {} --pp {} ({} a stage)", p.pp, each * p.pp, p.pp,
                      counted(each, "chip"));
  } catch (const InputError&) {
    fix = fmt::format("no pipeline of {} stages of {} holds them: more stages (--pp) or a smaller --weights format", p.pp, d.system.name);
  }
  if (per_stage.weights != "fp8" && per_stage.weights != "fp4" && d.system.chip.supports(MatmulPrecision::fp8)) {
    study.weights = "fp8";
    try {
      if (memory_plan(resolve_model(stage, study, context), 1, context).weights_fit) {
        fix += fmt::format("; or --weights fp8 holds them on these {}", counted(d.n_chips * p.pp, "chip"));
      }
    } catch (const InputError&) {
      // a stated layout the fp8 deployment cannot take: no such advice
    }
  }
  throw InputError("--chips", fmt::format("{} in {} stages of {} x {} cannot hold {}'s weights: each stage holds {} of {} layers, {} of "
                                          "weights per chip and {} held back against {} of HBM per chip; {}; --allow-infeasible prints "
                                          "the figures anyway",
                                          counted(d.n_chips * p.pp, "chip"), p.pp, d.n_chips, d.system.chip.name, full.name,
                                          n_layers(stage), n_layers(full), human_bytes(mem.weights.value() / n),
                                          human_bytes(mem.reserve.value() / n), human_bytes(mem.hbm_total.value() / n), fix));
}

}  // namespace

// The busiest stage's deployment: the model cut into p.pp stages; --chips (every chip of
// the replica) split evenly into the stages, else each stage on the smallest replica that
// holds it.
Deployment resolve_pipeline_stage(const DeploymentArgs& a, const PipelineArgs& p, int64_t context) {
  if (p.pp < 1) throw InputError("--pp", "must be >= 1 stage, got " + std::to_string(p.pp));
  if (p.microbatches && p.pp == 1) {
    throw InputError("--microbatches", fmt::format("{} given without --pp N (N > 1): microbatches are in flight through pipeline stages; "
                                                   "one replica without stages runs the whole batch in each step",
                                                   *p.microbatches));
  }
  if (p.microbatches && *p.microbatches < 1) throw InputError("--microbatches", "must be >= 1, got " + std::to_string(*p.microbatches));
  const ModelSpec full = load_model(a.model);
  ModelSpec stage;
  try {
    stage = pipeline_stage_model(full, p.pp);
  } catch (const InputError& e) {
    throw InputError("--pp", std::string(e.what()).substr(e.field().size() + 2));
  }
  DeploymentArgs per_stage = a;
  if (a.chips != 0) {
    if (a.chips % p.pp != 0) {
      throw InputError("--chips", fmt::format("{} chips do not split into --pp {} equal stages (--chips counts every chip of the replica)",
                                              a.chips, p.pp));
    }
    per_stage.chips = a.chips / p.pp;
  }
  // Each stage on the smallest replica that holds it: a pipeline answers a capacity
  // question (lecture 47:12), not the cost floor of one replica.
  per_stage.replica_rule = ReplicaRule::smallest;
  per_stage.prices_pipeline = false;
  try {
    return resolve_model(stage, per_stage, context);
  } catch (const InputError& e) {
    if (a.chips == 0 || e.field() != "--chips") throw;
    pipeline_stage_unfit(full, stage, per_stage, p, context);
    throw;
  }
}

namespace {

PipelineShape shape_of(const PipelineArgs& p) {
  PipelineShape s;
  s.stages = p.pp;
  s.microbatches = p.microbatches.value_or(p.pp);
  return s;
}

}  // namespace

nlohmann::json pipeline_json(const Deployment& st, const PipelineArgs& p, int64_t model_layers) {
  auto j = describe_json(st);
  j["assumptions"]["chips"] = st.n_chips * p.pp;
  j["model"]["layers"] = model_layers;
  j["pipeline"] = {{"pp", p.pp},
                   {"microbatches", p.microbatches.value_or(p.pp)},
                   {"chips_per_stage", st.n_chips},
                   {"layers_per_stage", n_layers(st.model)},
                   {"stage_to_stage", "microbatch x d_model x 2 bytes (bf16 activations) over " + st.system.name +
                                          "'s scale-out network per stage boundary; the sampled token ids back from the last stage"}};
  return j;
}

namespace {

/// "m microbatches in flight" as the rows use them: min(requested, batch), since a
/// microbatch holds at least one sequence (pipeline.h).
std::string in_flight(const PipelineArgs& p, const std::vector<int64_t>& batches) {
  const int64_t want = p.microbatches.value_or(p.pp);
  // No batches (frontier, modes, balance, window: each row's own): the microbatches asked.
  if (batches.empty()) return fmt::format("{} microbatches in flight (one per sequence below {})", want, want);
  const int64_t least = std::min(want, *std::min_element(batches.begin(), batches.end()));
  const int64_t most = std::min(want, *std::max_element(batches.begin(), batches.end()));
  if (least == most) return fmt::format("{} microbatch{} in flight", most, most == 1 ? "" : "es");
  return fmt::format("{} to {} microbatches in flight ({} asked; a microbatch holds at least one sequence)", least, most, want);
}

}  // namespace

namespace {

/// "32, 32, 31, 31": `layers` over `stages` as evenly as they go, the first stages taking the
/// remainder; "63 each" when they divide.
std::string pipeline_layer_split(int64_t layers, int64_t stages) {
  if (stages < 1) return std::to_string(layers);
  if (layers % stages == 0) return fmt::format("{} each", layers / stages);
  std::vector<int64_t> split;
  for (int64_t i = 0; i < stages; ++i) split.push_back(layers / stages + (i < layers % stages ? 1 : 0));
  return fmt::format("{}", fmt::join(split, ", "));
}

}  // namespace

std::string pipeline_text(const Deployment& st, const PipelineArgs& p, const std::vector<int64_t>& batches, int64_t model_layers) {
  // Each layer kind is cut apart (pipeline_stage_model): the busiest stage can hold more than
  // the even split's largest (DeepSeek-V3's 3 dense + 58 MoE layers over 8: 1 + 8 = 9, the even split's largest 8).
  return fmt::format("pipeline    {} stages x {} = {}; {} layers in stages of {} (every stage priced as the busiest, {} layers; "
                     "each keeps the embedding and LM head); {}; stage-to-stage sends over {}\n{}",
                     p.pp, counted(st.n_chips, "chip"), counted(p.pp * st.n_chips, "chip"), model_layers, pipeline_layer_split(model_layers, p.pp),
                     n_layers(st.model), in_flight(p, batches),
                     // Review 6 L9: 3 stages of 2 H100 sit in one 8-GPU NVLink domain (pipeline_hop_time).
                     stages_within_domain(st, p.pp) ? fmt::format("scale-up (all {} chips in one {}-chip domain)", p.pp * st.n_chips,
                                                                  st.system.scale_up_domain)
                                                    : std::string("scale-out"),
                     p.why.empty() ? std::string() : "            " + p.why + "\n");
}

namespace {

void print_header(const Deployment& st, const PipelineArgs& p, const std::vector<int64_t>& batches, int64_t model_layers, const char* what,
                  const std::optional<ReplicaNote>& note = std::nullopt) {
  std::cout << what << describe_text(st) << replica_note_text(note) << pipeline_text(st, p, batches, model_layers);
  for (const auto& w : deployment_warnings(st)) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
}

void emit(const Table& t, const OutputArgs& o, nlohmann::json j, const char* command, const std::optional<ReplicaNote>& note = std::nullopt) {
  if (note) j["replica_choice"] = replica_note_json(note);
  if (o.csv) {
    print_csv(std::cout, t);
  } else if (o.json) {
    j["rows"] = to_json(t);
    j["warnings"] = nlohmann::json::array();
    print_json(std::cout, envelope(command, std::move(j), column_keys(t)));
  } else {
    print_table(std::cout, t);
  }
}

}  // namespace

void add_pipeline_options(CLI::App& app, PipelineArgs& p) {
  app.add_option("--pp", p.pp,
                 "Pipeline stages: the layers split over N groups of chips (one scale-up domain each), activations sent between "
                 "them over scale-out; --chips then counts every stage's chips (default: where tensor parallelism would cross a "
                 "scale-up domain, the pipeline `chalk layouts` ranks first on those chips; else 1; --explain and the serving "
                 "levers keep 1)");
  app.add_option("--microbatches", p.microbatches, "Microbatches in flight through the pipeline, the batch split among them (default: --pp; needs --pp > 1)");
}

void add_auto_pp_option(CLI::App& app, std::optional<int64_t>& pp) {
  app.add_option("--pp", pp,
                 "Pipeline stages: the layers split over N groups of chips (one scale-up domain each), activations sent between them "
                 "over scale-out; -n then counts every stage's chips (default: without -n, when no replica within the scale-up domain "
                 "holds the model, the pipeline `chalk layouts` ranks first; else 1)");
}

std::optional<PipelineArgs> chosen_pipeline(const DeploymentArgs& a, const std::optional<int64_t>& pp, const std::optional<ReplicaNote>& note,
                                            int64_t context) {
  if (pp && *pp < 1) throw InputError("--pp", "must be >= 1 stage, got " + std::to_string(*pp));
  PipelineArgs p;
  if (pp) {
    if (*pp == 1) return std::nullopt;
    p.pp = *pp;
    if (a.chips == 0) p.why = kSmallestStagesWhy;
    return p;
  }
  if (a.chips == 0) {
    if (!note || note->pp <= 1) return std::nullopt;
    p.pp = note->pp;
    return p;
  }
  // Stated chips wider than one scale-up domain: the layout search's first-ranked layout on
  // them, stages and all, as with no -n (review 4 M2/L6: -n 16 or -n 32 of 405B on H100 priced
  // tensor parallelism across hosts and pointed at another command's --pp).
  const SystemSpec system = load_system(a.hardware);
  if (!a.prices_pipeline || a.roofline || a.tp || a.ep || a.two_batch_overlap || a.chips <= system.scale_up_domain) return std::nullopt;
  DeploymentOptions o = options_from(a);
  o.mechanisms.enabled = true;
  o.n_chips = a.chips;
  const ReplicaLayouts found = replica_layouts(load_model(a.model), system, o, a.chips, std::max<int64_t>(context, 1));
  if (!found.pipeline) return std::nullopt;
  p.pp = found.pipeline->pp;
  p.why = fmt::format("{} chips span {} scale-up domains of {}: {}, the layout `chalk layouts` ranks first on them; --pp 1 prices them "
                      "without stages",
                      a.chips, (a.chips + system.scale_up_domain - 1) / system.scale_up_domain, system.scale_up_domain, found.pipeline->name);
  return p;
}

void run_pipeline_decode(const DeploymentArgs& a, const PipelineArgs& p_in, const OutputArgs& o, const std::vector<int64_t>& batches_in,
                         const std::vector<int64_t>& contexts_in, const PipelineCommand& command) {
  std::vector<int64_t> batches = batches_in, contexts = contexts_in;
  PipelineArgs p = p_in;
  if (a.chips == 0 && p.why.empty()) p.why = kSmallestStagesWhy;
  const Deployment st = resolve_pipeline_stage(a, p, contexts.front());
  if (command.cap_batches_at_memory_full) {
    const int64_t full = memory_plan(st, 0, *std::max_element(contexts.begin(), contexts.end())).max_batch;
    if (full >= 1 && full < *std::max_element(batches.begin(), batches.end())) {
      std::erase_if(batches, [&](int64_t b) { return b > full; });
      if (batches.empty() || batches.back() < full) batches.push_back(full);
    }
  }
  const Deployment lower = roofline_of(st);
  const PipelineShape shape = shape_of(p);
  Table t;
  t.columns = {{"batch", "batch"},
               {"context_tokens", "context"},
               {"pp", "pp"},
               {"microbatches", "microbatches"},
               {"microbatch", "seqs/microbatch"},
               {"t_stage_ms", "stage ms"},
               {"t_hop_ms", "hop ms"},
               {"t_pass_ms", "pass ms"},
               {"t_step_ms", "TPOT ms"},
               {"t_step_roofline_ms", "roofline ms"},
               {"stage_busy", "stage busy"},
               {"tok_per_s", "tok/s"},
               {"tok_per_s_per_user", "tok/s/user"},
               {"tok_per_s_per_chip", "tok/s/chip"},
               {"cost_usd_per_mtok", "$/Mtok"},
               {"stage_weights_gb", "stage weights GB"},
               {"stage_kv_gb", "stage KV GB"},
               {"memory_fits", "fits"}};
  t.set_priority({"batch", "context_tokens"}, 0);
  // tok/s per chip and $/Mtok within 100 columns: what `serving sweep` defaults to show.
  t.set_priority({"pp", "microbatches", "microbatch", "stage_weights_gb", "stage_busy", "t_pass_ms", "t_hop_ms", "t_step_roofline_ms"}, 2);
  if (!command.columns.empty()) t.columns = command.columns;
  const bool moe = !st.moe.empty();
  for (int64_t s : contexts) {
    const int64_t full = memory_plan(st, 1, s).max_batch;
    for (int64_t b : batches) {
      const PipelineDecode r = pipeline_decode(st, shape, b, s);
      const DecodeStep& g = r.stage;
      const bool fits = r.stage_memory.fits;
      // A row the stages cannot hold has no price (as without stages, issue 30). Each term's
      // cost is its share of the busiest stage's step times the row's cost (term_costs'
      // split, with the cycle in place of the step: the chips are paid for the whole cycle).
      const bool priced = r.cost_per_token && fits;
      const double usd = priced ? to_usd_per_mtok(*r.cost_per_token) : 0;
      auto term = [&](Seconds x) { return priced && g.t_step.value() > 0 ? Cell(usd * x.value() / g.t_step.value()) : Cell{}; };
      const std::map<std::string, Cell, std::less<>> row{
          {"batch", b}, {"context_tokens", s}, {"chips", st.n_chips * p.pp}, {"kv_read_tokens", s},
          {"t_compute_ms", to_ms(g.t_compute)}, {"t_weights_ms", to_ms(g.t_weights)}, {"t_kv_ms", to_ms(g.t_kv)},
          {"t_operations_ms", to_ms(g.t_operations)}, {"t_comm_ms", to_ms(g.t_comm)}, {"t_overhead_ms", to_ms(g.t_overhead)},
          {"t_host_ms", to_ms(g.t_host)}, {"t_launch_ms", to_ms(g.t_launch)}, {"graph_batch", g.graph_batch}, {"t_draft_ms", to_ms(g.t_draft)},
          {"t_step_ms", to_ms(r.cycle)}, {"t_step_roofline_ms", to_ms(pipeline_decode(lower, shape, b, s).cycle)},
          {"bound", std::string(to_string(g.bound))}, {"governs", g.governs},
          {"tok_per_s", r.tokens_per_s.value()}, {"tok_per_s_per_user", r.tokens_per_s_per_user.value()},
          {"tok_per_s_per_chip", r.tokens_per_s_per_chip.value()}, {"cost_usd_per_mtok", priced ? Cell(usd) : Cell{}},
          {"cost_compute_usd_per_mtok", term(g.t_compute)}, {"cost_weights_usd_per_mtok", term(g.t_weights)},
          {"cost_kv_usd_per_mtok", term(g.t_kv)}, {"cost_comm_usd_per_mtok", term(g.t_comm)},
          {"cost_overhead_usd_per_mtok", term(g.t_overhead)},
          {"experts_touched_per_layer", moe ? Cell(g.experts_touched) : Cell{}},
          {"experts_on_busiest_chip", moe ? Cell(g.experts_on_busiest_chip) : Cell{}},
          {"memory_fits", std::string(fits ? "yes" : "no")}, {"max_batch_at_context", full == INT64_MAX ? Cell{} : Cell(full)},
          {"pp", p.pp}, {"microbatches", r.microbatches}, {"microbatch", r.microbatch}, {"t_stage_ms", to_ms(g.t_step)},
          {"t_hop_ms", to_ms(r.t_hop)}, {"t_pass_ms", to_ms(r.t_pass)}, {"stage_busy", r.stage_busy},
          {"stage_weights_gb", to_gb(r.stage_memory.weights)}, {"stage_kv_gb", to_gb(r.stage_memory.kv_cache)}};
      t.add(cells_by_key(t.columns, row));
    }
  }
  if (!o.csv && !o.json) {
    const std::string how = "a pipelined replica (lecture 47:12-1:18:33): pass = stages x stage step + hops; TPOT = the time between "
                            "a user's tokens = max(pass, microbatches x stage step); tok/s = batch / TPOT; roofline ms = the same pipeline "
                            "with mechanisms off (the roofline at the achievable rates below)\n";
    print_header(st, p, batches, n_layers(load_model(a.model)), (command.title.empty() ? "chalk decode --pp: " + how : command.title + how).c_str(), command.note);
  }
  emit(t, o, pipeline_json(st, p, n_layers(load_model(a.model))), command.name, command.note);
}

void run_pipeline_prefill(const DeploymentArgs& a, const PipelineArgs& p_in, const OutputArgs& o, const std::vector<int64_t>& batches,
                          const std::vector<int64_t>& prompts, int64_t prefix, const std::optional<ReplicaNote>& note,
                          const std::vector<Column>& columns) {
  PipelineArgs p = p_in;
  if (a.chips == 0 && p.why.empty()) p.why = kSmallestStagesWhy;
  const Deployment st = resolve_pipeline_stage(a, p, prompts.back() + prefix);
  const Deployment lower = roofline_of(st);
  const PipelineShape shape = shape_of(p);
  Table t;
  t.columns = {{"batch", "batch"},
               {"prompt_tokens", "prompt"},
               {"prefix_tokens", "prefix"},
               {"pp", "pp"},
               {"microbatches", "microbatches"},
               {"microbatch", "prompts/microbatch"},
               {"t_stage_ms", "stage ms"},
               {"t_hop_ms", "hop ms"},
               {"ttft_ms", "TTFT ms"},
               {"ttft_roofline_ms", "roofline ms"},
               {"tok_per_s", "tok/s"},
               {"cost_usd_per_mtok", "$/Mtok in"},
               {"stage_weights_gb", "stage weights GB"},
               {"stage_kv_gb", "stage KV GB"},
               {"memory_fits", "fits"}};
  t.set_priority({"batch", "prompt_tokens"}, 0);
  t.set_priority({"prefix_tokens", "pp", "microbatches", "stage_weights_gb"}, 2);
  if (!columns.empty()) t.columns = columns;
  for (int64_t pr : prompts) {
    for (int64_t b : batches) {
      const PipelinePrefill r = pipeline_prefill(st, shape, b, pr, prefix);
      const PrefillStep& g = r.stage;
      const bool fits = r.stage_memory.fits;
      const std::map<std::string, Cell, std::less<>> row{
          {"batch", b}, {"prompt_tokens", pr}, {"prefix_tokens", prefix},
          {"t_compute_ms", to_ms(g.t_compute)}, {"t_weights_ms", to_ms(g.t_weights)}, {"t_kv_ms", to_ms(g.t_kv)},
          {"t_operations_ms", to_ms(g.t_operations)}, {"t_comm_ms", to_ms(g.t_comm)}, {"t_overhead_ms", to_ms(g.t_overhead)},
          {"t_host_ms", to_ms(g.t_host)}, {"t_launch_ms", to_ms(g.t_launch)}, {"graph_batch", g.graph_batch},
          {"ttft_ms", to_ms(r.ttft)}, {"ttft_roofline_ms", to_ms(pipeline_prefill(lower, shape, b, pr, prefix).ttft)},
          {"bound", std::string(to_string(g.bound))}, {"governs", g.governs}, {"tok_per_s", r.tokens_per_s.value()},
          {"cost_usd_per_mtok", r.cost_per_token && fits ? Cell(to_usd_per_mtok(*r.cost_per_token)) : Cell{}},
          {"memory_fits", std::string(fits ? "yes" : "no")},
          {"pp", p.pp}, {"microbatches", r.microbatches}, {"microbatch", r.microbatch}, {"t_stage_ms", to_ms(g.t_step)},
          {"t_hop_ms", to_ms(r.t_hop)}, {"stage_weights_gb", to_gb(r.stage_memory.weights)},
          {"stage_kv_gb", to_gb(r.stage_memory.kv_cache)}};
      t.add(cells_by_key(t.columns, row));
    }
  }
  if (!o.csv && !o.json) {
    print_header(st, p, batches, n_layers(load_model(a.model)),
                 "chalk prefill --pp: a pipelined replica (lecture 47:12-1:18:33): TTFT = (stages + microbatches - 1) x stage step + "
                 "hops; TTFT excludes queueing; roofline ms = the same pipeline with mechanisms off (the roofline at the achievable rates below)\n",
                 note);
  }
  emit(t, o, pipeline_json(st, p, n_layers(load_model(a.model))), "prefill", note);
}

}  // namespace chalk::cli
