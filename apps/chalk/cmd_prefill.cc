// `chalk prefill`: a prefill and the TTFT of a prompt: the engine step, with the roofline
// (its lower bound) beside it; --roofline shows the roofline alone.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "envelope.h"
#include "commands.h"
#include "deployment_options.h"
#include "pipeline_cli.h"
#include "explain_cli.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct PrefillArgs {
  DeploymentArgs deployment;
  OutputArgs output;
  PipelineArgs pipeline;
  bool pp_given = false;  ///< --pp was given: its stages, else those `chalk layouts` ranks first where TP would cross a domain
  std::string batch = "1";
  std::string prompt = "1024,8192,32768";
  int64_t prefix = 0;
  bool explain = false;  ///< --explain: how each figure was computed (chalk/engine/explain.h)
};

/// prefill's columns, the pipeline's included (one set whatever the layout, review 4 M6).
Table prefill_columns() {
  Table t;
  t.columns = {{"batch", "batch"},           {"prompt_tokens", "prompt"},     {"prefix_tokens", "prefix"},
               {"t_compute_ms", "compute ms"}, {"t_weights_ms", "weights ms"}, {"t_kv_ms", "KV ms"},
               {"t_operations_ms", "ops ms"},  {"t_comm_ms", "comm ms"},       {"t_overhead_ms", "overhead ms"},
               {"t_host_ms", "host ms"},       {"t_launch_ms", "launch ms"},   {"graph_batch", "graph"},
               {"ttft_ms", "TTFT ms"},         {"ttft_roofline_ms", "roofline ms"},       {"bound", "bound"},              {"governs", "governs"},
               {"tok_per_s", "tok/s"},
               {"cost_usd_per_mtok", "$/Mtok in"}, {"memory_fits", "fits"}};
  t.set_priority({"batch", "prompt_tokens"}, 0);
  t.set_priority({"t_compute_ms", "t_weights_ms", "t_kv_ms", "t_operations_ms", "t_comm_ms", "t_overhead_ms", "t_host_ms", "t_launch_ms", "graph_batch", "bound", "prefix_tokens"}, 2);
  add_pipeline_columns(t, true);
  return t;
}

void run_prefill(const PrefillArgs& a) {
  const auto batches = parse_int_list(a.batch, "--batch", 1, 1 << 20);
  const auto prompts = parse_int_list(a.prompt, "--prompt", 1, 1LL << 30);
  if (a.prefix < 0 || a.prefix > (1LL << 30)) throw InputError("--prefix", fmt::format("must be in 0..{}, got {}", 1LL << 30, a.prefix));
  if (a.pipeline.pp != 1 || a.pipeline.microbatches) {
    return run_pipeline_prefill(a.deployment, a.pipeline, a.output, batches, prompts, a.prefix, std::nullopt, prefill_columns().columns);
  }
  refuse_beyond_max_context(a.deployment, load_model(a.deployment.model), *std::max_element(prompts.begin(), prompts.end()) + a.prefix,
                            "--prompt");
  std::optional<ReplicaNote> note;
  // A TTFT question: with no layout stated, the layout of least TTFT at the longest prompt
  // and the first batch, not the decode-throughput best (issue 29: qwen3-235b-a22b on 8
  // H200 took 4202 ms under DP attention, 794 ms under TP8).
  DeploymentArgs da = a.deployment;
  std::optional<LayoutNote> layout_note;
  {
    const int64_t b = batches.front(), p = *std::max_element(prompts.begin(), prompts.end()), prefix = a.prefix;
    da.layout_chooser = std::make_shared<LayoutChooser>(LayoutChooser{
        fmt::format("least TTFT at batch {} of {}-token prompts", b, p), "ms", [b, p, prefix](const Deployment& c) {
          const double ms = to_ms(prefill_step(c, b, p, prefix).ttft);
          return LayoutScore{ms, true, "TTFT " + format_number(ms, 4) + " ms"};
        }});
    da.layout_note = &layout_note;
  }
  // Where tensor parallelism would cross a scale-up domain, the stages `chalk layouts` ranks
  // first, as decode, prices forward and serving sweep (review 4 H1: 405B on 16 H100, TTFT
  // 201 ms for 1,024 tokens on PP2 x (TP8) against TP16's 574 ms). --explain explains a step
  // without stages: it keeps one replica, and the note names the pipeline.
  da.prices_pipeline = !a.pp_given && !a.explain;
  // The replica cheapest per prompt token at the longest prompt, holding the largest batch
  // (review 5 M1), not the decode cost floor at that context.
  da.replica_rule = ReplicaRule::cheapest_prefill;
  da.prefill_batch = batches.front();
  da.prefill_hold_batch = *std::max_element(batches.begin(), batches.end());
  da.prefill_prefix = a.prefix;
  const int64_t longest = *std::max_element(prompts.begin(), prompts.end()) + std::max<int64_t>(a.prefix, 0);
  const Deployment d = resolve(da, longest, &note);
  if (auto p = chosen_pipeline(da, std::nullopt, note, longest)) {
    DeploymentArgs stages = a.deployment;
    stages.chips = note && da.chips == 0 ? note->choice.n_chips : da.chips;
    return run_pipeline_prefill(stages, *p, a.output, batches, prompts, a.prefix, note, prefill_columns().columns);
  }
  const Deployment lower = roofline_of(d);
  Table t = prefill_columns();
  std::vector<std::string> warnings = deployment_warnings(d);
  std::vector<std::pair<int64_t, int64_t>> unfit;  // (batch, prompt + prefix) rows the replica cannot hold
  for (int64_t p : prompts) {
    if (p + a.prefix > d.model.max_context) {
      warnings.push_back(fmt::format("prompt {} + prefix {} exceeds {}'s max_position_embeddings {}", p, a.prefix, d.model.name, d.model.max_context));
    }
    for (int64_t b : batches) {
      const PrefillStep r = prefill_step(d, b, p, a.prefix);
      const MemoryPlan mem = memory_plan(d, b, p + a.prefix);
      if (!mem.fits) unfit.emplace_back(b, p + a.prefix);
      std::vector<Cell> row{b, p, a.prefix, to_ms(r.t_compute), to_ms(r.t_weights), to_ms(r.t_kv), to_ms(r.t_operations), to_ms(r.t_comm), to_ms(r.t_overhead), to_ms(r.t_host), to_ms(r.t_launch), r.graph_batch, to_ms(r.ttft), to_ms(prefill_step(lower, b, p, a.prefix).ttft), std::string(to_string(r.bound)), r.governs,
             r.tokens_per_s.value(), r.cost_per_token && mem.fits ? Cell(to_usd_per_mtok(*r.cost_per_token)) : Cell{},
             std::string(mem.fits ? "yes" : "no")};
      for (auto& c : one_stage_cells(b, to_ms(r.t_step), mem, true)) row.push_back(std::move(c));
      t.add(std::move(row));
    }
  }
  if (auto w = unfit_rows_warning(a.deployment, d, unfit)) warnings.push_back(*w);
  if (a.output.csv) {
    print_csv(std::cout, t, warnings);
  } else if (a.output.json) {
    auto j = describe_json(d);
    j["replica_choice"] = replica_note_json(note);
    j["layout_choice"] = layout_note_json(layout_note);
    j["rows"] = to_json(t);
    j["warnings"] = warnings;
    if (a.explain) {
      j["explanations"] = nlohmann::json::array();
      for (int64_t p : prompts) {
        for (int64_t b : batches) j["explanations"].push_back({{"batch", b}, {"prompt_tokens", p}, {"figures", explanations_json(explain_prefill(d, b, p, a.prefix))}});
      }
    }
    print_json(std::cout, envelope("prefill", std::move(j), column_keys(t)));
  } else {
    std::cout << (d.mechanisms.enabled ? "chalk prefill: one prefill chunk, engine step (docs/formulas.md); roofline ms = the roofline at the achievable rates below "
                                         "(lecture 1:41-1:51); TTFT excludes queueing\n"
                                       : "chalk prefill: one prefill chunk, roofline at the achievable rates below (lecture 1:41-1:51); TTFT excludes queueing\n")
              << describe_text(d) << replica_note_text(note) << layout_note_text(layout_note);
    for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
    std::cout << '\n';
    print_table(std::cout, t);
    if (a.explain) {
      for (int64_t p : prompts) {
        for (int64_t b : batches) std::cout << fmt::format("\nHow the figures of batch {}, prompt {} are computed:\n", b, p) << explanations_text(explain_prefill(d, b, p, a.prefix));
      }
    }
  }
}

}  // namespace

void register_prefill(CLI::App& app, Action& run) {
  static thread_local PrefillArgs a;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  a = PrefillArgs{};
  auto* cmd = app.add_subcommand("prefill", "Time and cost of prefilling prompts, and the time to first token (TTFT, queueing excluded); tok/s counts input (prompt) tokens");
  add_deployment_options(*cmd, a.deployment);
  add_infeasible_option(*cmd, a.deployment);
  add_pipeline_options(*cmd, a.pipeline);
  cmd->add_option("-b,--batch", a.batch, "Prompts prefilled together by the whole replica (data-parallel attention: whole prompts per rank): comma list or a:b")->capture_default_str();
  cmd->add_option("-p,--prompt", a.prompt, "Prompt length in tokens: comma list or a:b")->capture_default_str();
  cmd->add_option("--prefix", a.prefix, "Tokens already cached before the prompt (read, not recomputed)")->capture_default_str();
  cmd->add_flag("--explain", a.explain, "Show how each figure is computed: formula, inputs with units and sources, the algebra (under the table; \"explanations\" with --json)");
  add_output_options(*cmd, a.output);
  cmd->callback([&run, cmd] {
    a.pp_given = cmd->count("--pp") > 0;
    run = [] { run_prefill(a); };
  });
}

}  // namespace chalk::cli
