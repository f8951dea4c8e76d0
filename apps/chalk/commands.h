// Subcommands of `chalk`. Each register_* adds one subcommand to the app and sets
// `run` to the action to perform once parsing succeeds. Actions throw InputError on bad
// input; main turns that into "chalk: error: ..." and exit status 2.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace chalk::cli {

using Action = std::function<void()>;

/// Exit statuses of `chalk` (README, "Exit status"): 0 done, 2 bad input (InputError), 3 an
/// internal error, and kExitNoDeployment when `chalk plan` simulated deployments but none met
/// the SLO (its report is printed all the same).
inline constexpr int kExitNoDeployment = 4;

/// What the command run asks `chalk`'s main to exit with beyond 0, and the one line it prints
/// on stderr then. Only main reads it: `chalk web` and the Python module answer with the
/// report itself (plan's `best` null).
struct CommandOutcome {
  int status = 0;
  std::string note;
};
inline CommandOutcome& command_outcome() {
  static thread_local CommandOutcome o;
  return o;
}

void register_decode(CLI::App& app, Action& run);
void register_prefill(CLI::App& app, Action& run);
void register_catalog(CLI::App& app, Action& run);  // `models` and `hardware`
void register_serving(CLI::App& app, Action& run);  // issue 3: sweeps, balance points, frontier, plots
void register_prices(CLI::App& app, Action& run);   // issue 4: price sheets and what they imply
void register_validate(CLI::App& app, Action& run); // issue 5: predictions against measurements
void register_layouts(CLI::App& app, Action& run);  // parallel layouts ranked (layout_search.h)
void register_train(CLI::App& app, Action& run);    // issue 13: `train step|memory|layouts` (src/training)
/// Issue 14: adds `run`, `chinchilla` and `equilibrium` under the `train` group.
void register_train_run(CLI::App& train, Action& run);
/// `chinchilla` and `equilibrium` under the `train` group (called by register_train_run).
void register_train_scaling(CLI::App& train, Action& run);
void register_scaleup(CLI::App& app, Action& run);  // issue 20: the scale-up story across the catalog
/// Issue 18: `chalk web`, the page and its JSON API (web_api.h). The server links
/// cpp-httplib, whose OpenSSL, brotli and zlib cost about 9 ms of dynamic loading at every
/// start, so it lives in its own binary: in `chalk-web` this is the server (cmd_web.cc); in
/// `chalk` it hands the command line to the `chalk-web` beside it (web_exec.cc).
void register_web(CLI::App& app, Action& run);
inline constexpr const char* web_description =
    "The blackboard in a browser: a local page with every analysis, and its JSON API (/openapi.json)";
void register_simulate(CLI::App& app, Action& run); // issue 16: requests through an engine; `plan` below
void register_plan(CLI::App& app, Action& run);     // issue 16: the cheapest deployment meeting an SLO
void register_fleet(CLI::App& app, Action& run);    // issue 31: several models, each within its own SLO (sim/fleet.h)
void register_calibrate(CLI::App& app, Action& run);  // issue 29: an engine profile fitted to the user's benchmark runs
void register_step(CLI::App& app, Action& run);       // issue 31: the engine step of batch compositions, a step-time model for other simulators

}  // namespace chalk::cli
