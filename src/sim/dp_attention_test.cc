// Data-parallel attention in the simulator: a prompt is prefilled on one rank, so no load
// makes a request's first token come sooner than its prompt alone would (the lone-prompt
// prefill, `chalk prefill -b 1`); decode batches put ceil(B / ranks) sequences on the
// busiest rank.
#include <vector>

#include <gtest/gtest.h>

#include "chalk/engine/step_mix.h"
#include "chalk/io/io.h"
#include "chalk/sim/metrics.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {
namespace {

/// `chips` chips with attention TP1: `chips` data-parallel attention ranks.
Deployment dpa_deployment(const char* model, const char* system, int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  return make_deployment(load_model(model), load_system(system), o);
}

TEST(DpAttention, NoLoadBringsTheFirstTokenBeforeTheLonePromptsPrefill) {
  // A dense model (Llama 3.1 8B on 2 H100, attention TP1) and an MoE (DeepSeek-V3 on 8
  // H200, attention TP1, EP8): at every rate the median TTFT is at least the prompt's own
  // prefill on one rank with the others idle (prefill_step(d, 1, P): 20.6 ms and 156 ms,
  // `chalk prefill -n N --tp 1 -b 1`). Before prompts were pinned to a rank, a mixed step
  // spread a prompt's tokens over every rank and the median fell to 19.1 ms and 68.4 ms.
  struct Case {
    const char* model;
    const char* system;
    int64_t chips, input;
    std::vector<double> rates;
  };
  for (const Case& c : {Case{"llama-3.1-8b", "h100-sxm", 2, 1024, {1, 10, 20, 40}}, Case{"deepseek-v3", "h200", 8, 2048, {0.2, 2, 5}}}) {
    const Deployment d = dpa_deployment(c.model, c.system, c.chips);
    ASSERT_EQ(d.mechanisms.layout.tp_attention, 1) << c.model;
    const double lone = prefill_step(d, 1, c.input).t_step.value();
    for (const double rate : c.rates) {
      TrafficSpec t;
      t.rate_per_s = rate;
      t.requests = 200;
      t.input = parse_length(std::to_string(c.input), "input");
      t.output = parse_length("200", "output");
      const auto reqs = generate_traffic(t);
      const SimRun run = simulate(d, reqs, SimOptions{});
      const SimRun* runs[] = {&run};
      const SimSummary s = summarize(runs, c.chips, Slo{});
      EXPECT_EQ(s.finished, 200) << c.model << " at " << rate;
      EXPECT_GE(s.ttft.p50, lone * (1 - 1e-12)) << c.model << " at " << rate << "/s";
      for (const auto& r : run.requests) EXPECT_GE(r.first_token_s - r.arrival_s, lone * (1 - 1e-12)) << c.model;
    }
  }
}

TEST(DpAttention, DecodeBatchesPutCeilBOverRanksOnTheBusiest) {
  // Ten requests arrive together with their prompts' KV (a decode pool) on 8 ranks: they
  // go 2, 2, 1, 1, 1, 1, 1, 1 (the fewest admitted first), so the first step is
  // decode_step(d, 10, 2048), whose busiest rank holds ceil(10 / 8) = 2 sequences.
  const Deployment d = dpa_deployment("deepseek-v3", "h200", 8);
  std::vector<Request> reqs(10, Request{0, 2048, 3});
  const SimRun run = simulate(d, reqs, SimOptions{}, Phase::decode);
  ASSERT_GE(run.steps.size(), 1U);
  EXPECT_EQ(run.steps[0].decodes, 10);
  EXPECT_NEAR(run.steps[0].duration_s, decode_step(d, 10, 2048).t_step.value(), 1e-12);
}

TEST(DpAttention, EachRankPrefillsItsOwnPromptWithItsShareOfTheBudget) {
  // Two 8192-token prompts arrive together on DeepSeek-V3 over 8 H200 with attention TP1 (8
  // ranks) and the default budget of 8192 tokens a step. Each rank's scheduler gets
  // ceil(8192 / 8) = 1024 of it (SGLang divides chunked_prefill_size by dp_size; vLLM runs a
  // scheduler per rank), so the prompts go to ranks 0 and 1 and both prefill 1024 tokens a
  // step: 2 x 1024 = 2048 prompt tokens in each of the first 8 steps, and both first tokens at
  // the end of step 8. Before, the first prompt took the whole 8192 on rank 0 in step 1 and
  // the second waited for step 2 with seven ranks idle: 8192 tokens, then 8192.
  const Deployment d = dpa_deployment("deepseek-v3", "h200", 8);
  const std::vector<Request> reqs(2, Request{0, 8192, 2});
  const SimRun run = simulate(d, reqs, SimOptions{});
  ASSERT_GE(run.steps.size(), 9U);
  for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(run.steps[k].prefill_tokens, 2048) << "step " << k;
  EXPECT_EQ(run.steps[8].prefill_tokens, 0);
  const double eighth = run.steps[7].start_s + run.steps[7].duration_s;
  EXPECT_DOUBLE_EQ(run.requests[0].first_token_s, eighth);
  EXPECT_DOUBLE_EQ(run.requests[1].first_token_s, eighth);
  // Steps of one rank's 1024-token chunk each: the whole prompt costs more than the lone
  // prompt's single prefill (fixed costs per step) but well under twice it.
  const double lone = prefill_step(d, 1, 8192).t_step.value();
  EXPECT_GT(eighth, lone);
  EXPECT_LT(eighth, 2 * lone);
}

}  // namespace
}  // namespace chalk::sim
