// `chalk train memory`: memory per chip of a training plan by component (docs/training.md, Memory).
#include <iostream>

#include <fmt/format.h>

#include "envelope.h"
#include "deployment_options.h"
#include "chalk/training/explain.h"
#include "chalk/training/memory.h"
#include "commands.h"
#include "explain_cli.h"
#include "table.h"
#include "train_cli.h"

namespace chalk::cli {
namespace {

thread_local TrainArgs memory_args;

/// The table people read: each component in words ("ZeRO-3 buffers", not "zero3_buffers";
/// issue 30 item 3). JSON and CSV keep the identifiers programs match on.
Table in_words(Table t) {
  static const std::pair<const char*, const char*> words[] = {
      {"weights", "weights"},         {"gradients", "gradients"},     {"optimizer", "optimizer states"},
      {"zero3_buffers", "ZeRO-3 buffers"}, {"activations", "activations"}, {"activation_working", "activation working set"},
      {"total", "total"}};
  for (auto& row : t.rows) {
    auto& c = std::get<std::string>(row[0]);
    for (const auto& [id, w] : words) {
      if (c == id) {
        c = w;
        break;
      }
    }
  }
  return t;
}

void run_memory(const TrainArgs& stated) {
  TrainArgs a = stated;
  TrainSetup s = train_setup(a);
  TrainingMemory mem = training_memory(s.costs, s.rates, s.plan, s.placement);
  // As `train step`: a stated plan that does not fit exits 2 naming the smallest cluster that
  // holds the model (--allow-infeasible shows its parts); the default gives way to that cluster.
  const std::string chosen = fit_or_refuse(a, s, mem);
  const int64_t best_mb = largest_microbatch(s.costs, s.rates, s.plan);
  Table t;
  t.columns = {{"component", "component"}, {"gb", "GB", 4}, {"detail", "detail"}};
  const auto& st = s.plan.state;
  const std::string shard = fmt::format("ZeRO-{} over DP", s.plan.zero_stage);
  t.add({std::string("weights"), to_gb(mem.weights), fmt::format("{} B/param{}", st.weights, s.plan.zero_stage >= 3 ? ", " + shard : "")});
  t.add({std::string("gradients"), to_gb(mem.gradients), fmt::format("{} B/param{}", st.gradients, s.plan.zero_stage >= 2 ? ", " + shard : "")});
  t.add({std::string("optimizer"), to_gb(mem.optimizer), fmt::format("{} B/param{}", st.optimizer, s.plan.zero_stage >= 1 ? ", " + shard : "")});
  t.add({std::string("zero3_buffers"), to_gb(mem.zero3_buffers), std::string("two layers' gathered weights")});
  t.add({std::string("activations"), to_gb(mem.activations),
         fmt::format("{:.4g} GB per layer per microbatch x {} layers x {:.3g} microbatches in flight ({})", to_gb(mem.activations_per_layer),
                     s.placement.layers_per_stage, mem.microbatches_in_flight, to_string(s.plan.schedule))});
  t.add({std::string("activation_working"), to_gb(mem.activation_working), std::string("one layer's full activations during its backward")});
  t.add({std::string("total"), to_gb(mem.total), fmt::format("of {:.4g} GB HBM", to_gb(mem.capacity))});
  if (a.output.csv) {
    print_csv(std::cout, t, s.warnings);
    return;
  }
  if (a.output.json) {
    nlohmann::json j = {{"model", model_json(s.model, s.system)},
                        {"hardware", hardware_json(s.system)},
                        {"plan", describe_plan(s.plan)},
                        {"placement", s.placement.description},
                        {"params_per_chip", mem.params_per_chip},
                        {"state_bytes_per_param", st.total()},
                        {"weights_gb", to_gb(mem.weights)},
                        {"gradients_gb", to_gb(mem.gradients)},
                        {"optimizer_gb", to_gb(mem.optimizer)},
                        {"zero3_buffers_gb", to_gb(mem.zero3_buffers)},
                        {"activations_per_layer_gb", to_gb(mem.activations_per_layer)},
                        {"microbatches_in_flight", mem.microbatches_in_flight},
                        {"activations_gb", to_gb(mem.activations)},
                        {"activation_working_gb", to_gb(mem.activation_working)},
                        {"total_gb", to_gb(mem.total)},
                        {"hbm_gb_per_chip", to_gb(mem.capacity)},
                        {"memory_fits", mem.fits},
                        {"largest_microbatch", best_mb},
                        {"plan_choice", chosen.empty() ? nlohmann::json() : nlohmann::json(chosen)},
                        {"warnings", s.warnings},
                        {"rows", to_json(t)}};  // the breakdown as the table and CSV give it
    if (a.explain) j["explanations"] = explanations_json(explain_training_memory(s.plan, s.placement, mem));
    print_json(std::cout, envelope("train memory", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk train memory: {} on {} x {}, the first pipeline stage's chip\n", s.model.name, plan_chips(s.plan),
                           chip_and_system(s.system.chip.name, s.system.name));
  std::cout << fmt::format("plan        {}\n", describe_plan(s.plan));
  if (!chosen.empty()) std::cout << "chosen      " << chosen << '\n';
  std::cout << fmt::format("placement   {}\n", s.placement.description);
  std::cout << fmt::format("states      {:.4g} B/param ({}); {:.4g}B parameters on this chip before ZeRO\n", st.total(), st.name,
                           mem.params_per_chip / 1e9);
  std::cout << fmt::format("verdict     {} ({:.4g} of {:.4g} GB); the largest microbatch that fits: {}\n", mem.fits ? "fits" : "DOES NOT FIT",
                           to_gb(mem.total), to_gb(mem.capacity), best_mb == 0 ? std::string("none") : std::to_string(best_mb));
  for (const auto& w : s.warnings) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
  print_table(std::cout, in_words(t));
  if (a.explain) std::cout << "\nHow the figures are computed:\n" << explanations_text(explain_training_memory(s.plan, s.placement, mem));
}

}  // namespace

void register_train_memory(CLI::App& train, Action& run) {
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  memory_args = TrainArgs{};
  auto* cmd = train.add_subcommand("memory", "Memory per chip of a training plan: weights, gradients, optimizer states, activations");
  add_train_options(*cmd, memory_args, true);
  cmd->add_flag("--explain", memory_args.explain, "Show how each figure is computed: formula, inputs with units and sources, the algebra (under the output; \"explanations\" with --json)");
  add_train_infeasible_option(*cmd, memory_args);
  cmd->callback([&run, cmd] {
    memory_args.plan_stated = plan_stated(*cmd);
    memory_args.schedule_stated = cmd->count("--schedule") > 0;
    memory_args.dp_stated = cmd->count("--dp") > 0;
    run = [] { run_memory(memory_args); };
  });
}

}  // namespace chalk::cli
