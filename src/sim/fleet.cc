// Several models on one cluster: the fleet file and the per-model choice of system
// (include/chalk/sim/fleet.h; docs/simulator.md, "Fleets").
#include "chalk/sim/fleet.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <set>

#include "chalk/base/error.h"

namespace chalk::sim {
namespace {

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t c = line.find(',', start);
    out.push_back(line.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) return out;
    start = c + 1;
  }
}

std::string shown(std::string_view s) { return std::string(s.substr(0, 40)) + (s.size() > 40 ? "..." : ""); }

/// A finite number written whole (no trailing text); false otherwise.
bool read_number(std::string_view s, double& v) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(v);
}

constexpr std::string_view kFleetHeader = "model,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms";

}  // namespace

std::vector<FleetRow> parse_fleet_csv(std::string_view text, const std::string& source) {
  std::vector<FleetRow> out;
  std::set<std::string> seen;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a spreadsheet's byte order mark
  bool header = false;
  int64_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = source + ": line " + std::to_string(line_no);
    if (line.empty() || line.front() == '#') continue;
    if (!header) {
      if (line != kFleetHeader) throw InputError(where, "expected the header '" + std::string(kFleetHeader) + "', got '" + shown(line) + "'");
      header = true;
      continue;
    }
    const auto f = split_commas(line);
    if (f.size() != 7) throw InputError(where, "expected 7 fields (" + std::string(kFleetHeader) + "), got " + std::to_string(f.size()));
    FleetRow r;
    r.model = std::string(f[0]);
    if (r.model.empty()) throw InputError(where + ": model", "is empty; expected a model name (chalk models), an HF repo id or a config path");
    if (!seen.insert(r.model).second) throw InputError(where + ": model", "'" + r.model + "' is listed twice; give each model one line (its whole traffic)");
    if (!read_number(f[1], r.rate_per_s) || !(r.rate_per_s > 0)) {
      throw InputError(where + ": rate_per_s", "expected a number > 0 (requests per second), got '" + shown(f[1]) + "'");
    }
    if (!f[2].empty()) {
      double n = 0;
      if (!read_number(f[2], n) || n < 1 || n > 1e7 || n != std::floor(n)) {
        throw InputError(where + ": requests", "expected a whole number 1..10000000 or empty (1000), got '" + shown(f[2]) + "'");
      }
      r.requests = static_cast<int64_t>(n);
    }
    r.input = parse_length(f[3], where + ": input");
    r.output = parse_length(f[4], where + ": output");
    const char* names[] = {"ttft_slo_ms", "tpot_slo_ms"};
    std::optional<double>* dst[] = {&r.ttft_slo_s, &r.tpot_slo_s};
    for (int i = 0; i < 2; ++i) {
      const std::string_view v = f[static_cast<std::size_t>(5 + i)];
      if (v.empty()) continue;
      double ms = 0;
      if (!read_number(v, ms) || !(ms > 0)) throw InputError(where + ": " + names[i], "expected milliseconds > 0 or empty, got '" + shown(v) + "'");
      *dst[i] = ms * 1e-3;
    }
    if (!r.ttft_slo_s && !r.tpot_slo_s) throw InputError(where + ": ttft_slo_ms", "state a TTFT or a TPOT target (tpot_slo_ms), or both");
    out.push_back(std::move(r));
  }
  if (!header) throw InputError(source, "empty fleet file; expected the header '" + std::string(kFleetHeader) + "'");
  if (out.empty()) throw InputError(source, "no model after the header");
  return out;
}

FleetReport plan_fleet(const std::vector<FleetModel>& models, const std::vector<SystemSpec>& systems, const DeploymentOptions& base,
                       const PlanOptions& o) {
  if (models.empty()) throw InputError("models", "no model to plan");
  if (systems.empty()) throw InputError("hardware", "no system to plan on");
  FleetReport f;
  f.all_met = true;
  f.usd_per_hour = 0.0;
  for (const auto& m : models) {
    if (!m.slo.ttft_s && !m.slo.tpot_s) throw InputError("models", "'" + m.name + "' has no TTFT or TPOT target");
    FleetChoice c;
    c.name = m.name;
    PlanOptions mo = o;
    mo.slo = m.slo;
    // Each model's search is bounded by the chip budget; without one, by the fleet's dollar
    // budget (no model alone may exceed what the fleet may spend). The fleet's dollar budget
    // bounds the sum below.
    if (mo.chip_budget > 0) mo.usd_per_hour_budget.reset();
    for (std::size_t k = 0; k < systems.size(); ++k) {
      PlanReport r;
      std::string problem;
      try {
        r = plan_deployment(m.model, systems[k], base, m.traffic, mo);
      } catch (const InputError& e) {
        problem = e.what();
      }
      // The cheapest by dollars per hour; unpriced systems rank after every priced one, by
      // chips.
      if (problem.empty() && r.best) {
        const PlanCandidate& b = r.evaluated[*r.best];
        const bool better = !c.system || (b.usd_per_hour && !c.usd_per_hour) ||
                            (b.usd_per_hour && c.usd_per_hour && *b.usd_per_hour < *c.usd_per_hour) ||
                            (!b.usd_per_hour && !c.usd_per_hour && b.chips < c.chips);
        if (better) {
          c.system = k;
          c.usd_per_hour = b.usd_per_hour;
          c.chips = b.chips;
        }
      }
      c.plans.push_back(std::move(r));
      c.problems.push_back(std::move(problem));
    }
    if (c.system) {
      f.chips += c.chips;
      if (f.usd_per_hour && c.usd_per_hour) {
        *f.usd_per_hour += *c.usd_per_hour;
      } else {
        f.usd_per_hour.reset();
      }
    } else {
      f.all_met = false;
      std::string why;
      for (std::size_t k = 0; k < systems.size(); ++k) {
        why += (why.empty() ? "" : "; ") + systems[k].name + ": " + (c.problems[k].empty() ? c.plans[k].why_none : c.problems[k]);
      }
      f.why_none += (f.why_none.empty() ? "" : "; ") + fmt::format("{}: no deployment meets its SLO ({})", m.name, why);
    }
    f.models.push_back(std::move(c));
  }
  if (!f.all_met) f.usd_per_hour.reset();
  if (f.all_met && o.usd_per_hour_budget && f.usd_per_hour && *f.usd_per_hour > *o.usd_per_hour_budget) {
    f.all_met = false;
    f.why_none = fmt::format("the models' cheapest deployments cost ${:.2f}/hour together, over the budget of ${:.2f}/hour (each is "
                             "already its model's cheapest: no cheaper fleet meets every SLO)",
                             *f.usd_per_hour, *o.usd_per_hour_budget);
  }
  return f;
}

}  // namespace chalk::sim
