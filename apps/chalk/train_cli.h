// Options shared by the `chalk train` subcommands: the model, the system and a training plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/layouts.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"
#include "commands.h"
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
  int64_t global_batch = 0;  ///< 0 = default_global_batch (one per chip, at most 2^24 tokens; a plan's rounded to its dp x microbatch)
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
  /// --allow-infeasible (step, memory, layouts): print a plan or a search that does not fit in HBM
  /// instead of exit 2 (issue 30 item 1), as decode's flag of the same name.
  bool allow_infeasible = false;
  /// Some option of the plan was given (-n, a degree, --schedule, --zero, --microbatch,
  /// --recompute, ...): `train step` runs it as stated; without one it runs a plan that fits.
  bool plan_stated = false;
  /// --schedule was given: a search for a plan (-n alone, or the default) tries that schedule
  /// only; otherwise it tries Megatron-LM's (kMegatronSchedules, review finding M0).
  /// --dp given: without it, -n N with --tp/--pp/--cp infers DP = N / (TP x PP x CP) (review 6 L8).
  bool dp_stated = false;
  bool schedule_stated = false;
};

/// The schedules a search for `a`'s plan tries: the stated --schedule alone, or Megatron-LM's.
unsigned searched_schedules(const TrainArgs& a);
/// What a chosen plan assumes of the engine: "engine Megatron-LM: pipeline schedules 1f1b,
/// interleaved searched (...)" for the default set, naming the flag that asks for others
/// (`layouts`: train layouts' --schedules, else --schedule), else the set searched.
std::string schedules_assumed_text(unsigned schedules, bool layouts = false);

/// Adds --model, --hardware and the plan options (`degrees`: --dp ... --virtual-stages,
/// --schedule, --zero, --microbatch, --recompute; layouts searches those).
void add_train_options(CLI::App& cmd, TrainArgs& a, bool degrees);

/// Adds --allow-infeasible to `train step`, `train memory` and `train layouts` (TrainArgs::allow_infeasible).
void add_train_infeasible_option(CLI::App& cmd, TrainArgs& a);

/// Whether `cmd`'s command line states any option of the plan (TrainArgs::plan_stated).
bool plan_stated(const CLI::App& cmd);

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

/// A plan that does not fit is never a headline (issue 30 item 1), for `train step` and `train
/// memory`: when `mem` does not fit and --allow-infeasible is not given, a stated plan
/// (a.plan_stated) throws InputError on --chips naming the smallest cluster with a plan that
/// fits (smallest_fitting_cluster); the default plan gives way to that cluster's fastest plan
/// (a, s and mem are replaced) and the returned line says so. "" when nothing changed.
std::string fit_or_refuse(TrainArgs& a, TrainSetup& s, TrainingMemory& mem);

/// The largest cluster smallest_fitting_cluster tries, chips.
inline constexpr int64_t kLargestClusterSearched = int64_t{1} << 16;

/// The chip counts tried for the smallest cluster: 1, 2, 4, ... below the scale-up domain,
/// then the domain doubling (whole domains: 8, 16, 32, ... on HGX; 72, 144, ... on NVL72),
/// up to kLargestClusterSearched.
std::vector<int64_t> cluster_sizes(int64_t domain);

/// The smallest cluster of `sys` on which some training plan of `m` fits in HBM (issue 30
/// item 1: `train step` of llama-3.1-70b on one H100 printed a 1,362 GB plan with exit 0),
/// and that cluster's fastest plan: search_training_layouts (docs/training.md, Layouts) at
/// each of cluster_sizes in turn, with `base`'s sequence length and base plan, and its global
/// batch or, when 0, the chip count (as `train layouts` defaults it). nullopt when no size up
/// to kLargestClusterSearched fits, or the system has no scale-out network to grow over.
/// `first` > 0: that chip count is tried before the others (a stated cluster whose stated
/// plan does not fit may hold another plan).
struct FittingCluster {
  int64_t chips = 0;
  TrainingPlan plan;        ///< the fastest fitting plan there
  double t_step_s = 0;      ///< its step, seconds
  double memory_bytes = 0;  ///< its memory per chip, bytes
};
std::optional<FittingCluster> smallest_fitting_cluster(const ModelSpec& m, const SystemSpec& sys, const TrainingQuery& base, int64_t first = 0);

/// The plan as `train step`'s flags ("-n 32 --dp 2 --tp 2 --pp 4 --cp 2 --schedule zb-v
/// --zero 2 --microbatch 1 --recompute none -B 32"): what a reader types to run it.
std::string step_flags_text(const TrainingPlan& p);

/// "the smallest cluster with a plan that fits is 32 x H100 SXM: <plan> (<step> s a step,
/// <memory> GB per chip; train step <flags>)" ("the fastest plan of these N chips that fits
/// is ..." when it is on `first` chips), or that none up to the largest size searched does.
std::string fitting_cluster_text(const std::optional<FittingCluster>& c, const SystemSpec& sys, int64_t first = 0);

/// Sets the plan options of `a` (degrees, schedule, ZeRO, microbatch, recomputation,
/// global batch, chips) to `p`'s.
void set_plan(TrainArgs& a, const TrainingPlan& p);

void register_train_step(CLI::App& train, Action& run);
void register_train_memory(CLI::App& train, Action& run);
void register_train_layouts(CLI::App& train, Action& run);
void register_train_moe(CLI::App& train, Action& run);   // `train moe`: the MoE trade (cmd_train_moe.cc)
void register_train_plot(CLI::App& train, Action& run);  // `train plot run`: run charts (cmd_train_plot.cc)

}  // namespace chalk::cli
