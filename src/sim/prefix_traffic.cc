// Token structure over synthetic traffic: shared system prompts and multi-turn
// conversations (traffic.h, PrefixTraffic; docs/simulator.md, "Prefix caching").
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

#include "chalk/base/error.h"
#include "chalk/sim/traffic.h"

namespace chalk::sim {
namespace {

constexpr int64_t prefix_max_tokens = 10'000'000;
/// Salts that keep the three kinds of identity apart (system prompts, conversations).
constexpr uint64_t system_salt = 0x5157'0000'0000'0000ull, session_salt = 0xC0DE'0000'0000'0000ull;

std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t i = s.find(':', start);
    out.push_back(s.substr(start, i == std::string_view::npos ? std::string_view::npos : i - start));
    if (i == std::string_view::npos) return out;
    start = i + 1;
  }
}

int64_t integer(std::string_view t, int64_t lo, int64_t hi, const std::string& field, std::string_view text, const char* form) {
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || t.empty() || v < lo || v > hi) {
    throw InputError(field, fmt::format("got '{}'; expected {} with '{}' an integer {}..{}", excerpt(text), form, excerpt(t, 24), lo, hi));
  }
  return v;
}

/// Uniform in (0, 1), as traffic.cc's: 53 random bits, never 0.
double prefix_unit(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

PrefixTraffic parse_shared_prefix(std::string_view text, const std::string& field, PrefixTraffic into) {
  const char* form = "TOKENS:GROUPS[:S] (a system prompt of TOKENS tokens, one of GROUPS, Zipf exponent S, 0 = uniform)";
  const auto f = fields(text);
  if (f.size() != 2 && f.size() != 3) throw InputError(field, fmt::format("got '{}'; expected {}", excerpt(text), form));
  into.system_tokens = integer(f[0], 1, prefix_max_tokens, field, text, form);
  into.groups = integer(f[1], 1, 1'000'000, field, text, form);
  into.zipf_s = 0;
  if (f.size() == 3) {
    double s = 0;
    const auto [p, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), s);
    if (ec != std::errc() || p != f[2].data() + f[2].size() || f[2].empty() || !(s >= 0 && s <= 10)) {
      throw InputError(field, fmt::format("got '{}'; expected {} with S a number in [0, 10]", excerpt(text), form));
    }
    into.zipf_s = s;
  }
  return into;
}

PrefixTraffic parse_sessions(std::string_view text, const std::string& field, PrefixTraffic into) {
  const char* form = "N:TURNS (N conversations open at once, TURNS turns each)";
  const auto f = fields(text);
  if (f.size() != 2) throw InputError(field, fmt::format("got '{}'; expected {}", excerpt(text), form));
  into.sessions = integer(f[0], 1, 1'000'000, field, text, form);
  into.turns = integer(f[1], 1, 10'000, field, text, form);
  return into;
}

void apply_prefix_traffic(std::vector<Request>& requests, const PrefixTraffic& p, uint64_t seed) {
  if (!p.enabled()) return;
  // The group draws: inverse CDF of P(g) ~ 1/(g+1)^S over a table (binary search).
  std::vector<double> cdf;
  if (p.groups > 0) {
    cdf.resize(static_cast<std::size_t>(p.groups));
    double sum = 0;
    for (int64_t g = 0; g < p.groups; ++g) cdf[static_cast<std::size_t>(g)] = sum += std::pow(static_cast<double>(g + 1), -p.zipf_s);
    for (auto& c : cdf) c /= sum;
  }
  std::mt19937_64 rng(seed ^ 0x9E37'79B9'7F4A'7C15ull);
  auto draw_group = [&]() -> int64_t {
    const double u = prefix_unit(rng);
    return std::min<int64_t>(p.groups - 1, std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  };
  // Per conversation slot: its conversation, its group, and the stream so far (the last
  // turn's prompt after the system prompt, plus its answer).
  struct Slot {
    int64_t conversation = -1, group = 0, stream = 0;
  };
  const int64_t slots = std::max<int64_t>(1, p.sessions);
  std::vector<Slot> slot(static_cast<std::size_t>(slots));
  for (std::size_t k = 0; k < requests.size(); ++k) {
    Request& q = requests[k];
    const int64_t own = q.input_tokens;
    int64_t history = 0, group = -1, conversation = -1;
    if (p.sessions > 0) {
      const int64_t j = static_cast<int64_t>(k);
      Slot& s = slot[static_cast<std::size_t>(j % slots)];
      const int64_t turn = (j / slots) % p.turns;
      if (turn == 0) {
        s.conversation = (j / (slots * p.turns)) * slots + j % slots;
        s.stream = 0;
        if (p.groups > 0) s.group = draw_group();
      }
      history = s.stream;
      group = p.groups > 0 ? s.group : -1;
      conversation = s.conversation;
      s.stream = history + own + q.output_tokens;
    } else if (p.groups > 0) {
      group = draw_group();
    }
    const int64_t system = group >= 0 ? p.system_tokens : 0;
    if (system + history + own > prefix_max_tokens) {
      throw InputError("input", fmt::format("request {}: a prompt of {} tokens (system {} + history {} + new {}) passes 10000000; expected "
                                            "fewer turns or shorter turns",
                                            k, system + history + own, system, history, own));
    }
    q.input_tokens = system + history + own;
    q.prefix.clear();
    if (group >= 0) q.prefix.push_back({system_salt + static_cast<uint64_t>(group), p.system_tokens});
    if (conversation >= 0) q.prefix.push_back({session_salt + static_cast<uint64_t>(conversation), history + own + q.output_tokens});
  }
}

}  // namespace chalk::sim
