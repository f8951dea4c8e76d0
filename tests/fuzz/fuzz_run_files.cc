// Fuzzes the readers of a user's run files (issue 29 and 31): `chalk calibrate`'s reader of
// `vllm bench serve --save-result` JSON (parse_vllm_bench, src/calibrate/bench.cc), its
// content-detecting reader of every client's file (parse_bench_file: SGLang bench_serving
// JSONL, AIPerf / genai-perf profile exports, trtllm-bench reports; src/calibrate/
// bench_formats.cc, bench_nvidia.cc) and `chalk fleet`'s fleet CSV (parse_fleet_csv,
// src/sim/fleet.cc). The first byte chooses the reader (% 3 == 0: the fleet CSV, 1: the vLLM
// JSON, 2: any client's file); the rest is the file. The one allowed failure is
// chalk::InputError, whose message must be one line of at most 1,024 bytes. An accepted file
// holds what the commands rely on: fleet rows with a rate > 0, 1..10,000,000 requests, lengths
// >= 1 and a TTFT or TPOT target > 0, no model twice; a benchmark run with completed >= 1,
// token totals >= completed, a finite rate >= 0, a finite duration >= 0 and finite
// non-negative means, at least one of them.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "chalk/base/error.h"
#include "chalk/calibrate/bench.h"
#include "chalk/calibrate/bench_formats.h"
#include "chalk/sim/fleet.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int reader = data[0] % 3;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto check_run = [](const chalk::calibrate::BenchRun& run) {
    CHALK_FUZZ_CHECK(run.completed >= 1);
    CHALK_FUZZ_CHECK(run.total_input_tokens >= run.completed && run.total_output_tokens >= run.completed);
    CHALK_FUZZ_CHECK(chalk::fuzz::finite_nonneg(run.request_rate_per_s));
    CHALK_FUZZ_CHECK(chalk::fuzz::finite_nonneg(run.duration_s));
    CHALK_FUZZ_CHECK(run.ttft_ms || run.tpot_ms || run.itl_ms || run.e2el_ms);
    for (const auto* m : {&run.ttft_ms, &run.tpot_ms, &run.itl_ms, &run.e2el_ms}) {
      if (*m) CHALK_FUZZ_CHECK(chalk::fuzz::finite_nonneg(**m));
    }
  };
  try {
    if (reader == 0) {
      const auto rows = chalk::sim::parse_fleet_csv(text, "fuzz.csv");
      CHALK_FUZZ_CHECK(!rows.empty());
      std::set<std::string> seen;
      for (const auto& r : rows) {
        CHALK_FUZZ_CHECK(!r.model.empty() && seen.insert(r.model).second);
        CHALK_FUZZ_CHECK(std::isfinite(r.rate_per_s) && r.rate_per_s > 0);
        CHALK_FUZZ_CHECK(r.requests >= 1 && r.requests <= 10000000);
        CHALK_FUZZ_CHECK(r.ttft_slo_s || r.tpot_slo_s);
        if (r.ttft_slo_s) CHALK_FUZZ_CHECK(std::isfinite(*r.ttft_slo_s) && *r.ttft_slo_s > 0);
        if (r.tpot_slo_s) CHALK_FUZZ_CHECK(std::isfinite(*r.tpot_slo_s) && *r.tpot_slo_s > 0);
      }
    } else if (reader == 1) {
      check_run(chalk::calibrate::parse_vllm_bench(text, "fuzz.json"));
    } else {
      const auto runs = chalk::calibrate::parse_bench_file(text, "fuzz.json");
      CHALK_FUZZ_CHECK(!runs.empty());
      for (const auto& run : runs) check_run(run);
    }
  } catch (const chalk::InputError& e) {
    const std::string w = e.what();
    CHALK_FUZZ_CHECK(w.size() <= 1024 && w.find('\n') == std::string::npos);
  }
  return 0;
}
