// Engine profile files (docs/file-formats.md, "Engine profiles"): what `chalk calibrate`
// writes and `chalk simulate|plan|validate --engine-profile FILE` read.
#pragma once

#include <string>
#include <string_view>

#include "chalk/calibrate/fit.h"
#include "chalk/sim/policy.h"

namespace chalk::calibrate {

/// The format name a profile file carries in its "format" key.
inline constexpr const char* kProfileFormat = "chalk-engine-profile/1";

/// The profile file of a fit for engine family `engine` ("vllm"): {"format", "engine",
/// "constants": {name: seconds} (every constant, fitted or default), "uncertainty_s":
/// {name: seconds or null}, "fitted": [names], "runs": N, "source": text}.
std::string profile_json(const std::string& engine, const FitReport& r, int64_t runs, const std::string& source);

/// Reads a profile: "format" must be kProfileFormat, "engine" one of engine_policy's families
/// (a release suffix is dropped), "constants" an object of the names of fit.h with numbers
/// inside each constant's bounds (info()), each optional (a file written before
/// allreduce_latency_s existed reads as before: the default); "uncertainty_s", "fitted", "runs" and "source" are
/// optional and read by nothing. Any other key is an error. Throws InputError naming `source`
/// and the field ("p.json: constants.kernel_floor_s: must be in [0, 0.0001] s, got -1").
sim::EngineProfile parse_engine_profile(std::string_view text, const std::string& source);

}  // namespace chalk::calibrate
