// chalk calibrate's readers of the other engines' benchmark clients (bench_formats.h): the
// fixtures under tests/data/calibrate read field by field, constants recovered through every
// format, each reader's errors, and the all-reduce latency fitted only at TP > 1.
#include "chalk/calibrate/bench_formats.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/calibrate/fit.h"
#include "chalk/io/io.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk::calibrate {
namespace {

std::string fixture(const std::string& name) { return read_file(std::string(CHALK_SOURCE_DIR) + "/tests/data/calibrate/" + name); }

/// `text` with its first `from` replaced by `to` (the test fails where `from` is absent).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string error_of(const std::string& text, const std::string& source = "b.json") {
  try {
    parse_bench_file(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CalibrateFormats, ReadsSglangBenchServingJsonl) {
  // Two records appended by two runs: 2 requests/s, then float("inf") (Python's bare
  // Infinity) under --max-concurrency 16.
  const auto runs = parse_bench_file(fixture("sglang-bench-serving.jsonl"), "s.jsonl");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].source, "s.jsonl:1");
  EXPECT_EQ(runs[0].format, "sglang bench_serving");
  EXPECT_EQ(runs[0].engine, "sglang");  // backend "sglang"
  EXPECT_DOUBLE_EQ(runs[0].request_rate_per_s, 2.0);
  EXPECT_EQ(runs[0].completed, 40);
  EXPECT_EQ(runs[0].num_prompts, 40);  // this release writes no num_prompts: the completed
  EXPECT_EQ(runs[0].total_input_tokens / runs[0].completed, 512);
  EXPECT_DOUBLE_EQ(*runs[0].e2el_ms, 560.0);  // mean_e2e_latency_ms
  EXPECT_DOUBLE_EQ(*runs[0].ttft_ms, 35.0);
  EXPECT_DOUBLE_EQ(*runs[0].tpot_ms, 8.3);
  EXPECT_EQ(runs[1].source, "s.jsonl:2");
  EXPECT_DOUBLE_EQ(runs[1].request_rate_per_s, 0);  // Infinity: every request at once
  EXPECT_EQ(runs[1].max_concurrency, 16);
}

TEST(CalibrateFormats, ReadsAiperfAndGenaiPerfProfileExports) {
  const auto a = parse_bench_file(fixture("aiperf-profile_export_aiperf.json"), "a.json");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].format, "aiperf");  // input_config.loadgen
  EXPECT_DOUBLE_EQ(a[0].request_rate_per_s, 4.0);
  EXPECT_FALSE(a[0].constant_arrivals);  // request_rate_mode poisson
  EXPECT_EQ(a[0].completed, 100);        // request_count.avg
  EXPECT_EQ(a[0].total_input_tokens, 51200);   // 512 x 100
  EXPECT_EQ(a[0].total_output_tokens, 6400);   // 64 x 100
  EXPECT_DOUBLE_EQ(*a[0].ttft_ms, 41.5);
  EXPECT_DOUBLE_EQ(*a[0].tpot_ms, 9.05);       // inter_token_latency: (latency - TTFT) / (OSL - 1)
  EXPECT_DOUBLE_EQ(*a[0].e2el_ms, 612.5);      // request_latency
  EXPECT_FALSE(a[0].itl_ms.has_value());
  EXPECT_DOUBLE_EQ(a[0].duration_s, 25.5);     // benchmark_duration, sec
  const auto g = parse_bench_file(fixture("genai-perf-profile_export_genai_perf.json"), "g.json");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].format, "genai-perf");
  EXPECT_DOUBLE_EQ(g[0].request_rate_per_s, 0);  // concurrency 16 alone: all at once under the cap
  EXPECT_EQ(g[0].max_concurrency, 16);
  EXPECT_EQ(g[0].completed, 64);  // input_config.request_count
  EXPECT_EQ(g[0].total_input_tokens, 1024 * 64);
  EXPECT_DOUBLE_EQ(*g[0].tpot_ms, 10.35);
  EXPECT_NEAR(g[0].duration_s, 64 / 11.2, 1e-12);  // requests / request_throughput
  // Seconds and nanoseconds are milliseconds once read: 0.0415 s = 41.5 ms, 41.5e6 ns = 41.5 ms.
  std::string sec = fixture("aiperf-profile_export_aiperf.json");
  sec = edit(sec, R"("unit": "ms", "avg": 41.5)", R"("unit": "s", "avg": 0.0415)");
  EXPECT_NEAR(*parse_bench_file(sec, "a.json")[0].ttft_ms, 41.5, 1e-9);
}

TEST(CalibrateFormats, ReadsTrtllmBenchReport) {
  const auto t = parse_bench_file(fixture("trtllm-bench-report.json"), "t.json");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].format, "trtllm-bench");
  EXPECT_EQ(t[0].engine, "trtllm");
  EXPECT_EQ(t[0].tp, 2);
  EXPECT_EQ(t[0].chips, 2);
  EXPECT_EQ(t[0].max_sequences, 256);        // max_batch_size
  EXPECT_EQ(t[0].max_batched_tokens, 8192);  // max_num_tokens
  EXPECT_EQ(t[0].completed, 200);
  EXPECT_EQ(t[0].total_output_tokens, 256 * 200);
  EXPECT_DOUBLE_EQ(*t[0].e2el_ms, 7320.0);  // avg_request_latency_ms
  EXPECT_DOUBLE_EQ(*t[0].ttft_ms, 1450.0);  // streaming_metrics.avg_ttft_ms
  EXPECT_DOUBLE_EQ(*t[0].tpot_ms, 23.0);
  EXPECT_DOUBLE_EQ(t[0].duration_s, 9.85);  // total_latency_ms
  EXPECT_DOUBLE_EQ(t[0].request_rate_per_s, 0);
}

TEST(CalibrateFormats, EachReaderNamesTheFieldInOneLine) {
  // Unknown and empty files.
  EXPECT_EQ(error_of("", "x.json").rfind("x.json: empty; expected vllm bench serve", 0), 0u) << error_of("", "x.json");
  EXPECT_EQ(error_of(R"({"hello": 1})", "x.json").rfind("x.json: unknown benchmark format (a JSON object of no client's keys); expected", 0), 0u);
  EXPECT_EQ(error_of("[1, 2]", "x.json").rfind("x.json: unknown benchmark format (a JSON array", 0), 0u);
  EXPECT_EQ(error_of("{\"request_rate\": 1,\n", "x.json").rfind("x.json: malformed JSON", 0), 0u);
  // SGLang: a missing field, a wrong type, a bad line of a JSONL file.
  const std::string line = R"({"backend": "sglang", "request_rate": 2.0, "max_concurrency": null, "duration": 20.4, "completed": 40,
    "total_input_tokens": 20480, "total_output_tokens": 2560, "mean_e2e_latency_ms": 560.0})";
  std::string s = line;
  s = edit(s, R"("duration": 20.4, )", "");
  EXPECT_EQ(error_of(s, "s.jsonl"), "s.jsonl: duration: missing required field");
  s = line;
  s = edit(s, "40", "\"forty\"");
  EXPECT_EQ(error_of(s, "s.jsonl"), "s.jsonl: completed: expected an integer, got \"forty\"");
  std::string one_line = line;
  one_line.erase(std::remove(one_line.begin(), one_line.end(), '\n'), one_line.end());
  EXPECT_EQ(error_of(one_line + "\n" + R"({"mean_e2e_latency_ms": 5})" + "\n", "s.jsonl"), "s.jsonl:2: request_rate: missing required field (a number of requests per second, or inf)");
  // AIPerf / genai-perf.
  std::string a = fixture("aiperf-profile_export_aiperf.json");
  a = edit(a, R"("unit": "ms", "avg": 41.5)", R"("unit": "min", "avg": 41.5)");
  EXPECT_EQ(error_of(a, "a.json"), "a.json: time_to_first_token.unit: expected ns, us, ms, s or sec for time_to_first_token, got \"min\"");
  a = fixture("aiperf-profile_export_aiperf.json");
  a = edit(a, R"("avg": 512.0)", R"("avg": "512")");
  EXPECT_EQ(error_of(a, "a.json"), "a.json: input_sequence_length.avg: expected a number, got \"512\"");
  std::string g = fixture("genai-perf-profile_export_genai_perf.json");
  g = edit(g, R"("concurrency": 16, )", "");
  EXPECT_EQ(error_of(g, "g.json"),
            "g.json: input_config.request_rate: missing: the export states neither request_rate nor concurrency; expected the load the client sent");
  // trtllm-bench.
  std::string t = fixture("trtllm-bench-report.json");
  t = edit(t, R"("num_requests": 200, )", "");
  EXPECT_EQ(error_of(t, "t.json"), "t.json: request_info.num_requests: missing required field");
  t = fixture("trtllm-bench-report.json");
  t = edit(t, R"("tp_size": 2)", R"("tp_size": "2")");
  EXPECT_EQ(error_of(t, "t.json"), "t.json: world_info.tp_size: expected an integer, got \"2\"");
  for (const std::string& e : {error_of(""), error_of(s), error_of(a), error_of(g), error_of(t)}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

Deployment llama8_on(int64_t chips) { return chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", chips); }

sim::SimOptions serial_vllm() {
  sim::SimOptions o;
  o.policy = sim::engine_policy("vllm-0.10");  // host work after each step: every constant moves something
  return o;
}

BenchRun plan_run(double rate, int64_t concurrency, int64_t n, int64_t in, int64_t out) {
  BenchRun r;
  r.source = "plan";
  r.request_rate_per_s = rate;
  r.max_concurrency = concurrency;
  r.num_prompts = r.completed = n;
  r.duration_s = 10;
  r.total_input_tokens = n * in;
  r.total_output_tokens = n * out;
  r.ttft_ms = r.tpot_ms = r.e2el_ms = 1.0;  // which means the client states (no separate ITL but SGLang's)
  return r;
}

/// Writes `b` in a client's layout and reads it back through parse_bench_file.
BenchRun through(const BenchRun& b, int format) {
  switch (format) {
    case 0: return parse_bench_file(sglang_bench_jsonl({b}), "s.jsonl").front();
    case 1: return parse_bench_file(profile_export_json(b, true), "a.json").front();
    case 2: return parse_bench_file(profile_export_json(b, false), "g.json").front();
    default: return parse_bench_file(trtllm_report_json(b), "t.json").front();
  }
}

/// Runs "measured" by the simulator under `truth`, each mean off by a fixed +-1.5 %, written
/// by each client's writer and read back (format i % 4: SGLang, AIPerf, genai-perf,
/// trtllm-bench; trtllm-bench states no rate, so its runs send everything at once).
std::vector<RunModel> measured(const std::vector<BenchRun>& plan, const Deployment& d, const Values& truth) {
  std::vector<RunModel> out;
  const double noise[] = {1.015, 0.985, 1.01, 0.99};
  for (std::size_t i = 0; i < plan.size(); ++i) {
    BenchRun b = through(plan[i], static_cast<int>(i % 4));
    const Predicted p = predict(make_run_model(b, d, serial_vllm(), kDefaultMaxRequests), truth);
    b.ttft_ms = *p.ttft_ms * noise[i % 4];
    b.tpot_ms = *p.tpot_ms * noise[(i + 1) % 4];
    b.e2el_ms = *p.e2el_ms * noise[(i + 2) % 4];
    out.push_back(make_run_model(through(b, static_cast<int>(i % 4)), d, serial_vllm(), kDefaultMaxRequests));
  }
  return out;
}

void expect_recovered(const FitReport& r, Constant c, double truth) {
  const FittedConstant& f = r.constants[static_cast<int>(c)];
  SCOPED_TRACE(f.name);
  ASSERT_TRUE(f.fitted) << f.note;
  ASSERT_TRUE(f.sigma.has_value());
  EXPECT_GT(*f.sigma, 0);
  EXPECT_LT(*f.sigma, truth / 3);
  EXPECT_LE(std::abs(f.value - truth), 3 * *f.sigma) << "fit " << f.value << " truth " << truth << " sigma " << *f.sigma;
}

TEST(CalibrateFormats, RecoversConstantsThroughEveryClientsFormat) {
  // Truth: 20 ms per request (default 6.9 ms), 9 us kernel floor (6.3 us); host and
  // all-reduce at their defaults. Five runs, one or two in each format.
  const Values truth = {20e-3, 21.5e-6, 9e-6, 6.45e-6};
  const std::vector<BenchRun> plan = {plan_run(2, 0, 32, 256, 32), plan_run(6, 0, 32, 1024, 48), plan_run(0, 16, 32, 512, 32),
                                      plan_run(0, 0, 24, 128, 48), plan_run(4, 0, 32, 2048, 16)};
  const auto runs = measured(plan, llama8_on(1), truth);
  FitOptions o;
  o.constants = {Constant::request_overhead, Constant::kernel_floor};
  o.leave_one_out = false;
  const FitReport r = fit(runs, o);
  EXPECT_EQ(r.residual_count, 15);  // 5 runs x TTFT, TPOT, E2E
  expect_recovered(r, Constant::request_overhead, truth[0]);
  expect_recovered(r, Constant::kernel_floor, truth[2]);
  EXPECT_GT(r.median_error_before, 0.05);  // 20 vs 6.9 ms on TTFT
  EXPECT_LT(r.median_error_after, 0.02);   // at the noise
}

TEST(CalibrateFormats, FitsTheAllReduceLatencyOnlyAtTensorParallelRuns) {
  // TP 2 on two H100s: each decode step all-reduces twice per layer, one-shot (TP 2 at any
  // size below 8 MiB), so a 15 us stage (default 6.45) adds 2 x 32 x 8.55 = 547 us per step.
  const Values truth = {6.9e-3, 21.5e-6, 6.3e-6, 15e-6};
  const std::vector<BenchRun> plan = {plan_run(2, 0, 24, 256, 32), plan_run(0, 16, 24, 512, 48), plan_run(4, 0, 24, 1024, 16)};
  const auto tp2 = measured(plan, llama8_on(2), truth);
  ASSERT_EQ(tp_of(tp2.front()), 2);
  FitOptions o;
  o.constants = {Constant::allreduce_latency};
  o.leave_one_out = false;
  const FitReport r = fit(tp2, o);
  // The runs carry a fixed +-1.5% of noise: on a ~7 ms TP-2 step that is ~100 us, spread
  // over 2 x 32 stages, ~1.6 us of the stage latency, which the one free constant absorbs
  // (its sigma, from the residuals' scatter, is smaller). So: within 1.6 us of 15 us.
  const FittedConstant& ar = r.constants[static_cast<int>(Constant::allreduce_latency)];
  ASSERT_TRUE(ar.fitted) << ar.note;
  EXPECT_NEAR(ar.value, 15e-6, 1.6e-6);
  EXPECT_GT(std::abs(ar.value - 6.45e-6), 5e-6);  // moved well away from the default
  // The same runs on one chip: no all-reduce, refused with a one-line reason.
  const auto tp1 = measured(plan, llama8_on(1), truth);
  EXPECT_EQ(tp_of(tp1.front()), 1);
  try {
    fit(tp1, o);
    FAIL() << "fitted the all-reduce latency at TP 1";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "runs: none is tensor-parallel (TP > 1): allreduce_latency_s cannot be fitted; expected runs at TP > 1");
  }
  // Asked beside another constant, it keeps its default with the note.
  o.constants = {Constant::request_overhead, Constant::allreduce_latency};
  const FitReport both = fit(tp1, o);
  EXPECT_FALSE(both.constants[3].fitted);
  EXPECT_DOUBLE_EQ(both.constants[3].value, 6.45e-6);
  EXPECT_NE(both.constants[3].note.find("no run is tensor-parallel"), std::string::npos) << both.constants[3].note;
}

}  // namespace
}  // namespace chalk::calibrate
