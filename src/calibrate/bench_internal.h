// Private to src/calibrate: the field readers the benchmark formats share (bench.cc,
// bench_formats.cc, bench_nvidia.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/calibrate/bench.h"
#include "chalk/io/json_util.h"

namespace chalk::calibrate {

/// The per-request token counts under `key` (vLLM --save-detailed, SGLang --output-details),
/// or empty when absent. Throws InputError naming the key for a non-list, a count that is not
/// an integer >= 0, or fewer counts than `completed`.
std::vector<int64_t> lengths(const detail::Obj& o, const char* key, int64_t completed);

/// A mean in milliseconds under `key`, unset when absent or null. Throws InputError naming
/// the key for a non-number or a value below 0.
std::optional<double> mean_ms(const detail::Obj& o, const char* key);

/// The run's size as vLLM and SGLang both write it (after `completed`): duration (s, > 0),
/// total_input_tokens and total_output_tokens (at least one per completed request), and
/// the optional per-request input_lens and output_lens. Throws InputError naming the field.
void read_run_size(const detail::Obj& o, BenchRun& r);

/// The readers over parsed JSON (parse_bench_file parses once, then tells them apart).
BenchRun vllm_from_json(const detail::json& j, const std::string& source);
BenchRun sglang_from_json(const detail::json& j, const std::string& source);
BenchRun profile_export_from_json(const detail::json& j, const std::string& source);
BenchRun trtllm_from_json(const detail::json& j, const std::string& source);

/// Python's json.dumps output made JSON: the bare words Infinity, -Infinity and NaN outside
/// strings become "inf", "-inf" and null (SGLang writes request_rate = float("inf") so).
std::string python_json(std::string_view text);

/// A whole number of tokens from a client's mean per request x requests, at least one per
/// request (AIPerf, genai-perf and trtllm-bench state means only).
int64_t total_tokens(double mean, int64_t requests);

}  // namespace chalk::calibrate
