// chalk calibrate (issue 29): reading vLLM's benchmark JSON, the fit recovering constants a
// benchmark was generated with, its refusals, and the engine profile file.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/calibrate/bench.h"
#include "chalk/calibrate/fit.h"
#include "chalk/calibrate/profile.h"
#include "chalk/io/io.h"
#include "chalk/validate/validate.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk::calibrate {
namespace {

Deployment llama8_h100() { return chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", 1); }

/// vLLM 0.10 runs its host work after each GPU step (no async scheduling before 0.14), so a
/// run at batch 32 pays 32 x host time per step: every constant moves some prediction.
sim::SimOptions vllm_010() {
  sim::SimOptions o;
  o.policy = sim::engine_policy("vllm-0.10");
  return o;
}

BenchRun bench(double rate, int64_t concurrency, int64_t n, int64_t in, int64_t out) {
  BenchRun r;
  r.source = "run-" + std::to_string(in) + "-" + std::to_string(out);
  r.request_rate_per_s = rate;
  r.max_concurrency = concurrency;
  r.num_prompts = r.completed = n;
  r.duration_s = 10;
  r.total_input_tokens = n * in;
  r.total_output_tokens = n * out;
  r.ttft_ms = r.tpot_ms = r.itl_ms = r.e2el_ms = 1.0;  // placeholders: which metrics the run measured
  return r;
}

/// Runs "measured" by the simulator under known constants, each mean off by a fixed +-1.5 %
/// (a run's noise), written in vLLM's JSON format and read back.
std::vector<RunModel> synthetic_runs(const Values& truth, bool tpot_only = false) {
  const std::vector<BenchRun> plan = {bench(2, 0, 40, 256, 32), bench(8, 0, 40, 1024, 48), bench(0, 32, 48, 128, 48),
                                      bench(0, 16, 32, 512, 32), bench(4, 0, 32, 2048, 16)};
  const Deployment d = llama8_h100();
  std::vector<RunModel> out;
  int i = 0;
  for (BenchRun b : plan) {
    if (tpot_only) b.ttft_ms.reset(), b.itl_ms.reset(), b.e2el_ms.reset();
    const Predicted p = predict(make_run_model(b, d, vllm_010(), kDefaultMaxRequests), truth);
    const double noise[] = {1.015, 0.985, 1.01, 0.99};
    if (p.ttft_ms) b.ttft_ms = *p.ttft_ms * noise[i % 4];
    if (p.tpot_ms) b.tpot_ms = *p.tpot_ms * noise[(i + 1) % 4];
    if (p.itl_ms) b.itl_ms = *p.itl_ms * noise[(i + 2) % 4];
    if (p.e2el_ms) b.e2el_ms = *p.e2el_ms * noise[(i + 3) % 4];
    ++i;
    const BenchRun back = parse_vllm_bench(vllm_bench_json(b), b.source);
    out.push_back(make_run_model(back, d, vllm_010(), kDefaultMaxRequests));
  }
  return out;
}

TEST(Calibrate, RecoversKnownConstantsWithinTheirUncertainty) {
  // Truth: 20 ms per request (defaults 6.9 ms), 40 us host per sequence (21.5 us), 9 us
  // kernel floor (6.3 us): the fit starts at the defaults and must come back to each.
  const Values truth = {20e-3, 40e-6, 9e-6, 6.45e-6};  // the all-reduce at its default (TP 1: unused)
  FitOptions o;
  o.constants = {Constant::request_overhead, Constant::host_per_sequence, Constant::kernel_floor};
  o.leave_one_out = false;
  const FitReport r = fit(synthetic_runs(truth), o);
  ASSERT_EQ(r.constants.size(), 4u);
  EXPECT_EQ(r.residual_count, 20);  // 5 runs x 4 means
  EXPECT_FALSE(r.constants[3].fitted);  // allreduce_latency_s: not asked for
  for (int k = 0; k < 3; ++k) {
    const FittedConstant& c = r.constants[k];
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.fitted);
    ASSERT_TRUE(c.sigma.has_value());
    // The +-1.5 % noise leaves a real uncertainty, below a third of the value (a fit that
    // cannot tell the constant would report a wide one) ...
    EXPECT_GT(*c.sigma, 0);
    EXPECT_LT(*c.sigma, truth[k] / 3);
    // ... and the truth within 3 sigma of the fit.
    EXPECT_LE(std::abs(c.value - truth[k]), 3 * *c.sigma) << "fit " << c.value << " truth " << truth[k] << " sigma " << *c.sigma;
  }
  // The defaults miss by tens of percent (20 vs 6.9 ms on TTFT); the fit is at the noise.
  EXPECT_GT(r.median_error_before, 0.05);
  EXPECT_LT(r.median_error_after, 0.02);
}

TEST(Calibrate, KeepsTheDefaultOfAConstantNoRunIsSensitiveTo) {
  // TPOT alone never sees the request overhead (it is paid before the first token).
  const Values truth = {20e-3, 21.5e-6, 9e-6, 6.45e-6};
  FitOptions o;
  o.constants = {Constant::request_overhead, Constant::kernel_floor};
  o.leave_one_out = true;
  const FitReport r = fit(synthetic_runs(truth, true), o);
  const FittedConstant& overhead = r.constants[0];
  EXPECT_FALSE(overhead.fitted);
  EXPECT_DOUBLE_EQ(overhead.value, sim::kEngineRequestOverheadS);
  EXPECT_NE(overhead.note.find("no run is sensitive"), std::string::npos) << overhead.note;
  EXPECT_TRUE(r.constants[2].fitted);
  EXPECT_NEAR(r.constants[2].value, 9e-6, 1e-6);
  // 5 runs, 1 constant: each run predicted by a fit over the other four.
  ASSERT_TRUE(r.median_error_loo.has_value());
  EXPECT_LT(*r.median_error_loo, r.median_error_before);
}

TEST(Calibrate, RefusesMoreConstantsThanTheRunsDetermine) {
  auto runs = synthetic_runs({20e-3, 40e-6, 9e-6, 6.45e-6});
  runs.resize(2);
  FitOptions o;
  o.constants = {Constant::request_overhead, Constant::host_per_sequence, Constant::kernel_floor};
  try {
    fit(runs, o);
    FAIL() << "2 runs fitted 3 constants";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "runs");
    EXPECT_NE(std::string(e.what()).find("2 runs cannot determine 3 constants"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at least 4 runs"), std::string::npos) << e.what();
  }
}

std::string vllm_json(const std::string& completed) {
  return R"({"date": "20250101-000000", "backend": "vllm", "model_id": "x", "num_prompts": 100, "request_rate": 4.0,
             "burstiness": 1.0, "max_concurrency": null, "duration": 30.5, "completed": )" +
         completed + R"(, "total_input_tokens": 51200, "total_output_tokens": 12800, "mean_ttft_ms": 45.1, "median_ttft_ms": 40.0,
             "p99_ttft_ms": 90.0, "mean_tpot_ms": 12.5, "mean_itl_ms": 12.4, "mean_e2el_ms": 1620.0})";
}

TEST(Calibrate, ReadsVllmBenchServeJson) {
  const BenchRun r = parse_vllm_bench(vllm_json("100"), "run.json");
  EXPECT_DOUBLE_EQ(r.request_rate_per_s, 4.0);
  EXPECT_EQ(r.completed, 100);
  EXPECT_EQ(r.max_concurrency, 0);  // null: no cap
  EXPECT_EQ(r.total_input_tokens / r.completed, 512);
  EXPECT_DOUBLE_EQ(*r.ttft_ms, 45.1);
  EXPECT_DOUBLE_EQ(*r.e2el_ms, 1620.0);
  std::string inf = vllm_json("100");
  inf.replace(inf.find("4.0"), 3, "\"inf\"");
  EXPECT_DOUBLE_EQ(parse_vllm_bench(inf, "run.json").request_rate_per_s, 0);  // every request at once
}

TEST(Calibrate, NamesAMissingOrWrongTypedField) {
  const auto message = [](const std::string& text) {
    try {
      parse_vllm_bench(text, "run.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string missing = vllm_json("100");
  missing.replace(missing.find("\"duration\": 30.5,"), 17, "");
  EXPECT_EQ(message(missing), "run.json: duration: missing required field");
  EXPECT_EQ(message(vllm_json("\"ten\"")), "run.json: completed: expected an integer, got \"ten\"");
  EXPECT_EQ(message(vllm_json("101")).rfind("run.json: completed: must be in 1..100", 0), 0u);  // more than were sent
  std::string rate = vllm_json("100");
  rate.replace(rate.find("4.0"), 3, "\"fast\"");
  EXPECT_EQ(message(rate), "run.json: request_rate: expected requests per second > 0 or \"inf\", got \"fast\"");
}

TEST(Calibrate, ProfileRoundTripsAndNamesABadValue) {
  FitReport r;
  for (int k = 0; k < kConstants; ++k) {
    FittedConstant c;
    c.id = static_cast<Constant>(k);
    c.name = info(c.id).name;
    r.constants.push_back(c);
  }
  r.constants[0].value = 0.0123, r.constants[0].fitted = true, r.constants[0].sigma = 0.001;
  r.constants[1].value = 2.15e-5;
  r.constants[2].value = 7.5e-6, r.constants[2].fitted = true;
  r.constants[3].value = 9.1e-6, r.constants[3].fitted = true;
  const sim::EngineProfile p = parse_engine_profile(profile_json("vllm", r, 5, "test"), "p.json");
  EXPECT_DOUBLE_EQ(*p.constants.allreduce_latency_s, 9.1e-6);
  // A profile written before allreduce_latency_s existed: still read, that constant unset
  // (the engine's 6.45 us).
  const sim::EngineProfile old = parse_engine_profile(
      R"({"format": "chalk-engine-profile/1", "engine": "vllm", "constants": {"request_overhead_s": 0.02, "host_s_per_sequence": 4e-05,
          "kernel_floor_s": 9e-06}, "uncertainty_s": {}, "fitted": [], "runs": 5, "source": "old"})",
      "old.json");
  EXPECT_FALSE(old.constants.allreduce_latency_s.has_value());
  EXPECT_DOUBLE_EQ(*old.constants.kernel_floor_s, 9e-6);
  EXPECT_EQ(p.engine, "vllm");
  EXPECT_DOUBLE_EQ(*p.constants.request_overhead_s, 0.0123);
  EXPECT_DOUBLE_EQ(*p.constants.host_s_per_sequence, 2.15e-5);
  EXPECT_DOUBLE_EQ(*p.constants.kernel_floor_s, 7.5e-6);
  const auto message = [](const std::string& text) {
    try {
      parse_engine_profile(text, "p.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(R"({"format": "chalk-engine-profile/1", "engine": "vllm", "constants": {"kernel_floor_s": -1}})"),
            "p.json: constants.kernel_floor_s: must be in [0, 0.0001] s, got -1");
  EXPECT_EQ(message(R"({"format": "chalk-engine-profile/1", "engine": "vllm", "constants": {"kernel_floor_s": "6us"}})"),
            "p.json: constants.kernel_floor_s: expected a number, got \"6us\"");
  EXPECT_EQ(message(R"({"format": "chalk-engine-profile/1", "engine": "vllm", "constants": {"allreduce_latency_s": 0.5}})"),
            "p.json: constants.allreduce_latency_s: must be in [0, 0.0001] s, got 0.5");
  EXPECT_EQ(message(R"({"format": "chalk-engine-profile/2", "engine": "vllm", "constants": {}})"),
            "p.json: format: expected \"chalk-engine-profile/1\", got \"chalk-engine-profile/2\"");
  EXPECT_NE(message(R"({"format": "chalk-engine-profile/1", "engine": "vllm", "constants": {"floor": 1}})").find("p.json: constants.floor: unknown field"),
            std::string::npos);
}

TEST(Calibrate, ReadsServingRowsUnderLoadFromMeasurements) {
  const std::string csv =
      "id,kind,model,hardware,chips,tp,engine,requests,request_rate_per_s,input_tokens,output_tokens,batch,batch_per,context,metric,value\n"
      "A,serving,llama-3.1-8b,h100-sxm,1,1,vllm,64,4,512,64,8,run,,e2e_s,1.25\n"
      "B,decode,llama-3.1-8b,h100-sxm,1,1,vllm,,,,,1,run,1024,tpot_ms,7\n";
  int64_t skipped = 0;
  const auto runs = runs_from_measurements(parse_measurements(csv, "m.csv").rows, skipped);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(runs[0].source, "m.csv: A");
  EXPECT_DOUBLE_EQ(*runs[0].e2el_ms, 1250);  // e2e_s x 1000
  EXPECT_FALSE(runs[0].ttft_ms.has_value());
  EXPECT_EQ(runs[0].total_input_tokens, 64 * 512);
  EXPECT_EQ(runs[0].model, "llama-3.1-8b");
  // A row as the vLLM load suite writes it: constant arrivals, cached tokens within the
  // prompt. The run keeps them, as validate reads the row: 512 prompt tokens of which 496
  // cached (hit rate 496 / 512 = 0.96875), requests 1 / 4 s apart, the HBM fraction 0.85.
  const std::string suite =
      "id,kind,model,hardware,chips,tp,engine,requests,request_rate_per_s,arrivals,input_tokens,cached_tokens,output_tokens,"
      "gpu_memory_utilization,metric,value\n"
      "S,serving,llama-3.1-8b,h100-sxm,1,1,vllm,8,4,constant,512,496,64,0.85,ttft_ms,30\n";
  const auto srun = runs_from_measurements(parse_measurements(suite, "s.csv").rows, skipped);
  ASSERT_EQ(srun.size(), 1u);
  EXPECT_EQ(srun[0].total_input_tokens, 8 * 512);  // input_tokens includes the cached ones
  EXPECT_EQ(srun[0].cached_tokens, 496);
  EXPECT_TRUE(srun[0].constant_arrivals);
  EXPECT_DOUBLE_EQ(srun[0].gpu_memory_utilization, 0.85);
  const RunModel sm = make_run_model(srun[0], llama8_h100(), sim::SimOptions{}, 100);
  ASSERT_EQ(sm.requests.size(), 8u);
  EXPECT_DOUBLE_EQ(sm.requests[0].arrival_s, 0.25);
  EXPECT_DOUBLE_EQ(sm.requests[7].arrival_s, 2.0);
  EXPECT_DOUBLE_EQ(sm.o.prefix_hit_rate, 496.0 / 512.0);
  // Rows of one run, one per metric, are one run with both means; the next stage (another
  // rate) is its own run, and the same metric twice starts another run. A row further down
  // joins the first run of its setup that lacks its metric: R5-TPOT the first run, R10-E2E the
  // first R10 run (R10-TTFT), as a file sorted by metric would pair them.
  const std::string stages =
      "id,kind,model,hardware,chips,tp,engine,requests,request_rate_per_s,input_tokens,output_tokens,metric,value\n"
      "R5-TTFT,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,5,512,16,ttft_ms,30\n"
      "R5-E2E,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,5,512,16,e2e_s,0.2\n"
      "R10-TTFT,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,10,512,16,ttft_ms,35\n"
      "R10-TTFT2,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,10,512,16,ttft_ms,36\n"
      "R5-TPOT,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,5,512,16,tpot_ms,9\n"
      "R10-E2E,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,10,512,16,e2e_s,0.25\n";
  const auto grouped = runs_from_measurements(parse_measurements(stages, "g.csv").rows, skipped);
  ASSERT_EQ(grouped.size(), 3u);
  EXPECT_EQ(grouped[0].source, "g.csv: R5-TTFT+R5-E2E+R5-TPOT");
  EXPECT_DOUBLE_EQ(*grouped[0].ttft_ms, 30);
  EXPECT_DOUBLE_EQ(*grouped[0].e2el_ms, 200);
  EXPECT_DOUBLE_EQ(*grouped[0].tpot_ms, 9);
  EXPECT_EQ(grouped[1].source, "g.csv: R10-TTFT+R10-E2E");
  EXPECT_DOUBLE_EQ(*grouped[1].e2el_ms, 250);
  EXPECT_EQ(grouped[2].source, "g.csv: R10-TTFT2");
  EXPECT_FALSE(grouped[2].e2el_ms);
  // validate --engine-profile: the row's TTFT grows by the profile's request overhead.
  const std::string ttft =
      "id,kind,model,hardware,chips,tp,engine,requests,request_rate_per_s,input_tokens,output_tokens,metric,value\n"
      "T,serving,llama-3.1-8b,h100-sxm,1,1,vllm,40,2,512,16,ttft_ms,50\n";
  const auto rows = parse_measurements(ttft, "t.csv").rows;
  sim::EngineProfile p;
  p.engine = "vllm";
  p.source = "p.json";
  p.constants.request_overhead_s = 0.5069;  // 500 ms more than the default 6.9 ms
  const double plain = validate_measurements(rows).rows[0].predicted;
  const ValidationReport with = validate_measurements(rows, false, &p);
  EXPECT_NEAR(with.rows[0].predicted - plain, 500, 1);  // ms: queueing unchanged at 2 req/s
  const auto& notes = with.rows[0].notes;
  EXPECT_NE(std::find(notes.begin(), notes.end(), "engine profile p.json applied (chalk calibrate)"), notes.end());
}

}  // namespace
}  // namespace chalk::calibrate
