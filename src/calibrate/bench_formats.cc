// Telling the benchmark clients' files apart, and SGLang's bench_serving records
// (bench_formats.h).
#include "chalk/calibrate/bench_formats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "bench_internal.h"
#include "chalk/base/error.h"
#include "chalk/io/json_util.h"

namespace chalk::calibrate {

using detail::json;
using detail::Obj;

std::string python_json(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    const auto word = [&](std::string_view w) { return text.substr(i, w.size()) == w; };
    if (word("-Infinity")) {
      out += "\"-inf\"", i += 8;
    } else if (word("Infinity")) {
      out += "\"inf\"", i += 7;
    } else if (word("NaN")) {
      out += "null", i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

int64_t total_tokens(double mean, int64_t requests) {
  const double total = std::round(mean * static_cast<double>(requests));
  if (!(total < 4e18)) return std::numeric_limits<int64_t>::max() / 2;
  return std::max<int64_t>(requests, static_cast<int64_t>(total));
}

namespace {

/// The engine family a bench_serving `backend` talks to (its ASYNC_REQUEST_FUNCS keys:
/// sglang, sglang-native, sglang-oai, sglang-oai-chat, vllm, vllm-chat, lmdeploy, trt,
/// gserver, truss); "" where chalk has no policy for it (the flags say).
std::string engine_of_backend(const std::string& backend) {
  if (backend.rfind("sglang", 0) == 0) return "sglang";
  if (backend.rfind("vllm", 0) == 0) return "vllm";
  if (backend == "trt") return "trtllm";
  return "";
}

enum class Kind { vllm, sglang, profile_export, trtllm, unknown };

Kind kind_of(const json& j) {
  if (!j.is_object()) return Kind::unknown;
  if (j.contains("mean_e2e_latency_ms")) return Kind::sglang;  // vLLM names it mean_e2el_ms
  if (j.contains("performance") && j.contains("request_info")) return Kind::trtllm;
  for (const char* k : {"time_to_first_token", "inter_token_latency", "request_latency"}) {
    if (j.contains(k) && j[k].is_object()) return Kind::profile_export;
  }
  if (j.contains("request_rate")) return Kind::vllm;
  return Kind::unknown;
}

constexpr const char* kExpected =
    "expected vllm bench serve --save-result JSON (request_rate, mean_ttft_ms), SGLang bench_serving --output-file JSONL "
    "(mean_e2e_latency_ms), an AIPerf or genai-perf profile export (time_to_first_token, request_latency) or a trtllm-bench "
    "--report_json report (performance, request_info)";

BenchRun read_one(const json& j, const std::string& source) {
  switch (kind_of(j)) {
    case Kind::vllm: return vllm_from_json(j, source);
    case Kind::sglang: return sglang_from_json(j, source);
    case Kind::profile_export: return profile_export_from_json(j, source);
    case Kind::trtllm: return trtllm_from_json(j, source);
    case Kind::unknown: break;
  }
  throw InputError(source, std::string("unknown benchmark format (a JSON ") + (j.is_object() ? "object" : j.type_name()) +
                               " of no client's keys); " + kExpected);
}

}  // namespace

std::vector<BenchRun> parse_bench_file(std::string_view text, const std::string& source) {
  const std::string clean = python_json(text);
  if (clean.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(source, std::string("empty; ") + kExpected);
  // One JSON value (every client but SGLang), else one a line (SGLang's JSONL: a file whose
  // first line is a whole JSON object of its own). Malformed otherwise, as one document.
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < clean.size();) {
    const std::size_t end = std::min(clean.find('\n', start), clean.size());
    lines.push_back(clean.substr(start, end - start));
    start = end + 1;
  }
  const auto blank = [](const std::string& l) { return l.find_first_not_of(" \t\r") == std::string::npos; };
  std::vector<BenchRun> runs;
  std::optional<json> whole;
  try {
    whole = detail::parse_json(clean, source);
  } catch (const InputError&) {
    std::size_t first = 0;
    while (first < lines.size() && blank(lines[first])) ++first;
    bool jsonl = false;
    try {
      jsonl = first + 1 < lines.size() && detail::parse_json(lines[first], source).is_object();
    } catch (const InputError&) {
    }
    if (!jsonl) throw;
  }
  if (whole) {
    runs.push_back(read_one(*whole, source));
    return runs;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const std::string where = fmt::format("{}:{}", source, i + 1);
    runs.push_back(read_one(detail::parse_json(lines[i], where), where));
  }
  return runs;
}

BenchRun parse_sglang_bench(std::string_view text, const std::string& source) {
  return sglang_from_json(detail::parse_json(python_json(text), source), source);
}

BenchRun sglang_from_json(const json& j, const std::string& source) {
  const Obj o(j, source + ": ");
  BenchRun r;
  r.source = source;
  r.format = "sglang bench_serving";
  if (!o.has("request_rate")) throw InputError(o.field("request_rate"), "missing required field (a number of requests per second, or inf)");
  const json& rate = o.raw("request_rate");
  if (rate.is_string() && rate.get<std::string>() == "inf") {
    r.request_rate_per_s = 0;  // float("inf"): every request at once (get_request)
  } else if (rate.is_number() && rate.get<double>() > 0 && std::isfinite(rate.get<double>())) {
    r.request_rate_per_s = rate.get<double>();
  } else {
    throw InputError(o.field("request_rate"), "expected requests per second > 0 or Infinity, got " + detail::describe(rate));
  }
  if (const auto b = o.opt_number("burstiness")) {
    if (!(*b > 0)) throw InputError(o.field("burstiness"), fmt::format("must be > 0 (1 = Poisson), got {:.6g}", *b));
    r.burstiness = *b;
  }
  r.max_concurrency = o.opt_integer_in("max_concurrency", 1, 10'000'000).value_or(0);
  r.completed = o.integer_in("completed", 1, 10'000'000);
  r.num_prompts = o.opt_integer_in("num_prompts", r.completed, 10'000'000).value_or(r.completed);
  read_run_size(o, r);
  r.ttft_ms = mean_ms(o, "mean_ttft_ms");
  r.tpot_ms = mean_ms(o, "mean_tpot_ms");
  r.itl_ms = mean_ms(o, "mean_itl_ms");
  r.e2el_ms = mean_ms(o, "mean_e2e_latency_ms");
  if (!r.ttft_ms && !r.tpot_ms && !r.itl_ms && !r.e2el_ms) {
    throw InputError(o.field("mean_e2e_latency_ms"), "missing: the record states none of mean_ttft_ms, mean_tpot_ms, mean_itl_ms, mean_e2e_latency_ms");
  }
  if (const auto b = o.opt_string("backend")) r.engine = engine_of_backend(*b);
  return r;
}

std::string sglang_bench_jsonl(const std::vector<BenchRun>& runs) {
  std::string out;
  for (const auto& r : runs) {
    json j;
    j["backend"] = r.engine == "vllm" ? "vllm" : r.engine == "trtllm" ? "trt" : "sglang";
    j["dataset_name"] = "random";
    j["request_rate"] = r.request_rate_per_s > 0 ? r.request_rate_per_s : 0.0;  // 0: replaced by Infinity below
    j["max_concurrency"] = r.max_concurrency > 0 ? json(r.max_concurrency) : json(nullptr);
    j["duration"] = r.duration_s;
    j["completed"] = r.completed;
    j["total_input_tokens"] = r.total_input_tokens;
    j["total_output_tokens"] = r.total_output_tokens;
    if (r.e2el_ms) j["mean_e2e_latency_ms"] = *r.e2el_ms;
    if (r.ttft_ms) j["mean_ttft_ms"] = *r.ttft_ms;
    if (r.tpot_ms) j["mean_tpot_ms"] = *r.tpot_ms;
    if (r.itl_ms) j["mean_itl_ms"] = *r.itl_ms;
    if (!r.input_lens.empty()) j["input_lens"] = r.input_lens;
    if (!r.output_lens.empty()) j["output_lens"] = r.output_lens;
    std::string line = j.dump();
    if (r.request_rate_per_s <= 0) {
      const std::string key = "\"request_rate\":0.0";
      line.replace(line.find(key), key.size(), "\"request_rate\":Infinity");  // Python's json.dumps(float("inf"))
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace chalk::calibrate
