// Speculative decoding and MTP under load in the simulator (speculation.h; docs/simulator.md,
// "Speculative decoding"): the acceptance draws, batch 1 against decode's steady state,
// the gain falling with load, and the errors.
#include "chalk/sim/speculation.h"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/metrics.h"
#include "chalk/sim/simulator.h"
#include "chalk/sim/traffic.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk::sim {
namespace {

Deployment spec_llama8_h100() { return chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", 1); }

/// K drafts accepted with per-position probability a, drafted by one extra layer of the
/// model with its LM head (Drafter::mtp on any model: an EAGLE-style head, roofline.h).
ServingLevers spec_levers(int64_t k, double a) {
  ServingLevers l;
  l.draft_tokens = k;
  l.acceptance = a;
  l.drafter = Drafter::mtp;
  return l;
}

SimSummary spec_summary_of(const SimRun& run) {
  const SimRun* runs[] = {&run};
  return summarize(runs, 1, Slo{});
}

std::string spec_field_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "(no error)";
}

TEST(Speculation, AcceptanceDrawsHaveTheExpectedMeanAndShape) {
  // K = 3, a = 0.8: P(kept = 1) = 1 - a = 0.2, P(2) = a (1 - a) = 0.16, P(3) = a^2 (1 - a)
  // = 0.128, P(4) = a^3 = 0.512 (all three drafts accepted, plus the bonus token);
  // mean = 0.2 + 0.32 + 0.384 + 2.048 = 2.952 = (1 - 0.8^4) / (1 - 0.8) (Leviathan et al.
  // eq. 1). Variance 10.184 - 2.952^2 = 1.470, so over 200,000 draws the mean's standard
  // error is 1.212 / 447 = 0.0027 and P(4)'s is sqrt(0.512 x 0.488 / 2e5) = 0.0011.
  EXPECT_NEAR(expected_accepted_tokens(3, 0.8), 2.952, 1e-12);
  AcceptanceDraw draw(spec_levers(3, 0.8), 7);
  const int n = 200000;
  double sum = 0;
  std::vector<int> count(5, 0);
  for (int i = 0; i < n; ++i) {
    const int64_t k = draw.draw();
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 4);
    sum += static_cast<double>(k);
    ++count[static_cast<std::size_t>(k)];
  }
  EXPECT_NEAR(sum / n, 2.952, 0.012);
  EXPECT_NEAR(count[1] / double(n), 0.2, 0.005);
  EXPECT_NEAR(count[4] / double(n), 0.512, 0.005);
  // The same seed, the same draws; a = 0 keeps the verified token alone, a = 1 every draft.
  AcceptanceDraw again(spec_levers(3, 0.8), 7), other(spec_levers(3, 0.8), 7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(again.draw(), other.draw());
  AcceptanceDraw none(spec_levers(3, 0.0), 1), all(spec_levers(3, 1.0), 1);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(none.draw(), 1);
    EXPECT_EQ(all.draw(), 4);
  }
}

TEST(Speculation, AMeasuredMeanSetsTheAcceptanceThatDrawsIt) {
  // DeepSeek-V3's MTP, one draft: 1.875 kept = 1 + a, so a = 0.875 (report 5.4.3, the
  // midpoint of 85-90%). K = 3 at 2.952 kept: a = 0.8 (above). K = 2 at 3: a = 1.
  EXPECT_NEAR(acceptance_for_kept(1, 1.875), 0.875, 1e-9);
  EXPECT_NEAR(acceptance_for_kept(3, 2.952), 0.8, 1e-9);
  EXPECT_EQ(acceptance_for_kept(2, 3.0), 1.0);
  EXPECT_NEAR(acceptance_for_kept(4, 1.0), 0.0, 1e-9);
  ServingLevers l = spec_levers(1, 0);
  l.accepted_tokens = 1.875;
  EXPECT_NEAR(AcceptanceDraw(l, 1).acceptance(), 0.875, 1e-9);
}

TEST(Speculation, BadValuesNameTheField) {
  const Deployment d = spec_llama8_h100();
  const Request r{0.0, 100, 10};
  auto sim_with = [&](const ServingLevers& l) {
    SimOptions o;
    o.speculation = l;
    return [&d, &r, o] { simulate(d, std::span(&r, 1), o); };
  };
  EXPECT_EQ(spec_field_of(sim_with(spec_levers(-1, 0.5))), "--draft");   // K < 0
  EXPECT_EQ(spec_field_of(sim_with(spec_levers(0, 0.5))), "--draft");    // an acceptance without drafts: K < 1
  EXPECT_EQ(spec_field_of(sim_with(spec_levers(65, 0.5))), "--draft");
  EXPECT_EQ(spec_field_of(sim_with(spec_levers(2, 1.5))), "--acceptance");
  EXPECT_EQ(spec_field_of(sim_with(spec_levers(2, -0.1))), "--acceptance");
  ServingLevers over = spec_levers(2, 0);
  over.accepted_tokens = 3.5;  // > K + 1 = 3
  EXPECT_EQ(spec_field_of(sim_with(over)), "--accepted-tokens");
  EXPECT_EQ(spec_field_of([] { acceptance_for_kept(2, 3.5); }), "--accepted-tokens");
  EXPECT_EQ(spec_field_of([] { acceptance_for_kept(2, 0.5); }), "--accepted-tokens");
  EXPECT_EQ(spec_field_of([] { acceptance_for_kept(0, 1.0); }), "--draft");
  ServingLevers sparse = spec_levers(2, 0.5);
  sparse.sparse = SparseAttention::top_k;
  sparse.sparse_top_k = 64;
  EXPECT_EQ(spec_field_of(sim_with(sparse)), "--sparse-top-k");
}

TEST(Speculation, BatchOneEqualsDecodesSteadyState) {
  // Requests 100 s apart never meet, so every decode step is decode_step(d, 1, c, levers)
  // at that request's context c, and kept k_j tokens are drawn per step. A request of 1,001
  // output tokens takes its 1,000 after the first in N steps, TPOT = sum_j T(c_j) / 1,000
  // ~ T(2,500) / E[kept]: T is linear in c over 2,000..3,000 at batch 1 (the KV read), the
  // mean context of the steps 2,500; E[kept] = 2.952 (K = 3, a = 0.8). The last step's
  // cut costs under half a step in 339 (0.15%). Noise: N has variance ~ 1,000 var/mean^3 =
  // 1,000 x 1.470 / 25.7 = 57 (renewal theorem), 2.2% of 339 per request, 0.28% over 64
  // requests: 1% is 3.6 standard errors. decode's figure: 1 / tokens_per_s_per_user.
  const Deployment d = spec_llama8_h100();
  const ServingLevers l = spec_levers(3, 0.8);
  std::vector<Request> reqs;
  for (int i = 0; i < 64; ++i) reqs.push_back({100.0 * i, 2000, 1001});
  SimOptions o;
  o.speculation = l;
  const SimRun run = simulate(d, reqs, o);
  const SimSummary s = spec_summary_of(run);
  const DecodeStep step = decode_step(d, 1, 2500, resolve_levers(l, 2500));
  const double decode_tpot = 1 / step.tokens_per_s_per_user.value();
  EXPECT_NEAR(s.tpot.mean, decode_tpot, 0.01 * decode_tpot);
  EXPECT_GT(step.t_draft.value(), 0);  // the drafter's three passes are in both
  // The run's mean kept per step: 21,700 verify steps, standard error 1.212 / 147 = 0.008.
  EXPECT_NEAR(s.accepted_tokens_per_step, 2.952, 0.03);
  EXPECT_EQ(run.verify_steps, s.steps - 64);  // every step but the 64 prefills verified one sequence
  // TPOT varies by request (the draws), where plain decode gives every request the same.
  EXPECT_GT(s.tpot.p99 - s.tpot.p50, 0.005 * s.tpot.p50);
  EXPECT_EQ(run.kv_blocks_leaked, 0);
}

TEST(Speculation, TheGainFallsWithLoad) {
  // Gain = TPOT without drafts / TPOT with K = 3, a = 0.8. At batch 1 (a request every
  // 20 s, each done in ~1.5 s) the step is the weight read: four query tokens and the
  // drafter's three small passes cost little more than one token, so the gain is near
  // decode's T(1 token) / (T(4 tokens + drafts) / 2.952). At 50 requests/s the batch holds
  // about a hundred sequences, 400 verify tokens a step: the matmuls turn compute-bound,
  // every draft costs its FLOPs and the drafter's passes grow with the batch, so the gain
  // falls (issue 31: draft and verify compete with other requests' decode).
  const Deployment d = spec_llama8_h100();
  auto gain_at = [&](double rate, int64_t n, double* batch) {
    TrafficSpec t;
    t.rate_per_s = rate;
    t.requests = n;
    t.seed = 3;
    t.input = {LengthDist::Kind::fixed, 1000};
    t.output = {LengthDist::Kind::fixed, 200};
    const auto reqs = generate_traffic(t);
    SimOptions plain, sped;
    sped.speculation = spec_levers(3, 0.8);
    const SimSummary a = spec_summary_of(simulate(d, reqs, plain)), b = spec_summary_of(simulate(d, reqs, sped));
    if (batch) *batch = a.mean_decode_batch;
    return a.tpot.mean / b.tpot.mean;
  };
  double low_batch = 0, high_batch = 0;
  const double low = gain_at(0.05, 40, &low_batch), high = gain_at(50, 600, &high_batch);
  const DecodeLevers with = resolve_levers(spec_levers(3, 0.8), 1100);
  const double decode_gain = decode_step(d, 1, 1100).t_step.value() / (decode_step(d, 1, 1100, with).t_step.value() / 2.952);
  EXPECT_LT(low_batch, 1.01);
  EXPECT_GT(high_batch, 50);
  EXPECT_NEAR(low, decode_gain, 0.03 * decode_gain);  // 40 requests x 200 tokens: ~2% noise at most
  EXPECT_GT(low, 2.0);
  EXPECT_LT(high, 0.8 * low);
  // The same at an equal batch: 256 requests arriving together decode side by side (batch
  // ~180 averaged over the run, prefills included) with and without drafts; at an equal
  // arrival rate speculation also shortens each request's stay and so its batch (at 20/s:
  // ~51 sequences without drafts, ~19 with), which can raise the gain at moderate load.
  const std::vector<Request> burst(256, Request{0.0, 1000, 200});
  SimOptions plain, sped;
  sped.speculation = spec_levers(3, 0.8);
  const double together = spec_summary_of(simulate(d, burst, plain)).tpot.mean / spec_summary_of(simulate(d, burst, sped)).tpot.mean;
  EXPECT_GT(together, 1.0);
  EXPECT_LT(together, 0.7 * low);
}

}  // namespace
}  // namespace chalk::sim
