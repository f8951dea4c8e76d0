// Prefix caching against hand derivations: shared system prompts hit whole blocks after
// the first request of each group, LRU eviction under a small KV pool, multi-turn
// sessions hit their history, cache-aware routing keeps each prefix on one replica.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/simulator.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk::sim {
namespace {

Deployment llama8_h100() { return chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", 1); }

/// Requests 10 s apart (each finishes long before the next: a prefill of a few hundred
/// tokens takes milliseconds), request k starting with system prompt groups[k] of
/// `system` tokens (id groups[k] + 1), then `own` tokens of its own; one output token.
std::vector<Request> spaced(const std::vector<int>& groups, int64_t system, int64_t own) {
  std::vector<Request> r;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    Request q{10.0 * static_cast<double>(k), system + own, 1};
    q.prefix = {{static_cast<uint64_t>(groups[k]) + 1, system}};
    r.push_back(q);
  }
  return r;
}

std::vector<int64_t> cached_of(const SimRun& run) {
  std::vector<int64_t> c;
  for (const auto& q : run.requests) c.push_back(q.cached_tokens);
  return c;
}

TEST(PrefixCache, SharedSystemPromptsHitWholeBlocksAfterTheFirstOfEachGroup) {
  // Two system prompts of P = 100 tokens, alternating, each followed by 50 own tokens;
  // vLLM's 16-token blocks, a pool far larger than six prompts. A group's first request
  // misses; each later one finds floor(100 / 16) = 6 blocks = 96 tokens (block 6, tokens
  // 96..111, mixes the prompt's end with the request's own tokens: no other request has it).
  const Deployment d = llama8_h100();
  const auto reqs = spaced({0, 1, 0, 1, 0, 1}, 100, 50);
  const SimRun run = simulate(d, reqs, SimOptions{});
  EXPECT_TRUE(run.prefix_caching);
  EXPECT_EQ(cached_of(run), (std::vector<int64_t>{0, 0, 96, 96, 96, 96}));
  EXPECT_EQ(run.kv_blocks_leaked, 0);
  EXPECT_EQ(run.kv_blocks_evicted, 0);
  // A hit computes 150 - 96 = 54 tokens after a 96-token prefix instead of all 150: the
  // TTFT differs by exactly the two prefill steps (each request runs alone).
  const auto ttft = [&](int k) { return run.requests[k].first_token_s - run.requests[k].arrival_s; };
  EXPECT_NEAR(ttft(2) - ttft(0), prefill_step(d, 1, 54, 96).t_step.value() - prefill_step(d, 1, 150).t_step.value(), 1e-12);
  EXPECT_LT(ttft(2), ttft(0));
}

TEST(PrefixCache, SmallPoolEvictsTheLeastRecentlyUsedBlock) {
  // Prompts of 17 tokens: a one-block (16-token) system prompt and 1 own token; one output
  // token, so a request holds blocks_for(17) = 2 blocks and leaves its full first block
  // cached (its second, 1 token, is freed).
  const Deployment d = llama8_h100();
  SimOptions o;
  // Two blocks in all: each new prefix must evict the last one: A, B, C, A, B, C never hit.
  o.kv_blocks = 2;
  EXPECT_EQ(cached_of(simulate(d, spaced({0, 1, 2, 0, 1, 2}, 16, 1), o)), (std::vector<int64_t>(6, 0)));
  // Four blocks: A, B, C cached (3 blocks) with one free; the second round hits all three.
  o.kv_blocks = 4;
  EXPECT_EQ(cached_of(simulate(d, spaced({0, 1, 2, 0, 1, 2}, 16, 1), o)), (std::vector<int64_t>{0, 0, 0, 16, 16, 16}));
  // Three blocks, A, B, A, C, A: after the second A the LRU order is B, A (A touched last);
  // C needs 2 blocks with 1 free and evicts B, not A (insertion order would evict A), so
  // the last A hits.
  o.kv_blocks = 3;
  const SimRun run = simulate(d, spaced({0, 1, 0, 2, 0}, 16, 1), o);
  EXPECT_EQ(cached_of(run), (std::vector<int64_t>{0, 0, 16, 0, 16}));
  EXPECT_EQ(run.kv_blocks_evicted, 1);
  EXPECT_EQ(run.kv_blocks_leaked, 0);
}

TEST(PrefixCache, SessionsHitTheirHistory) {
  // One conversation of 3 turns, 40 new tokens and 10 answer tokens a turn: prompts 40,
  // 40 + 10 + 40 = 90, 90 + 10 + 40 = 140. Turn 1 computed 40 + 10 - 1 = 49 tokens: 3 full
  // blocks (48 tokens, the prompt and 8 answer tokens), which turn 2 finds; turn 2 computed
  // 90 + 9 = 99: 6 blocks = 96 tokens, which turn 3 finds (at most (140 - 1) / 16 = 8).
  std::vector<Request> reqs(3, Request{0, 40, 10});
  PrefixTraffic p;
  p.sessions = 1;
  p.turns = 3;
  apply_prefix_traffic(reqs, p, 1);
  ASSERT_EQ(reqs[2].input_tokens, 140);
  for (int k = 0; k < 3; ++k) reqs[k].arrival_s = 10.0 * k;
  const SimRun run = simulate(llama8_h100(), reqs, SimOptions{});
  EXPECT_EQ(cached_of(run), (std::vector<int64_t>{0, 48, 96}));
}

TEST(PrefixCache, CacheAwareRoutingKeepsEachPrefixOnOneReplica) {
  // Two replicas, prefixes A A B B A A B B (100 + 50 tokens, as above). Round robin sends
  // A, B, A, B to each replica: each misses its first A and first B, 4 hits of 96 tokens.
  // Cache-aware: A to replica 0 (nothing cached anywhere, the smaller tree: a tie, the
  // first); the second A matches 96 / 150 = 0.64 > 0.3 there; B matches nowhere and goes to
  // the smaller tree, replica 1; loads stay within 64: 6 hits.
  const Deployment d = llama8_h100();
  const auto reqs = spaced({0, 0, 1, 1, 0, 0, 1, 1}, 100, 50);
  const auto hits = [&](Routing r) {
    Pool p{d, 2, SimOptions{}};
    p.routing = r;
    int64_t cached = 0;
    for (const auto& run : simulate_aggregated(p, reqs).runs) {
      for (const auto& q : run.requests) cached += q.cached_tokens;
    }
    return cached;
  };
  EXPECT_EQ(hits(Routing::round_robin), 4 * 96);
  EXPECT_EQ(hits(Routing::cache_aware), 6 * 96);
}

TEST(PrefixCache, CacheAwareRoutingFallsBackToTheLeastLoadedWhenUnbalanced) {
  // Eight requests with one prefix, balance thresholds 2 requests and 1.5x (the default
  // cache threshold 0.3 < the match 96 / 150): three go to replica 0 (then loads 3, 0:
  // 3 - 0 > 2 and 3 > 0 x 1.5, unbalanced), the fourth to the least loaded, replica 1. Both
  // now hold the prefix (equal matches): the fifth and sixth go to the less loaded, 1 (loads
  // 3, 3), the seventh to the first of equals, 0, the eighth to the less loaded, 1.
  Pool p{llama8_h100(), 2, SimOptions{}};
  p.routing = Routing::cache_aware;
  p.cache_aware.balance_abs_threshold = 2;
  EXPECT_EQ(route(p, spaced(std::vector<int>(8, 0), 100, 50)), (std::vector<int64_t>{0, 0, 0, 1, 1, 1, 0, 1}));
  p.cache_aware.cache_threshold = 1.5;
  try {
    route(p, spaced({0}, 100, 50));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "cache_threshold");
  }
}

TEST(PrefixCache, SimpleModeAndStructuredTrafficExcludeEachOther) {
  SimOptions o;
  o.prefix_hit_rate = 0.5;
  try {
    simulate(llama8_h100(), spaced({0}, 100, 50), o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "prefix_hit_rate");
  }
}

}  // namespace
}  // namespace chalk::sim
