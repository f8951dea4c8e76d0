// Mixed chips (docs/simulator.md, "Mixed chips"): the prefill pool on one system, the decode
// pool on another; the KV between them over the scale-out network at the slower NIC.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/metrics.h"

namespace chalk::sim {
namespace {

Deployment llama70(const SystemSpec& s, int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = true;
  return make_deployment(load_model("llama-3.1-70b"), s, o);
}

TEST(MixedChips, KvTransferTakesTheSlowerNicOverScaleOut) {
  // Llama 3.1 70B, bf16 KV: 327,680 B/token x 2,048 prompt tokens = 671,088,640 B (as
  // cluster_test.cc). Prefill on 4 H200, decode on 4 of an H200 whose NIC is cut to 25 GB/s
  // per chip per direction and renamed (another system): 4 + 4 chips would share one 8-GPU
  // NVLink domain were they one system, but two systems share only the scale-out network.
  // The slower side's NIC: 25 GB/s x 0.73125 achieved x min(4, 4) chips = 73.125 GB/s;
  // latency one NCCL LL network hop, 6.6 + 2.7 us: 9.3e-6 + 671,088,640 / 73.125e9 s
  // = 9.18643 ms.
  SystemSpec slow = load_system("h200");
  slow.name = "h200-slow-nic";
  slow.scale_out_bandwidth_per_direction = gigabytes_per_second(25);
  const Deployment pre = llama70(load_system("h200"), 4), dec = llama70(slow, 4);
  for (const KvTransfer& t : {kv_transfer(pre, dec, 2048, 8), kv_transfer(dec, pre, 2048, 8)}) {
    EXPECT_DOUBLE_EQ(t.bytes, 671088640.0);
    EXPECT_EQ(t.link, "scale-out");
    EXPECT_NEAR(t.bandwidth_bytes_per_s, 73.125e9, 1e-3);
    EXPECT_NEAR(t.latency_s, 9.3e-6, 1e-15);
    EXPECT_NEAR(t.seconds, 9.3e-6 + 671088640.0 / 73.125e9, 1e-12);
  }
  // Real systems: H200 prefill, B200 decode, both 50 GB/s NICs: 8 chips -> 292.5 GB/s.
  const KvTransfer hb = kv_transfer(llama70(load_system("h200"), 8), llama70(load_system("b200"), 8), 2048, 16);
  EXPECT_NEAR(hb.bandwidth_bytes_per_s, 292.5e9, 1e-3);
  EXPECT_NEAR(hb.seconds, 9.3e-6 + 671088640.0 / 292.5e9, 1e-12);
}

TEST(MixedChips, ASystemWithoutAScaleOutNetworkIsRefused) {
  SystemSpec none = load_system("h200");
  none.name = "h200-no-nic";
  none.scale_out_bandwidth_per_direction = BytesPerSecond(0);
  EXPECT_THROW(kv_transfer(llama70(load_system("h200"), 8), llama70(none, 8), 2048, 16), InputError);
}

TEST(MixedChips, EachPoolStepsOnItsOwnChip) {
  // H200 prefill, B200 decode: every transfer is the same 2,048-token one, and the decode
  // pool's token gaps are B200 steps (faster than H200's at the same batch).
  const Deployment pre = llama70(load_system("h200"), 8), dec = llama70(load_system("b200"), 8);
  TrafficSpec t;
  t.rate_per_s = 2;
  t.requests = 100;
  t.input = {LengthDist::Kind::fixed, 2048};
  t.output = {LengthDist::Kind::fixed, 64};
  const auto reqs = generate_traffic(t);
  const ClusterRun c = simulate_disaggregated(Pool{pre, 1, {}}, Pool{dec, 1, {}}, reqs);
  ASSERT_TRUE(c.fits) << c.reason;
  EXPECT_EQ(c.chips, 16);
  EXPECT_NEAR(c.kv_transfer_s_mean, kv_transfer(pre, dec, 2048, 16).seconds, 1e-12);
  const ClusterRun same = simulate_disaggregated(Pool{pre, 1, {}}, Pool{pre, 1, {}}, reqs);
  ASSERT_TRUE(same.fits);
  EXPECT_LT(summarize(c, {}).tpot.p50, summarize(same, {}).tpot.p50);
}

}  // namespace
}  // namespace chalk::sim
