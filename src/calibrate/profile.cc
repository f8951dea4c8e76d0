// Engine profile files (profile.h).
#include "chalk/calibrate/profile.h"

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/json_util.h"

namespace chalk::calibrate {

using detail::json;

std::string profile_json(const std::string& engine, const FitReport& r, int64_t runs, const std::string& source) {
  json constants = json::object(), sigma = json::object(), fitted = json::array();
  for (const auto& c : r.constants) {
    constants[c.name] = c.value;
    sigma[c.name] = c.sigma ? json(*c.sigma) : json(nullptr);
    if (c.fitted) fitted.push_back(c.name);
  }
  const json j = {{"format", kProfileFormat}, {"engine", engine},       {"constants", constants}, {"uncertainty_s", sigma},
                  {"fitted", fitted},          {"runs", runs},           {"source", source}};
  return j.dump(2) + "\n";
}

sim::EngineProfile parse_engine_profile(std::string_view text, const std::string& source) {
  const json j = detail::parse_json(text, source);
  const detail::Obj o(j, source + ": ");
  o.only({"format", "engine", "constants", "uncertainty_s", "fitted", "runs", "source"});
  const std::string format = o.string("format");
  if (format != kProfileFormat) {
    throw InputError(o.field("format"), "expected \"" + std::string(kProfileFormat) + "\", got \"" + excerpt(format) + "\"");
  }
  sim::EngineProfile p;
  p.source = source;
  const std::string engine = o.string("engine");
  p.engine = sim::known_engine_family(engine);
  if (p.engine.empty()) throw InputError(o.field("engine"), "unknown engine '" + excerpt(engine) + "'; expected vllm, sglang or trtllm");
  const detail::Obj c = o.object("constants");
  // allreduce_latency_s came later within chalk-engine-profile/1: a file without it keeps the
  // default, as for any absent constant.
  c.only({"request_overhead_s", "host_s_per_sequence", "kernel_floor_s", "allreduce_latency_s"});
  const auto read = [&](Constant id) -> std::optional<double> {
    const ConstantInfo& i = info(id);
    const auto v = c.opt_number(i.name);
    if (v && !(*v >= i.lower && *v <= i.upper)) {
      throw InputError(c.field(i.name), fmt::format("must be in [{:.6g}, {:.6g}] s, got {:.6g}", i.lower, i.upper, *v));
    }
    return v;
  };
  p.constants.request_overhead_s = read(Constant::request_overhead);
  p.constants.host_s_per_sequence = read(Constant::host_per_sequence);
  p.constants.kernel_floor_s = read(Constant::kernel_floor);
  p.constants.allreduce_latency_s = read(Constant::allreduce_latency);
  return p;
}

}  // namespace chalk::calibrate
