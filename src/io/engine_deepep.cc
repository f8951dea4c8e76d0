// Which engines run DeepEP's all-to-all for which models (engine_deepep.h):
// data/engines/deepep.json, read from each engine's model files (review 11 H2: SGLang's
// gpt_oss.py raises "forward_deepep branch not implemented yet").
#include "chalk/io/engine_deepep.h"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"

namespace chalk {

/// data/engines/deepep.json, parsed once; a missing or malformed table is a build defect
/// (engine_deepep_test reads it), so it throws InputError naming the file.
static const nlohmann::json& deepep_table() {
  static const nlohmann::json table = [] {
    const auto text = detail::embedded_file("engines/deepep.json");
    if (!text) throw InputError("data/engines/deepep.json", "is not embedded; expected the engines' DeepEP support table");
    return nlohmann::json::parse(*text);
  }();
  return table;
}

std::string engine_deepep_problem(const std::string& engine, const std::string& model_type, int64_t hidden_size) {
  const nlohmann::json& table = deepep_table();
  const auto& engines = table.at("engines");
  if (!engines.contains(engine)) return "chalk's table (data/engines/deepep.json) has no DeepEP entry for " + engine;
  const auto& e = engines.at(engine);
  const std::string name = engine == "vllm" ? "vLLM" : engine == "sglang" ? "SGLang" : engine;
  const std::string type = model_type.empty() ? std::string("this model") : model_type;
  if (!e.at("all_models").get<bool>()) {
    const auto& models = e.at("models");
    if (!models.contains(model_type)) {
      return name + "'s DeepEP path for " + type + " is not in chalk's table (data/engines/deepep.json lists the model files read)";
    }
    const auto& m = models.at(model_type);
    if (!m.at("deepep").get<bool>()) return name + " runs no DeepEP for " + type + " (" + m.at("source").get<std::string>() + ")";
  }
  const auto& ll = table.at("low_latency_hidden_sizes");
  const auto sizes = ll.at("sizes").get<std::vector<int64_t>>();
  const bool listed = std::find(sizes.begin(), sizes.end(), hidden_size) != sizes.end();
  const bool padded = e.at("pads_hidden_size").get<bool>() && hidden_size <= sizes.back();
  if (hidden_size > 0 && !listed && !padded) {
    const std::string pad = e.at("pads_hidden_size").get<bool>() ? " (" + name + " pads only up to the largest, " + std::to_string(sizes.back()) + ")"
                                                                  : " and " + name + " does not pad it";
    return "DeepEP's low-latency kernels have no hidden size " + std::to_string(hidden_size) + pad + " (" + ll.at("source").get<std::string>() + ")";
  }
  return "";
}

}  // namespace chalk
