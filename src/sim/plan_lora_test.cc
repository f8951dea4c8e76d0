// The planner's LoRA figures and its --max-loras search (plan_lora.h; docs/simulator.md 1.9
// and "Planning"), against hand derivations.
#include "chalk/sim/plan_lora.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

TEST(PlanLora, MaxLorasCandidatesArePowersOfTwoUpToTheAdaptersOrTheCap) {
  // Powers of two below min(N, cap), then min(N, cap) itself.
  EXPECT_EQ(max_loras_candidates(8, 256), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(max_loras_candidates(6, 256), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_EQ(max_loras_candidates(1000, 64), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));  // no more than one batch holds
  EXPECT_EQ(max_loras_candidates(1, 256), (std::vector<int64_t>{1}));
  EXPECT_TRUE(max_loras_candidates(0, 256).empty());
}

/// Llama 3.1 8B on one H100, 4 adapters of rank 16, 60 requests at 5/s of 256 + 16 tokens.
struct LoraCase {
  ModelSpec m = load_model("llama-3.1-8b");
  SystemSpec s = load_system("h100-sxm");
  std::vector<Request> reqs;
  PlanOptions o;
  DeploymentOptions base;
  LoraCase() {
    base.mechanisms.enabled = true;  // the engine step, as `chalk plan` runs it
    TrafficSpec t;
    t.rate_per_s = 5;
    t.requests = 60;
    t.input = {LengthDist::Kind::fixed, 256};
    t.output = {LengthDist::Kind::fixed, 16};
    reqs = generate_traffic(t);
    o.chip_budget = 1;
    o.replica_chips = {1};
    o.max_sequences = {64};
    o.disaggregated = false;
    o.slo.ttft_s = 0.1;
    o.lora = parse_lora("4:16", "--lora");
    apply_lora_traffic(reqs, o.lora, t.seed);  // as --lora draws them (sim_cli.cc)
  }
};

TEST(PlanLora, SearchesMaxLorasAndReportsTheChosenSlotsFigures) {
  const LoraCase k;
  const LoraPlan p = plan_lora(k.m, k.s, k.base, k.reqs, k.o, 64);
  EXPECT_TRUE(p.searched);
  ASSERT_EQ(p.tried.size(), 3U);  // 1, 2, 4 (= N)
  EXPECT_EQ(p.tried[0].max_loras, 1);
  EXPECT_EQ(p.tried[2].max_loras, 4);
  // One slot: a batch holds one adapter's requests, the others wait for them to finish (16
  // decode steps of ~7 ms, ~130 ms a request with its prefill, at 5 arrivals a second over
  // 4 adapters) and every change of adapter loads one (1.31 ms): TTFT p90 misses 100 ms.
  // Four slots: every request is admitted on arrival, one load per adapter, and meets it.
  EXPECT_FALSE(p.tried[0].met) << p.tried[0].ttft_at_percentile_s;
  ASSERT_TRUE(p.tried[2].met);
  ASSERT_TRUE(p.report.best.has_value());
  // All met values cost one chip; the choice is the least TTFT at the percentile among them.
  for (const auto& t : p.tried) {
    if (t.met) {
      EXPECT_LE(p.report.evaluated[*p.report.best].summary.ttft_at_slo_percentile_s, t.ttft_at_percentile_s);
    }
  }
  const PlanCandidate& c = p.report.evaluated[*p.report.best];
  ASSERT_TRUE(c.lora.has_value());
  EXPECT_EQ(c.lora->max_loras, p.max_loras);
  // One chip holds max_loras slots of one adapter's 83,886,080 bytes (lora_test.cc).
  EXPECT_EQ(c.lora->adapter_hbm_bytes_per_chip, static_cast<double>(p.max_loras) * 83'886'080);
  if (p.max_loras == 4) {
    // Four adapters in four slots: each loaded once (1.31072 ms each over 64 GB/s PCIe).
    EXPECT_EQ(c.lora->adapter_loads, 4);
    EXPECT_NEAR(c.lora->load_s, 4 * 1.31072e-3, 1e-12);
  }
  EXPECT_NEAR(c.lora->misses_per_s, static_cast<double>(c.lora->adapter_loads) / c.summary.duration_s, 1e-12);
  EXPECT_GT(c.lora->gemm_s, 0);
  EXPECT_GE(p.simulations, 3);  // one replica run per value at least
}

TEST(PlanLora, AStatedMaxLorasIsPlannedAloneAndNoAdaptersIsRefused) {
  LoraCase k;
  k.o.lora = parse_lora("4:16,max-loras:2", "--lora");
  EXPECT_TRUE(k.o.lora.max_loras_stated);
  const LoraPlan p = plan_lora(k.m, k.s, k.base, k.reqs, k.o, 64);
  EXPECT_FALSE(p.searched);
  ASSERT_EQ(p.tried.size(), 1U);
  EXPECT_EQ(p.max_loras, 2);
  k.o.lora = {};
  try {
    plan_lora(k.m, k.s, k.base, k.reqs, k.o, 64);
    FAIL() << "no adapters: expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "lora");
  }
}

}  // namespace
}  // namespace chalk::sim
