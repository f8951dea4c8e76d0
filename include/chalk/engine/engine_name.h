// Serving engines by name: "vllm", "sglang", "trtllm", each optionally with its release
// ("vllm-0.10"; sim::engine_policy reads the release).
#pragma once

#include <string_view>

namespace chalk {

/// The engine a name stands for, before any release: "vllm" of "vllm-0.10" and of "vllm".
/// Names of other tools pass through up to their first dash ("llm" of "llm-foundry", which
/// no serving-engine check matches).
inline std::string_view engine_family(std::string_view engine) { return engine.substr(0, engine.find('-')); }

/// Whether a name (with or without a release) is one of the serving engines chalk models:
/// vLLM, SGLang or TensorRT-LLM.
inline bool is_serving_engine(std::string_view engine) {
  const std::string_view f = engine_family(engine);
  return f == "vllm" || f == "sglang" || f == "trtllm";
}

}  // namespace chalk
