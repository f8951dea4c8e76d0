// For the library's tests: a deployment priced by the engine step (mechanisms on),
// shared by the engine, simulator and calibration tests (overhead, simulator, prefix cache,
// KV offload, speculation, calibrate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"
#include "chalk/io/io.h"

namespace chalk::testing {

/// `model` on `chips` chips of system `hw` with the engine step's mechanisms on, the stated
/// parallel layout (default: derived), and optionally every matmul weight in `weights`.
inline Deployment engine_deploy(const std::string& model, const std::string& hw, int64_t chips, ParallelLayout layout = {},
                                std::optional<DType> weights = std::nullopt) {
  ModelSpec m = load_model(model);
  if (weights) m.weights.attention = m.weights.dense_ffn = m.weights.experts = *weights;
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = true;
  o.mechanisms.layout = layout;
  return make_deployment(m, load_system(hw), o);
}

}  // namespace chalk::testing
