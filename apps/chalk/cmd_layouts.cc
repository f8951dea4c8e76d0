// `chalk layouts`: every parallel layout of a model on n chips, ranked (layout_search.h).
#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/engine/default_layout.h"
#include "chalk/engine/layout_search.h"
#include "chalk/serving/serving_speed.h"
#include "envelope.h"
#include "cmd_layouts.h"
#include "commands.h"
#include "deployment_options.h"
#include "explain_cli.h"
#include "layouts_refuse.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct LayoutsArgs {
  DeploymentArgs deployment;
  OutputArgs output;
  int64_t context = 4096;
  std::string batch;  ///< empty = not given; a comma list or a:b, as decode takes
  int64_t prompt = 0, output_tokens = 0;
  bool context_given = false;
  std::string objective = "throughput";
  bool all = false;
  bool explain = false;  ///< --explain: why each ranking's first layout wins (chalk/engine/explain.h)
};

std::string plural(int64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

void run_layouts(const LayoutsArgs& a) {
  const ModelSpec model = load_model(a.deployment.model);
  const SystemSpec system = load_system(a.deployment.hardware);
  const DeploymentOptions base = options_from(a.deployment);
  LayoutQuery q;
  q.context = a.context;
  q.prompt = a.prompt;
  q.output = a.output_tokens;
  if (q.prompt > 0 && q.output > 0) {
    // Steady state: the decode sequences sit at every point of their output, so the step
    // reads the workload's mean context, not the single-request default.
    const int64_t mean = steady_state_context(q.prompt, q.output);
    if (a.context_given && a.context != mean) {
      throw InputError("--context", "steady-state serving reads the mean context prompt + output / 2 = " + std::to_string(mean) +
                                        ", got " + std::to_string(a.context) + "; drop --context or give " + std::to_string(mean));
    }
    q.context = mean;
  }
  if (a.objective == "throughput") {
    q.objective = LayoutObjective::throughput;
  } else if (a.objective == "latency") {
    q.objective = LayoutObjective::latency;
  } else {
    throw InputError("--objective", "expected throughput or latency, got '" + a.objective + "'");
  }
  // Latency compares layouts at one batch: one user unless told otherwise. A list or a:b
  // range (decode's syntax) ranks the layouts once per batch.
  std::vector<int64_t> batches =
      a.batch.empty() ? std::vector<int64_t>{q.objective == LayoutObjective::latency ? 1 : 0} : parse_int_list(a.batch, "--batch", 0, 1000000000);
  if (q.objective == LayoutObjective::latency && std::count(batches.begin(), batches.end(), 0) > 0) {
    throw InputError("--batch", "the latency objective compares layouts at one batch: give 1 or more sequences");
  }
  if (batches.size() > 64) throw InputError("--batch", fmt::format("ranks the layouts once per batch: at most 64 batches, got {}", batches.size()));
  if ((q.prompt > 0) != (q.output > 0)) {
    throw InputError(q.prompt > 0 ? "--output" : "--prompt",
                     "steady-state serving needs both --prompt and --output above 0 (or neither), got " + std::to_string(q.prompt) +
                         " and " + std::to_string(q.output));
  }
  // No --chips: ranked for throughput, the cheapest replica size within the scale-up domain
  // (issue 30, as `prices forward` and `serving sweep` default to); for latency the smallest
  // replica an engine can run the model on with one sequence at this context, as `decode`
  // (engine/default_layout.h). Either way resolve() chooses, and says so.
  std::optional<ReplicaNote> note;
  if (a.deployment.chips == 0) {
    DeploymentArgs chosen = a.deployment;
    chosen.replica_rule = q.objective == LayoutObjective::latency ? ReplicaRule::smallest : ReplicaRule::cheapest;
    chosen.prices_pipeline = true;  // the ranking below prices pipelines: the note names the one it ranks first
    const int64_t context = std::max<int64_t>(q.context, 1);
    const Deployment smallest = resolve(chosen, context, &note);
    q.n_chips = note->choice.n_chips;
    // A stated batch the smallest replica cannot hold: the smallest power-of-two multiple
    // within the scale-up domain that holds the largest one, said in the replica line
    // (review 2 M2: README's `--objective latency --batch 64` on 2 H100, which hold 2,
    // printed "no layout fits" and no ranking; 4 chips hold 64).
    const int64_t most = *std::max_element(batches.begin(), batches.end());
    if (q.objective == LayoutObjective::latency && !memory_plan(smallest, most, context).fits) {
      for (int64_t n = q.n_chips * 2; n <= system.scale_up_domain; n *= 2) {
        DeploymentArgs more = a.deployment;
        more.chips = n;
        try {
          const Deployment bigger = resolve(more, context);
          if (!memory_plan(bigger, most, context).fits) continue;
          note->fallback = fmt::format("the smallest replica that holds batch {} at {} tokens ({} chips hold {}), as the latency "
                                       "objective ranks layouts at the stated batch",
                                       most, context, q.n_chips, memory_plan(smallest, 0, context).max_batch);
          note->runner_up.reset();
          note->choice = replica_memory_full_point(bigger, context);
          q.n_chips = n;
          break;
        } catch (const InputError&) {
          // a stated layout that does not divide n: the next size
        }
      }
    }
    // A stated batch ranked for throughput: the cheapest size whose HBM holds it, each at
    // that batch, as `prices forward -b` chooses (cheapest_serving_replica; review 10 L1: the
    // line priced 8 H100 at the memory-full batch 320 beside rank 1's TP8 at batch 64).
    if (q.objective == LayoutObjective::throughput && batches.size() == 1 && most > 0 && note->fallback.empty() && note->pp == 1 &&
        note->pipeline.empty()) {
      DeploymentOptions o = base;
      o.mechanisms.enabled = true;
      const SpeedChoice sc = cheapest_serving_replica(model, system, o, context, {most, {}});
      if (sc.point && sc.stages == 1) {
        note->choice = *sc.point;
        note->runner_up = sc.runner_up;
        note->replica_sizes = sc.replica_sizes;
        note->at_batch = most;
        q.n_chips = sc.point->n_chips;
      }
    }
  } else {
    q.n_chips = a.deployment.chips;
  }
  std::vector<Ranking> rankings;
  int64_t fitting = 0, candidates = 0;
  for (int64_t b : batches) {
    q.batch = static_cast<double>(b);
    rankings.push_back({b, search_layouts(model, system, base, q)});
    const auto& r = rankings.back().ranked;
    fitting += std::count_if(r.begin(), r.end(), [](const LayoutCandidate& c) { return c.fits; });
    candidates += static_cast<int64_t>(r.size());
  }
  std::optional<UsdPerSecond> price = base.price_per_chip ? base.price_per_chip : system.price_per_chip;
  // The latency objective's default batch 1 is no batch asked: its line keeps the memory-full
  // point the rule compared (tests/cli/defaults.sh reproduces it with decode).
  if (note && (!a.batch.empty() || batches.front() == 0)) note_at_ranked_batch(*note, rankings, price);
  // One row set (review 10 L3): the text table, --csv and the JSON rows are the layouts that
  // fit; those that do not are JSON's rejected_layouts and, with --all, the text's second table.
  const LayoutTables tables = layouts_tables(rankings, price, batches.size() > 1 || a.output.json || a.output.csv, MemoryContext{model, system, base, q.context});
  const Table& t = tables.fitting;
  // No layout fits: an error naming the reason and the smallest replica that fits (issue 30
  // item 2; review 7 M1: -n 8 for Llama 3.1 405B on H100 printed no rows with exit 0, where
  // decode refuses); --all keeps the study of every layout and its reason.
  if (fitting == 0 && !a.all) {
    std::string reason;
    for (const auto& r : rankings) {
      if (!r.ranked.empty()) {
        reason = fmt::format("{}: {}", r.ranked.front().name, r.ranked.front().reason);
        break;
      }
    }
    const int64_t most = std::max_element(rankings.begin(), rankings.end(), [](const Ranking& x, const Ranking& y) { return x.batch < y.batch; })->batch;
    refuse_no_layout(model, system, base, reason, most, q);
  }
  std::vector<std::string> warnings;
  if (fitting == 0) {
    warnings.push_back("no layout fits (--all gives each reason: memory, or heads no tensor-parallel degree of these chips can split)");
  }
  // A ranked dense layout no engine runs (review 11 L1: -n 7 for Llama 3.1 70B ranked "attention
  // TP1 x 7, FFN TP7" first, unsaid), as decode's warning says it.
  for (const auto& r : rankings) {
    const auto c = std::find_if(r.ranked.begin(), r.ranked.end(), [&](const LayoutCandidate& x) {
      return x.fits && !dense_attention_groups_warning(model, x.layout, x.replica_chips).empty();
    });
    if (c != r.ranked.end()) {
      warnings.push_back(c->name + ": " + dense_attention_groups_warning(model, c->layout, c->replica_chips));
      break;
    }
  }
  if (a.output.csv) {
    print_csv(std::cout, t, warnings);
    return;
  }
  if (a.output.json) {
    // The model and hardware objects every command prints (describe_json), for all the chips.
    DeploymentOptions all_chips = base;
    all_chips.n_chips = q.n_chips;
    all_chips.mechanisms = Mechanisms{};
    const nlohmann::json described = describe_json(make_deployment(model, system, all_chips));
    // 0 (no --batch): each replica's HBM-filling batch, null here as in the rows.
    const auto batch_json = [](int64_t b) { return b > 0 ? nlohmann::json(b) : nlohmann::json(); };
    nlohmann::json batches_json = nlohmann::json::array();
    for (int64_t b : batches) batches_json.push_back(batch_json(b));
    nlohmann::json j = {{"model", described["model"]},
                        {"hardware", described["hardware"]},
                        {"chips", q.n_chips},
                        {"context_tokens", q.context},
                        {"objective", std::string(to_string(q.objective))},
                        {"batch", batch_json(batches.front())},
                        {"batches", batches_json},
                        {"prompt_tokens", q.prompt},
                        {"output_tokens", q.output},
                        {"kv_dtype", std::string(to_string(base.kv))},
                        {"price_usd_per_chip_hour", price ? nlohmann::json(to_usd_per_hour(*price)) : nlohmann::json()},
                        {"warnings", warnings},
                        {"replica_choice", replica_note_json(note)},
                        {"moe_routing", layouts_moe_routing(model, system, base, rankings, q.n_chips)},
                        {"rows", to_json(t)},
                        {"rejected_layouts", without_nulls(to_json(tables.rejected))}};
    if (a.explain) {
      j["explanations"] = nlohmann::json::array();
      for (const auto& r : rankings) j["explanations"].push_back({{"batch", batch_json(r.batch)}, {"figures", explanations_json(explain_layout_winner(r.ranked, q.n_chips, static_cast<double>(r.batch)))}});
    }
    print_json(std::cout, envelope("layouts", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk layouts: {} on {} x {}{}, context {}, ranked by {} (mechanisms step; docs/formulas.md, Layout search)\n",
                           model.name, q.n_chips, chip_and_system(system.chip.name, system.name), default_hardware_note(), q.context,
                           to_string(q.objective));
  if (batches.size() > 1) {
    std::cout << fmt::format("batch       {} sequences over all chips, each batch ranked apart (0: the largest batch each replica's HBM "
                             "holds); the busiest replica runs its ceiling share\n",
                             fmt::join(batches, ", "));
  } else {
    const int64_t b = batches.front();
    std::cout << (b > 0 ? fmt::format("batch       {} over all chips; the busiest replica runs its ceiling share, and tok/s/chip counts "
                                      "these sequences over every chip\n",
                                      plural(b, "sequence", "sequences"))
                        : std::string("batch       each replica runs the largest batch its HBM holds at this context\n"));
  }
  std::cout << replica_note_text(note);
  if (base.mechanisms.expert_balance != ExpertBalance::uniform) {
    std::cout << "experts     " << layouts_moe_routing(model, system, base, rankings, q.n_chips) << '\n';
  }
  if (q.output > 0) std::cout << fmt::format("serving     each step also prefills batch / {} prompts of {} tokens\n", q.output, q.prompt);
  std::cout << "columns     ops: operations (compute or memory per kernel); overhead: kernel launch floor; comm: collectives not hidden; "
               "governs: the largest share of the step\n";
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  if (!a.all && fitting > 0 && fitting < candidates) {
    const int64_t rest = candidates - fitting;
    std::cout << fmt::format("            {} not fit (--all lists {} with the reason)\n", plural(rest, "more does", "more do"),
                             rest == 1 ? "it" : "them");
  }
  if (!t.rows.empty()) {
    std::cout << '\n';
    print_table(std::cout, t);
  }
  if (a.all && !tables.rejected.rows.empty()) {
    std::cout << "\nLayouts that do not fit (JSON: rejected_layouts; --csv prints the layouts that fit):\n";
    print_table(std::cout, tables.rejected);
  }
  if (a.explain && !t.rows.empty()) {
    for (const auto& r : rankings) std::cout << fmt::format("\nWhy the first layout wins at batch {}:\n", r.batch) << explanations_text(explain_layout_winner(r.ranked, q.n_chips, static_cast<double>(r.batch)));
  }
}

}  // namespace

void register_layouts(CLI::App& app, Action& run) {
  static thread_local LayoutsArgs a;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  a = LayoutsArgs{};
  auto* cmd = app.add_subcommand("layouts", "Rank the parallel layouts (TP, EP, data-parallel attention, replicas) of a model on n chips");
  add_deployment_options(*cmd, a.deployment, /*layout_flags=*/false);
  // The expert-load assumption is not a layout: the search prices every layout under it, as
  // plan and simulate do (review 5 L7).
  add_eplb_option(*cmd, a.deployment);
  cmd->add_option("-s,--context", a.context,
                  "Tokens in each sequence's KV cache (default 4096; with --prompt and --output the steady state's mean, "
                  "prompt + output / 2)")->check(CLI::Range(int64_t{1}, int64_t{1} << 30).description(""));
  cmd->add_option("-b,--batch", a.batch,
                  "Sequences over all chips, split over the replicas: one, a comma list or a:b for powers of two from a to b, "
                  "each ranked apart (default: throughput, each replica's largest that fits; latency, 1)");
  cmd->add_option("--prompt", a.prompt, "Steady-state serving: new tokens per request (with --output)")->check(CLI::Range(int64_t{0}, int64_t{1} << 30).description(""));
  cmd->add_option("--output", a.output_tokens, "Steady-state serving: output tokens per request (with --prompt)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30).description(""));
  cmd->add_option("--objective", a.objective, "Rank by throughput (tok/s per chip) or latency (step time)")->capture_default_str();
  cmd->add_flag("--explain", a.explain, "Show why the first layout wins: its step terms and tok/s per chip beside the runner-up's (under the table; \"explanations\" with --json)");
  cmd->add_flag("--all", a.all, "Also list the layouts that do not fit, with the reason, in a second table (--json always gives them as "
                                  "rejected_layouts; the table, --csv and the JSON rows are the layouts that fit)");
  add_output_options(*cmd, a.output);
  cmd->callback([&run, cmd] {
    a.context_given = cmd->count("--context") > 0;
    run = [] { run_layouts(a); };
  });
}

}  // namespace chalk::cli
