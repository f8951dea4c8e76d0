// Pipeline stages in the simulator's replica (SimOptions::pipeline_stages; docs/simulator.md
// 1.10) against engine/pipeline.h's closed forms, and a replica without KV cache reporting
// no latency (issue 30: `plan` once printed TTFT@p -57261 ms for such a replica).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "chalk/sim/metrics.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {
namespace {

/// Llama 3.1 405B bf16 on H100 SXM as PP2 x (TP8): the busiest stage, 63 of 126 layers on 8
/// chips (pipeline_stage_model), as the layout search ranks it first on 16 chips.
Deployment pp_stage_405b(int64_t stages) {
  DeploymentOptions o;
  o.n_chips = 8;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 8;
  o.mechanisms.layout.tp_ffn = 8;
  return make_deployment(pipeline_stage_model(load_model("llama-3.1-405b"), stages), load_system("h100-sxm"), o);
}

TEST(SimPipeline, ALoneRequestPassesEveryStageAsDecodeAndPrefillPriceIt) {
  // One 2,000-token prompt, 3 output tokens, alone on PP2 x (TP8). Hand derivation
  // (engine/pipeline.h at one microbatch, the stage as vLLM runs it, engine_deployment):
  //   TTFT = w + pipeline_prefill(stage, {2 stages, 1 microbatch}, 1, 2000).ttft
  //        = w + 2 x prefill_step(stage, 1, 2000) + send(2000 x 16384 x 2 bytes),
  //   token k (k = 1, 2) = pipeline_decode(stage, {2, 2}, batch 1, 2000 + k - 1).t_pass
  //        = 2 x decode_step(stage, 1, ctx) + send(16384 x 2 bytes) + send(4 bytes),
  // w = vLLM's fixed work per request, 6.908 ms. The replica is 16 chips.
  const Deployment stage = pp_stage_405b(2);
  SimOptions o;
  o.pipeline_stages = 2;
  const Deployment e = engine_deployment(stage, o.policy);
  const Request r{0.5, 2000, 3};
  const SimRun run = simulate(stage, std::span(&r, 1), o);
  ASSERT_TRUE(run.fits) << run.reason;
  const auto& q = run.requests[0];
  PipelineShape one;
  one.stages = 2;
  one.microbatches = 1;
  const double w = o.policy.request_overhead_s;
  const double ttft = w + pipeline_prefill(e, one, 1, 2000).ttft.value();
  EXPECT_NEAR(q.first_token_s - q.arrival_s, ttft, 1e-12);
  EXPECT_NEAR(ttft, w + 2 * prefill_step(e, 1, 2000).t_step.value() + stage_send_time(e.system, bytes(2000.0 * 16384 * 2)).value(), 1e-12);
  PipelineShape two = one;
  two.microbatches = 2;
  const double tokens = pipeline_decode(e, two, 1, 2000).t_pass.value() + pipeline_decode(e, two, 1, 2001).t_pass.value();
  EXPECT_NEAR(q.finish_s - q.first_token_s, tokens, 1e-9 * tokens);
  // The pass is two stage steps and two sends, so it is slower than one stage's step and
  // faster than three: 2 x 63 layers on 8 chips each.
  const double step = decode_step(e, 1, 2000).t_step.value();
  EXPECT_GT(tokens / 2, 2 * step);
  EXPECT_LT(tokens / 2, 3 * step);
  // The blocks are the stage's: every token's KV over its 63 layers.
  EXPECT_EQ(run.kv_blocks_total, kv_blocks_available(stage, o.policy.block_size));
}

TEST(SimPipeline, TwoMicrobatchesKeepBothStagesBusy) {
  // Eight 200-token prompts at once, 20 output tokens each: once prefilled, each step holds 8
  // decodes, split 4 + 4 into two microbatches; the step is pipeline_decode's cycle at batch
  // 8 and 2 microbatches, max(t_pass(4), 2 x t_stage(4)) = t_pass (the sends and the second
  // stage's step outlast the other microbatch's step), so the replica decodes 8 tokens per
  // t_pass where one microbatch of 8 would take 2 x t_stage(8) + sends.
  const Deployment stage = pp_stage_405b(2);
  SimOptions o;
  o.pipeline_stages = 2;
  o.policy.request_overhead_s = 0;
  const Deployment e = engine_deployment(stage, o.policy);
  std::vector<Request> reqs(8, Request{0.0, 200, 20});
  const SimRun run = simulate(stage, reqs, o);
  PipelineShape two;
  two.stages = 2;
  two.microbatches = 2;
  // The last step: 8 decodes at context 200 + 18 = 218.
  const PipelineDecode pd = pipeline_decode(e, two, 8, 218);
  EXPECT_EQ(pd.microbatch, 4);
  EXPECT_NEAR(run.steps.back().duration_s, pd.cycle.value(), 1e-9 * pd.cycle.value());
  EXPECT_EQ(run.steps.back().decodes, 8);
}

TEST(SimPipeline, BadStagesAreRefused) {
  const Deployment stage = pp_stage_405b(2);
  const Request r{0.0, 100, 2};
  SimOptions o;
  o.pipeline_stages = 0;
  try {
    simulate(stage, std::span(&r, 1), o);
    ADD_FAILURE() << "0 stages accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "pp");
    EXPECT_NE(std::string(e.what()).find("got 0"), std::string::npos) << e.what();
  }
  // Data-parallel attention within a stage (attention TP4 x 2 under FFN TP8) is not
  // simulated: refused, not mispriced.
  DeploymentOptions dp;
  dp.n_chips = 8;
  dp.mechanisms.enabled = true;
  dp.mechanisms.layout.tp_attention = 4;
  dp.mechanisms.layout.tp_ffn = 8;
  const Deployment dp_stage = make_deployment(pipeline_stage_model(load_model("llama-3.1-405b"), 2), load_system("h100-sxm"), dp);
  o.pipeline_stages = 2;
  EXPECT_THROW(simulate(dp_stage, std::span(&r, 1), o), InputError);
}

TEST(SimPipeline, AReplicaWithoutKvCacheReportsNoLatency) {
  // Llama 3.1 405B (all 126 layers, 811 GB in bf16) on 8 H100 (8 x 80 GB): the weights
  // leave no KV cache. Every request is rejected, none finished: no TTFT is measured (the
  // summary's count 0, front ends print null) and the SLO attainment is 0. Before the fix
  // the records of a run that never started kept first_token_s = 0 while the request
  // overhead path set their arrivals, and `plan` printed TTFT@p -57261 ms, 0 tok/s and SLO
  // attainment 1.0.
  DeploymentOptions o;
  o.n_chips = 8;
  o.mechanisms.enabled = true;
  const Deployment d = make_deployment(load_model("llama-3.1-405b"), load_system("h100-sxm"), o);
  std::vector<Request> reqs;
  for (int i = 0; i < 10; ++i) reqs.push_back({1.0 + i, 2000, 200});
  const SimRun run = simulate(d, reqs, SimOptions{});
  EXPECT_FALSE(run.fits);
  EXPECT_EQ(run.rejected, 10);
  const SimRun* runs[] = {&run};
  Slo slo;
  slo.ttft_s = 3.0;
  const SimSummary s = summarize(runs, 8, slo);
  EXPECT_EQ(s.finished, 0);
  EXPECT_EQ(s.rejected, 10);
  EXPECT_EQ(s.ttft.count, 0);
  EXPECT_EQ(s.slo_attainment, 0.0);
  EXPECT_FALSE(s.meets_slo);
  for (const auto& q : run.requests) EXPECT_TRUE(q.rejected);
}

}  // namespace
}  // namespace chalk::sim
