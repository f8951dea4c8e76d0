#include "chalk/model/moe.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "chalk/base/error.h"

namespace chalk {

double expected_experts_touched(double n_experts, double top_k, double tokens) {
  if (n_experts <= 0 || tokens <= 0) return 0;
  if (top_k >= n_experts) return n_experts;
  return n_experts * (1.0 - std::pow(1.0 - top_k / n_experts, tokens));
}

namespace {

/// expected_max_load past its trivial cases (balls, bins and cap > 0, bins > 1).
double expected_max_load_uncached(double balls, double bins, double cap) {
  const double lambda = balls / bins;
  // Heavy load: the Poisson sum cannot be evaluated (e^-lambda underflows past ~700) and
  // is not needed: E[max] ~ mu + sigma sqrt(2 ln n) (Raab and Steger 1998; the
  // training-and-systems.md 6.3 table: 1.29 x the mean at 128 per bin, Monte Carlo 1.26).
  if (lambda >= 64) return std::min(cap, lambda + std::sqrt(lambda * (1 - 1 / bins)) * std::sqrt(2 * std::log(bins)));
  // E[max] = sum_j P(max >= j). P(max >= 1) = 1 for any ball; P(max >= 2) is the
  // birthday bound 1 - exp(-m (m - 1) / (2 n)); from j = 3 on, bins are treated as
  // independent Poisson(m / n) counts (Poissonization is poor only for j <= 2 at m << n).
  double sum = std::min(1.0, cap) * std::min(1.0, balls);
  if (cap > 1) sum += std::min(1.0, cap - 1) * (1.0 - std::exp(-balls * std::max(balls - 1, 0.0) / (2 * bins)));
  double term = std::exp(-lambda);  // P(X = 0)
  double cdf = term;
  term *= lambda;  // P(X = 1)
  cdf += term;
  term *= lambda / 2;  // P(X = 2)
  cdf += term;         // P(X < 3)
  const int max_j = static_cast<int>(std::ceil(cap));
  for (int j = 3; j <= max_j; ++j) {
    const double p_max_at_least_j = 1.0 - std::pow(std::min(cdf, 1.0), bins);
    sum += std::min(1.0, cap - (j - 1)) * p_max_at_least_j;
    if (p_max_at_least_j < 1e-12 && j > lambda) break;
    term *= lambda / j;  // P(X = j)
    cdf += term;         // P(X < j + 1)
  }
  return std::max(sum, std::min(lambda, cap));
}

}  // namespace

namespace {

/// A direct-mapped memo of a pure function of a few numbers, per thread: the request
/// simulator asks for the same expected maxima and busiest-chip figures at the same batch
/// sizes step after step (each a sum of pow or lgamma terms; bench/bench_sim.cc's
/// DeepSeek-V3 plan spent about a fifth of its time in them). A hit returns the value
/// computed for bit-identical arguments (keys compare with ==, so -0.0 and NaN never hit:
/// callers return before the memo for zeros, and NaN recomputes). 2^kBits entries; a
/// collision replaces the slot.
template <int N>
class Memo {
 public:
  using Key = std::array<double, N>;
  /// The value stored for `key`, or nullptr.
  const double* get(const Key& key) const {
    const Slot& s = slots_[slot(key)];
    return s.used && s.key == key ? &s.value : nullptr;
  }
  /// Stores `value` for `key` (after it was computed: a throw stores nothing) and returns it.
  double put(const Key& key, double value) {
    slots_[slot(key)] = {key, value, true};
    return value;
  }

 private:
  static constexpr int kBits = 10;
  struct Slot {
    Key key{};
    double value = 0;
    bool used = false;
  };
  static std::size_t slot(const Key& key) {
    uint64_t h = 0;
    for (const double x : key) h = (h ^ std::bit_cast<uint64_t>(x)) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> (64 - kBits));
  }
  std::array<Slot, (1 << kBits)> slots_{};
};

}  // namespace

double expected_max_load(double balls, double bins, double cap) {
  if (balls <= 0 || bins <= 0 || cap <= 0) return 0;
  if (bins <= 1) return std::min(balls, cap);
  thread_local Memo<3> memo;
  const Memo<3>::Key key{balls, bins, cap};
  if (const double* v = memo.get(key)) return *v;
  return memo.put(key, expected_max_load_uncached(balls, bins, cap));
}

namespace {

// Double, not long double: the values agree to 10 digits on DeepSeek-V3's routing at every
// chip count, and double runs 4-5x faster (x87 long double does not vectorize): the table
// for 6 chips was most of a `chalk decode` run (issue 11, start-up).
using Real = double;

double lchoose(int64_t n, int64_t k) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1);
}

/// First expert of each chip's block, and one past the last: chip i holds
/// [start[i], start[i + 1]), floor(E/c) experts plus one on the first E mod c chips.
std::vector<int64_t> block_starts(int64_t n_experts, int64_t n_chips) {
  std::vector<int64_t> start(static_cast<std::size_t>(n_chips) + 1, 0);
  const int64_t base = n_experts / n_chips, extra = n_experts % n_chips;
  for (int64_t i = 0; i < n_chips; ++i) start[i + 1] = start[i] + base + (i < extra ? 1 : 0);
  return start;
}

/// g[t] = E[max_i |S n B_i|] for S a uniform t-subset of the union of disjoint blocks of
/// the given sizes: sum over m < max b of 1 - P(every block holds <= m of S), where the
/// count of t-subsets with every block <= m is [x^t] prod_i sum_{j<=m} C(b_i, j) x^j.
std::vector<double> conditional_max(const std::vector<int64_t>& blocks) {
  int64_t total = 0, largest = 0;
  for (const int64_t b : blocks) {
    total += b;
    largest = std::max(largest, b);
  }
  std::vector<Real> g(static_cast<std::size_t>(total) + 1, 0);
  std::vector<Real> all(static_cast<std::size_t>(total) + 1);  // C(total, t)
  for (int64_t t = 0; t <= total; ++t) all[t] = std::exp(static_cast<Real>(lchoose(total, t)));
  std::vector<Real> poly, next;
  for (int64_t m = 0; m < largest; ++m) {
    poly.assign(1, 1);
    for (const int64_t b : blocks) {
      const int64_t top = std::min(m, b);
      next.assign(poly.size() + static_cast<std::size_t>(top), 0);
      Real c = 1;  // C(b, j)
      for (int64_t j = 0; j <= top; ++j) {
        for (std::size_t i = 0; i < poly.size(); ++i) next[i + j] += poly[i] * c;
        c = c * static_cast<Real>(b - j) / static_cast<Real>(j + 1);
      }
      poly.swap(next);
    }
    for (int64_t t = 0; t <= total; ++t) {
      const Real within = t < static_cast<int64_t>(poly.size()) ? poly[t] / all[t] : 0;
      g[t] += 1 - std::min<Real>(within, 1);
    }
  }
  return {g.begin(), g.end()};
}

/// The distribution of distinct items drawn after successive draws of k distinct of n
/// (uniform): from t drawn, a draw adds j new with probability C(n-t, j) C(t, k-j) / C(n, k).
struct DrawChain {
  int64_t n = 0, k = 0;
  std::vector<std::vector<double>> step;  // step[t][j]
  std::vector<double> p;                  // P(t distinct) now; zero outside [lo, hi]
  int64_t lo = 0, hi = 0;
  DrawChain(int64_t n_, int64_t k_) : n(n_), k(k_), step(static_cast<std::size_t>(n_) + 1), p(static_cast<std::size_t>(n_) + 1, 0) {
    p[0] = 1;
    const double all = lchoose(n, k);
    for (int64_t t = 0; t <= n; ++t) {
      step[t].assign(static_cast<std::size_t>(k) + 1, 0);
      for (int64_t j = std::max<int64_t>(0, k - t); j <= std::min(k, n - t); ++j) {
        step[t][j] = std::exp(lchoose(n - t, j) + lchoose(t, k - j) - all);
      }
    }
    q_.assign(p.size(), 0);
  }
  void advance() {
    // Only the band [lo, hi] can hold mass, so a step costs the band's width, not n (start-up:
    // a decode's batches advance each chain up to a thousand times; issue 11).
    int64_t first = -1, last = -1;
    for (int64_t t = lo; t <= hi; ++t) {
      // Negligible mass is not carried: at most (n + 1) 1e-30 is lost per draw, far below
      // the 1e-13 the table is exact to, and the chain's support stays a narrow band.
      if (p[t] < 1e-30) continue;
      if (first < 0) first = t;
      last = t;
      for (int64_t j = 0; j <= k && t + j <= n; ++j) q_[t + j] += p[t] * step[t][j];
    }
    std::fill(p.begin() + lo, p.begin() + hi + 1, 0.0);
    p.swap(q_);
    lo = first < 0 ? 0 : first;
    hi = first < 0 ? 0 : std::min(n, last + k);
  }
  double expect(const std::vector<double>& g) const {
    double s = 0;
    for (int64_t t = lo; t <= hi; ++t) s += p[t] * g[t];
    return s;
  }

 private:
  std::vector<double> q_;  // the next step's P, all zero between steps
};

/// h[T], the busiest chip's expected touched experts after T tokens (see
/// busiest_chip_experts), computed lazily: the set-up (each level's conditional maximum)
/// once, then the draw chains advanced only as far as the largest T asked for, up to the
/// tokens after which every expert is touched but for < 1e-15. A decode at batch 1..64
/// needs 64 of DeepSeek-V3's 1,263 steps, so start-up does not pay for the rest.
class BusiestTable {
 public:
  BusiestTable(const ExpertRouting& r, int64_t c) : groups_(1, 1) {
    const int64_t E = r.n_experts, k = r.top_k;
    const std::vector<int64_t> start = block_starts(E, c);
    cap_ = static_cast<double>(start[1] - start[0]);
    const bool grouped = r.n_group > 1 && r.topk_group < r.n_group;
    const int64_t G = grouped ? r.n_group : 1;
    kg_ = grouped ? r.topk_group : 1;
    const int64_t size = E / G;
    // For each number u of touched groups: the mean over u-subsets of groups of the
    // conditional maximum given t touched experts among them, and its expert chain.
    for (int64_t u = kg_; u <= G; ++u) {
      std::vector<double> g(static_cast<std::size_t>(u * size) + 1, 0);
      std::vector<int> pick(static_cast<std::size_t>(G), 0);
      std::fill(pick.end() - u, pick.end(), 1);
      double subsets = 0;
      std::map<std::vector<int64_t>, double> structures;  // block sizes -> how many subsets
      do {
        std::vector<int64_t> blocks;
        for (int64_t i = 0; i < c; ++i) {
          int64_t in = 0;
          for (int64_t e = start[i]; e < start[i + 1]; ++e) in += pick[e / size];
          if (in > 0) blocks.push_back(in);
        }
        std::sort(blocks.begin(), blocks.end());
        structures[blocks] += 1;
        subsets += 1;
      } while (std::next_permutation(pick.begin(), pick.end()));
      for (const auto& [blocks, count] : structures) {
        const std::vector<double> gs = conditional_max(blocks);
        for (std::size_t t = 0; t < g.size(); ++t) g[t] += gs[t] * count / subsets;
      }
      levels_.push_back({std::move(g), DrawChain(u * size, k)});
    }
    groups_ = DrawChain(G, kg_);
  }

  /// h[T] for T <= `tokens` (the chains advanced that far): h[floor] and h[floor + 1].
  const std::vector<double>& upto(int64_t tokens) {
    while (static_cast<int64_t>(h_.size()) <= tokens + 1) {
      groups_.advance();
      double e = 0;
      for (std::size_t i = 0; i < levels_.size(); ++i) {
        levels_[i].chain.advance();
        e += groups_.p[static_cast<std::size_t>(kg_) + i] * levels_[i].chain.expect(levels_[i].g);
      }
      // Exact values rise with T to max block; clamp the last ulps of rounding so they do too.
      h_.push_back(std::min(std::max(e, h_.back()), cap_));
    }
    return h_;
  }

 private:
  struct Level {
    std::vector<double> g;
    DrawChain chain;
  };
  std::vector<Level> levels_;
  DrawChain groups_;
  int64_t kg_ = 1;
  double cap_ = 0;
  std::vector<double> h_{0.0};
};

}  // namespace

namespace {
/// busiest_chip_experts past its checks and trivial cases (tokens > 0).
double busiest_chip_experts_uncached(const ExpertRouting& r, double tokens, int64_t n_chips);
}  // namespace

double busiest_chip_experts(const ExpertRouting& r, double tokens, int64_t n_chips) {
  const int64_t E = r.n_experts, k = r.top_k;
  if (E < 1 || k < 1 || k > E) {
    throw InputError("num_experts_per_tok", "must be in 1.." + std::to_string(E) + " with >= 1 expert, got " + std::to_string(k));
  }
  if (r.n_group < 1 || E % r.n_group != 0) {
    throw InputError("n_group", "must be >= 1 and divide the " + std::to_string(E) + " experts, got " + std::to_string(r.n_group));
  }
  if (r.topk_group < 1 || r.topk_group > r.n_group || k > r.topk_group * (E / r.n_group)) {
    throw InputError("topk_group", "must be in 1..n_group (" + std::to_string(r.n_group) + ") and leave room for top_k " +
                                       std::to_string(k) + " experts, got " + std::to_string(r.topk_group));
  }
  if (n_chips < 1) throw InputError("--ep", "must be >= 1 chip, got " + std::to_string(n_chips));
  if (!(tokens >= 0) || !std::isfinite(tokens)) throw InputError("tokens", "must be finite and >= 0, got " + std::to_string(tokens));
  if (tokens == 0) return 0;
  thread_local Memo<6> memo;
  const Memo<6>::Key key{static_cast<double>(E), static_cast<double>(k), static_cast<double>(r.n_group), static_cast<double>(r.topk_group),
                         static_cast<double>(n_chips), tokens};
  if (const double* v = memo.get(key)) return *v;
  return memo.put(key, busiest_chip_experts_uncached(r, tokens, n_chips));
}

namespace {

double busiest_chip_experts_uncached(const ExpertRouting& r, double tokens, int64_t n_chips) {
  const int64_t E = r.n_experts, k = r.top_k;
  const double e = static_cast<double>(E), c = static_cast<double>(n_chips);
  if (n_chips >= E) return e / c;  // each expert split over c / E chips: a slice
  if (n_chips == 1) return expected_experts_touched(e, static_cast<double>(k), tokens);
  bool grouped = r.n_group > 1 && r.topk_group < r.n_group;
  if (grouped) {
    for (int64_t u = r.topk_group; u <= r.n_group && grouped; ++u) grouped = lchoose(r.n_group, u) <= std::log(4096.0);
  }
  // Past the tokens after which every expert is touched but for < 1e-15 (BusiestTable's
  // t_max), the answer is ceil(E/c) without building the table.
  const double miss = 1.0 - static_cast<double>(k) / e;
  const double t_max = miss <= 0 ? 1 : std::ceil((std::log(1e-15) - std::log(e)) / std::log(miss)) + 1;
  if (tokens >= t_max) return std::ceil(e / c);
  const ExpertRouting key_r{E, k, grouped ? r.n_group : 1, grouped ? r.topk_group : 1};
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;
  thread_local std::map<Key, BusiestTable> cache;
  const Key key{E, k, key_r.n_group, key_r.topk_group, n_chips};
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, BusiestTable(key_r, n_chips)).first;
  const double lo = std::floor(tokens);
  const std::vector<double>& h = it->second.upto(static_cast<int64_t>(lo));
  const auto i = static_cast<std::size_t>(lo);
  return h[i] + (tokens - lo) * (h[i + 1] - h[i]);
}

}  // namespace

}  // namespace chalk
