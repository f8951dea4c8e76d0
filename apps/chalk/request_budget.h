// Bounds on one web request's work (issue 28 §3): `chalk web` gives each request a wall-
// clock deadline, a budget of simulator steps (each step is recorded, so steps are also the
// memory a run holds) and a way to learn that its client has gone. `simulate` and `plan`
// check the work their traffic implies before they start (WorkLimitError, 413) and pass
// budget_progress() to the simulator, which calls it as it runs (WorkLimitError, 503).
// The CLI sets no budget: nothing changes for it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/step_mix.h"
#include "chalk/sim/policy.h"
#include "chalk/sim/traffic.h"

namespace chalk::cli {

/// Work over a request's budget. `status` is 413 when refused before it started (the
/// fields imply more work than the budget; field() names the field to lower) and 503 when
/// stopped while running (deadline, step budget, client gone; field() is "request").
class WorkLimitError : public InputError {
 public:
  WorkLimitError(int status, std::string field, const std::string& message) : InputError(std::move(field), message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// One request's bounds. Set on the request's thread by BudgetScope.
struct RequestBudget {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  double deadline_s = 0;       ///< the deadline as a duration, for messages (seconds)
  int64_t max_steps = 0;       ///< simulator steps over all of the request's runs (0: no bound)
  std::function<bool()> client_gone;  ///< true when the client closed its connection (optional)
  int64_t steps = 0;           ///< steps run so far (counted by budget_progress)
};

/// Makes `b` the budget of the calling thread's work until destroyed (scopes nest: the
/// previous budget comes back).
class BudgetScope {
 public:
  explicit BudgetScope(RequestBudget& b);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  RequestBudget* previous_;
};

/// The calling thread's budget, or nullptr (the CLI).
RequestBudget* current_budget();

/// A SimOptions::progress hook for the calling thread's budget: counts steps and throws
/// WorkLimitError(503) past the deadline or the step budget, or when the client has gone.
/// Empty when the thread has no budget.
std::function<void(int64_t)> budget_progress();

/// Engine steps a simulation implies, at least roughly, summed over replicas: prompt
/// tokens (less the prefix hit rate) over the token budget, and output tokens over the
/// requests that can decode at once (the batch cap, the KV blocks over a mean request's
/// tokens, the token budget; at least 1).
struct StepEstimate {
  double prefill = 0, decode = 0;
  int64_t concurrent = 1;  ///< requests decoding at once per replica
  double total() const { return prefill + decode; }
};

/// The estimate for `requests` on `replicas` replicas of `d` under `policy`.
StepEstimate estimate_steps(const Deployment& d, int64_t replicas, std::span<const sim::Request> requests, const sim::EnginePolicy& policy,
                            double prefix_hit_rate);

/// Throws WorkLimitError(413) when the calling thread has a step budget and `e` (times
/// `runs`, the simulations it stands for) exceeds it. The field is "max-batched-tokens"
/// when prompt steps dominate under a token budget the request set, else "requests"; the
/// message gives the estimate, the budget and what to lower.
void check_estimated_steps(const StepEstimate& e, double runs, bool token_budget_set);

}  // namespace chalk::cli
