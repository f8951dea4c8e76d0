// The engine profile `chalk calibrate` writes, as simulate and plan load and report it
// (--engine-profile; declared in sim_cli.h).
#include "sim_cli.h"

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/calibrate/profile.h"
#include "chalk/io/io.h"
#include "table.h"

namespace chalk::cli {

void load_engine_profile(PolicyArgs& a, DeploymentArgs& d) {
  if (a.engine_profile.empty()) return;
  sim::EngineProfile p = calibrate::parse_engine_profile(read_file(a.engine_profile), a.engine_profile);
  const std::string family = sim::known_engine_family(a.engine);
  if (!family.empty() && family != p.engine) {
    throw InputError("--engine-profile", a.engine_profile + " was fitted for engine " + p.engine + ", not --engine " + a.engine +
                                             "; expected a profile of the engine simulated");
  }
  d.kernel_floor_s = p.constants.kernel_floor_s;
  d.allreduce_latency_s = p.constants.allreduce_latency_s;
  d.host_s_per_sequence = p.constants.host_s_per_sequence;
  a.profile = std::move(p);
}

std::string engine_profile_text(const PolicyArgs& a) {
  if (!a.profile) return "";
  const auto& c = a.profile->constants;
  std::string s = "profile     " + a.profile->source + " (chalk calibrate, engine " + a.profile->engine + "):";
  if (c.request_overhead_s) s += fmt::format(" request overhead {} ms", format_number(*c.request_overhead_s * 1e3, 4));
  if (c.host_s_per_sequence) s += fmt::format(" host {} us/sequence", format_number(*c.host_s_per_sequence * 1e6, 4));
  if (c.kernel_floor_s) s += fmt::format(" kernel floor {} us", format_number(*c.kernel_floor_s * 1e6, 4));
  if (c.allreduce_latency_s) s += fmt::format(" all-reduce stage {} us", format_number(*c.allreduce_latency_s * 1e6, 4));
  return s + "\n";
}

nlohmann::json engine_profile_json(const std::optional<sim::EngineProfile>& p) {
  if (!p) return nullptr;
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"file", p->source},
          {"engine", p->engine},
          {"request_overhead_s", opt(p->constants.request_overhead_s)},
          {"host_s_per_sequence", opt(p->constants.host_s_per_sequence)},
          {"kernel_floor_s", opt(p->constants.kernel_floor_s)},
          {"allreduce_latency_s", opt(p->constants.allreduce_latency_s)}};
}

}  // namespace chalk::cli
