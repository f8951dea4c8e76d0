// NVIDIA's benchmark clients (bench_formats.h): AIPerf and genai-perf profile exports, and
// trtllm-bench reports.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "bench_internal.h"
#include "chalk/base/error.h"
#include "chalk/calibrate/bench_formats.h"
#include "chalk/io/json_util.h"

namespace chalk::calibrate {

using detail::json;
using detail::Obj;

namespace {

/// Milliseconds per unit of a profile export's time metric (AIPerf display units: "ms" for
/// latencies, "sec" for benchmark_duration; genai-perf: "ms").
double ms_per(const Obj& m, const char* metric) {
  const std::string unit = m.string("unit");
  if (unit == "ns") return 1e-6;
  if (unit == "us") return 1e-3;
  if (unit == "ms") return 1;
  if (unit == "s" || unit == "sec") return 1e3;
  throw InputError(m.field("unit"), std::string("expected ns, us, ms, s or sec for ") + metric + ", got \"" + excerpt(unit) + "\"");
}

/// A metric's mean {"unit", "avg"} in milliseconds; unset when the export has no such metric.
std::optional<double> metric_ms(const Obj& o, const char* key) {
  const auto m = o.opt_object(key);
  if (!m) return std::nullopt;
  const double avg = m->number("avg");
  if (!(avg >= 0)) throw InputError(m->field("avg"), fmt::format("must be >= 0, got {:.6g}", avg));
  const double ms = avg * ms_per(*m, key);
  if (!std::isfinite(ms)) throw InputError(m->field("avg"), fmt::format("out of range: {:.6g} {} is not a finite time", avg, m->string("unit")));
  return ms;
}

/// A metric's mean that must be > 0 (tokens, requests, requests per second).
double positive_avg(const Obj& m, const char* what) {
  const double avg = m.number("avg");
  if (!(avg > 0)) throw InputError(m.field("avg"), fmt::format("must be > 0 {}, got {:.6g}", what, avg));
  return avg;
}

}  // namespace

BenchRun parse_profile_export(std::string_view text, const std::string& source) {
  return profile_export_from_json(detail::parse_json(text, source), source);
}

BenchRun profile_export_from_json(const json& j, const std::string& source) {
  const Obj o(j, source + ": ");
  BenchRun r;
  r.source = source;
  r.ttft_ms = metric_ms(o, "time_to_first_token");
  r.tpot_ms = metric_ms(o, "inter_token_latency");  // per request (latency - TTFT) / (OSL - 1): vLLM's TPOT
  r.e2el_ms = metric_ms(o, "request_latency");
  if (!r.ttft_ms && !r.tpot_ms && !r.e2el_ms) {
    throw InputError(o.field("time_to_first_token"), "missing: the export states none of time_to_first_token, inter_token_latency, request_latency");
  }
  const double isl = positive_avg(o.object("input_sequence_length"), "tokens");
  const double osl = positive_avg(o.object("output_sequence_length"), "tokens");
  const Obj config = o.object("input_config");
  const bool aiperf = config.has("loadgen");
  r.format = aiperf ? "aiperf" : "genai-perf";
  const Obj load = aiperf ? config.object("loadgen") : config;
  // Requests measured: AIPerf's request_count metric, else the count the command asked for.
  std::optional<int64_t> count;
  if (const auto rc = o.opt_object("request_count")) {
    const double n = positive_avg(*rc, "requests");
    if (n > 1e7 || std::round(n) != n) throw InputError(rc->field("avg"), fmt::format("expected a whole number of requests 1..10000000, got {:.6g}", n));
    count = static_cast<int64_t>(n);
  }
  if (!count) count = load.opt_integer_in("request_count", 1, 10'000'000);
  if (!count) count = load.opt_integer_in("num_prompts", 1, 10'000'000);
  if (!count) throw InputError(o.field("request_count"), "missing: expected request_count.avg or input_config's request_count or num_prompts");
  r.num_prompts = r.completed = *count;
  r.total_input_tokens = total_tokens(isl, r.completed);
  r.total_output_tokens = total_tokens(osl, r.completed);
  // The load the client sent.
  const auto rate = load.opt_number("request_rate");
  if (rate && !(*rate > 0)) throw InputError(load.field("request_rate"), fmt::format("must be > 0 requests per second, got {:.6g}", *rate));
  r.max_concurrency = load.opt_integer_in("concurrency", 1, 10'000'000).value_or(0);
  if (!rate && r.max_concurrency == 0) {
    throw InputError(load.field("request_rate"), "missing: the export states neither request_rate nor concurrency; expected the load the client sent");
  }
  r.request_rate_per_s = rate.value_or(0);  // concurrency alone: all at once under the cap
  if (const auto mode = load.opt_string("request_rate_mode")) {
    if (*mode == "constant") {
      r.constant_arrivals = true;
    } else if (*mode != "poisson" && *mode != "concurrency_burst") {
      throw InputError(load.field("request_rate_mode"), "expected constant, poisson or concurrency_burst, got \"" + excerpt(*mode) + "\"");
    }
  }
  if (const auto d = o.opt_object("benchmark_duration")) {
    r.duration_s = positive_avg(*d, "seconds") * ms_per(*d, "benchmark_duration") / 1e3;
  } else if (const auto t = o.opt_object("request_throughput")) {
    r.duration_s = static_cast<double>(r.completed) / positive_avg(*t, "requests per second");
  }
  if (!std::isfinite(r.duration_s)) r.duration_s = 0;  // kept for reference only: never used by the fit
  return r;
}

std::string profile_export_json(const BenchRun& r, bool aiperf) {
  const auto metric = [](double avg, const char* unit) { return json{{"unit", unit}, {"avg", avg}}; };
  json j;
  if (r.ttft_ms) j["time_to_first_token"] = metric(*r.ttft_ms, "ms");
  if (r.tpot_ms) j["inter_token_latency"] = metric(*r.tpot_ms, "ms");
  if (r.e2el_ms) j["request_latency"] = metric(*r.e2el_ms, "ms");
  const double n = static_cast<double>(r.completed);
  j["input_sequence_length"] = metric(static_cast<double>(r.total_input_tokens) / n, "tokens");
  j["output_sequence_length"] = metric(static_cast<double>(r.total_output_tokens) / n, "tokens");
  json load = json::object();
  if (r.request_rate_per_s > 0) load["request_rate"] = r.request_rate_per_s;
  if (r.max_concurrency > 0) load["concurrency"] = r.max_concurrency;
  if (aiperf) {
    j["request_count"] = metric(n, "requests");
    if (r.duration_s > 0) j["benchmark_duration"] = metric(r.duration_s, "sec");
    if (r.request_rate_per_s > 0) load["request_rate_mode"] = r.constant_arrivals ? "constant" : "poisson";
    j["input_config"] = {{"loadgen", load}};
  } else {
    load["request_count"] = r.completed;
    j["input_config"] = load;
  }
  return j.dump(2) + "\n";
}

BenchRun parse_trtllm_report(std::string_view text, const std::string& source) {
  return trtllm_from_json(detail::parse_json(text, source), source);
}

BenchRun trtllm_from_json(const json& j, const std::string& source) {
  const Obj o(j, source + ": ");
  BenchRun r;
  r.source = source;
  r.format = "trtllm-bench";
  r.engine = "trtllm";
  const Obj req = o.object("request_info");
  r.num_prompts = r.completed = req.integer_in("num_requests", 1, 10'000'000);
  const auto mean_tokens = [&](const char* key) {
    const double v = req.number(key);
    if (!(v > 0)) throw InputError(req.field(key), fmt::format("must be > 0 tokens, got {:.6g}", v));
    return v;
  };
  r.total_input_tokens = total_tokens(mean_tokens("avg_input_length"), r.completed);
  r.total_output_tokens = total_tokens(mean_tokens("avg_output_length"), r.completed);
  const Obj perf = o.object("performance");
  r.duration_s = perf.number("total_latency_ms") / 1e3;
  if (!(r.duration_s > 0)) throw InputError(perf.field("total_latency_ms"), fmt::format("must be > 0 ms, got {:.6g}", r.duration_s * 1e3));
  r.e2el_ms = mean_ms(perf, "avg_request_latency_ms");
  if (!r.e2el_ms) throw InputError(perf.field("avg_request_latency_ms"), "missing required field (the mean request latency, ms)");
  if (const auto s = o.opt_object("streaming_metrics")) {
    r.ttft_ms = mean_ms(*s, "avg_ttft_ms");
    r.tpot_ms = mean_ms(*s, "avg_tpot_ms");
  }
  if (const auto w = o.opt_object("world_info")) {
    r.tp = w->integer_in("tp_size", 1, 1 << 20);
    r.chips = w->opt_integer_in("world_size", r.tp, 1 << 20).value_or(r.tp);
    r.max_sequences = w->opt_integer_in("max_batch_size", 1, 1 << 20).value_or(0);
    r.max_batched_tokens = w->opt_integer_in("max_num_tokens", 1, 1 << 20).value_or(0);
  }
  r.request_rate_per_s = 0;  // every request submitted at the start (the report states no rate)
  return r;
}

std::string trtllm_report_json(const BenchRun& r) {
  const double n = static_cast<double>(r.completed);
  json j;
  j["engine"] = {{"model", r.model.empty() ? "unknown" : r.model}, {"backend", "Pytorch"}};
  json world = json::object();
  world["tp_size"] = std::max<int64_t>(r.tp, 1);
  world["pp_size"] = 1;
  world["world_size"] = std::max<int64_t>({r.chips, r.tp, 1});
  world["max_batch_size"] = r.max_sequences > 0 ? json(r.max_sequences) : json(nullptr);
  world["max_num_tokens"] = r.max_batched_tokens > 0 ? json(r.max_batched_tokens) : json(nullptr);
  j["world_info"] = world;
  j["request_info"] = {{"num_requests", r.completed},
                       {"avg_input_length", static_cast<double>(r.total_input_tokens) / n},
                       {"avg_output_length", static_cast<double>(r.total_output_tokens) / n}};
  j["performance"] = {{"total_latency_ms", r.duration_s * 1e3}, {"avg_request_latency_ms", r.e2el_ms.value_or(0)}};
  if (r.ttft_ms || r.tpot_ms) {
    json s = json::object();
    if (r.ttft_ms) s["avg_ttft_ms"] = *r.ttft_ms;
    if (r.tpot_ms) s["avg_tpot_ms"] = *r.tpot_ms;
    j["streaming_metrics"] = s;
  }
  return j.dump(2) + "\n";
}

}  // namespace chalk::calibrate
