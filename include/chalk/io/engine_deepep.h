// Which engines run DeepEP's all-to-all for which models: data/engines/deepep.json, read from
// each engine's own model files (review 11 H2). `chalk plan`'s launch files name an engine's
// DeepEP backend only where this says it runs (sim::LaunchTarget::no_deepep).
#pragma once

#include <cstdint>
#include <string>

namespace chalk {

/// Why engine `engine` ("vllm", "sglang") does not run DeepEP's all-to-all for a model of HF
/// model_type `model_type` and hidden size `hidden_size` (d_model; 0: unknown, not checked),
/// one line ending with its source; "" when it does. Reasons: the engine's table does not
/// support the model_type (SGLang lists the model files read: gpt_oss.py raises
/// "forward_deepep branch not implemented yet"; an unlisted type is not assumed to run it), or
/// the hidden size is not one DeepEP's low-latency kernels are compiled for and the engine
/// does not pad it (SGLang; vLLM rounds up to the next listed size). An engine the table does
/// not name gets a line saying so. Never throws on a built binary (the table is embedded and
/// checked by engine_deepep_test).
std::string engine_deepep_problem(const std::string& engine, const std::string& model_type, int64_t hidden_size);

}  // namespace chalk
