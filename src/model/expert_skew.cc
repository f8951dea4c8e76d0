#include "chalk/model/expert_skew.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <utility>
#include <vector>

#include "chalk/base/error.h"
#include "chalk/model/moe.h"

namespace chalk {

void check_expert_balance(const ModelSpec& m, ExpertBalance balance, const std::string& field) {
  if (balance == ExpertBalance::uniform) return;
  for (const auto& g : m.groups) {
    if (g.ffn.kind == FfnKind::moe) return;
  }
  throw InputError(field, std::string(balance == ExpertBalance::eplb ? "'yes'" : "'no'") + " places routed experts; " + m.name + " has none");
}

ExpertBalance parse_expert_balance(const std::string& text, const std::string& field) {
  if (text.empty()) return ExpertBalance::uniform;
  std::string t = text;  // any case, as model and system names
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "no") return ExpertBalance::learned;
  if (t == "yes") return ExpertBalance::eplb;
  throw InputError(field, "'" + text + "' is not yes (EPLB's redundant experts) or no (a learned router's skew, experts in order)");
}

double expected_max_standard_normal(int64_t ranks) {
  if (ranks < 1) throw InputError("ranks", "must be >= 1, got " + std::to_string(ranks));
  if (ranks == 1) return 0;
  thread_local std::map<int64_t, double> cache;
  if (const auto it = cache.find(ranks); it != cache.end()) return it->second;
  // R integral z phi(z) Phi(z)^(R-1) dz by Simpson's rule: the integrand is smooth and
  // negligible beyond |z| = 9 for any R up to millions.
  const int steps = 3600;
  const double lo = -9, hi = 9, h = (hi - lo) / steps, r = static_cast<double>(ranks);
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double z = lo + h * i;
    const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
    const double f = r * z * phi * std::pow(cdf, r - 1);
    sum += f * (i == 0 || i == steps ? 1 : (i % 2 == 1 ? 4 : 2));
  }
  return cache[ranks] = sum * h / 3;
}

namespace {

/// SplitMix64 (Steele, Lea and Flood 2014): a fixed sequence on every platform, unlike the
/// standard library's distributions.
struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
};

}  // namespace

double learned_router_rank_factor(int64_t n_experts, int64_t ranks) {
  if (n_experts < 1) throw InputError("n_routed_experts", "must be >= 1, got " + std::to_string(n_experts));
  if (ranks < 1) throw InputError("--ep", "must be >= 1 rank, got " + std::to_string(ranks));
  const int64_t bins = std::min(ranks, n_experts);
  if (bins == 1) return 1.0;
  thread_local std::map<std::pair<int64_t, int64_t>, double> cache;
  const std::pair<int64_t, int64_t> key{n_experts, bins};
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  // Consecutive blocks, the first E mod R ranks one expert more (vLLM's expert map).
  std::vector<int64_t> owner(static_cast<std::size_t>(n_experts));
  const int64_t base = n_experts / bins, extra = n_experts % bins;
  for (int64_t r = 0, e = 0; r < bins; ++r) {
    for (int64_t j = 0; j < base + (r < extra ? 1 : 0); ++j) owner[static_cast<std::size_t>(e++)] = r;
  }
  // The popularities are drawn once per expert count and shared by every rank count.
  constexpr int kDraws = 1024;
  thread_local std::map<int64_t, std::vector<double>> draws;
  std::vector<double>& x = draws[n_experts];
  if (x.empty()) {
    x.resize(static_cast<std::size_t>(kDraws * n_experts));
    SplitMix64 rng{0x5EEDull};
    for (std::size_t i = 0; i < x.size(); i += 2) {
      // Box-Muller: two standard normals per pair of uniforms.
      const double radius = std::sqrt(-2 * std::log(rng.uniform())), angle = 2 * std::numbers::pi * rng.uniform();
      x[i] = std::exp(kLearnedRouterLogSigma * radius * std::cos(angle));
      if (i + 1 < x.size()) x[i + 1] = std::exp(kLearnedRouterLogSigma * radius * std::sin(angle));
    }
  }
  std::vector<double> load(static_cast<std::size_t>(bins));
  double sum_of_max = 0;
  for (int d = 0; d < kDraws; ++d) {
    std::fill(load.begin(), load.end(), 0.0);
    double total = 0;
    const double* row = x.data() + static_cast<std::size_t>(d) * static_cast<std::size_t>(n_experts);
    for (int64_t e = 0; e < n_experts; ++e) {
      load[static_cast<std::size_t>(owner[static_cast<std::size_t>(e)])] += row[e];
      total += row[e];
    }
    sum_of_max += *std::max_element(load.begin(), load.end()) / total * static_cast<double>(bins);
  }
  return cache[key] = std::max(1.0, sum_of_max / kDraws);
}

double busiest_rank_assignments(double assignments, int64_t n_experts, int64_t ranks, ExpertBalance balance) {
  if (!(assignments >= 0) || !std::isfinite(assignments)) {
    throw InputError("assignments", "must be finite and >= 0, got " + std::to_string(assignments));
  }
  if (n_experts < 1) throw InputError("n_routed_experts", "must be >= 1, got " + std::to_string(n_experts));
  if (ranks < 1) throw InputError("--ep", "must be >= 1 rank, got " + std::to_string(ranks));
  const double bins = static_cast<double>(std::min(ranks, n_experts));
  if (bins <= 1 || assignments == 0) return assignments;
  const double uniform = expected_max_load(assignments, bins, assignments);
  if (balance == ExpertBalance::uniform) return uniform;
  const double factor = balance == ExpertBalance::learned
                            ? learned_router_rank_factor(n_experts, ranks)
                            : 1.0 + kEplbResidualRankCv * expected_max_standard_normal(static_cast<int64_t>(bins));
  const double mean = assignments / bins;
  return mean + std::hypot(mean * (factor - 1), uniform - mean);
}

}  // namespace chalk
