// The request simulator against queueing theory and closed forms: M/D/1, Little's law,
// the low-load steady state, conservation of requests and KV blocks.
#include "chalk/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/io/io.h"
#include "chalk/sim/metrics.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk::sim {
namespace {

Deployment sim_llama8_h100() { return chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", 1); }

SimSummary sim_summary_of(const SimRun& run, int64_t chips = 1, Slo slo = {}) {
  const SimRun* runs[] = {&run};
  return summarize(runs, chips, slo);
}

/// Every run: every request finished or rejected, no KV block leaked, Little's law.
void expect_sim_invariants(const SimRun& run) {
  for (const auto& r : run.requests) {
    if (r.rejected) continue;
    EXPECT_GE(r.scheduled_s, r.arrival_s);
    EXPECT_GE(r.first_token_s, r.scheduled_s);
    EXPECT_GE(r.finish_s, r.first_token_s);
    EXPECT_GT(r.finish_s, 0);
  }
  EXPECT_EQ(run.kv_blocks_leaked, 0);
  const SimSummary s = sim_summary_of(run);
  EXPECT_EQ(s.finished + s.rejected, s.requests);
  // Little's law, L = lambda W, over [0, end]: the simulator integrates the requests in the
  // system step by step; the records give W.
  EXPECT_NEAR(s.little_l, s.little_lambda_per_s * s.little_w_s, 1e-9 * s.little_l);
}

TEST(Simulator, MD1MeanWaitMatchesPollaczekKhinchine) {
  // One request at a time (max_sequences 1), one output token: service = one prefill step
  // of 1,024 tokens, S, the same for every request. Poisson arrivals at rho = 0.5:
  // M/D/1 mean wait W_q = rho S / (2 (1 - rho)) = 0.5 S.
  const Deployment d = sim_llama8_h100();
  const double S = prefill_step(d, 1, 1024).t_step.value();
  SimOptions o;
  o.policy.max_sequences = 1;
  for (const double rho : {0.5, 0.8}) {
    TrafficSpec t;
    t.rate_per_s = rho / S;
    t.requests = 200000;
    t.seed = 7;
    t.input = {LengthDist::Kind::fixed, 1024};
    t.output = {LengthDist::Kind::fixed, 1};
    const auto reqs = generate_traffic(t);
    const SimRun run = simulate(d, reqs, o);
    const SimSummary s = sim_summary_of(run);
    const double want = rho * S / (2 * (1 - rho));
    // The recorded queueing delay (scheduled - arrival) also holds each request's fixed
    // work before the scheduler (6.908 ms, below), the same for every request.
    const double fixed0 = o.policy.request_overhead_s;
    EXPECT_NEAR(s.queue.mean - fixed0, want, (rho < 0.6 ? 0.03 : 0.06) * want) << "rho " << rho;
    // TTFT = wait + S (DistServe's M/D/1 prefill queue: D + R D^2 / (2 (1 - R D))), plus
    // each request's fixed work before the scheduler sees it (vLLM's 6.91 ms), which shifts
    // every arrival alike and so leaves the queue an M/D/1 queue.
    const double fixed = o.policy.request_overhead_s;
    EXPECT_NEAR(fixed, 6.908e-3, 1e-12);
    EXPECT_NEAR(s.ttft.mean, want + S + fixed, 0.03 * (want + S + fixed));
    expect_sim_invariants(run);
  }
}

TEST(Simulator, LowLoadEqualsClosedFormStepTimes) {
  // Requests 100 s apart never meet: TTFT = the request's fixed work outside the GPU
  // (API server, tokenization, first-token streaming: kEngineRequestOverheadS = 9.54 -
  // 2.632 = 6.908 ms) + the prefill step of the whole prompt, and decode step k reads input
  // + k tokens of KV at batch 1, so TPOT = mean over k = 0..48 of decode_step(1, 2000 + k),
  // ITL the same steps (the fixed work is paid once, before the first token).
  const Deployment d = sim_llama8_h100();
  std::vector<Request> reqs;
  for (int i = 0; i < 20; ++i) reqs.push_back({100.0 * i, 2000, 50});
  const SimRun run = simulate(d, reqs, SimOptions{});
  const SimSummary s = sim_summary_of(run);
  const double ttft = 6.908e-3 + prefill_step(d, 1, 2000).t_step.value();
  double tpot = 0;
  for (int k = 0; k < 49; ++k) tpot += decode_step(d, 1, 2000 + k).t_step.value();
  tpot /= 49;
  EXPECT_NEAR(s.ttft.p50, ttft, 1e-12);
  EXPECT_NEAR(s.ttft.p99, ttft, 1e-12);
  EXPECT_NEAR(s.tpot.mean, tpot, 1e-9 * tpot);
  EXPECT_NEAR(s.itl.mean, tpot, 1e-9 * tpot);
  EXPECT_NEAR(s.queue.p99, 6.908e-3, 1e-12);  // the fixed work alone: no request waits for another
  EXPECT_EQ(s.preemptions, 0);
  expect_sim_invariants(run);
}

TEST(Simulator, RequestOverheadDelaysTheFirstTokenOnly) {
  // One 1,000-token request, 20 output tokens, alone: with the engine's fixed work w the
  // scheduler sees it w later, so its first token and its last come w later than with none
  // (w = 9.54 ms TTFT - 2.632 ms mocked forward = 6.908 ms, tt-inference-server #3560), its
  // token gaps are the same decode steps, and the GPU steps are the same steps.
  const Deployment d = sim_llama8_h100();
  const Request r{1.0, 1000, 20};
  SimOptions with;
  SimOptions bare;
  bare.policy.request_overhead_s = 0;
  const SimRun a = simulate(d, std::span(&r, 1), with), b = simulate(d, std::span(&r, 1), bare);
  const double w = 9.54e-3 - 2.632e-3;
  EXPECT_NEAR(with.policy.request_overhead_s, w, 1e-15);
  EXPECT_EQ(a.requests[0].arrival_s, 1.0);  // the client's arrival, not the scheduler's
  EXPECT_NEAR(a.requests[0].first_token_s - b.requests[0].first_token_s, w, 1e-12);
  EXPECT_NEAR(a.requests[0].finish_s - b.requests[0].finish_s, w, 1e-12);
  // TTFT alone = w + the prefill of 1,000 tokens.
  EXPECT_NEAR(a.requests[0].first_token_s - 1.0, w + prefill_step(d, 1, 1000).t_step.value(), 1e-12);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t k = 0; k < a.steps.size(); ++k) EXPECT_NEAR(a.steps[k].duration_s, b.steps[k].duration_s, 1e-15);
  expect_sim_invariants(a);  // Little's law counts the request from its arrival at the server
  // A disaggregated decode pool's request paid it upstream: its first token is its arrival.
  const SimRun dec = simulate(d, std::span(&r, 1), with, Phase::decode);
  EXPECT_EQ(dec.requests[0].first_token_s, 1.0);
  // Bad values name the field.
  SimOptions bad;
  bad.policy.request_overhead_s = -1e-3;
  EXPECT_THROW(simulate(d, std::span(&r, 1), bad), InputError);
  try {
    validate(bad.policy);
    ADD_FAILURE() << "negative overhead accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("request_overhead_s"), std::string::npos) << e.what();
  }
}

TEST(Simulator, EngineReleasesWithoutOverlapPayHostTimeEveryStep) {
  // vLLM before 0.14 ran its scheduler after each GPU step (async scheduling became the
  // default in v0.14.0): a lone request's every decode step lasts the GPU's plus one
  // sequence's host time, 5.5 ms / 256 = 21.484 us (vLLM issue #10634). The current
  // release overlaps it: a lone sequence's 21 us hide behind the GPU step.
  const Deployment d = sim_llama8_h100();
  const Request r{0, 1000, 20};
  SimOptions now, old;
  old.policy = engine_policy("vllm-0.10");
  EXPECT_EQ(old.policy.name, "vllm");
  EXPECT_EQ(old.policy.version, "0.10");
  EXPECT_FALSE(old.policy.host.overlap);
  EXPECT_TRUE(engine_policy("vllm-0.14.1").host.overlap);
  EXPECT_TRUE(engine_policy("vllm").host.overlap);
  EXPECT_FALSE(engine_policy("sglang-0.3.6").host.overlap);  // the overlap scheduler came in v0.4
  EXPECT_TRUE(engine_policy("trtllm-0.19").host.overlap);
  const SimRun a = simulate(d, std::span(&r, 1), now), b = simulate(d, std::span(&r, 1), old);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t k = 0; k < a.steps.size(); ++k) EXPECT_NEAR(b.steps[k].duration_s - a.steps[k].duration_s, 21.484375e-6, 1e-12) << k;
  // A release that is not one names the field and the form expected.
  for (const char* bad : {"vllm-", "vllm-x", "vllm-0..1", "vllm-1.2a", "vllm-99999999999999999999"}) {
    try {
      engine_policy(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "engine");
      EXPECT_NE(std::string(e.what()).find("NAME-X.Y"), std::string::npos) << e.what();
    }
  }
  try {
    engine_policy("tgi-2.0");
    ADD_FAILURE() << "tgi-2.0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown engine policy 'tgi-2.0'"), std::string::npos) << e.what();  // the value as typed
  }
}

TEST(Simulator, ChunkedPrefillSplitsALongPromptByTheBudget) {
  // A 20,000-token prompt under vLLM's 8,192-token budget runs in chunks of 8192, 8192
  // and 3616, each after the KV already written; TTFT is their sum.
  const Deployment d = sim_llama8_h100();
  const Request r{0, 20000, 2};
  const SimRun run = simulate(d, std::span(&r, 1), SimOptions{});
  // Plus the request's fixed work before the scheduler (6.908 ms, kEngineRequestOverheadS).
  const double want = 6.908e-3 + prefill_step(d, 1, 8192, 0).t_step.value() + prefill_step(d, 1, 8192, 8192).t_step.value() +
                      prefill_step(d, 1, 3616, 16384).t_step.value();
  EXPECT_NEAR(run.requests[0].first_token_s, want, 1e-12);
  EXPECT_EQ(run.n_steps, 4);
  // Without chunked prefill an engine refuses to start with a budget below the prompt
  // (vLLM: max_num_batched_tokens < max_model_len); with the budget raised to 20,000 the
  // whole prompt runs in one step.
  SimOptions trt;
  trt.policy = engine_policy("trtllm");
  EXPECT_THROW(simulate(d, std::span(&r, 1), trt), InputError);
  trt.policy.max_batched_tokens = 20000;
  const SimRun whole = simulate(d, std::span(&r, 1), trt);
  // The simulator runs TensorRT-LLM's kernels (its all-reduce, and its GEMMs at DEEPGEMM-2's
  // rate rather than vLLM's marginal one: engine/matmul_rate.h).
  Deployment dt = d;
  dt.mechanisms.tp_all_reduce = engine_tp_all_reduce("trtllm");
  EXPECT_NEAR(whole.requests[0].first_token_s, 6.908e-3 + prefill_step(dt, 1, 20000).t_step.value(), 1e-12);
}

TEST(Simulator, ConservationUnderPreemption) {
  // A KV cache of 400 blocks x 16 = 6,400 tokens against 64 requests of up to 1,200
  // tokens arriving together: the scheduler must preempt, and every request still
  // finishes with every block returned.
  const Deployment d = sim_llama8_h100();
  TrafficSpec t;
  t.rate_per_s = 1000;
  t.requests = 64;
  t.input = parse_length("uniform:200:800", "input");
  t.output = parse_length("uniform:100:400", "output");
  SimOptions o;
  o.kv_blocks = 400;
  const auto reqs = generate_traffic(t);
  const SimRun run = simulate(d, reqs, o);
  EXPECT_GT(run.preemptions, 0);
  EXPECT_EQ(run.rejected, 0);
  EXPECT_LE(run.kv_blocks_peak, 400);
  expect_sim_invariants(run);
  // Each request produced exactly its output tokens: TPOT and E2E are consistent.
  for (const auto& r : run.requests) EXPECT_GT(r.finish_s, r.first_token_s);
}

TEST(Simulator, ReservingToCompletionNeverPreemptsAndRunsFewer) {
  // The same 64 requests of 500 + 300 tokens against 400 blocks of 16 tokens (6,400
  // tokens). On demand, admission takes the prompt's 32 blocks (500/16 rounded up), so
  // 12 prompts are admitted at once (12 x 32 = 384) and their growth forces preemptions.
  // Reserved to completion (TensorRT-LLM's GUARANTEED_NO_EVICT), each admission takes
  // ceil(799 / 16) = 50 blocks: at most floor(400 / 50) = 8 run together, none is ever
  // preempted, and all finish later.
  const Deployment d = sim_llama8_h100();
  const std::vector<Request> reqs(64, Request{0, 500, 300});
  SimOptions o;
  o.kv_blocks = 400;
  const SimRun lazy = simulate(d, reqs, o);
  o.policy.reserve_to_completion = true;
  const SimRun held = simulate(d, reqs, o);
  EXPECT_GT(lazy.preemptions, 0);
  EXPECT_EQ(held.preemptions, 0);
  EXPECT_EQ(held.kv_blocks_peak, 400);  // 8 x 50: the pool full of reservations
  int64_t most = 0;
  for (const auto& s : held.steps) most = std::max<int64_t>(most, s.running);
  EXPECT_EQ(most, 8);
  EXPECT_GT(held.end_s, 0);
  expect_sim_invariants(held);
  expect_sim_invariants(lazy);
  EXPECT_TRUE(engine_policy("trtllm").reserve_to_completion);
  EXPECT_FALSE(engine_policy("vllm").reserve_to_completion);
  EXPECT_FALSE(engine_policy("sglang").reserve_to_completion);
}

TEST(Simulator, RejectsWhatCanNeverFitAndStaysDeterministic) {
  const Deployment d = sim_llama8_h100();
  SimOptions o;
  o.kv_blocks = 10;  // 160 tokens
  const std::vector<Request> reqs = {{0, 100, 10}, {0.001, 500, 10}, {0.002, 50, 5}};
  const SimRun run = simulate(d, reqs, o);
  EXPECT_TRUE(run.requests[1].rejected);
  EXPECT_EQ(run.rejected, 1);
  expect_sim_invariants(run);
  const SimRun again = simulate(d, reqs, o);
  EXPECT_EQ(again.end_s, run.end_s);
  // Attainment is a share of every request that arrived: 2 finished, 1 rejected, no SLO
  // target: 2 / 3, not 2 / 2 (a rejected request never gets a first token).
  EXPECT_NEAR(sim_summary_of(run).slo_attainment, 2.0 / 3.0, 1e-12);
  // Nothing finished: no percentile exists (count 0), attainment 0.
  const std::vector<Request> too_big = {{0, 500, 10}, {0.001, 600, 10}};
  Slo one_second;
  one_second.ttft_s = 1.0;
  const SimSummary none = sim_summary_of(simulate(d, too_big, o), 1, one_second);
  EXPECT_EQ(none.finished, 0);
  EXPECT_EQ(none.ttft.count, 0);
  EXPECT_EQ(none.e2e.count, 0);
  EXPECT_EQ(none.slo_attainment, 0.0);
}

TEST(Simulator, RejectsRequestsBeyondTheModelsContext) {
  // Llama 3.1 8B: max_position_embeddings 131,072. 131,000 in + 73 out = 131,073 tokens is
  // refused, as vLLM refuses prompt + max_tokens over max_model_len, whatever the KV cache
  // holds; 131,000 + 72 = 131,072 is served. A budget below a prompt without chunked
  // prefill is refused at the start unless only rejected requests are that long.
  const Deployment d = sim_llama8_h100();
  ASSERT_EQ(d.model.max_context, 131072);
  const std::vector<Request> reqs = {{0, 131000, 73}, {0.001, 131000, 72}, {0.002, 200000, 16}};
  const SimRun run = simulate(d, reqs, SimOptions{});
  EXPECT_TRUE(run.requests[0].rejected && run.requests[0].over_context);
  EXPECT_FALSE(run.requests[1].rejected);
  EXPECT_TRUE(run.requests[2].over_context);
  EXPECT_EQ(run.rejected, 2);
  expect_sim_invariants(run);
  EXPECT_EQ(sim_summary_of(run).rejected_over_context, 2);
  SimOptions whole;
  whole.policy.chunked_prefill = false;
  whole.policy.max_batched_tokens = 131000;
  EXPECT_NO_THROW(simulate(d, std::span(&reqs[2], 1), whole));
  whole.policy.max_batched_tokens = 130999;
  EXPECT_THROW(simulate(d, std::span(&reqs[1], 1), whole), InputError);
}

TEST(Simulator, PrefixHitsShortenThePrefill) {
  // Half of a 4,000-token prompt cached: the prefill computes 2,000 tokens after a
  // 2,000-token prefix.
  const Deployment d = sim_llama8_h100();
  SimOptions o;
  o.prefix_hit_rate = 0.5;
  const Request r{0, 4000, 1};
  const SimRun run = simulate(d, std::span(&r, 1), o);
  EXPECT_NEAR(run.requests[0].first_token_s, 6.908e-3 + prefill_step(d, 1, 2000, 2000).t_step.value(), 1e-12);  // + the fixed work
  EXPECT_EQ(run.requests[0].cached_tokens, 2000);
}

TEST(Simulator, BadOptionsNameTheField) {
  const Deployment d = sim_llama8_h100();
  const Request r{0, 10, 1};
  SimOptions o;
  o.prefix_hit_rate = 1;
  EXPECT_THROW(simulate(d, std::span(&r, 1), o), InputError);
  o = {};
  o.policy.block_size = 0;
  try {
    simulate(d, std::span(&r, 1), o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "block_size");
  }
  EXPECT_THROW(engine_policy("tgi"), InputError);
}

// The HBM fraction for weights and KV (vLLM's gpu_memory_utilization u = 1 - reserve) sets a
// replica's KV blocks: floor((u x 80e9 - W) / block bytes). Llama 3.1 8B in bf16, W =
// 16,060,522,496 B; KV 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B a token, 2,097,152 B a
// 16-token block: u 0.9 -> 55,939,477,504 / 2,097,152 = 26,674.02 -> 26,674 blocks;
// u 0.8 -> 47,939,477,504 / 2,097,152 = 22,859.32 -> 22,859.
TEST(Simulator, GpuMemoryUtilizationSetsTheKvBlocks) {
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  o.memory_reserve_fraction = 1 - 0.9;
  EXPECT_EQ(kv_blocks_available(make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o), 16), 26674);
  o.memory_reserve_fraction = 1 - 0.8;
  EXPECT_EQ(kv_blocks_available(make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o), 16), 22859);
}

TEST(Simulator, EngineNamesInAnyCaseAndABudgetOfAtLeastOneBlock) {
  EXPECT_EQ(engine_policy("VLLM").name, "vllm");
  EXPECT_EQ(release_name(engine_policy("SGLang-0.3.6")), "sglang-0.3.6");
  EXPECT_FALSE(engine_policy("SGLang-0.3.6").host.overlap);  // the release is read as in lower case
  EnginePolicy p = engine_policy("trtllm");  // 32-token blocks
  p.max_batched_tokens = 31;
  try {
    validate(p);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "max_batched_tokens");
    EXPECT_NE(std::string(e.what()).find("is 31, below the 32-token KV block"), std::string::npos) << e.what();
  }
  p.max_batched_tokens = 32;
  EXPECT_NO_THROW(validate(p));
}

TEST(Simulator, ProgressHookCountsEveryStepAndCanAbandonTheRun) {
  // SimOptions::progress (chalk web's work bound): the calls sum to n_steps, the run is the
  // same with and without it, and an exception it throws leaves simulate() unchanged.
  const Deployment d = sim_llama8_h100();
  TrafficSpec t;
  t.rate_per_s = 2;  // light load: mostly one request at a time, about 100 steps each
  t.requests = 100;
  t.input = parse_length("512", "input");
  t.output = parse_length("100", "output");
  const auto reqs = generate_traffic(t);
  const SimRun plain = simulate(d, reqs, SimOptions{});
  ASSERT_GT(plain.n_steps, 4096);  // several calls, and a remainder
  SimOptions o;
  int64_t counted = 0, calls = 0;
  o.progress = [&](int64_t steps) {
    counted += steps;
    ++calls;
  };
  const SimRun hooked = simulate(d, reqs, o);
  EXPECT_EQ(counted, hooked.n_steps);
  EXPECT_EQ(calls, (hooked.n_steps + 1023) / 1024);
  EXPECT_EQ(hooked.n_steps, plain.n_steps);
  EXPECT_EQ(hooked.end_s, plain.end_s);
  o.progress = [](int64_t) { throw std::runtime_error("stop"); };
  EXPECT_THROW(simulate(d, reqs, o), std::runtime_error);
}

}  // namespace
}  // namespace chalk::sim
