// Pins of whole simulations, bit for bit: the guard of the simulator's speed work (issues
// 29 and 31: memos, reused storage, a cheaper event loop must not move any figure). Each
// case folds every request record and every step sample (each double's bit pattern, each
// integer) into one 64-bit FNV-1a fingerprint and pins it beside a few readable figures.
//
// The pinned values are the output of main at 4ccc8a1 with the memory-bound kernels priced by
// their traffic (h-serve fec904f: steps a few percent longer, the plan search best at 32 chips, was 24), not hand
// derivations: this test checks that an optimisation is exact, the other simulator tests
// check the figures against theory. A change that deliberately moves a prediction (a new
// mechanism, a recalibration) moves these pins too: rerun the test and copy the new values
// from its failure message, saying why in the commit.
#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/plan.h"
#include "chalk/sim/simulator.h"
#include "chalk/sim/traffic.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk::sim {
namespace {

/// FNV-1a over 64-bit words (offset basis 14695981039346656037, prime 1099511628211).
struct PinHash {
  uint64_t h = 14695981039346656037ull;
  void add(uint64_t w) {
    for (int b = 0; b < 8; ++b) {
      h ^= (w >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void add(double x) { add(std::bit_cast<uint64_t>(x)); }
  void add(int64_t x) { add(static_cast<uint64_t>(x)); }
  void add(int32_t x) { add(static_cast<uint64_t>(static_cast<int64_t>(x))); }
  void add(bool x) { add(static_cast<uint64_t>(x)); }
};

/// Every figure of a run that a front end reports or summarises.
uint64_t pin_of(const SimRun& r) {
  PinHash p;
  for (const auto& q : r.requests) {
    p.add(q.arrival_s), p.add(q.scheduled_s), p.add(q.first_token_s), p.add(q.finish_s);
    p.add(q.input_tokens), p.add(q.output_tokens), p.add(q.cached_tokens), p.add(q.preemptions), p.add(q.rejected);
  }
  for (const auto& s : r.steps) {
    p.add(s.start_s), p.add(s.duration_s), p.add(s.decodes), p.add(s.steady_tokens), p.add(s.prefill_tokens);
    p.add(s.running), p.add(s.waiting), p.add(s.kv_blocks_used), p.add(s.compute_s), p.add(s.memory_s);
  }
  for (const double g : r.long_token_gaps_s) p.add(g);
  p.add(r.n_steps), p.add(r.kv_blocks_peak), p.add(r.kv_blocks_evicted), p.add(r.preemptions), p.add(r.rejected);
  p.add(r.end_s), p.add(r.busy_s), p.add(r.requests_in_system_s), p.add(r.decode_sequences_s), p.add(r.kv_blocks_s);
  return p.h;
}

/// Lengths with the Azure 2023 conversation trace's means (as bench/bench_sim.cc).
std::vector<Request> pin_traffic(int64_t n, double rate, uint64_t seed) {
  TrafficSpec t;
  t.requests = n;
  t.rate_per_s = rate;
  t.seed = seed;
  t.input = parse_length("lognormal:1155:0.8", "input");
  t.output = parse_length("lognormal:211:0.8", "output");
  return generate_traffic(t);
}

// bench_traces' production day in small: 2 replicas of Llama 3.1 70B on 8 H200, round
// robin, 3,000 requests at 40/s (each replica past its 15/s knee: queues build).
TEST(SimPin, LoadedReplicasAreBitIdentical) {
  Pool pool{chalk::testing::engine_deploy("llama-3.1-70b", "h200", 8), 2, {}};
  const ClusterRun c = simulate_aggregated(pool, pin_traffic(3000, 40, 11));
  ASSERT_EQ(c.runs.size(), 2u);
  EXPECT_EQ(c.runs[0].n_steps, 2609);
  EXPECT_EQ(c.runs[0].end_s, 0x1.bced7ae4271fcp+6) << std::hexfloat << c.runs[0].end_s;  // 111.2 s
  EXPECT_EQ(c.runs[0].kv_blocks_peak, 77231);
  EXPECT_EQ(pin_of(c.runs[0]), 16296333939223680354u);
  EXPECT_EQ(pin_of(c.runs[1]), 15930734551339851312u);
}

// The prefix cache (bench_sim's simulate_requests Arg 1 in small): 8 system prompts of
// 1,000 tokens, 16 conversations of 8 turns open at once, one replica at 15/s (1,000 requests).
TEST(SimPin, PrefixCacheRunIsBitIdentical) {
  auto reqs = pin_traffic(1000, 15, 3);
  PrefixTraffic p = parse_shared_prefix("1000:8", "pin");
  p = parse_sessions("16:8", "pin", p);
  apply_prefix_traffic(reqs, p, 3);
  const SimRun r = simulate(chalk::testing::engine_deploy("llama-3.1-70b", "h200", 8), reqs, {});
  EXPECT_EQ(r.n_steps, 1916);
  EXPECT_EQ(r.end_s, 0x1.7a7134e3ca91cp+6) << std::hexfloat << r.end_s;  // 94.6 s
  EXPECT_EQ(r.kv_blocks_peak, 75072);
  EXPECT_EQ(pin_of(r), 16275735098815147822u);
}

// An MoE with data-parallel attention ranks and MTP speculation: DeepSeek-V3 on 16 H200.
TEST(SimPin, MoeWithRanksAndSpeculationIsBitIdentical) {
  SimOptions o;
  o.speculation.drafter = Drafter::mtp;
  o.speculation.draft_tokens = 2;
  o.speculation.acceptance = 0.7;
  const SimRun r = simulate(chalk::testing::engine_deploy("deepseek-v3", "h200", 16), pin_traffic(1500, 30, 5), o);
  EXPECT_EQ(r.n_steps, 1655);
  EXPECT_EQ(r.end_s, 0x1.dbcf4608804c9p+6) << std::hexfloat << r.end_s;  // 119.0 s (295.1 s before prompt steps ran normal all-to-all kernels; 118.9 s with those kernels before the routed experts' activation pass)
  EXPECT_EQ(r.verify_tokens_kept, 309021);
  EXPECT_EQ(pin_of(r), 423314351710167456u);
}

// The SLO plan search (bench_sim's plan_deepseek in small): every deployment it simulated.
TEST(SimPin, PlanSearchIsBitIdentical) {
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  TrafficSpec t;
  t.rate_per_s = 100;
  t.requests = 100;
  t.input = parse_length("lognormal:2000:0.6", "input");
  t.output = parse_length("lognormal:200:0.6", "output");
  PlanOptions o;
  o.chip_budget = 64;
  o.slo.ttft_s = 1.0;
  o.slo.tpot_s = 0.05;
  const PlanReport r = plan_deployment(load_model("deepseek-v3"), load_system("h200"), base, generate_traffic(t), o);
  PinHash p;
  for (const auto& c : r.evaluated) {
    p.add(c.chips), p.add(c.replica_chips), p.add(c.replicas), p.add(c.decode_replica_chips), p.add(c.decode_replicas);
    p.add(c.max_sequences), p.add(c.max_batched_tokens), p.add(c.meets_slo);
    const SimSummary& s = c.summary;
    for (const Percentiles* q : {&s.ttft, &s.tpot, &s.itl, &s.e2e, &s.queue}) p.add(q->p50), p.add(q->p90), p.add(q->p99), p.add(q->mean);
    p.add(s.output_tok_per_s), p.add(s.goodput_req_per_s), p.add(s.little_l), p.add(s.mean_decode_batch), p.add(s.steps);
  }
  EXPECT_EQ(r.evaluated.size(), 159u);  // 174 before the steady-state bound (review 9 H1) turned down the runs too short for their queue
  EXPECT_EQ(r.simulations, 783);
  EXPECT_EQ(r.best ? r.evaluated[*r.best].chips : 0, 32);
  EXPECT_EQ(p.h, 14864680721381815090u);
}

}  // namespace
}  // namespace chalk::sim
