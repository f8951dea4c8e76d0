// Reading benchmark runs for `chalk calibrate` (bench.h).
#include "chalk/calibrate/bench.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/json_util.h"
#include "bench_internal.h"

namespace chalk::calibrate {
using detail::json;
using detail::Obj;

std::vector<int64_t> lengths(const Obj& o, const char* key, int64_t completed) {
  std::vector<int64_t> out;
  if (!o.has(key)) return out;
  const json& v = o.raw(key);
  if (!v.is_array()) throw InputError(o.field(key), "expected a list of token counts, got " + detail::describe(v));
  for (const auto& x : v) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0) {
      throw InputError(o.field(key), "expected token counts (integers >= 0), got " + detail::describe(x));
    }
    out.push_back(x.get<int64_t>());
  }
  // vLLM (and SGLang) keep one length per request sent; only a list of that size can be used.
  if (static_cast<int64_t>(out.size()) < completed) {
    throw InputError(o.field(key), fmt::format("holds {} lengths, expected one per completed request ({})", out.size(), completed));
  }
  return out;
}

std::optional<double> mean_ms(const Obj& o, const char* key) {
  const auto v = o.opt_number(key);
  if (v && *v < 0) throw InputError(o.field(key), fmt::format("must be >= 0 ms, got {:.6g}", *v));
  return v;
}

void read_run_size(const Obj& o, BenchRun& r) {
  r.duration_s = o.number("duration");
  if (!(r.duration_s > 0)) throw InputError(o.field("duration"), fmt::format("must be > 0 seconds, got {:.6g}", r.duration_s));
  r.total_input_tokens = o.integer_in("total_input_tokens", r.completed, std::numeric_limits<int64_t>::max() / 2);
  r.total_output_tokens = o.integer_in("total_output_tokens", r.completed, std::numeric_limits<int64_t>::max() / 2);
  r.input_lens = lengths(o, "input_lens", r.completed);
  r.output_lens = lengths(o, "output_lens", r.completed);
}

BenchRun parse_vllm_bench(std::string_view text, const std::string& source) { return vllm_from_json(detail::parse_json(text, source), source); }

BenchRun vllm_from_json(const json& j, const std::string& source) {
  const Obj o(j, source + ": ");
  BenchRun r;
  r.source = source;
  r.format = "vllm bench serve";
  if (!o.has("request_rate")) throw InputError(o.field("request_rate"), "missing required field (a number of requests per second, or \"inf\")");
  const json& rate = o.raw("request_rate");
  if (rate.is_string() && rate.get<std::string>() == "inf") {
    r.request_rate_per_s = 0;
  } else if (rate.is_number() && rate.get<double>() > 0 && std::isfinite(rate.get<double>())) {
    r.request_rate_per_s = rate.get<double>();
  } else {
    throw InputError(o.field("request_rate"), "expected requests per second > 0 or \"inf\", got " + detail::describe(rate));
  }
  if (const auto b = o.opt_number("burstiness")) {
    if (!(*b > 0)) throw InputError(o.field("burstiness"), fmt::format("must be > 0 (1 = Poisson), got {:.6g}", *b));
    r.burstiness = *b;
  }
  r.max_concurrency = o.opt_integer_in("max_concurrency", 1, 10'000'000).value_or(0);
  r.model_id = o.opt_string("model_id").value_or("");
  r.num_prompts = o.integer_in("num_prompts", 1, 10'000'000);
  r.completed = o.integer_in("completed", 1, r.num_prompts);
  read_run_size(o, r);
  r.ttft_ms = mean_ms(o, "mean_ttft_ms");
  r.tpot_ms = mean_ms(o, "mean_tpot_ms");
  r.itl_ms = mean_ms(o, "mean_itl_ms");
  r.e2el_ms = mean_ms(o, "mean_e2el_ms");
  if (!r.ttft_ms && !r.tpot_ms && !r.itl_ms && !r.e2el_ms) {
    throw InputError(o.field("mean_ttft_ms"), "missing: the file states none of mean_ttft_ms, mean_tpot_ms, mean_itl_ms, mean_e2el_ms");
  }
  return r;
}

std::string vllm_bench_json(const BenchRun& r) {
  json j;
  j["request_rate"] = r.request_rate_per_s > 0 ? json(r.request_rate_per_s) : json("inf");
  j["burstiness"] = r.burstiness;
  j["max_concurrency"] = r.max_concurrency > 0 ? json(r.max_concurrency) : json(nullptr);
  j["num_prompts"] = r.num_prompts;
  j["completed"] = r.completed;
  j["duration"] = r.duration_s;
  j["total_input_tokens"] = r.total_input_tokens;
  j["total_output_tokens"] = r.total_output_tokens;
  if (!r.input_lens.empty()) j["input_lens"] = r.input_lens;
  if (!r.output_lens.empty()) j["output_lens"] = r.output_lens;
  if (r.ttft_ms) j["mean_ttft_ms"] = *r.ttft_ms;
  if (r.tpot_ms) j["mean_tpot_ms"] = *r.tpot_ms;
  if (r.itl_ms) j["mean_itl_ms"] = *r.itl_ms;
  if (r.e2el_ms) j["mean_e2el_ms"] = *r.e2el_ms;
  return j.dump(2) + "\n";
}

namespace {
/// Whether two runs state the same setup and traffic (everything but the metrics and the
/// source): rows of one measured run, one per metric.
bool same_run(const BenchRun& a, const BenchRun& b) {
  return a.request_rate_per_s == b.request_rate_per_s && a.num_prompts == b.num_prompts && a.total_input_tokens == b.total_input_tokens &&
         a.total_output_tokens == b.total_output_tokens && a.cached_tokens == b.cached_tokens && a.constant_arrivals == b.constant_arrivals &&
         a.gpu_memory_utilization == b.gpu_memory_utilization && a.kv_offload_gb == b.kv_offload_gb && a.model == b.model && a.hardware == b.hardware && a.engine == b.engine &&
         a.chips == b.chips && a.tp == b.tp && a.max_batched_tokens == b.max_batched_tokens && a.max_sequences == b.max_sequences;
}
}  // namespace

std::vector<BenchRun> runs_from_measurements(const std::vector<Measurement>& rows, int64_t& skipped) {
  std::vector<BenchRun> out;
  skipped = 0;
  for (const auto& m : rows) {
    const bool metric = m.metric == "ttft_ms" || m.metric == "tpot_ms" || m.metric == "itl_ms" || m.metric == "e2e_s";
    if (m.kind != "serving" || !m.request_rate_per_s || !metric || !m.input_tokens || !m.output_tokens) {
      ++skipped;
      continue;
    }
    BenchRun r;
    r.format = "measurements";
    r.source = (m.file.empty() ? std::string("measurements") : m.file) + ": " + m.id;
    r.request_rate_per_s = *m.request_rate_per_s;
    r.num_prompts = r.completed = m.requests.value_or(1000);
    // input_tokens is the mean prompt, its cached tokens included (docs/file-formats.md).
    r.total_input_tokens = r.num_prompts * *m.input_tokens;
    r.cached_tokens = m.cached_tokens.value_or(0);
    r.constant_arrivals = m.arrivals == "constant";
    r.gpu_memory_utilization = m.gpu_memory_utilization.value_or(0);
    r.kv_offload_gb = m.kv_offload_gb.value_or(0);
    r.total_output_tokens = r.num_prompts * *m.output_tokens;
    r.duration_s = static_cast<double>(r.num_prompts) / r.request_rate_per_s;  // not used by the fit
    if (m.metric == "ttft_ms") r.ttft_ms = m.value;
    if (m.metric == "tpot_ms") r.tpot_ms = m.value;
    if (m.metric == "itl_ms") r.itl_ms = m.value;
    if (m.metric == "e2e_s") r.e2el_ms = m.value * 1e3;
    r.model = m.model;
    r.hardware = m.hardware;
    r.engine = m.engine;
    r.chips = m.chips.value_or(0);
    r.tp = m.tp.value_or(0);
    r.max_batched_tokens = m.max_batched_tokens.value_or(0);
    r.max_sequences = m.max_sequences.value_or(0);
    // A row of the same run with another metric joins it: one simulation, several means (a
    // load stage's TTFT, TPOT and E2E rows, as the vLLM load suite writes them). It joins the
    // first run read with the same setup and traffic that lacks its metric, wherever its rows
    // stand in the file: a file sorted by metric pairs its rows as one sorted by run does, and
    // repeated runs (the same metric twice) stay apart.
    const auto join = [](std::optional<double>& into, const std::optional<double>& v) {
      if (v && into) return false;  // the same metric twice: another run
      if (v) into = v;
      return true;
    };
    bool joined = false;
    for (BenchRun& prev : out) {
      if (!same_run(prev, r)) continue;
      BenchRun merged = prev;
      if (join(merged.ttft_ms, r.ttft_ms) && join(merged.tpot_ms, r.tpot_ms) && join(merged.itl_ms, r.itl_ms) &&
          join(merged.e2el_ms, r.e2el_ms)) {
        merged.source += "+" + m.id;
        prev = std::move(merged);
        joined = true;
        break;
      }
    }
    if (!joined) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace chalk::calibrate
