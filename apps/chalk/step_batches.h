// The batches of `chalk step` (docs/simulator.md, "chalk as a step-time predictor"): the
// compact flags of one batch (--prefill 512:0,256:1024 --decode 1024x32) and a JSON list of
// many, in chalk's own form or as BLIS and SGLang's simulator describe a step's batch.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/engine/step_batch.h"

namespace chalk::cli {

/// --prefill: a comma list of chunks TOKENS[:CACHED] (512:0,256:1024; CACHED 0 when left
/// out); --decode: a comma list of CONTEXT[xCOUNT] (1024x32,2048: 32 decodes at 1,024 and
/// one at 2,048). Either may be empty. Throws InputError naming the flag, the item and the
/// form expected (values are checked by check_step_batch).
StepBatch parse_step_flags(const std::string& prefill, const std::string& decode);

/// Many batches from JSON: an array of batches, or an object {"batches": [...]}, or one
/// batch object. A batch is one of:
///  - chalk's: {"prefill": [{"tokens": 512, "cached": 0}, ...] (or [[512, 0], ...]),
///              "decode": [1024, 2048, ...] (or [{"context": 1024}, ...])};
///  - BLIS's StepConfig (inference-sim sim/latency/roofline.go): {"prefill_requests":
///    [{"progress_index": P, "num_new_prefill_tokens": N}], "decode_requests":
///    [{"progress_index": C, "num_new_decode_tokens": 1}]}: a chunk of N after P cached, a
///    decode at context C (num_new_decode_tokens must be 1);
///  - SGLang simulator's ScheduleBatch (tools/sglang-simulator, time_predictor):
///    {"reqs": [{"extend_length": N, "past_kv_length": P}]}: extend_length 1 is a decode at
///    context P (SGLang's is_decode), more a chunk of N after P.
/// Throws InputError naming the item ("batches[2].decode_requests[0].progress_index") for
/// anything else: a missing or non-integer count, an unknown key, a second form in one batch.
std::vector<StepBatch> parse_step_batches(const nlohmann::json& j);

/// The JSON text of --batches: itself when it starts with '[' or '{' (after spaces), else
/// the file it names ("-": standard input). Throws InputError("--batches") for a file that
/// cannot be read or text that is not JSON.
nlohmann::json read_step_batches(const std::string& text);

}  // namespace chalk::cli
