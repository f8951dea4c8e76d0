// Benchmark runs a user made with an engine's own client, read for `chalk calibrate`
// (docs/file-formats.md, "Benchmark results for chalk calibrate"): `vllm bench serve
// --save-result` JSON, and the serving rows under load of chalk's measurement CSV. The other
// engines' clients (SGLang, AIPerf / genai-perf, trtllm-bench): bench_formats.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/validate/measurement.h"

namespace chalk::calibrate {

/// One benchmark run: the traffic the client sent and the means it measured. Times in the
/// client's own units (milliseconds) as the file states them.
struct BenchRun {
  std::string source;              ///< the file (and row id or line) it came from, for messages
  /// The client that wrote it: "vllm bench serve", "sglang bench_serving", "aiperf",
  /// "genai-perf", "trtllm-bench" or "measurements" (chalk's CSV).
  std::string format;
  /// Poisson (or gamma) arrivals per second; 0 = every request at once (vLLM's "inf").
  double request_rate_per_s = 0;
  double burstiness = 1;           ///< vLLM's gamma shape of the gaps (1 = Poisson; CV = 1/sqrt(burstiness))
  int64_t max_concurrency = 0;     ///< requests in flight at most (the client's cap); 0 = none
  int64_t num_prompts = 0;         ///< requests sent
  int64_t completed = 0;           ///< requests that finished
  double duration_s = 0;           ///< first request to last finish
  int64_t total_input_tokens = 0, total_output_tokens = 0;  ///< over the completed requests
  /// Per-request lengths, when the file keeps them (vLLM --save-detailed); else empty and
  /// every request takes the mean length (totals / completed).
  std::vector<int64_t> input_lens, output_lens;
  /// The measured means (vLLM mean_ttft_ms, mean_tpot_ms, mean_itl_ms, mean_e2el_ms); unset
  /// when the file does not state one.
  std::optional<double> ttft_ms, tpot_ms, itl_ms, e2el_ms;
  /// The setup, where the file states it (chalk's measurement CSV); empty or 0 for vLLM's
  /// JSON, which states none (the flags of `chalk calibrate` give it).
  std::string model, hardware, engine;
  /// The model the client names (vLLM's `model_id`, a HF repo id as served), "" when the
  /// file names none: `chalk calibrate` takes it when -m is not given and refuses a -m of
  /// another architecture.
  std::string model_id;
  int64_t chips = 0, tp = 0, max_batched_tokens = 0, max_sequences = 0;
  /// A CSV row's further setup, as validate reads it: arrivals one every 1 / rate seconds
  /// (`arrivals` constant) instead of Poisson; the mean prompt tokens served from the prefix
  /// cache (`cached_tokens`, within the mean prompt); the HBM fraction for weights and KV
  /// (`gpu_memory_utilization`; 0 = the flags'); host memory for evicted KV blocks, GB per
  /// replica (`kv_offload_gb`; 0 = none stated): runs differing only there are two runs.
  bool constant_arrivals = false;
  int64_t cached_tokens = 0;
  double gpu_memory_utilization = 0, kv_offload_gb = 0;
};

/// Reads the JSON `vllm bench serve --save-result` writes (vllm-project/vllm,
/// vllm/benchmarks/serve.py: result_json = the run's settings merged with
/// benchmark_result): request_rate (a number or "inf"), burstiness, max_concurrency (null =
/// none), num_prompts, completed, duration (s), total_input_tokens, total_output_tokens,
/// mean_ttft_ms, mean_tpot_ms, mean_itl_ms, mean_e2el_ms (vLLM >= 0.6; each optional, at
/// least one required), and input_lens / output_lens when --save-detailed kept them. Other
/// keys (median_*, p99_*, std_*, model_id, date, ...) are read by nothing. Throws InputError
/// naming `source` and the field for malformed JSON, a required field that is missing or of
/// the wrong type ("run.json: completed: expected an integer >= 1, got \"ten\""), or a value
/// out of range.
BenchRun parse_vllm_bench(std::string_view text, const std::string& source);

/// The JSON of `run` in vLLM's format (the keys parse_vllm_bench reads, the means as
/// mean_*_ms): for tests and for turning any source into what vLLM writes.
std::string vllm_bench_json(const BenchRun& run);

/// The runs of a measurement file (validate/measurement.h) that calibrate can use: rows of
/// kind serving with request_rate_per_s and a metric among ttft_ms, tpot_ms, itl_ms and e2e_s
/// with their stated model, hardware, chips, tp, engine and knobs; rows that state the same run
/// (every setup and traffic column equal) with different metrics are one run with several
/// means (its source "file: ID1+ID2"), in any order: a row joins the first run read with its
/// setup that lacks its metric (the same metric twice starts another run). `skipped` counts
/// the other rows.
std::vector<BenchRun> runs_from_measurements(const std::vector<Measurement>& rows, int64_t& skipped);

}  // namespace chalk::calibrate
