// Every number explains itself (issue 18): why the first layout of a ranking wins, from
// its own step terms beside the runner-up's (`chalk layouts --explain`, the page's
// layouts view).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "chalk/engine/explain.h"

namespace chalk {

std::vector<Explanation> explain_layout_winner(const std::vector<LayoutCandidate>& ranked, int64_t n_chips, double query_batch) {
  if (ranked.empty() || !ranked.front().fits) return {};
  const auto& N = explain_number;
  const LayoutCandidate& w = ranked.front();
  const bool fixed = query_batch > 0;
  const double seqs = fixed ? query_batch : w.batch;
  const double chips = fixed ? static_cast<double>(n_chips) : static_cast<double>(w.replica_chips);
  const StepBreakdown& s = w.step;
  std::vector<ExplainInput> inputs = {
      {"B", fixed ? "sequences over all chips (the busiest replica runs its ceiling share)" : "sequences per replica (the largest batch its HBM holds)", seqs,
       "sequences", fixed ? "--batch" : "memory_plan at --context"},
      {"n", fixed ? "chips the query names" : "chips per replica", chips, "chips", fixed ? "--chips" : "the layout"},
      {"T_ops", "operations: each kernel's max(compute, memory) on the busiest chip", to_ms(s.t_operations), "ms", "engine step (docs/formulas.md)"},
      {"T_comm", "communication not hidden", to_ms(s.t_comm), "ms", "the layout's collectives"},
      {"T_overhead", "kernel launch floor", to_ms(s.t_overhead), "ms", "per-kernel floor"},
      {"T_host", "the engine's host work for the step (per sequence on the busiest rank)", to_ms(s.t_host), "ms", "host time per step (docs/formulas.md)"}};
  // The step from its terms; the host's work enters where the engine step counted any.
  auto step_text = [&](const StepBreakdown& x) {
    const double gpu_s = (x.t_operations + x.t_comm + x.t_overhead).value(), host = x.t_host.value(), t = x.t_step.value();
    const std::string gpu = fmt::format("{} + {} + {}", N(to_ms(x.t_operations)), N(to_ms(x.t_comm)), N(to_ms(x.t_overhead)));
    const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
    if (host > 0 && host > gpu_s && same(t, host)) return fmt::format("max({}, host {})", gpu, N(to_ms(x.t_host)));
    if (host > 0 && same(t, gpu_s + host)) return fmt::format("({} + host {})", gpu, N(to_ms(x.t_host)));
    return "(" + gpu + ")";
  };

  std::string versus = "no other layout fits";
  for (size_t i = 1; i < ranked.size(); ++i) {
    if (!ranked[i].fits) continue;
    const LayoutCandidate& r = ranked[i];
    inputs.push_back({"runner-up", fmt::format("{}: tok/s per chip", r.name), r.tokens_per_s_per_chip, "tok/s", "the same ranking's second layout"});
    versus = fmt::format("the runner-up, {}, steps in {} = {} ms for {} tok/s per chip", r.name, step_text(r.step), N(to_ms(r.step.t_step)),
                         N(r.tokens_per_s_per_chip));
    break;
  }
  return {{"tok_per_s_per_chip", fmt::format("why {} ranks first: decode tokens per second per chip", w.name),
           "tok/s/chip = B / (T_step x n); T_step = T_ops + T_comm + T_overhead, or T_host where the engine's host work outlasts them",
           inputs,
           fmt::format("{} / ({} ms x {}) = {} tok/s per chip (governed by {}); {}", N(seqs), step_text(s), N(chips), N(w.tokens_per_s_per_chip), s.governs, versus),
           w.tokens_per_s_per_chip, "tok/s", "docs/formulas.md (Layout search); lecture 15:53-27:38", ""}};
}

}  // namespace chalk
