// The benchmark clients of the other engines, read for `chalk calibrate` (docs/file-formats.md,
// "Benchmark results for chalk calibrate"), and the one entry that tells the formats apart by
// their content. Each reader gives the same BenchRun as parse_vllm_bench (bench.h): the traffic
// the client sent and the means it measured, in milliseconds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chalk/calibrate/bench.h"

namespace chalk::calibrate {

/// Reads one benchmark result file of any client calibrate knows, told apart by content (never
/// by the file's name), one run per JSON object:
/// - a JSON object with `mean_e2e_latency_ms`: SGLang's bench_serving record
///   (parse_sglang_bench); several such objects one a line (its --output-file JSONL, which
///   appends a line per run): one run each, sources "FILE:LINE";
/// - an object with `request_rate` (and no `mean_e2e_latency_ms`): `vllm bench serve
///   --save-result` (parse_vllm_bench);
/// - an object with a `time_to_first_token`, `inter_token_latency` or `request_latency`
///   object: an AIPerf or genai-perf profile export (parse_profile_export);
/// - an object with `performance` and `request_info`: a trtllm-bench report
///   (parse_trtllm_report).
/// Python's JSON writer puts the bare words Infinity, -Infinity and NaN where a float is not
/// finite (SGLang's default request_rate, float("inf")): they are read as "inf", "-inf" and
/// null. Throws InputError(source) for an empty file, malformed JSON, or an object of none of
/// the formats ("unknown benchmark format: expected ..."), and the readers' errors.
std::vector<BenchRun> parse_bench_file(std::string_view text, const std::string& source);

/// One record of `python -m sglang.bench_serving --output-file` (sgl-project/sglang
/// @0033168f, python/sglang/bench_serving.py, benchmark(): `result`, merged with
/// `result_details` under --output-details): request_rate (requests/s, or "inf": every request
/// at once), max_concurrency (null = none), duration (s), completed, total_input_tokens,
/// total_output_tokens, mean_ttft_ms, mean_tpot_ms, mean_itl_ms, mean_e2e_latency_ms (each
/// optional, at least one), and input_lens / output_lens under --output-details. num_prompts
/// and burstiness where a later release writes them (else completed and 1, Poisson: its
/// get_request draws exponential gaps). `backend` names the server: "sglang*" -> engine
/// sglang, "vllm*" -> vllm, "trt" -> trtllm, another: the flags'. Throws InputError naming
/// `source` and the field, as parse_vllm_bench.
BenchRun parse_sglang_bench(std::string_view text, const std::string& source);

/// An AIPerf `profile_export_aiperf.json` (ai-dynamo/aiperf @db4f6397,
/// aiperf/common/models/export_models.py JsonExportData, written by
/// aiperf/exporters/json_exporter.py) or a genai-perf `profile_export_genai_perf.json`
/// (triton-inference-server/perf_analyzer @09628cd6, genai-perf/genai_perf/export_data/
/// json_exporter.py: the statistics merged with "input_config" = the command's arguments),
/// which AIPerf's layout copies. Each metric is {"unit", "avg", "p50", ...}:
/// time_to_first_token -> ttft_ms, inter_token_latency -> tpot_ms (both tools define it per
/// request as (request_latency - time_to_first_token) / (output_sequence_length - 1):
/// aiperf/metrics/types/inter_token_latency_metric.py, vLLM's TPOT), request_latency ->
/// e2el_ms (at least one); units "ns", "us", "ms", "s" or "sec". input_sequence_length and
/// output_sequence_length (avg tokens) are required. Requests: request_count.avg (AIPerf),
/// else input_config's request_count or num_prompts (genai-perf). The load: AIPerf's
/// input_config.loadgen, genai-perf's input_config: request_rate (requests/s; AIPerf's
/// request_rate_mode "constant" -> one every 1 / rate s, else Poisson) and concurrency (the
/// client's cap; alone: every request at once under the cap, as vLLM's "inf"); neither is an
/// error. benchmark_duration (s), else requests / request_throughput, is kept for reference.
/// format "aiperf" when input_config holds loadgen, else "genai-perf". Throws InputError
/// naming `source` and the field ("p.json: time_to_first_token.unit: expected ns, us, ms, s
/// or sec, got \"min\"").
BenchRun parse_profile_export(std::string_view text, const std::string& source);

/// A `trtllm-bench throughput --report_json` report (NVIDIA/TensorRT-LLM @02499765,
/// tensorrt_llm/bench/dataclasses/reporting.py ReportUtility.get_statistics_dict):
/// request_info.num_requests, avg_input_length, avg_output_length (tokens);
/// performance.total_latency_ms (first start to last end) and avg_request_latency_ms ->
/// e2el_ms; streaming_metrics.avg_ttft_ms and avg_tpot_ms under --streaming; world_info
/// tp_size -> tp, world_size -> chips, max_batch_size -> max_sequences, max_num_tokens ->
/// max_batched_tokens (each optional but tp_size); engine trtllm. The report does not state
/// the load: trtllm-bench submits every request at the start (rate "inf"); a run with
/// --concurrency is read as the same. Throws InputError naming `source` and the field.
BenchRun parse_trtllm_report(std::string_view text, const std::string& source);

/// The files of `runs` as each client writes them (the keys the readers above read, nothing
/// else): for tests, and to turn any run into another client's layout. SGLang: one JSON line
/// per run, a rate of 0 as Python's bare Infinity.
std::string sglang_bench_jsonl(const std::vector<BenchRun>& runs);
/// `aiperf`: AIPerf's layout (input_config.loadgen, request_count, benchmark_duration); else
/// genai-perf's (input_config flat, request_count there).
std::string profile_export_json(const BenchRun& run, bool aiperf);
/// A trtllm-bench report of `run` (its tp, chips, max_sequences and max_batched_tokens when
/// set; streaming_metrics when it has a TTFT or TPOT).
std::string trtllm_report_json(const BenchRun& run);

}  // namespace chalk::calibrate
