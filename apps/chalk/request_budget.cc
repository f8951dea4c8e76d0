#include "request_budget.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/sim/simulator.h"

namespace chalk::cli {
namespace {

thread_local RequestBudget* tl_budget = nullptr;

}  // namespace

BudgetScope::BudgetScope(RequestBudget& b) : previous_(tl_budget) { tl_budget = &b; }
BudgetScope::~BudgetScope() { tl_budget = previous_; }

RequestBudget* current_budget() { return tl_budget; }

std::function<void(int64_t)> budget_progress() {
  RequestBudget* b = tl_budget;
  if (b == nullptr) return {};
  return [b](int64_t steps) {
    b->steps += steps;
    if (b->max_steps > 0 && b->steps > b->max_steps) {
      throw WorkLimitError(503, "request", fmt::format("stopped after {} simulator steps, the web API's budget for one request "
                                                       "(fewer requests or shorter prompts and outputs fit)",
                                                       b->max_steps));
    }
    if (std::chrono::steady_clock::now() > b->deadline) {
      throw WorkLimitError(503, "request", fmt::format("stopped at the web API's {:g} s limit for one request after {} simulator steps "
                                                       "(fewer requests or shorter prompts and outputs fit)",
                                                       b->deadline_s, b->steps));
    }
    if (b->client_gone && b->client_gone()) throw WorkLimitError(503, "request", "the client closed its connection; the work was abandoned");
  };
}

StepEstimate estimate_steps(const Deployment& d, int64_t replicas, std::span<const sim::Request> requests, const sim::EnginePolicy& policy,
                            double prefix_hit_rate) {
  StepEstimate e;
  if (requests.empty()) return e;
  double in = 0, out = 0;
  for (const auto& q : requests) {
    in += static_cast<double>(q.input_tokens);
    out += static_cast<double>(q.output_tokens);
  }
  const double budget = static_cast<double>(std::max<int64_t>(1, policy.max_batched_tokens));
  e.prefill = std::ceil(in * (1 - std::clamp(prefix_hit_rate, 0.0, 1.0)) / budget);
  const double mean_tokens = std::max(1.0, (in + out) / static_cast<double>(requests.size()));
  const int64_t block = std::max<int64_t>(1, policy.block_size);
  const double kv_tokens = static_cast<double>(sim::kv_blocks_available(d, block)) * static_cast<double>(block);
  double concurrent = std::min({static_cast<double>(std::max<int64_t>(1, policy.max_sequences)), kv_tokens / mean_tokens, budget,
                                std::ceil(static_cast<double>(requests.size()) / static_cast<double>(std::max<int64_t>(1, replicas)))});
  concurrent = std::max(1.0, std::floor(concurrent));
  e.concurrent = static_cast<int64_t>(concurrent);
  e.decode = std::ceil(out / concurrent);
  return e;
}

void check_estimated_steps(const StepEstimate& e, double runs, bool token_budget_set) {
  const RequestBudget* b = tl_budget;
  if (b == nullptr || b->max_steps <= 0) return;
  const double steps = e.total() * std::max(1.0, runs);
  if (steps <= static_cast<double>(b->max_steps)) return;
  const bool budget_bound = token_budget_set && e.prefill > e.decode;
  throw WorkLimitError(
      413, budget_bound ? "max-batched-tokens" : "requests",
      fmt::format("the request implies about {:.3g} simulator steps ({:.3g} for prompts at the token budget, {:.3g} for outputs with {} "
                  "decoding at once{}); the web API runs at most {} for one request: {}",
                  steps, e.prefill, e.decode, e.concurrent, runs > 1 ? fmt::format(", times {:g} simulations", runs) : "",
                  b->max_steps,
                  budget_bound ? "raise max-batched-tokens" : "lower requests, input or output (the CLI takes more)"));
}

}  // namespace chalk::cli
