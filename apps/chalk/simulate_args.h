// `chalk simulate`'s parsed options (cmd_simulate.cc) and the checks between its pool flags
// (simulate_args.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "deployment_options.h"
#include "energy_cli.h"
#include "serving_cli.h"
#include "sim_cli.h"

namespace chalk::cli {

/// Every option of `chalk simulate`, as CLI11 fills them (register_simulate).
struct SimulateArgs {
  DeploymentArgs deployment;
  OutputArgs output;
  TrafficArgs traffic;
  PolicyArgs policy;
  SloArgs slo;
  int64_t replicas = 1;
  bool replicas_stated = false;  ///< --replicas given (else, with a rate and no --chips, the fewest that serve it)
  bool disaggregate = false;
  std::optional<int64_t> prefill_chips, decode_chips;  ///< unset: --chips
  int64_t prefill_replicas = 1, decode_replicas = 1;
  /// --prefill-replicas or --decode-replicas given (else, with a rate and no chips, each pool
  /// the cheapest size x count that serves it).
  bool pool_replicas_stated = false;
  std::string prefill_hardware, decode_hardware;  ///< empty: --hardware
  bool compare = false;
  std::string plot;
  EnergyArgs energy;
  std::string routing = "round-robin";
  serving_cli::LeverArgs levers;  ///< --draft, --acceptance, --accepted-tokens, --drafter (as decode)
  std::optional<int64_t> pp;      ///< --pp (unset: the pipeline `layouts` ranks first where no domain holds the model)
};

/// Checks the flags that only make sense together (--prefill-chips and --compare need
/// --disaggregate; mixed chips take each system's own price; --pp stages an aggregated
/// replica; counts >= 1), each failure an InputError naming the flag (exit 2). With mixed
/// chips (--prefill-hardware or --decode-hardware under --disaggregate) it fills the pool
/// without its own system from --hardware and --chips, and points --hardware at the decode
/// pool's system. Returns whether the pools run on mixed chips.
bool check_simulate_pools(SimulateArgs& a);

/// Runs `chalk simulate` with its parsed flags (cmd_simulate.cc; the flags: cmd_simulate_flags.cc).
/// Errors: chalk::Error (and CLI errors) for bad or infeasible input, as every command.
void run_simulate(SimulateArgs a);

}  // namespace chalk::cli
