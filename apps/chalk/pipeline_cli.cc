#include "envelope.h"
#include "pipeline_cli.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "table.h"

namespace chalk::cli {

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
  return resolve_model(stage, per_stage, context);
}

namespace {

PipelineShape shape_of(const PipelineArgs& p) {
  PipelineShape s;
  s.stages = p.pp;
  s.microbatches = p.microbatches.value_or(p.pp);
  return s;
}

}  // namespace

nlohmann::json pipeline_json(const Deployment& st, const PipelineArgs& p) {
  auto j = describe_json(st);
  j["assumptions"]["chips"] = st.n_chips * p.pp;
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
  const int64_t least = std::min(want, *std::min_element(batches.begin(), batches.end()));
  const int64_t most = std::min(want, *std::max_element(batches.begin(), batches.end()));
  if (least == most) return fmt::format("{} microbatch{} in flight", most, most == 1 ? "" : "es");
  return fmt::format("{} to {} microbatches in flight ({} asked; a microbatch holds at least one sequence)", least, most, want);
}

}  // namespace

std::string pipeline_text(const Deployment& st, const PipelineArgs& p, const std::vector<int64_t>& batches) {
  return fmt::format("pipeline    {} stages x {} = {}; {} of {} layers per stage (the busiest; each keeps the embedding "
                     "and LM head); {}; stage-to-stage sends over scale-out\n",
                     p.pp, counted(st.n_chips, "chip"), counted(p.pp * st.n_chips, "chip"), n_layers(st.model), n_layers(st.model) * p.pp,
                     in_flight(p, batches));
}

namespace {

void print_header(const Deployment& st, const PipelineArgs& p, const std::vector<int64_t>& batches, const char* what,
                  const std::optional<ReplicaNote>& note = std::nullopt) {
  std::cout << what << describe_text(st) << replica_note_text(note) << pipeline_text(st, p, batches);
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
                 "them over scale-out; --chips then counts every stage's chips")
      ->capture_default_str();
  app.add_option("--microbatches", p.microbatches, "Microbatches in flight through the pipeline, the batch split among them (default: --pp; needs --pp > 1)");
}

void add_auto_pp_option(CLI::App& app, std::optional<int64_t>& pp) {
  app.add_option("--pp", pp,
                 "Pipeline stages: the layers split over N groups of chips (one scale-up domain each), activations sent between them "
                 "over scale-out; -n then counts every stage's chips (default: without -n, when no replica within the scale-up domain "
                 "holds the model, the pipeline `chalk layouts` ranks first; else 1)");
}

std::optional<PipelineArgs> chosen_pipeline(const DeploymentArgs& a, const std::optional<int64_t>& pp, const std::optional<ReplicaNote>& note) {
  if (pp && *pp < 1) throw InputError("--pp", "must be >= 1 stage, got " + std::to_string(*pp));
  PipelineArgs p;
  if (pp) {
    if (*pp == 1) return std::nullopt;
    p.pp = *pp;
    return p;
  }
  if (a.chips != 0 || !note || note->pp <= 1) return std::nullopt;
  p.pp = note->pp;
  return p;
}

void run_pipeline_decode(const DeploymentArgs& a, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches_in,
                         const std::vector<int64_t>& contexts_in, const PipelineCommand& command) {
  std::vector<int64_t> batches = batches_in, contexts = contexts_in;
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
  for (int64_t s : contexts) {
    for (int64_t b : batches) {
      const PipelineDecode r = pipeline_decode(st, shape, b, s);
      t.add({b, s, p.pp, r.microbatches, r.microbatch, to_ms(r.stage.t_step), to_ms(r.t_hop), to_ms(r.t_pass), to_ms(r.cycle),
             to_ms(pipeline_decode(lower, shape, b, s).cycle), r.stage_busy,
             r.tokens_per_s.value(), r.tokens_per_s_per_user.value(), r.tokens_per_s_per_chip.value(),
             r.cost_per_token ? Cell(to_usd_per_mtok(*r.cost_per_token)) : Cell{}, to_gb(r.stage_memory.weights),
             to_gb(r.stage_memory.kv_cache), std::string(r.stage_memory.fits ? "yes" : "no")});
    }
  }
  if (!o.csv && !o.json) {
    const std::string how = "a pipelined replica (lecture 47:12-1:18:33): pass = stages x stage step + hops; TPOT = the time between "
                            "a user's tokens = max(pass, microbatches x stage step); tok/s = batch / TPOT; roofline ms = the same pipeline "
                            "with mechanisms off (the roofline at the achievable rates below)\n";
    print_header(st, p, batches, (command.title.empty() ? "chalk decode --pp: " + how : command.title + how).c_str(), command.note);
  }
  emit(t, o, pipeline_json(st, p), command.name, command.note);
}

void run_pipeline_prefill(const DeploymentArgs& a, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                          const std::vector<int64_t>& prompts, int64_t prefix) {
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
  for (int64_t pr : prompts) {
    for (int64_t b : batches) {
      const PipelinePrefill r = pipeline_prefill(st, shape, b, pr, prefix);
      t.add({b, pr, prefix, p.pp, r.microbatches, r.microbatch, to_ms(r.stage.t_step), to_ms(r.t_hop), to_ms(r.ttft),
             to_ms(pipeline_prefill(lower, shape, b, pr, prefix).ttft), r.tokens_per_s.value(),
             r.cost_per_token ? Cell(to_usd_per_mtok(*r.cost_per_token)) : Cell{}, to_gb(r.stage_memory.weights),
             to_gb(r.stage_memory.kv_cache), std::string(r.stage_memory.fits ? "yes" : "no")});
    }
  }
  if (!o.csv && !o.json) {
    print_header(st, p, batches,
                 "chalk prefill --pp: a pipelined replica (lecture 47:12-1:18:33): TTFT = (stages + microbatches - 1) x stage step + "
                 "hops; TTFT excludes queueing; roofline ms = the same pipeline with mechanisms off (the roofline at the achievable rates below)\n");
  }
  emit(t, o, pipeline_json(st, p), "prefill");
}

}  // namespace chalk::cli
