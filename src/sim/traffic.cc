// Arrival processes, length distributions and the trace reader (traffic.h).
#include "chalk/sim/traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

#include "chalk/base/error.h"
#include "chalk/sim/lora.h"

namespace chalk::sim {
namespace {

constexpr int64_t max_length = 10'000'000;
constexpr int64_t max_requests = 10'000'000;

/// Uniform in (0, 1): 53 random bits, never 0.
double unit(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; }

/// Standard normal (Box-Muller; the second value is dropped, which keeps the stream simple).
double normal(std::mt19937_64& rng) {
  const double u = unit(rng), v = unit(rng);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

/// Most draws the gamma sampler makes for one value. Marsaglia-Tsang accepts a draw with
/// probability above 0.95 for every k >= 1 (their section 3), so 1,000 rejections in a row
/// cannot happen with finite arithmetic: reaching it means a NaN, and it is an error rather
/// than an endless loop (issue 28: --cv 1e-155 once never returned).
constexpr int max_gamma_tries = 1000;

/// Gamma(shape k, scale 1) / k, a gap in units of the mean gap: Marsaglia and Tsang 2000;
/// for k < 1, Gamma(k + 1) x U^(1/k). Above k = 1e6 (cv below 1e-3) the normal limit
/// 1 + N(0,1)/sqrt(k) is used: the gamma's skewness 2/sqrt(k) is then under 0.002, and 1/cv^2
/// no longer overflows for the smallest cv (it is never formed).
double gamma_gap(std::mt19937_64& rng, double cv) {
  if (cv < 1e-3) return std::max(0.0, 1.0 + cv * normal(rng));
  const double k = 1.0 / (cv * cv);
  const double k1 = k < 1 ? k + 1 : k;
  const double dd = k1 - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * dd);
  for (int tries = 0; tries < max_gamma_tries; ++tries) {
    const double x = normal(rng);
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = unit(rng);
    if (std::log(u) < 0.5 * x * x + dd - dd * v + dd * std::log(v)) {
      const double g = k < 1 ? dd * v * std::pow(unit(rng), 1.0 / k) : dd * v;
      return g / k;
    }
  }
  throw InputError("cv", "the gamma sampler did not converge for cv " + fmt::format("{:.6g}", cv) + " (non-finite arithmetic)");
}

int64_t draw(const LengthDist& l, std::mt19937_64& rng) {
  switch (l.kind) {
    case LengthDist::Kind::fixed: return l.value;
    case LengthDist::Kind::uniform:
      return l.min + static_cast<int64_t>(std::floor(unit(rng) * static_cast<double>(l.max - l.min + 1)));
    case LengthDist::Kind::lognormal: {
      const double mu = std::log(static_cast<double>(l.value)) - l.sigma * l.sigma / 2;
      const double x = std::round(std::exp(mu + l.sigma * normal(rng)));
      const int64_t cap = l.max > 0 ? l.max : std::min<int64_t>(max_length, 64 * l.value);
      return std::clamp(static_cast<int64_t>(std::min(x, 1e15)), l.min, cap);
    }
  }
  return l.value;
}

void check_length(const LengthDist& l, const std::string& field) {
  auto bad = [&](const std::string& what) { throw InputError(field, what); };
  auto in_range = [](int64_t v) { return v >= 1 && v <= max_length; };
  switch (l.kind) {
    case LengthDist::Kind::fixed:
      if (!in_range(l.value)) bad("length must be 1..10000000 tokens, got " + std::to_string(l.value));
      break;
    case LengthDist::Kind::uniform:
      if (!in_range(l.min) || !in_range(l.max) || l.min > l.max) {
        bad("uniform lengths need 1 <= MIN <= MAX <= 10000000, got " + std::to_string(l.min) + ".." + std::to_string(l.max));
      }
      break;
    case LengthDist::Kind::lognormal:
      if (!in_range(l.value)) bad("lognormal mean must be 1..10000000 tokens, got " + std::to_string(l.value));
      if (!(l.sigma > 0 && l.sigma <= 5)) bad("lognormal sigma must be in (0, 5], got " + fmt::format("{:.6g}", l.sigma));
      if (l.max != 0 && (!in_range(l.max) || l.max < l.min)) bad("lognormal cap must be 1..10000000, got " + std::to_string(l.max));
      break;
  }
}

bool parse_int(std::string_view t, int64_t& out) {
  const auto* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, out);
  return ec == std::errc() && p == end && !t.empty();
}

bool parse_double(std::string_view t, double& out) {
  if (t.empty()) return false;
  const auto* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t i = s.find(sep, start);
    out.push_back(s.substr(start, i == std::string_view::npos ? std::string_view::npos : i - start));
    if (i == std::string_view::npos) return out;
    start = i + 1;
  }
}

/// The optional trace columns (parse_trace_csv): prefix_id and prefix_tokens (both or
/// neither; prefix_tokens 1..input_tokens) name a shared prompt; session_id a conversation,
/// whose stream covers the rest of the prompt and the answer.
void read_prefix_columns(const std::vector<std::string_view>& f, const std::string& where, Request& r) {
  constexpr uint64_t trace_system_salt = 0x7ACE'5157'0000'0000ull, trace_session_salt = 0x7ACE'C0DE'0000'0000ull;
  int64_t id = 0, tokens = 0, session = 0;
  const bool has_id = !f[3].empty(), has_tokens = !f[4].empty(), has_session = !f[5].empty();
  if (has_id && (!parse_int(f[3], id) || id < 0)) throw InputError(where, "prefix_id: expected an integer >= 0 or nothing, got '" + excerpt(f[3]) + "'");
  if (has_tokens && (!parse_int(f[4], tokens) || tokens < 1 || tokens > r.input_tokens)) {
    throw InputError(where, "prefix_tokens: expected an integer 1..input_tokens (" + std::to_string(r.input_tokens) + ") or nothing, got '" +
                                excerpt(f[4]) + "'");
  }
  if (has_id != has_tokens) throw InputError(where, has_id ? "prefix_tokens: expected a length with prefix_id" : "prefix_id: expected an id with prefix_tokens");
  if (has_session && (!parse_int(f[5], session) || session < 0)) {
    throw InputError(where, "session_id: expected an integer >= 0 or nothing, got '" + excerpt(f[5]) + "'");
  }
  if (has_id) r.prefix.push_back({trace_system_salt + static_cast<uint64_t>(id), tokens});
  const int64_t rest = r.input_tokens - (has_id ? tokens : 0) + r.output_tokens;
  if (has_session) r.prefix.push_back({trace_session_salt + static_cast<uint64_t>(session), rest});
}

}  // namespace

std::string clock_limit_text() {
  return "simulation clock's reach of " + std::to_string(static_cast<int64_t>(max_clock_s)) +
         " s (2^33 s, 272 years: past it a double no longer resolves 2 microseconds, and step times vanish)";
}

LengthDist parse_length(std::string_view text, const std::string& field) {
  std::string shown(1, '\'');  // built by appends: GCC 12 warns falsely (-Wrestrict) on "'" + string
  shown.append(text).push_back('\'');
  const char* expected = "expected N, uniform:MIN:MAX or lognormal:MEAN:SIGMA[:MAX] (tokens)";
  const auto parts = split(text, ':');
  LengthDist l;
  auto integer = [&](std::string_view t) {
    int64_t v = 0;
    if (!parse_int(t, v)) throw InputError(field, "got " + shown + "; " + expected);
    return v;
  };
  if (parts.size() == 1) {
    l.kind = LengthDist::Kind::fixed;
    l.value = integer(parts[0]);
  } else if (parts[0] == "uniform" && parts.size() == 3) {
    l.kind = LengthDist::Kind::uniform;
    l.min = integer(parts[1]);
    l.max = integer(parts[2]);
  } else if (parts[0] == "lognormal" && (parts.size() == 3 || parts.size() == 4)) {
    l.kind = LengthDist::Kind::lognormal;
    l.value = integer(parts[1]);
    if (!parse_double(parts[2], l.sigma)) throw InputError(field, "got " + shown + "; " + expected);
    if (parts.size() == 4) l.max = integer(parts[3]);
  } else {
    throw InputError(field, "got " + shown + "; " + expected);
  }
  check_length(l, field);
  return l;
}

std::vector<Request> generate_traffic(const TrafficSpec& spec) {
  if (!(spec.rate_per_s > 0) || !std::isfinite(spec.rate_per_s)) {
    throw InputError("rate", "must be a positive number of requests per second, got " + fmt::format("{:.6g}", spec.rate_per_s));
  }
  if (!(spec.cv > 0) || !std::isfinite(spec.cv) || spec.cv > 100) {
    throw InputError("cv", "burstiness (coefficient of variation of the gaps) must be in (0, 100], got " + fmt::format("{:.6g}", spec.cv));
  }
  if (spec.requests < 1 || spec.requests > max_requests) {
    throw InputError("requests", "must be 1..10000000, got " + std::to_string(spec.requests));
  }
  check_length(spec.input, "input");
  check_length(spec.output, "output");
  // The arrivals must end where the simulation clock still resolves a microsecond.
  const double expected_span_s = static_cast<double>(spec.requests) / spec.rate_per_s;
  if (!(expected_span_s <= max_clock_s)) {
    throw InputError("rate", "of " + excerpt(fmt::format("{:.6g}", spec.rate_per_s), 24) + " requests/s spreads " + std::to_string(spec.requests) +
                                 " requests over about " + excerpt(fmt::format("{:.6g}", expected_span_s), 24) + " s, beyond the " +
                                 clock_limit_text() + "; expected a higher rate");
  }
  std::mt19937_64 rng(spec.seed);
  std::vector<Request> out(static_cast<std::size_t>(spec.requests));
  double t = 0;
  for (auto& r : out) {
    const double gap = spec.arrivals == Arrivals::poisson ? -std::log(unit(rng)) / spec.rate_per_s
                                                          : gamma_gap(rng, spec.cv) / spec.rate_per_s;
    t += gap;
    if (!(t <= max_clock_s)) {
      throw InputError("rate", "of " + excerpt(fmt::format("{:.6g}", spec.rate_per_s), 24) + " requests/s puts an arrival at " +
                                   excerpt(fmt::format("{:.6g}", t), 24) + " s, beyond the " + clock_limit_text() + "; expected a higher rate");
    }
    r.arrival_s = t;
    r.input_tokens = draw(spec.input, rng);
    r.output_tokens = draw(spec.output, rng);
  }
  return out;
}

std::vector<Request> parse_trace_csv(std::string_view text, const std::string& source) {
  std::vector<Request> out;
  int64_t line_no = 0;
  bool header = false, structured = false, adapters = false;
  double last = 0;
  constexpr const char* plain = "arrival_s,input_tokens,output_tokens";
  constexpr const char* with_prefix = "arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens,session_id";
  // A UTF-8 byte order mark at the start (as spreadsheet programs save CSV) is not part of
  // the header, as in the measurements reader.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    const bool last_line = nl >= text.size();
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = source + ": line " + std::to_string(line_no);
    if (line.empty() && last_line) break;
    if (!line.empty() && line.front() == '#') continue;
    if (!header) {
      // The optional last column `adapter` (a LoRA adapter, sim/lora.h) after either header.
      adapters = line.size() > 8 && line.substr(line.size() - 8) == ",adapter";
      if (adapters) line.remove_suffix(8);
      if (line != plain && line != with_prefix) {
        // Extra columns: say which ones the reader knows.
        const bool extended = line.substr(0, std::string_view(plain).size() + 1) == std::string(plain) + ",";
        throw InputError(where, std::string("expected the header '") + (extended ? with_prefix : plain) + "', got '" + excerpt(line) + "'");
      }
      header = true;
      structured = line == with_prefix;
      continue;
    }
    const auto f = split(line, ',');
    const std::size_t fields = (structured ? 6u : 3u) + (adapters ? 1u : 0u);
    if (f.size() != fields) {
      throw InputError(where, fmt::format("expected {} fields ({}{}), got {}: '{}'", fields, structured ? with_prefix : plain, adapters ? ",adapter" : "",
                                          f.size(), excerpt(line)));
    }
    Request r;
    if (!parse_double(f[0], r.arrival_s) || r.arrival_s < 0) {
      throw InputError(where, "arrival_s: expected seconds >= 0, got '" + excerpt(f[0]) + "'");
    }
    if (!(r.arrival_s <= max_clock_s)) {
      throw InputError(where, "arrival_s: " + excerpt(f[0], 24) + " s is beyond the " + clock_limit_text() +
                                  "; expected seconds from the trace's start (epoch milli- or microseconds?)");
    }
    if (r.arrival_s < last) {
      throw InputError(where, "arrival_s: expected times in non-decreasing order, got " + excerpt(f[0], 24) + " after " +
                                  fmt::format("{:.6g}", last));
    }
    const char* names[] = {"input_tokens", "output_tokens"};
    int64_t* dst[] = {&r.input_tokens, &r.output_tokens};
    for (int i = 0; i < 2; ++i) {
      if (!parse_int(f[1 + i], *dst[i]) || *dst[i] < 1 || *dst[i] > max_length) {
        throw InputError(where, std::string(names[i]) + ": expected an integer 1..10000000, got '" + excerpt(f[1 + i]) + "'");
      }
    }
    if (structured) read_prefix_columns(f, where, r);
    if (adapters && !f.back().empty()) {
      int64_t a = 0;
      if (!parse_int(f.back(), a) || a < 0 || a > 99'999) throw InputError(where, "adapter: expected an integer 0..99999 or nothing, got '" + excerpt(f.back()) + "'");
      r.adapter = static_cast<int32_t>(a);
      lora_key_prefix(r);
    }
    last = r.arrival_s;
    out.push_back(r);
    if (static_cast<int64_t>(out.size()) > max_requests) throw InputError(where, "more than 10000000 requests");
  }
  if (!header) throw InputError(source, "empty trace; expected the header 'arrival_s,input_tokens,output_tokens'");
  if (out.empty()) throw InputError(source, "no requests after the header");
  return out;
}

}  // namespace chalk::sim
