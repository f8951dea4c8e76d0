// `chalk train layouts`: every training plan of a model on a cluster, ranked (docs/training.md, Layouts).
#include <iostream>

#include <fmt/format.h>

#include "envelope.h"
#include "deployment_options.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/default_batch.h"
#include "chalk/training/layouts.h"
#include "commands.h"
#include "table.h"
#include "train_cli.h"
#include "train_run_cli.h"

namespace chalk::cli {
namespace {

struct LayoutArgs {
  TrainArgs train;
  int64_t limit = 20;
  bool all = false, pareto = false;
  /// --schedules: pipeline schedules tried when pp > 1 (parse_schedule_set).
  std::string schedules = schedule_set_string(kMegatronSchedules);
};
thread_local LayoutArgs layout_args;

std::string name_of(const TrainingCandidate& c, const TrainingQuery& q) { return describe_plan(plan_of(c, q)); }

std::string unfit_reason(const TrainingCandidate& c) {
  return fmt::format("memory: {:.4g} GB > {:.4g} GB HBM", c.memory_bytes / 1e9, c.capacity_bytes / 1e9);
}

/// The plan as `chalk train step`'s flags, each named as its flag in snake_case (the web
/// API's field names: `chalk web` reads "_" as "-"), so a reader runs the plan from the JSON
/// and never parses its name (`plan`, describe_plan: "TP32+SP" once read as TP3 without SP on
/// the page; issue 30 item 6). Keys: dp, tp, pp, cp, ep, etp, virtual_stages (integers),
/// schedule, recompute, recompute_modules (strings, as the flags take them), zero (0-3),
/// microbatch (sequences), no_sp, reversible (booleans). `global_batch` and `context_tokens`
/// are the document's, the same for every row.
nlohmann::json step_flags(const TrainingPlan& p) {
  return {{"dp", p.dp},
          {"tp", p.tp},
          {"pp", p.pp},
          {"cp", p.cp},
          {"ep", p.ep},
          {"etp", p.etp},
          {"virtual_stages", p.virtual_stages},
          {"schedule", std::string(to_string(p.schedule))},
          {"zero", p.zero_stage},
          {"microbatch", p.microbatch},
          {"recompute", std::string(to_string(p.recompute))},
          {"recompute_modules", recompute_modules_string(p.recompute_modules)},
          {"no_sp", p.tp > 1 && !p.sequence_parallel},
          {"reversible", p.reversible}};
}

/// A plan that does not fit, as docs/output-schema.md's rejected_layouts rows: its name
/// (`plan`), chips, memory and why_not only (no rank, fit flag or Pareto flag: it has no step).
nlohmann::json rejected_row(const TrainingCandidate& c, const TrainingQuery& q) {
  return {{"plan", name_of(c, q)}, {"chips", q.chips}, {"memory_gb", c.memory_bytes / 1e9}, {"why_not", unfit_reason(c)}};
}

void run_layouts(const LayoutArgs& a) {
  const ModelSpec m = load_model(a.train.model);
  const SystemSpec sys = load_system(a.train.hardware);
  TrainingQuery q;
  q.chips = a.train.chips > 0 ? a.train.chips : sys.scale_up_domain;
  q.seq_len = a.train.seq_len;
  q.global_batch = a.train.global_batch > 0 ? a.train.global_batch : default_global_batch(q.chips, q.seq_len);
  q.base = plan_from(a.train);
  q.limit = a.limit;
  q.schedules = parse_schedule_set(a.schedules, "--schedules");
  TrainingLayouts r;
  try {
    r = search_training_layouts(m, sys, q);
  } catch (const InputError& e) {
    throw InputError(option_for(e.field()), std::string(e.what()).substr(e.field().size() + 2));
  }
  // No -n and nothing fits one scale-up domain: the smallest cluster on which a plan fits,
  // as `train step` and `train memory` choose it with their defaults (review 3 M1: the
  // defaults exited 2 for llama-3.1-70b on H100 while train step ran on 32 chips).
  std::string chosen;
  if (r.fit == 0 && a.train.chips == 0 && !a.train.allow_infeasible) {
    TrainingQuery base = q;
    base.global_batch = a.train.global_batch;
    if (const auto fit = smallest_fitting_cluster(m, sys, base)) {
      q.chips = fit->chips;
      q.global_batch = a.train.global_batch > 0 ? a.train.global_batch : default_global_batch(q.chips, q.seq_len);
      r = search_training_layouts(m, sys, q);
      chosen = fmt::format("the smallest cluster that holds {} ({} chips; no plan fits one scale-up domain of {}), as train step chooses it; "
                           "-n states another",
                           m.name, q.chips, sys.scale_up_domain);
    }
  }
  // A search where nothing fits is an error naming the smallest cluster where a plan does
  // (issue 30 item 1: llama-3.1-70b on 8 H100 listed nothing with exit 0), unless
  // --allow-infeasible asks for the nearest plans for study.
  if (r.fit == 0 && !a.train.allow_infeasible) {
    TrainingQuery base = q;
    base.global_batch = a.train.global_batch;
    const std::string nearest = r.too_big.empty() ? std::string()
                                                  : fmt::format(", the nearest needs {:.4g} GB per chip of {:.4g} GB", r.too_big.front().memory_bytes / 1e9,
                                                                r.too_big.front().capacity_bytes / 1e9);
    throw InputError("--chips", fmt::format("no plan of {} fits {} x {} ({} plans searched{}); {}; --allow-infeasible lists the nearest plans "
                                            "anyway",
                                            m.name, q.chips, sys.chip.name, r.evaluated, nearest,
                                            fitting_cluster_text(smallest_fitting_cluster(m, sys, base), sys)));
  }
  std::vector<std::string> warnings;
  train_run::warn_context(warnings, m, q.seq_len, "sequence length");
  // Review 11 M3: the batch chalk chose is said, in the words every train command uses.
  const std::string batch_choice = a.train.global_batch > 0 ? std::string() : default_batch_text(q.global_batch, q.seq_len);
  Table t;
  t.columns = {{"rank", "#"},      {"plan", "plan"},           {"memory_fits", "fits"},  {"t_step_s", "step s", 4},
               {"mfu", "MFU", 3},  {"tok_per_s_per_chip", "tok/s/chip", 4}, {"memory_gb", "memory GB", 4}, {"pareto", "pareto"},
               {"equivalent_plans", "+equal"}, {"why_not", "why not"}};
  const double tokens = static_cast<double>(q.global_batch * q.seq_len);
  int64_t rank = 0, folded = 0;
  const auto& shown = a.pareto ? r.pareto : r.fitting;
  for (const auto& c : shown) {
    folded += c.equivalents;
    t.add({++rank, name_of(c, q), std::string("yes"), c.t_step_s, c.mfu, tokens / c.t_step_s / static_cast<double>(q.chips), c.memory_bytes / 1e9,
           std::string(c.pareto ? "yes" : "no"), int64_t{c.equivalents}, std::string()});
  }
  // One row set (review 10 L3: the JSON had 20 rows, the CSV 40): the table, --csv and the
  // JSON rows are the plans that fit; the nearest that do not are JSON's rejected_layouts and,
  // with --all (or --allow-infeasible when none fits), the text's second table.
  Table unfit;
  unfit.columns = {{"plan", "plan"}, {"memory_gb", "memory GB", 4}, {"why_not", "why not"}};
  if (!a.pareto) {
    for (const auto& c : r.too_big) unfit.add({name_of(c, q), c.memory_bytes / 1e9, unfit_reason(c)});
  }
  if (a.train.output.csv) {
    print_csv(std::cout, t, warnings);
    return;
  }
  if (a.train.output.json) {
    nlohmann::json fitting = to_json(t);  // yes/no columns come out as booleans (table.h)
    // The rows are `shown`, in its order.
    for (size_t i = 0; i < fitting.size() && i < shown.size(); ++i) fitting[i]["train_step_flags"] = step_flags(plan_of(shown[i], q));
    nlohmann::json rejected = nlohmann::json::array();
    if (!a.pareto) {
      for (const auto& c : r.too_big) rejected.push_back(rejected_row(c, q));
    }
    nlohmann::json j = {{"model", model_json(m, sys)}, {"hardware", hardware_json(sys)}, {"chips", q.chips},
                        {"global_batch", q.global_batch}, {"context_tokens", q.seq_len}, {"plans_evaluated", r.evaluated},
                        {"plans_fitting", r.fit},   {"ranked_by", "step time (at a fixed global batch also MFU)"},
                        {"plan_choice", chosen.empty() ? nlohmann::json() : nlohmann::json(chosen)},
                        {"batch_choice", batch_choice.empty() ? nlohmann::json() : nlohmann::json(batch_choice)},
                        {"equivalent_plans_folded", folded},
                        {"rows", fitting}, {"rejected_layouts", rejected}, {"warnings", warnings}};
    print_json(std::cout, envelope("train layouts", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk train layouts: {} on {} x {}, {} sequences of {} tokens per step\n", m.name, q.chips,
                           chip_and_system(sys.chip.name, sys.name), q.global_batch, q.seq_len);
  std::cout << fmt::format("searched    {} plans (degrees, schedule, microbatch, recompute, ZeRO; {}); {} fit; {}\n", r.evaluated,
                           schedules_assumed_text(q.schedules, true), r.fit,
                           a.pareto ? "the step-time/memory Pareto front, least memory first"
                                    : fmt::format("the {} fastest distinct plans, ranked by step time (= MFU order)", shown.size()));
  if (!chosen.empty()) std::cout << "chosen      " << chosen << '\n';
  if (!batch_choice.empty()) std::cout << "batch       " << batch_choice << '\n';
  if (folded > 0) {
    std::cout << fmt::format("folded      {} more plans with the same step time as one listed (a ZeRO stage or recomputation that "
                             "buys no time): \"+equal\" counts them beside the one with the least memory\n",
                             folded);
  }
  if (r.fit == 0) std::cout << "warning     no plan fits in HBM (--all lists the nearest with their memory)\n";
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  if (!t.rows.empty()) {
    std::cout << '\n';
    print_table(std::cout, t);
  }
  if ((a.all || (a.train.allow_infeasible && r.fit == 0)) && !unfit.rows.empty()) {
    std::cout << "\nThe nearest plans that do not fit (JSON: rejected_layouts; --csv prints the plans that fit):\n";
    print_table(std::cout, unfit);
  }
}

}  // namespace

void register_train_layouts(CLI::App& train, Action& run) {
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  layout_args = LayoutArgs{};
  auto* cmd = train.add_subcommand("layouts", "Every training plan of a model on a cluster that fits, ranked by step time");
  add_train_options(*cmd, layout_args.train, false);
  cmd->add_option("-n,--chips", layout_args.train.chips, "Chips in the cluster (default: one scale-up domain, or the smallest cluster a plan fits when none fits one)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--limit", layout_args.limit, "Plans listed (fitting, and as many of those that do not fit)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  cmd->add_option("--schedules", layout_args.schedules,
                  "Pipeline schedules tried when pp > 1, comma-separated: gpipe, 1f1b, interleaved, zb-h1, zb-v, dualpipe, or all; "
                  "the default is the two Megatron-LM ships")
      ->capture_default_str();
  cmd->add_flag("--all", layout_args.all, "Also list the nearest plans that do not fit, with the reason, in a second table (--json always gives "
                                          "them as rejected_layouts; the table, --csv and the JSON rows are the plans that fit)");
  cmd->add_flag("--pareto", layout_args.pareto, "List the Pareto front of step time against memory instead");
  add_train_infeasible_option(*cmd, layout_args.train);
  cmd->callback([&run] { run = [] { run_layouts(layout_args); }; });
}

}  // namespace chalk::cli
