// KV offload tiers against hand derivations: the spec and its errors, each tier's fetch
// rate from the hardware files, the fetch time (blocks x bytes per block / bandwidth), the
// layer-wise overlap, the LRU cascade host -> SSD, and a trace whose sharing is known giving
// its per-tier hits; tiers that never receive a block leave the run unchanged.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/kv_offload.h"
#include "chalk/sim/simulator.h"
#include "chalk_testing/engine_deploy.h"
#include "offload_tiers.h"

namespace chalk::sim {
namespace {

std::string offload_error(const std::string& spec) {
  try {
    parse_kv_offload(spec, "--kv-offload");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(KvOffload, ParsesTiersAndRates) {
  const KvOffload o = parse_kv_offload("ssd:1000,host:64,host-bw:50", "--kv-offload");
  EXPECT_EQ(o.host_gb, 64);
  EXPECT_EQ(o.ssd_gb, 1000);
  EXPECT_EQ(o.host_gb_per_s, 50);
  EXPECT_EQ(o.ssd_gb_per_s, 0);
  EXPECT_TRUE(o.enabled());
  EXPECT_EQ(describe_kv_offload(o), "host:64,ssd:1000,host-bw:50");
  // Capacity 0 in both tiers: no tiers (the run is today's).
  EXPECT_FALSE(parse_kv_offload("host:0,ssd:0", "--kv-offload").enabled());
}

TEST(KvOffload, BadSpecsAreOneLineErrorsNamingTheFlag) {
  EXPECT_EQ(offload_error("disk:10"),
            "--kv-offload: got 'disk:10'; unknown tier 'disk'; expected host, ssd, host-bw or ssd-bw (host:GB[,ssd:GB][,host-bw:GB/s][,ssd-bw:GB/s])");
  EXPECT_EQ(offload_error("host:-1"), "--kv-offload: got 'host:-1'; host must be a number in [0, 1e+09], got '-1'");
  EXPECT_EQ(offload_error("host:64,ssd-bw:0"), "--kv-offload: got 'host:64,ssd-bw:0'; ssd-bw must be a number in (0, 1e+06], got '0'");
  EXPECT_EQ(offload_error("host"), "--kv-offload: got 'host'; 'host' has no ':'; expected host:GB[,ssd:GB][,host-bw:GB/s][,ssd-bw:GB/s]");
  EXPECT_EQ(offload_error("host:1,host:2"), "--kv-offload: got 'host:1,host:2'; 'host' is given twice");
  EXPECT_EQ(offload_error("host:nan"), "--kv-offload: got 'host:nan'; host must be a number in [0, 1e+09], got 'nan'");
}

TEST(KvOffload, RatesComeFromTheHardwareFileAtTheSlowerOfMemoryAndLink) {
  const KvOffload o{64, 1000, 0, 0};
  // HGX H100: DDR5 share 76.8 GB/s per GPU behind PCIe Gen5 x16 (64 GB/s): 64; the NVMe
  // tier's 7.0 GB/s read.
  const KvOffloadRates h100 = kv_offload_rates(load_system("h100-sxm"), o);
  EXPECT_DOUBLE_EQ(h100.host_bytes_per_s, 64e9);
  EXPECT_DOUBLE_EQ(h100.ssd_bytes_per_s, 7e9);
  // GB200: LPDDR5X 250 GB/s per GPU behind NVLink-C2C 225 GB/s per direction: 225.
  EXPECT_DOUBLE_EQ(kv_offload_rates(load_system("gb200-nvl72"), o).host_bytes_per_s, 225e9);
  // GB300: LPDDR5X 194 below C2C's 225: 194.
  EXPECT_DOUBLE_EQ(kv_offload_rates(load_system("gb300-nvl72"), o).host_bytes_per_s, 194e9);
  // L4 states no tier: PCIe Gen4 x16 (32 GB/s) and a Gen4 NVMe drive (7.0 GB/s).
  const KvOffloadRates l4 = kv_offload_rates(load_system("l4"), o);
  EXPECT_DOUBLE_EQ(l4.host_bytes_per_s, 32e9);
  EXPECT_DOUBLE_EQ(l4.ssd_bytes_per_s, 7e9);
  // Overrides win.
  EXPECT_DOUBLE_EQ(kv_offload_rates(load_system("h100-sxm"), KvOffload{64, 0, 50, 3}).host_bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(kv_offload_rates(load_system("h100-sxm"), KvOffload{64, 0, 50, 3}).ssd_bytes_per_s, 3e9);
}

TEST(KvOffload, FetchTimeAndLayerwiseOverlap) {
  // 10 blocks of 2 MB over 2 chips at 64 GB/s each: 10 x 2e6 / 128e9 = 156.25 us.
  EXPECT_DOUBLE_EQ(kv_fetch_seconds(10, 2e6, 2, 64e9), 1.5625e-4);
  EXPECT_EQ(kv_fetch_seconds(0, 2e6, 2, 64e9), 0);
  // Compute 10 ms, fetch 4 ms, 4 layers: f = 1, c = 2.5 ms; f + 3 max(f, c) + c = 1 + 7.5 +
  // 2.5 = 11 ms (= C + F / L when compute dominates).
  EXPECT_NEAR(layerwise_step_seconds(10e-3, 4e-3, 4), 11e-3, 1e-15);
  // Fetch 20 ms over compute 10 ms, 2 layers: 10 + max(10, 5) + 5 = 25 ms.
  EXPECT_NEAR(layerwise_step_seconds(10e-3, 20e-3, 2), 25e-3, 1e-15);
  // One layer: fetch, then compute. No fetch: the compute.
  EXPECT_NEAR(layerwise_step_seconds(10e-3, 4e-3, 1), 14e-3, 1e-15);
  EXPECT_EQ(layerwise_step_seconds(10e-3, 0, 32), 10e-3);
}

TEST(KvOffload, TiersCascadeLeastRecentlyUsedFirst) {
  // Host holds 2 blocks, SSD 1: demote a, b, c -> host {b, c}, SSD {a}; d -> host {c, d},
  // SSD {b}, a dropped.
  detail::OffloadTiers t(2, 1);
  for (const uint64_t h : {1, 2, 3}) t.demote(h);
  EXPECT_EQ(t.find(1), detail::Tier::ssd);
  EXPECT_EQ(t.find(3), detail::Tier::host);
  t.demote(4);
  EXPECT_EQ(t.find(1), detail::Tier::none);
  EXPECT_EQ(t.find(2), detail::Tier::ssd);
  EXPECT_EQ(t.find(4), detail::Tier::host);
  EXPECT_EQ(t.dropped(), 1);
  EXPECT_EQ(t.offloaded(), 4);
  t.remove(4);  // fetched back to HBM
  EXPECT_EQ(t.size(detail::Tier::host), 1);
  // No host tier: blocks go straight to SSD.
  detail::OffloadTiers ssd_only(0, 5);
  ssd_only.demote(9);
  EXPECT_EQ(ssd_only.find(9), detail::Tier::ssd);
}

Deployment offload_llama8_h100() { return chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", 1); }

/// The known-sharing trace, 100 s apart (each request finishes long before the next), one
/// output token each, in a pool of 10 blocks of 16 tokens:
///   R0: system prompt A (64 tokens = 4 blocks) + 16 own tokens: 5 blocks, all cached at its end;
///   R1: system prompt B (144 tokens) + 16 own: 10 blocks, which evicts R0's 5 blocks (LRU
///       order: R0 freed its tail first, so 4 (own), 3, 2, 1, 0) into the tiers;
///   R2: prompt A + 16 other own tokens: HBM holds only B; A's 4 blocks are in the tiers
///       (its block 4 mixes other own tokens: a miss), and at most (80 - 1) / 16 = 4 are looked up.
std::vector<Request> known_sharing() {
  std::vector<Request> r = {{0.0, 80, 1}, {100.0, 160, 1}, {200.0, 80, 1}};
  r[0].prefix = {{1, 64}};
  r[1].prefix = {{2, 144}};
  r[2].prefix = {{1, 64}};
  return r;
}

TEST(KvOffload, AReturningPrefixIsFetchedFromTheHighestTierHoldingIt) {
  const Deployment d = offload_llama8_h100();
  // Bytes per block: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 B (bf16) x 16 tokens = 2,097,152.
  const double per_block = 2.0 * 32 * 8 * 128 * 2 * 16;
  ASSERT_DOUBLE_EQ(memory_plan(d, 1, 16).kv_cache.value(), per_block);
  SimOptions o;
  o.kv_blocks = 10;
  const SimRun none = simulate(d, known_sharing(), o);
  EXPECT_EQ(none.requests[2].cached_tokens, 0);  // without tiers, A is gone
  EXPECT_EQ(none.kv_blocks_evicted, 10);  // R0's 5 for R1, then 5 of R1's for R2

  // Host of 0.011 GB: floor(11e6 / 2,097,152) = 5 blocks, all of R0's: R2 fetches its 4
  // blocks (64 tokens) from host at 64 GB/s: 4 x 2,097,152 / 64e9 = 131.072 us.
  o.kv_offload = {0.011, 0, 0, 0};
  const SimRun host = simulate(d, known_sharing(), o);
  EXPECT_EQ(host.offload_host_blocks, 5);
  EXPECT_EQ(host.requests[2].cached_tokens, 64);
  EXPECT_EQ(host.offload_host_tokens, 64);
  EXPECT_EQ(host.offload_ssd_tokens, 0);
  EXPECT_EQ(host.kv_blocks_offloaded, 10);  // every HBM eviction goes to the tiers
  EXPECT_DOUBLE_EQ(host.kv_fetched_bytes, 4 * per_block);
  EXPECT_NEAR(host.kv_fetch_s, 4 * per_block / 64e9, 1e-15);
  EXPECT_EQ(host.kv_blocks_leaked, 0);
  // R2's step computes 16 tokens after 64 and loads the 4 blocks layer by layer under it
  // (32 layers): C + F / 32 while the compute is the longer.
  ASSERT_EQ(host.n_steps, 3);
  const double c = prefill_step(d, 1, 16, 64).t_step.value(), f = 4 * per_block / 64e9;
  ASSERT_GT(c, f);
  EXPECT_NEAR(host.steps[2].duration_s, c + f / 32, 1e-12);

  // Host of 2 blocks (0.0045 GB) and an SSD: the evictions 4, 3, 2, 1, 0 leave host {1, 0}
  // and SSD {4, 3, 2}: R2 fetches blocks 0, 1 from host and 2, 3 from SSD (32 tokens each):
  // 2 x 2,097,152 / 64e9 + 2 x 2,097,152 / 7e9 = 65.536 + 599.186 us.
  o.kv_offload = {0.0045, 1, 0, 0};
  const SimRun both = simulate(d, known_sharing(), o);
  EXPECT_EQ(both.offload_host_blocks, 2);
  EXPECT_EQ(both.offload_host_tokens, 32);
  EXPECT_EQ(both.offload_ssd_tokens, 32);
  EXPECT_EQ(both.requests[2].cached_tokens, 64);
  EXPECT_NEAR(both.kv_fetch_s, 2 * per_block / 64e9 + 2 * per_block / 7e9, 1e-15);
}

TEST(KvOffload, TiersThatReceiveNothingLeaveTheRunUnchanged) {
  // Capacity 0 is today's run; so is a tier behind a pool that never evicts (the default,
  // HBM's ~36,000 blocks, for two 5-block prompts): every record and step the same.
  const Deployment d = offload_llama8_h100();
  std::vector<Request> r = known_sharing();
  SimOptions o;
  const SimRun base = simulate(d, r, o);
  for (const KvOffload k : {KvOffload{0, 0, 0, 0}, KvOffload{1, 10, 0, 0}}) {
    o.kv_offload = k;
    const SimRun run = simulate(d, r, o);
    EXPECT_EQ(run.kv_offload, k.enabled());
    ASSERT_EQ(run.n_steps, base.n_steps);
    for (std::size_t i = 0; i < r.size(); ++i) {
      EXPECT_EQ(run.requests[i].first_token_s, base.requests[i].first_token_s);
      EXPECT_EQ(run.requests[i].cached_tokens, base.requests[i].cached_tokens);
    }
    EXPECT_EQ(run.kv_fetch_s, 0);
  }
  EXPECT_EQ(base.requests[2].cached_tokens, 64);  // HBM kept A: the hit is HBM's
}

TEST(KvOffload, NegativeCapacityFromALibraryCallerIsAnError) {
  SimOptions o;
  o.kv_offload = {-1, 0, 0, 0};
  try {
    simulate(offload_llama8_h100(), known_sharing(), o);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "kv_offload: host must be a number >= 0, got -1");
  }
}

}  // namespace
}  // namespace chalk::sim
