// The vLLM load suite (issue 29; data/measurements/vllm-load-suite.csv, written by
// tools/suite/vllm_load_suite.py from the BLIS project's published runs): the file reads as
// its source says, every row is predicted, and the medians of docs/accuracy.md ("vLLM load
// suite") do not get worse.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "chalk/validate/measurement.h"
#include "chalk/validate/validate.h"

namespace chalk {
namespace {

MeasurementFile suite_file() {
  std::ifstream in(std::string(CHALK_SOURCE_DIR) + "/data/measurements/vllm-load-suite.csv");
  std::stringstream text;
  text << in.rdbuf();
  return parse_measurements(text.str(), "vllm-load-suite.csv");
}

const Measurement& suite_row(const MeasurementFile& f, const std::string& id) {
  for (const auto& m : f.rows) {
    if (m.id == id) return m;
  }
  throw std::runtime_error("no row " + id);
}

TEST(ValidateSuite, RowsReadAsTheirSourceStates) {
  const MeasurementFile f = suite_file();
  // 16 experiments less the 3 overloaded reasoning runs: 8 of two stages, 5 of one, 21
  // stages x (TTFT, E2E, TPOT).
  ASSERT_EQ(f.rows.size(), 63u);
  // Llama-2-70B TP4 "general", stage 0 (results/stage_0_lifecycle_metrics.json): 8/s for
  // 600 s = 4,800 requests, prompt_len mean 574.91 -> 575, profile output_len 248, TTFT mean
  // 0.0573892 s, request_latency mean 4.678399 s. TPOT = (4.678399 - 0.0573892) / 247 =
  // 18.7085 ms; the file's reported time_per_output_token (9.294 ms) is half of it (two
  // stream events per token). Cached: (575 - 1) // 16 x 16 = 560.
  const Measurement& tpot = suite_row(f, "VLS-L2-70B-TP4-GENERAL-R8-TPOT");
  const Measurement& ttft = suite_row(f, "VLS-L2-70B-TP4-GENERAL-R8-TTFT");
  const Measurement& e2e = suite_row(f, "VLS-L2-70B-TP4-GENERAL-R8-E2E");
  EXPECT_NEAR(tpot.value, 18.7085, 1e-4);
  EXPECT_NEAR(ttft.value, 57.3892, 1e-4);
  EXPECT_NEAR(e2e.value, 4.6784, 1e-4);
  EXPECT_EQ(tpot.requests, 4800);
  EXPECT_EQ(tpot.input_tokens, 575);
  EXPECT_EQ(tpot.cached_tokens, 560);
  EXPECT_EQ(tpot.output_tokens, 248);
  EXPECT_EQ(tpot.arrivals, "constant");
  EXPECT_EQ(tpot.engine, "vllm-0.15.1");
  // Every TPOT row is its stage's (E2E - TTFT) / (output - 1).
  for (const auto& m : f.rows) {
    if (m.metric != "tpot_ms") continue;
    const std::string stage = m.id.substr(0, m.id.size() - 5);
    const double want = (suite_row(f, stage + "-E2E").value - suite_row(f, stage + "-TTFT").value / 1e3) / static_cast<double>(*m.output_tokens - 1);
    EXPECT_NEAR(m.value, want * 1e3, 1e-4 * m.value) << m.id;
  }
}

// Sanitizer builds run the 21 stages' simulations (up to 12,000 requests each) about 4x
// slower than release's 2.5 s: the guard runs in the release tree.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The accuracy guard of the suite: the medians of |error| per metric in docs/accuracy.md
// when the rows came (TTFT 31.0%, signed -31%; TPOT 11.9%, +12%; E2E 11.8%, +11%; all
// 13.8%). A change that makes any of them worse fails here; one that improves them should
// lower these figures and regenerate docs/accuracy.md with scripts/accuracy.
TEST(ValidateSuite, MedianErrorPerMetricDoesNotGetWorse) {
  if (kSanitized) GTEST_SKIP() << "release tree only (2.5 s of simulation)";
  const ValidationReport r = validate_measurements(suite_file().rows);
  std::map<std::string, std::vector<double>> abs_error;
  std::vector<double> all;
  for (const auto& p : r.rows) {
    ASSERT_EQ(p.status, RowStatus::predicted) << p.id << ": " << p.reason;
    abs_error[p.metric].push_back(std::fabs(p.error));
    all.push_back(std::fabs(p.error));
  }
  ASSERT_EQ(all.size(), 63u);
  // Scheduling one step ahead (EnginePolicy::schedule_ahead) took TTFT from 31.0% to 7.3%
  // and all from 13.8% to 10.6%; E2E went from 11.8% to 12.2%: each request now pays the
  // step it waits for, and the decode step's own +12% (TPOT, not yet explained) is no longer
  // offset by a TTFT that was a step too short.
  // Then vLLM's 16-bit GEMMs streamed at their marginal rate beside the kernel floor
  // (engine/matmul_rate.h, weight_stream_fraction: Llama-2-70B TP4 weights 12.9 -> 11.8 ms a
  // step): TTFT 7.3% -> 3.1%, TPOT 11.9% -> 5.2% (signed +12% -> +5%), E2E 12.2% -> 5.1%,
  // all 10.6% -> 5.0%.
  EXPECT_LE(percentile(abs_error["ttft_ms"], 0.5), 0.031);
  EXPECT_LE(percentile(abs_error["tpot_ms"], 0.5), 0.052);
  EXPECT_LE(percentile(abs_error["e2e_s"], 0.5), 0.052);
  EXPECT_LE(percentile(all, 0.5), 0.050);
  // Issue 29's goal, per metric: median at most 10%, p90 at most 25%. The p90s when `chalk
  // validate`'s summary came to show them per metric (serving, metric ttft_ms/tpot_ms/e2e_s):
  // TTFT 17.0%, TPOT 8.15%, E2E 8.06%. The summary and this test's own grouping agree.
  for (const char* m : {"ttft_ms", "tpot_ms", "e2e_s"}) {
    const ErrorSummary* s = nullptr;
    for (const auto& e : r.summary) {
      if (e.kind == "serving" && e.metric == m) s = &e;
    }
    ASSERT_NE(s, nullptr) << m;
    EXPECT_EQ(s->count, 21) << m;
    EXPECT_DOUBLE_EQ(s->p90_abs, percentile(abs_error[m], 0.9)) << m;
  }
  EXPECT_LE(percentile(abs_error["ttft_ms"], 0.9), 0.171);
  EXPECT_LE(percentile(abs_error["tpot_ms"], 0.9), 0.082);
  EXPECT_LE(percentile(abs_error["e2e_s"], 0.9), 0.081);
}

}  // namespace
}  // namespace chalk
