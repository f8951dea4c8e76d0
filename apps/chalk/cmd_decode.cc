// `chalk decode`: decode steps over batches and contexts: the engine step, with the roofline
// (its lower bound) beside it; --roofline shows the roofline alone.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/cheapest_batch.h"
#include "chalk/serving/serving.h"
#include "envelope.h"
#include "commands.h"
#include "deployment_options.h"
#include "pipeline_cli.h"
#include "explain_cli.h"
#include "serving_cli.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct DecodeArgs {
  DeploymentArgs deployment;
  OutputArgs output;
  PipelineArgs pipeline;
  serving_cli::LeverArgs levers;  ///< speculative decoding / MTP and sparse attention, as `serving` takes them
  std::string batch = "1,8,64,256,1024";
  bool batch_given = false;  ///< -b was given: its rows are shown whether they fit or not
  bool pp_given = false;     ///< --pp was given: its stages, else those `chalk layouts` ranks first where TP would cross a domain
  std::string context = "4096";
  bool explain = false;  ///< --explain: how each figure was computed (chalk/engine/explain.h)
};

/// The step's figures (explain_decode) and the replica's memory by component at the same
/// batch and context (explain_memory): what the page's headline and memory view show.
std::vector<Explanation> decode_explanations(const Deployment& d, int64_t batch, int64_t context) {
  auto xs = explain_decode(d, batch, context);
  for (auto& x : explain_memory(d, batch, context)) xs.push_back(std::move(x));
  return xs;
}

/// decode's columns, the pipeline's included (one set whatever the layout, review 4 M6).
Table decode_columns() {
  Table t;
  t.columns = {{"batch", "batch"},
               {"context_tokens", "context"},
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
               {"governs", "governs"},
               {"tok_per_s", "tok/s"},
               {"tok_per_s_per_user", "tok/s/user"},
               {"tok_per_s_per_chip", "tok/s/chip"},
               {"cost_usd_per_mtok", "$/Mtok"},
               {"experts_touched_per_layer", "experts/layer"},
               {"experts_on_busiest_chip", "on busiest chip"},
               {"memory_fits", "fits"},
               {"max_batch_at_context", "max batch"}};
  t.set_priority({"batch", "context_tokens"}, 0);
  t.set_priority({"t_compute_ms", "t_weights_ms", "t_kv_ms", "t_operations_ms", "t_comm_ms", "t_overhead_ms", "t_host_ms", "t_launch_ms", "graph_batch", "t_draft_ms", "experts_touched_per_layer",
                  "experts_on_busiest_chip", "bound", "tok_per_s"},
                 2);
  add_pipeline_columns(t);
  return t;
}

Table decode_table(const Deployment& d, const std::vector<int64_t>& batches, const std::vector<int64_t>& contexts, const ServingLevers& lev,
                   std::vector<std::pair<int64_t, int64_t>>* unfit) {
  Table t = decode_columns();
  const bool moe = !d.moe.empty();
  const Deployment lower = roofline_of(d);
  for (int64_t s : contexts) {
    const MemoryPlan mem0 = memory_plan(d, 1, s);
    const DecodeLevers levers = resolve_levers(lev, s);
    for (int64_t b : batches) {
      const DecodeStep r = decode_step(d, b, s, levers);
      const MemoryPlan mem = memory_plan(d, b, s);
      if (!mem.fits) unfit->emplace_back(b, s);
      std::vector<Cell> row{b, s, to_ms(r.t_compute), to_ms(r.t_weights), to_ms(r.t_kv), to_ms(r.t_operations), to_ms(r.t_comm), to_ms(r.t_overhead), to_ms(r.t_host),
             to_ms(r.t_launch), r.graph_batch, to_ms(r.t_draft), to_ms(r.t_step), to_ms(decode_step(lower, b, s, levers).t_step), std::string(to_string(r.bound)), r.governs,
             r.tokens_per_s.value(), r.tokens_per_s_per_user.value(), r.tokens_per_s_per_chip.value(),
             r.cost_per_token && mem.fits ? Cell(to_usd_per_mtok(*r.cost_per_token)) : Cell{},
             moe ? Cell(r.experts_touched) : Cell{}, moe ? Cell(r.experts_on_busiest_chip) : Cell{}, std::string(mem.fits ? "yes" : "no"),
             mem0.max_batch == INT64_MAX ? Cell{} : Cell(mem0.max_batch)};
      for (auto& c : one_stage_cells(b, to_ms(r.t_step), mem)) row.push_back(std::move(c));
      t.add(std::move(row));
    }
  }
  return t;
}

/// With -b and no -n (review 10 M2: `decode -m llama-3.1-70b -H h100-sxm -b 1,64,256 -s 8192`
/// led with 2 chips that hold batch 1 only, and printed rows that do not fit): the smallest
/// replica, a power-of-two multiple of `d`'s chips within the scale-up domain resolved as `da`
/// with -n, that holds the largest batch listed at the longest context, as `prices forward -b`
/// sizes its replica to hold the batch asked; where no size within the domain holds it, the
/// largest listed batch one does (the rest say "fits no", and unfit_rows_warning advises
/// splitting them over replicas). `note` then says so (at_batch). `d` unchanged when it holds
/// the largest batch or no size holds a batch it does not.
void hold_batches_asked(const DeploymentArgs& da, std::vector<int64_t> batches, const std::vector<int64_t>& contexts, Deployment& d,
                        ReplicaNote& note) {
  const int64_t longest = *std::max_element(contexts.begin(), contexts.end());
  std::sort(batches.begin(), batches.end(), std::greater<>());
  std::vector<std::pair<int64_t, Deployment>> sizes;  // the larger sizes, resolved once each
  for (int64_t n = d.n_chips * 2; n <= d.system.scale_up_domain; n *= 2) {
    DeploymentArgs more = da;
    more.chips = n;
    try {
      sizes.emplace_back(n, resolve(more, contexts.front()));
    } catch (const InputError&) {
      // a stated layout that does not divide n: the next size
    }
  }
  for (const int64_t b : batches) {
    if (memory_plan(d, b, longest).fits) return;  // the smallest replica holds the largest batch any size holds
    for (auto& [n, bigger] : sizes) {
      if (!memory_plan(bigger, b, longest).fits) continue;
      d = std::move(bigger);
      note.at_batch = b;
      note.context = longest;
      note.choice = cheapest_decode_point(d, b, longest);
      note.runner_up.reset();
      return;
    }
  }
}

void run_decode(const DecodeArgs& a) {
  auto batches = parse_int_list(a.batch, "--batch", 1, 1 << 24);
  const auto contexts = parse_int_list(a.context, "--context", 1, 1LL << 30);
  if (a.pipeline.pp != 1 || a.pipeline.microbatches) {
    PipelineCommand c;
    c.columns = decode_columns().columns;
    return run_pipeline_decode(a.deployment, a.pipeline, a.output, batches, contexts, c);
  }
  const ServingLevers lev = serving_cli::levers_of(a.levers, a.deployment);
  refuse_beyond_max_context(a.deployment, load_model(a.deployment.model), *std::max_element(contexts.begin(), contexts.end()), "--context");
  std::optional<ReplicaNote> note;
  // Where tensor parallelism would cross a scale-up domain, the stages `chalk layouts` ranks
  // first, as prices forward and serving sweep (review 4 M2: 405B on 16 H100, PP2 x (TP8) is
  // both cheaper and faster at batch 1, 43.9 against TP16's 48.9 ms). --explain and the levers
  // explain and price a step without stages: they keep one replica, and the note names the pipeline.
  DeploymentArgs da = a.deployment;
  da.prices_pipeline = !a.pp_given && !a.explain && lev.draft_tokens == 0 && lev.sparse == SparseAttention::dense;
  Deployment d = resolve(da, contexts.front(), &note);
  if (auto p = chosen_pipeline(da, std::nullopt, note, contexts.front())) {
    PipelineCommand c;
    c.note = note;
    c.cap_batches_at_memory_full = !a.batch_given;
    c.columns = decode_columns().columns;
    if (note && da.chips == 0) da.chips = note->choice.n_chips;
    return run_pipeline_decode(da, *p, a.output, batches, contexts, c);
  }
  if (a.batch_given && note) hold_batches_asked(da, batches, contexts, d, *note);
  std::vector<std::string> warnings = deployment_warnings(d);
  if (!a.batch_given) {
    // The default list never shows a batch the replica cannot hold (review 2026-12-06: 4
    // of 5 default rows of llama-3.1-70b on 2 H100 said "fits no" beside a $0.43/Mtok):
    // it stops at the most sequences HBM holds at every context asked, which is listed.
    int64_t most = INT64_MAX;
    for (int64_t s : contexts) most = std::min(most, memory_plan(d, 1, s).max_batch);
    if (most >= 1 && most < batches.back()) {
      std::erase_if(batches, [&](int64_t b) { return b > most; });
      batches.push_back(most);
      warnings.push_back(fmt::format("the default batches stop at {}, the most sequences {} x {} hold at context {}; -b lists others "
                                     "(shown as not fitting), -n more chips holds them",
                                     most, d.n_chips, d.system.chip.name, *std::max_element(contexts.begin(), contexts.end())));
    }
  }
  for (int64_t s : contexts) {
    if (s > d.model.max_context) {
      warnings.push_back(fmt::format("context {} exceeds {}'s max_position_embeddings {}", s, d.model.name, d.model.max_context));
    }
  }
  std::vector<std::pair<int64_t, int64_t>> unfit;
  const Table t = decode_table(d, batches, contexts, lev, &unfit);
  if (auto w = unfit_rows_warning(a.deployment, d, unfit)) warnings.push_back(*w);
  const MemoryPlan mem = memory_plan(d, 1, contexts.front());
  if (a.output.csv) {
    print_csv(std::cout, t, warnings);
  } else if (a.output.json) {
    auto j = describe_json(d);
    j["memory"] = {{"hbm_total_gb", to_gb(mem.hbm_total)},
                   {"weights_gb", to_gb(mem.weights)},
                   {"reserve_gb", to_gb(mem.reserve)},
                   {"weights_fit", mem.weights_fit}};
    j["levers"] = serving_cli::levers_json(lev);
    j["replica_choice"] = replica_note_json(note);
    j["rows"] = to_json(t);
    j["warnings"] = warnings;
    if (a.explain) {
      j["explanations"] = nlohmann::json::array();
      for (int64_t s : contexts) {
        for (int64_t b : batches) j["explanations"].push_back({{"batch", b}, {"context_tokens", s}, {"figures", explanations_json(decode_explanations(d, b, s))}});
      }
    }
    print_json(std::cout, envelope("decode", std::move(j), column_keys(t)));
  } else {
    std::cout << (d.mechanisms.enabled
                      ? "chalk decode: one decode step, engine step (layout collectives, kernel floor, kernel efficiencies; "
                        "docs/formulas.md); roofline ms = the roofline at the achievable rates below (lecture 2:21-15:30)\n"
                      : "chalk decode: one decode step, roofline at the achievable rates below (lecture 2:21-15:30)\n")
              << describe_text(d) << replica_note_text(note);
    // The total counts the weights the layout copies onto several chips (attention, dense
    // layers and embeddings over the data-parallel groups, an MLA latent or single KV head's
    // projections on every rank): say how much of it is copies (review 5 M4).
    const Bytes copies = mem.weights - d.weight_bytes_total;
    // Copies that are whole models (a dense model's --tp 4 on 8 chips: two data-parallel groups,
    // each all of it) are said as such, not as replicated attention (review 6 L7).
    const double whole = copies.value() / d.weight_bytes_total.value();
    const bool whole_models = whole >= 0.999 && std::fabs(whole - std::round(whole)) < 0.001;
    const std::string replicated =
        copies.value() <= 0.001 * d.weight_bytes_total.value() ? ""
        : whole_models ? fmt::format(" (incl. {} as {} more whole cop{} of the model in the layout's data-parallel groups; the model is {})",
                                     human_bytes(copies.value()), std::lround(whole), std::lround(whole) == 1 ? "y" : "ies",
                                     human_bytes(d.weight_bytes_total.value()))
                       : fmt::format(" (incl. {} of replicated attention, dense-layer and embedding weights; the model is {})",
                                     human_bytes(copies.value()), human_bytes(d.weight_bytes_total.value()));
    std::cout << fmt::format("memory      weights {}{} of {} HBM ({} held back for activations); {}\n", human_bytes(mem.weights.value()), replicated,
                             human_bytes(mem.hbm_total.value()), human_bytes(mem.reserve.value()),
                             mem.weights_fit ? "weights fit" : "WEIGHTS DO NOT FIT: add chips or use a smaller format");
    if (lev.draft_tokens > 0 || lev.sparse != SparseAttention::dense) std::cout << "levers      " << serving_cli::describe_levers(lev) << '\n';
    for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
    std::cout << '\n';
    print_table(std::cout, t);
    if (a.explain) {
      for (int64_t s : contexts) {
        for (int64_t b : batches) std::cout << fmt::format("\nHow the figures of batch {}, context {} are computed:\n", b, s) << explanations_text(decode_explanations(d, b, s));
      }
    }
  }
}

}  // namespace

void register_decode(CLI::App& app, Action& run) {
  static thread_local DecodeArgs a;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  a = DecodeArgs{};
  // Decode answers latency questions (TPOT at a batch): the smallest replica unless -n says
  // otherwise; the cheapest is printed beside it (issue 30).
  a.deployment.replica_rule = ReplicaRule::smallest;
  auto* cmd = app.add_subcommand("decode", "Time and cost of one decode step (TPOT: time per output token after the first; ITL when each step emits one token): the engine step (compute, weight and KV fetch, collectives, kernel floor) beside its roofline; tok/s counts output tokens");
  add_deployment_options(*cmd, a.deployment);
  add_infeasible_option(*cmd, a.deployment);
  add_pipeline_options(*cmd, a.pipeline);
  cmd->add_option("-b,--batch", a.batch, "Sequences per step over the whole replica: comma list, or a:b for powers of two from a to b")->capture_default_str();
  cmd->add_option("-s,--context", a.context, "Tokens already in each sequence's KV cache: comma list or a:b")->capture_default_str();
  cmd->add_flag("--explain", a.explain, "Show how each figure is computed: formula, inputs with units and sources, the algebra (under the table; \"explanations\" with --json)");
  serving_cli::add_lever_options(*cmd, a.levers);
  add_output_options(*cmd, a.output);
  cmd->callback([&run, cmd] {
    a.batch_given = cmd->count("--batch") > 0;
    a.pp_given = cmd->count("--pp") > 0;
    run = [] { run_decode(a); };
  });
}

}  // namespace chalk::cli
