// The energy of a simulated run (sim/energy.h) against hand-derived values, and the
// simulator's busy times against the roofline they come from.
#include "chalk/sim/energy.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/roofline.h"
#include "chalk/io/io.h"
#include "chalk/sim/metrics.h"

namespace chalk::sim {
namespace {

// H100 SXM at 700 W TDP: idle 115 W, HBM-bound 420 W, compute-bound 700 W (power.h).
ChipPower h100_power() { return *chip_power(load_system("h100-sxm")); }

StepSample step(double duration, double compute, double memory) {
  StepSample s;
  s.duration_s = duration;
  s.compute_s = compute;
  s.memory_s = memory;
  return s;
}

RequestRecord request(int64_t output, bool rejected = false) {
  RequestRecord r;
  r.output_tokens = output;
  r.rejected = rejected;
  return r;
}

TEST(ServingEnergy, HandDerivedAggregatedRun) {
  // One replica of 2 chips over a 4 s run: a 1 s step half compute-busy (115 + 585 x 0.5 =
  // 407.5 W -> 407.5 J), a 1 s HBM-bound step (420 J), 2 s idle (230 J): 1,057.5 J a chip,
  // 2,115 J the replica. Host 100 W x 2 chips x 4 s = 800 J; PUE 1.5: 4,372.5 J.
  // Two requests of 10 output tokens finished (a rejected one counts in neither):
  // 218.625 J per output token, 2,186.25 J per request; mean chip draw 2,115 / (2 x 4) W.
  ClusterRun c;
  c.chips = 2;
  SimRun r;
  r.steps = {step(1, 0.5, 0), step(1, 0, 1)};
  r.requests = {request(10), request(10), request(7, true)};
  c.runs.push_back(r);
  SimSummary s;
  s.duration_s = 4;
  const ServingEnergy e = serving_energy(c, s, 2, 0, h100_power(), Facility{100, 1.5});
  EXPECT_NEAR(e.chip_energy_j, 2115.0, 1e-9);
  EXPECT_NEAR(e.energy_j, 4372.5, 1e-9);
  EXPECT_NEAR(e.energy_kwh, 4372.5 / 3.6e6, 1e-15);
  EXPECT_DOUBLE_EQ(e.output_tokens, 20.0);
  EXPECT_EQ(e.requests, 2);
  EXPECT_NEAR(e.j_per_output_token, 218.625, 1e-9);
  EXPECT_NEAR(e.j_per_request, 2186.25, 1e-9);
  EXPECT_NEAR(e.mean_chip_power_w, 264.375, 1e-9);
}

TEST(ServingEnergy, DisaggregatedCountsBothPools) {
  // Prefill pool: one 1-chip replica, one 1 s compute-bound step (700 J) and 3 s idle
  // (345 J): 1,045 J. Decode pool: one 2-chip replica, one 2 s HBM-bound step (840 J) and
  // 2 s idle (230 J): 2 x 1,070 = 2,140 J. Chips only: 3,185 J over the end-to-end
  // requests' 5 output tokens = 637 J a token.
  ClusterRun c;
  c.chips = 3;
  c.disaggregated = true;
  SimRun pre, dec;
  pre.steps = {step(1, 1, 0.2)};
  dec.steps = {step(2, 0, 2)};
  c.prefill_runs.push_back(pre);
  c.runs.push_back(dec);
  c.end_to_end.requests = {request(5)};
  SimSummary s;
  s.duration_s = 4;
  const ServingEnergy e = serving_energy(c, s, 2, 1, h100_power(), Facility{});
  EXPECT_NEAR(e.chip_energy_j, 1045.0 + 2140.0, 1e-9);
  EXPECT_NEAR(e.j_per_output_token, 637.0, 1e-9);
  // Mixed chips: a prefill chip drawing twice the power at every state (idle, compute,
  // memory) doubles the prefill pool's 1,045 J and leaves the decode pool's 2,140 J.
  ChipPower twice = h100_power();
  twice.idle_w *= 2, twice.compute_busy_w *= 2, twice.memory_busy_w *= 2;
  const ServingEnergy m = serving_energy(c, s, 2, 1, h100_power(), Facility{}, &twice);
  EXPECT_NEAR(m.chip_energy_j, 2 * 1045.0 + 2140.0, 1e-9);
}

TEST(ServingEnergy, BadFacilityNamesTheField) {
  ClusterRun c;
  SimSummary s;
  EXPECT_THROW(serving_energy(c, s, 1, 0, h100_power(), Facility{0, 0.8}), InputError);
  try {
    serving_energy(c, s, 1, 0, h100_power(), Facility{-5, 1});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "host_w_per_chip");
  }
}

TEST(ServingEnergy, SimulatorRecordsTheRooflineBusyTimes) {
  // Without mechanisms each step is the roofline max(T_compute, T_memory): the larger of
  // the recorded busy times is the step, the other no longer.
  DeploymentOptions o;
  o.n_chips = 1;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  std::vector<Request> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back(Request{0.01 * i, 512, 16});
  SimOptions so;
  so.policy.request_overhead_s = 0;
  const SimRun run = simulate(d, reqs, so);
  ASSERT_FALSE(run.steps.empty());
  for (const auto& st : run.steps) {
    EXPECT_NEAR(std::max(st.compute_s, st.memory_s), st.duration_s, 1e-12 * st.duration_s);
    EXPECT_GT(st.memory_s, 0);
    EXPECT_GT(st.compute_s, 0);
  }
}

// Chalk's decode-step energy per output token (as `prices forward` prints it) against
// published measurements of GPU energy per output token (nvidia-smi / NVML, chips only).
double decode_j_per_output_token(const char* model, int64_t chips, int64_t batch, int64_t context) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = chips;
  const Deployment d = make_deployment(load_model(model), load_system("h100-sxm"), o);
  const DecodeStep st = decode_step(d, batch, context);
  return energy_j_per_token(h100_power(), Facility{}, static_cast<double>(chips), st.t_step, st.t_compute, st.t_memory,
                            static_cast<double>(batch));
}

TEST(ServingEnergy, PublishedInferenceXGptOssH100) {
  // InferenceX (SemiAnalysisAI/InferenceX issue 828, "[experimental] gptoss h100 nvidia-smi
  // power", 2026-03-01): gpt-oss-120b (MXFP4) on 8 H100 SXM, TP8, vLLM, 1k in / 1k out,
  // nvidia-smi power of the 8 GPUs over the run / output tokens: 1.23 J at concurrency 4
  // (159 W a GPU), 0.72 J at 8, 0.47 J at 16, 0.31 J at 32, 0.16 J at 64 (171 W a GPU).
  // chalk's decode step at that batch and the mean context (1,024 + 512 = 1,536) gives
  // 1.53, 0.94, 0.60, 0.38, 0.23 J: 1.24x to 1.45x the measurement. The gap: chalk's idle
  // floor (115 W, an H200 with DeepSeek-V3 loaded) and HBM-bound draw (420 W, assumed) stand
  // above this run's 159-205 W a GPU; at 64 the measured draw fell (171 W, 24% GPU
  // utilisation) while chalk's busy HBM share rose (256 W). The measurement also carries
  // each request's prefill, which chalk's decode step leaves out (it would raise chalk's
  // figure). Tolerance: chalk within [1, 1.6] x the measurement, the energy model's
  // uncertainty (docs/formulas.md, "Energy").
  const struct {
    int64_t batch;
    double measured_j;
  } rows[] = {{4, 1.23}, {8, 0.72}, {16, 0.47}, {32, 0.31}, {64, 0.16}};
  for (const auto& r : rows) {
    const double chalk = decode_j_per_output_token("gpt-oss-120b", 8, r.batch, 1536);
    EXPECT_GE(chalk / r.measured_j, 1.0) << "batch " << r.batch << ": " << chalk << " J";
    EXPECT_LE(chalk / r.measured_j, 1.6) << "batch " << r.batch << ": " << chalk << " J";
  }
}

TEST(ServingEnergy, PublishedMlEnergyLlama8bH100) {
  // The ML.ENERGY Leaderboard v3.0 (ml.energy blog, "LLM Inference Energy: A Longitudinal
  // Analysis", 2025-12): Llama 3.1 8B on one H100, vLLM 0.11.1, batch 64: 0.12 J per output
  // token (v2.0 with vLLM 0.5.4: 0.20 J). chalk's decode step at batch 64 and context 1,000
  // (the chat task's prompt and about half its 717-token mean answer): 0.071 J, 0.59x. The
  // gap: the measured run pays its prefills, the engine's host time between steps and a
  // step slower than chalk's 10.3 ms (vLLM at 64 sequences), all at about the busy draw;
  // chalk's figure is the decode step alone. Tolerance: within [0.4, 1] x the measurement.
  const double chalk = decode_j_per_output_token("llama-3.1-8b", 1, 64, 1000);
  EXPECT_GE(chalk / 0.12, 0.4) << chalk;
  EXPECT_LE(chalk / 0.12, 1.0) << chalk;
}

}  // namespace
}  // namespace chalk::sim
