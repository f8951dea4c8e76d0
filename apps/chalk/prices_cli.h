// Internal to `chalk prices ...`: the options of each subcommand and the helpers their
// files share. cmd_prices.cc holds the helpers and the registration; cmd_prices_sheets.cc
// list and show; cmd_prices_infer.cc infer; cmd_prices_forward.cc forward;
// cmd_prices_compare.cc compare.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chalk/prices/compare.h"
#include "chalk/prices/prices.h"
#include "deployment_options.h"
#include "energy_cli.h"
#include "table.h"

namespace chalk::cli::prices_cli {

struct ListArgs {
  OutputArgs output;
};

struct ShowArgs {
  std::string sheet;
  OutputArgs output;
};

/// Prices given as flags: a whole sheet when no NAME is given, else overrides of its fields.
struct PriceFlags {
  std::optional<double> input, output, cache_read, storage, write_5min, write_1h;
  std::optional<int64_t> threshold;
  std::optional<double> lc_input_multiplier, lc_output_multiplier;
  std::optional<double> batch, fast, fast_speedup, priority, flex, off_peak;
};

/// Assumptions as "VALUE" or "LOW:VALUE:HIGH".
struct AssumptionFlags {
  std::string active_params, flops_per_byte, attention, weights_gb, decode_context, kv_bytes_per_token, hbm_share;
  std::string dram, flash, disk;
  std::optional<double> step_budget_ms, storage_duration_s;
  int64_t base_batch = 0;
};

struct InferArgs {
  std::string sheet;
  PriceFlags prices;
  AssumptionFlags assumptions;
  DeploymentArgs deployment;
  OutputArgs output;
  bool explain = false;  ///< --explain: the central figures' formulas (chalk/prices/explain.h)
};

struct ForwardArgs {
  DeploymentArgs deployment;
  int64_t batch = 0, context = 4096, prompt = 4096, prefill_batch = 0;
  /// The headline at cost (review 9 M3: x4, utilization 0.5 and margin 0.5, priced 70B on
  /// H100 at $0.90 / $2.75, 2-7x the hosts of `prices compare`): hosts price near cost, the
  /// lecture's premise for reading prices backwards (DESIGN 1.5; lecture 1:32:51).
  double utilization = 1.0, margin = 0.0;
  std::string compare;
  OutputArgs output;
  EnergyArgs energy;  ///< --chip-power-w, --pue, --host-w-per-chip (energy_cli.h)
  /// --pp: pipeline stages; unset: the pipeline `chalk layouts` ranks first when no replica
  /// within the scale-up domain holds the model, else 1 (pipeline_cli.h).
  std::optional<int64_t> pp;
  /// --min-tok-per-s-per-user: with no -b, the headline prices the largest batch (and, with no
  /// -n, the cheapest replica) that streams at least this many output tokens/s to each user;
  /// 0 prices the batch that fills HBM (the cost floor). Default: MLPerf Inference's
  /// interactive limit, 25 tok/s (kDefaultMinTokPerSPerUser, compare.h, with its sources and
  /// why not the 50 `prices compare` assumes for a host; review 3 M4).
  double min_speed = kDefaultMinTokPerSPerUser;
  bool min_speed_given = false;  ///< the flag was passed: a floor nothing reaches is then an error
};

/// `prices compare`: hosts' offers of one model beside chalk's cost at their speed.
struct CompareArgs {
  std::string model;
  std::string hardware;  ///< comma-separated systems; not given: every built-in system
  bool hardware_given = false;  ///< -H was passed (an empty list is then an error)
  std::string weights, kv = "bf16";
  int64_t input = 3000, output = 1000;
  double prefix_hit_rate = 0;
  double speed = kAssumedTokPerSPerUser;  ///< --speed: tok/s per user for offers that state none
  OutputArgs output_format;
};

// Shared helpers (cmd_prices.cc).

double mtok(UsdPerToken p);
Cell opt_mtok(const std::optional<UsdPerToken>& p);
std::string host_models_list();  ///< the models with a built-in host sheet, comma-separated

// The subcommands.

void run_list(const ListArgs& a);        // cmd_prices_sheets.cc
void run_show(const ShowArgs& a);        // cmd_prices_sheets.cc
void run_infer(const InferArgs& a);      // cmd_prices_infer.cc
void run_forward(const ForwardArgs& a);  // cmd_prices_forward.cc
void run_compare(const CompareArgs& a);  // cmd_prices_compare.cc

}  // namespace chalk::cli::prices_cli
