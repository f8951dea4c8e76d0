// Options shared by the `chalk train` subcommands: the model, the system and a training plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"
#include "deployment_options.h"

namespace chalk::cli {

struct TrainArgs {
  std::string model = "llama-3.1-70b";
  std::string hardware = "h100-sxm";
  int64_t chips = 0;  ///< 0 = dp x tp x pp x cp
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, virtual_stages = 1;
  bool no_sp = false;
  int zero = 1;
  std::string schedule = "1f1b", recompute = "none", optimizer = "adam18", compute = "bf16";
  int64_t global_batch = 0;  ///< 0 = dp x microbatch x 8 (train step, memory, plot); the chip count (train layouts)
  int64_t microbatch = 1, seq_len = 4096;
  bool reversible = false, no_flash = false, dropout = false;
  bool no_gemm_shapes = false;  ///< --no-gemm-shapes: every GEMM at the chip's MAMF rate
  std::string recompute_modules;
  std::string dispatch = "bf16", combine = "bf16";
  int64_t route_domains = 0;
  std::string ep_dispatcher = "deepep";
  bool ep_overlap = false;
  std::string fp8_recipe = "delayed";
  OutputArgs output;
  bool explain = false;  ///< --explain (step, memory): how each figure is computed (chalk/training/explain.h)
};

/// Adds --model, --hardware and the plan options (`degrees`: --dp ... --virtual-stages,
/// --schedule, --zero, --microbatch, --recompute; layouts searches those).
void add_train_options(CLI::App& cmd, TrainArgs& a, bool degrees);

/// The plan the options describe (degrees unset by `degrees == false` stay 1). Throws InputError.
TrainingPlan plan_from(const TrainArgs& a);

/// The command-line option for a plan field an InputError names ("tp" -> "--tp").
std::string option_for(const std::string& plan_field);

/// Model, system, plan, costs, system rates and placement, all checked.
struct TrainSetup {
  ModelSpec model;
  SystemSpec system;
  TrainingPlan plan;
  TrainingCosts costs;
  TrainingSystem rates;
  Placement placement;
  /// Accepted but doubtful: a sequence beyond the model's max_position_embeddings (the
  /// context extension of a pre-trained model), a pipeline schedule with one stage.
  std::vector<std::string> warnings;
};
TrainSetup train_setup(const TrainArgs& a);

void register_train_step(CLI::App& train, Action& run);
void register_train_memory(CLI::App& train, Action& run);
void register_train_layouts(CLI::App& train, Action& run);
void register_train_moe(CLI::App& train, Action& run);   // `train moe`: the MoE trade (cmd_train_moe.cc)
void register_train_plot(CLI::App& train, Action& run);  // `train plot run`: run charts (cmd_train_plot.cc)

}  // namespace chalk::cli
