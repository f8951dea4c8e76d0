// A day planned hour by hour (day_plan.h).
#include "chalk/sim/day_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "chalk/base/error.h"

namespace chalk::sim {

RateCurve parse_rate_curve(std::string_view text, const std::string& source) {
  constexpr std::string_view header = "hour,rate_per_s";
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  RateCurve c;
  std::array<bool, 24> seen{};
  bool has_header = false;
  std::size_t pos = 0;
  int64_t no = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    const bool last = nl >= text.size();
    pos = nl + 1;
    ++no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() && last) break;
    if (!line.empty() && line.front() == '#') continue;
    const std::string where = source + ": line " + std::to_string(no);
    if (!has_header) {
      if (line != header) throw InputError(where, "expected the header 'hour,rate_per_s', got '" + excerpt(line) + "'");
      has_header = true;
      continue;
    }
    const std::size_t comma = line.find(',');
    if (comma == std::string_view::npos || line.find(',', comma + 1) != std::string_view::npos) {
      throw InputError(where, "expected 2 fields (hour,rate_per_s), got '" + excerpt(line) + "'");
    }
    const std::string_view h = line.substr(0, comma), r = line.substr(comma + 1);
    int hour = -1;
    const auto [hp, hec] = std::from_chars(h.data(), h.data() + h.size(), hour);
    if (h.empty() || hec != std::errc() || hp != h.data() + h.size() || hour < 0 || hour > 23 || seen[static_cast<std::size_t>(hour)]) {
      throw InputError(where, "hour: expected an integer 0..23 not listed before, got '" + excerpt(h) + "'");
    }
    double rate = -1;
    const auto [rp, rec] = std::from_chars(r.data(), r.data() + r.size(), rate);
    if (r.empty() || rec != std::errc() || rp != r.data() + r.size() || !(rate >= 0 && rate <= 1e6)) {
      throw InputError(where, "rate_per_s: expected requests per second 0..1000000, got '" + excerpt(r) + "'");
    }
    seen[static_cast<std::size_t>(hour)] = true;
    c.rate_per_s[static_cast<std::size_t>(hour)] = rate;
  }
  if (!has_header) throw InputError(source, "empty rate curve; expected the header 'hour,rate_per_s'");
  if (std::none_of(c.rate_per_s.begin(), c.rate_per_s.end(), [](double x) { return x > 0; })) {
    throw InputError(source, "no hour has a rate above 0; expected at least one");
  }
  return c;
}

RateCurve rate_curve_from_trace(std::span<const Request> requests, double start_of_day_s) {
  if (requests.empty() || !(requests.back().arrival_s > requests.front().arrival_s)) {
    throw InputError("trace", "spans no time; a rate by hour needs arrivals over a span");
  }
  // Times on the day's clock: t = start_of_day + arrival. Hour k (from the first day's
  // midnight) covers [3600 k, 3600 (k + 1)); the trace covers [t_first, t_last].
  const double t0 = start_of_day_s + requests.front().arrival_s, t1 = start_of_day_s + requests.back().arrival_s;
  std::array<double, 24> covered{}, count{};
  const auto k0 = static_cast<int64_t>(std::floor(t0 / 3600)), k1 = static_cast<int64_t>(std::floor(t1 / 3600));
  for (int64_t k = k0; k <= k1; ++k) {
    const double lo = std::max(t0, 3600.0 * static_cast<double>(k)), hi = std::min(t1, 3600.0 * static_cast<double>(k + 1));
    covered[static_cast<std::size_t>(k % 24)] += std::max(0.0, hi - lo);
  }
  for (const auto& r : requests) count[static_cast<std::size_t>(static_cast<int64_t>(std::floor((start_of_day_s + r.arrival_s) / 3600)) % 24)] += 1;
  RateCurve c;
  for (std::size_t h = 0; h < 24; ++h) c.rate_per_s[h] = covered[h] > 0 ? count[h] / covered[h] : 0;
  return c;
}

DayPlan plan_day(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const RateCurve& curve, const TrafficSpec& shape,
                 const PlanOptions& o) {
  DayPlan d;
  for (const double r : curve.rate_per_s) {
    if (r > 0 && std::find(d.levels.begin(), d.levels.end(), r) == d.levels.end()) d.levels.push_back(r);
  }
  if (d.levels.empty()) throw InputError("rate_curve", "no hour has a rate above 0; expected at least one");
  std::sort(d.levels.begin(), d.levels.end());
  for (const double r : d.levels) {
    TrafficSpec t = shape;
    t.rate_per_s = r;
    const std::vector<Request> reqs = generate_traffic(t);
    d.plans.push_back(plan_deployment(m, s, base, reqs, o));
  }
  d.all_met = std::all_of(d.plans.begin(), d.plans.end(), [](const PlanReport& p) { return p.best.has_value(); });
  double usd = 0;
  bool priced = d.all_met;
  for (std::size_t h = 0; h < 24; ++h) {
    const double r = curve.rate_per_s[h];
    d.level_of_hour[h] = -1;
    if (!(r > 0)) continue;
    const auto li = static_cast<std::size_t>(std::find(d.levels.begin(), d.levels.end(), r) - d.levels.begin());
    d.level_of_hour[h] = static_cast<int>(li);
    const PlanReport& p = d.plans[li];
    if (!p.best) continue;
    const PlanCandidate& c = p.evaluated[*p.best];
    d.chip_hours += static_cast<double>(c.chips);  // x 1 hour
    if (c.usd_per_hour) {
      usd += *c.usd_per_hour;
    } else {
      priced = false;
    }
  }
  if (priced) d.usd_per_day = usd;
  return d;
}

}  // namespace chalk::sim
