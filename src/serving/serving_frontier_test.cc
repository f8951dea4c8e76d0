// The latency-cost frontier and the fast/slow-mode answers. Hand numbers for Llama 3.1
// 70B on 8 H200 at 4,096 tokens come from serving_test.cc's header: cost(B) = 43.478 / B +
// 0.41982 $/Mtok and T_step(B) = 4.3095 + 0.041612 B ms (memory-bound at every batch).
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "chalk_testing/expect.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/serving.h"
#include "serving_replicas.h"

namespace chalk {
namespace {

using chalk::testing::expect_rel;

struct Case {
  const char* model;
  const char* system;
};
const Case kCases[] = {{"deepseek-v3", "h200"}, {"deepseek-v3", "gb200-nvl72"}, {"llama-3.1-70b", "h200"},
                       {"llama-3.1-70b", "gb200-nvl72"}};

TEST(ServingFrontier, IsMonotoneAndDominatesEveryPoint) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.model) + " on " + c.system);
    const SystemSpec s = load_system(c.system);
    const Frontier f = latency_cost_frontier(load_model(c.model), s, {}, {});
    ASSERT_GE(f.frontier.size(), 5u);
    EXPECT_TRUE(f.has_price);
    for (size_t i = 1; i < f.frontier.size(); ++i) {
      // Faster costs strictly more along the frontier.
      EXPECT_GT(f.frontier[i].tokens_per_s_per_user, f.frontier[i - 1].tokens_per_s_per_user);
      EXPECT_GT(*f.frontier[i].cost_per_token, *f.frontier[i - 1].cost_per_token);
      EXPECT_LT(f.frontier[i].tokens_per_s_per_chip, f.frontier[i - 1].tokens_per_s_per_chip);
    }
    // No point off the frontier beats a frontier point on both axes.
    for (const auto& p : f.points) {
      if (p.on_frontier) continue;
      bool dominated = false;
      for (const auto& q : f.frontier) {
        dominated = dominated || (q.tokens_per_s_per_user >= p.tokens_per_s_per_user &&
                                  q.tokens_per_s_per_chip.value() * (1 + 1e-9) >= p.tokens_per_s_per_chip.value());
      }
      EXPECT_TRUE(dominated) << p.n_chips << " chips, batch " << p.batch;
    }
    // The fastest point is batch 1; the cheapest is as cheap as any point (up to rounding).
    EXPECT_EQ(f.frontier.back().batch, 1);
    for (const auto& p : f.points) {
      EXPECT_LE(p.tokens_per_s_per_chip.value(), f.frontier.front().tokens_per_s_per_chip.value() * (1 + 1e-9));
    }
    EXPECT_LE(f.frontier.back().n_chips, s.scale_up_domain);
  }
}

TEST(ServingFrontier, ExcludesReplicasThatDoNotFitWithTheReason) {
  // DeepSeek-V3's 673.2 GB of weights (FP8 with an fp32 scale per 128 x 128 block) + 10% reserve need n x 141 x 0.9 >= 673.2: n >= 5.3.
  // Of an 8-GPU domain an engine runs 1, 2, 4 and 8 (128 heads, 256 experts: 3, 5, 6, 7
  // split neither), so 1, 2 and 4 are excluded for memory and 8 remains.
  const Frontier f = latency_cost_frontier(load_model("deepseek-v3"), load_system("h200"), {}, {});
  ASSERT_EQ(f.excluded.size(), 3u);
  EXPECT_EQ(f.excluded[0].n_chips, 1);
  EXPECT_EQ(f.excluded[1].n_chips, 2);
  EXPECT_EQ(f.excluded[2].n_chips, 4);
  EXPECT_NE(f.excluded[2].reason.find("weights 673.2 GB + reserve 56.4 GB exceed the HBM of 4 x 141 GB"), std::string::npos)
      << f.excluded[2].reason;
  ASSERT_FALSE(f.points.empty());
  for (const auto& p : f.points) EXPECT_EQ(p.n_chips, 8);
}

// Issue 12: a frontier offers only replica sizes a serving engine can run, unless asked.
TEST(ServingFrontier, OffersOnlyReplicaSizesAnEngineRuns) {
  // Llama 3.1 8B: 32 query and 8 KV heads, FFN 14336 = 2^11 x 7: TP n needs n | 32 and
  // n | 14336, so within 8 GPUs 1, 2, 4, 8 (TP3 leaves 32/3 heads; TP6, 5.33).
  const ModelSpec llama = load_model("llama-3.1-8b");
  std::vector<int64_t> runnable;
  for (int64_t n = 1; n <= 8; ++n) {
    if (detail::sweep_size_problem(llama, n).empty()) runnable.push_back(n);
  }
  EXPECT_EQ(runnable, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(detail::sweep_size_problem(llama, 3), "TP3 does not divide the 32 attention heads");
  // DeepSeek-V3: 128 heads (MLA) and 256 routed experts: within 72 chips the powers of two
  // to 64; 72 splits neither (72 does not divide 256: 3.56 experts per chip).
  const ModelSpec v3 = load_model("deepseek-v3");
  runnable.clear();
  for (int64_t n = 1; n <= 72; ++n) {
    if (detail::sweep_size_problem(v3, n).empty()) runnable.push_back(n);
  }
  EXPECT_EQ(runnable, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(detail::replica_sizes(v3, load_system("gb200-nvl72"), {}), runnable);
  // Asked for, a size is kept: the user knows their engine.
  EXPECT_EQ(detail::replica_sizes(v3, load_system("gb200-nvl72"), {72, 6}), (std::vector<int64_t>{6, 72}));
  FrontierOptions o;
  o.replica_chips = {3};
  const Frontier f = latency_cost_frontier(llama, load_system("h100-sxm"), {}, o);
  ASSERT_FALSE(f.points.empty());
  EXPECT_EQ(f.points.front().n_chips, 3);
  // By default the 8B frontier on H100 sees only 1, 2, 4 and 8.
  const Frontier all = latency_cost_frontier(llama, load_system("h100-sxm"), {}, {});
  for (const auto& p : all.points) EXPECT_TRUE(p.n_chips == 1 || p.n_chips == 2 || p.n_chips == 4 || p.n_chips == 8) << p.n_chips;
}

TEST(ServingFrontier, MechanismsTryDataParallelAttentionForMoe) {
  // DeepSeek-V3 on GB200 NVL72 with mechanisms: on 72 chips the derived layout is attention
  // TP8 x 9 groups, which keeps the MLA latent on 8 ranks; data-parallel attention keeps
  // it once and fills HBM with 34,776 sequences at 4k (483 whole ones per rank), the cost
  // floor once two micro-batches hide its NVLink exchanges (10.6 ms) inside the decode
  // windows, for a second pass over the weights (+4.1 ms): 48.8 ms against 51.7, $0.127
  // against $0.135 per Mtok. The roofline (no mechanisms) has no layouts.
  DeploymentOptions mech;
  mech.mechanisms.enabled = true;
  FrontierOptions o;
  o.replica_chips = {72};
  const Frontier f = latency_cost_frontier(load_model("deepseek-v3"), load_system("gb200-nvl72"), mech, o);
  const std::string dp_layout = "attention TP1, FFN TP1, experts EP72 x TP1";
  const std::string tbo_layout = dp_layout + ", two micro-batches overlap EP traffic";
  bool tp8 = false, dp = false;
  double dp_floor_step_ms = 0;
  for (const auto& p : f.points) {
    tp8 = tp8 || p.layout.rfind("attention TP8,", 0) == 0;
    if (p.layout == dp_layout && p.batch == 34776) {
      dp = true;
      dp_floor_step_ms = to_ms(p.t_step);
    }
  }
  EXPECT_TRUE(tp8);
  EXPECT_TRUE(dp);
  // 51.70 before the engine counted the router GEMM, 2 x 7,168 x 256 x 58 = 213 MFLOP per token;
  // 51.72 before CUDA graphs: 483 sequences per rank replay vLLM's graph of 496 tokens, 13
  // padded tokens per rank through every matmul (docs/formulas.md, "CUDA graphs").
  // 52.31 before the routed experts' grouped GEMMs paid their per-tile fixed cost (K_g,
  // engine/gemm_shape.h routed_expert_grouped_efficiency). 54.29 before the dense GEMMs (3
  // dense FFN layers, the LM head) paid their per-rank shape (engine/dense_gemm.h). 54.39
  // before the routed experts' activation pass (engine/memory_kernels.h, 12,288 bytes a
  // token-expert pair at vLLM's bf16 out, beyond the kernel floor): +0.04 ms.
  EXPECT_NEAR(dp_floor_step_ms, 54.43, 0.01);
  const FrontierPoint& floor = f.frontier.front();  // cheapest
  EXPECT_EQ(floor.layout, tbo_layout);
  EXPECT_EQ(floor.batch, 34776);
  // 48.82 before the padding to 496; 49.17 before vLLM's bf16 GEMMs (LM head, router)
  // streamed at their marginal rate (engine/matmul_rate.h).
  // 49.08 before the experts' per-tile fixed cost; 51.06 before the dense GEMMs' shape.
  EXPECT_NEAR(to_ms(floor.t_step), 51.14, 0.01);
  EXPECT_EQ(floor.t_comm.value(), 0);
  const Frontier plain = latency_cost_frontier(load_model("deepseek-v3"), load_system("gb200-nvl72"), {}, o);
  for (const auto& p : plain.points) EXPECT_EQ(p.layout, "");
  // A dense model: Llama 3.1 70B's 64 heads split over 8 of the 72 chips; its FFN over the
  // 8 (nine copies) or over all 72 (one copy, an all-reduce over the rack).
  const Frontier dense = latency_cost_frontier(load_model("llama-3.1-70b"), load_system("gb200-nvl72"), mech, o);
  bool ffn8 = false, ffn72 = false;
  for (const auto& p : dense.points) {
    ffn8 = ffn8 || p.layout.rfind("attention TP8, FFN TP8 ", 0) == 0 || p.layout == "attention TP8, FFN TP8 (derived)";
    ffn72 = ffn72 || p.layout == "attention TP8, FFN TP72";
    EXPECT_EQ(p.layout.rfind("attention TP8, FFN TP", 0), 0u) << p.layout;
  }
  EXPECT_TRUE(ffn8);
  EXPECT_TRUE(ffn72);
}

TEST(ServingModes, DenseModelsKeepTheFfnOverTheReplica) {
  // Llama 3.1 405B on 12 GB200 chips: its 128 heads split over 4, so the derived layout keeps
  // three copies of every weight (2435 GB, more than 12 x 186 GB); with the FFN over all 12
  // it fits and is the rack's cost floor, as `chalk layouts` finds (attention TP4 x 3, FFN
  // TP12: 384 sequences at 4k; 420, the HBM-full batch, before the dense GEMMs paid their
  // per-rank shape, engine/dense_gemm.h: 420 rows pad to 448 in 64-row tiles, 384 to 384).
  DeploymentOptions mech;
  mech.mechanisms.enabled = true;
  ModesOptions o;
  o.replica_chips = {12};
  const ModesReport r = fast_and_slow_modes(load_model("llama-3.1-405b"), load_system("gb200-nvl72"), mech, o);
  EXPECT_EQ(r.cheapest.n_chips, 12);
  EXPECT_EQ(r.cheapest.batch, 384);
  EXPECT_EQ(r.cheapest.layout, "attention TP4, FFN TP12");
}

TEST(ServingFrontier, BadOptions) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  FrontierOptions o;
  o.batches = {0};
  EXPECT_THROW(latency_cost_frontier(m, s, {}, o), InputError);
  o = {};
  o.replica_chips = {0};
  EXPECT_THROW(latency_cost_frontier(m, s, {}, o), InputError);
  o = {};
  o.context = -1;
  EXPECT_THROW(latency_cost_frontier(m, s, {}, o), InputError);
  o = {};
  o.batches = every_integer(1, 1000000);
  o.replica_chips = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_THROW(latency_cost_frontier(m, s, {}, o), InputError);  // 9M points
}

TEST(ServingModes, Llama70bOnH200ByHand) {
  const ModesReport r = fast_and_slow_modes(load_model("llama-3.1-70b"), load_system("h200"), {}, {});
  // Cost floor within HBM: B = 651 on 8 chips, 43.478 / 651 + 0.41982 = 0.48661 $/Mtok.
  EXPECT_EQ(r.cheapest.n_chips, 8);
  EXPECT_EQ(r.cheapest.batch, 651);
  expect_rel(to_usd_per_mtok(*r.cheapest.cost_per_token), 0.48661, 2e-3);
  // Baseline: the fastest point within 1% of it: 43.478 / B + 0.41982 <= 0.49148 -> B >= 606.7
  // -> 607; T_step = 4.3095 + 607 x 0.041612 = 29.568 ms -> 33.82 tok/s per user.
  EXPECT_EQ(r.baseline.batch, 607);
  expect_rel(r.baseline.tokens_per_s_per_user.value(), 33.82, 2e-3);
  // 2.5x the speed, 84.55 tok/s: B = 180 (serving_test), cost 43.478 / 180 + 0.41982 =
  // 0.66136 against 43.478 / 607 + 0.41982 = 0.49145: 1.3457x the price.
  ASSERT_EQ(r.fast.size(), 1u);
  ASSERT_TRUE(r.fast[0].point);
  EXPECT_EQ(r.fast[0].point->batch, 180);
  expect_rel(r.fast[0].price_multiple, 1.3457, 3e-3);
  // 6x the price: 43.478 / B + 0.41982 <= 2.9487 -> B >= 17.19 -> 18; T_step 5.0585 ms ->
  // 197.69 tok/s = 5.845x the speed.
  ASSERT_EQ(r.budget.size(), 2u);
  EXPECT_EQ(r.budget[0].point.batch, 18);
  expect_rel(r.budget[0].speed_multiple, 5.845, 3e-3);
  // 100x the price: batch 1 costs 43.898 $/Mtok = 89.3x; nothing faster exists on 8 H200:
  // 1 / 4.3511 ms = 229.8 tok/s = 6.796x.
  EXPECT_TRUE(r.budget[1].capped_by_fastest);
  EXPECT_EQ(r.budget[1].point.batch, 1);
  expect_rel(r.budget[1].speed_multiple, 6.796, 3e-3);
  expect_rel(r.price_multiple_at_fastest, 89.32, 3e-3);
  // Slow mode: the floor of the hyperbola is the KV term, 0.41982 $/Mtok; the HBM-full batch
  // gets within 0.48661 / 0.41982 = 1.159x of it.
  expect_rel(to_usd_per_mtok(*r.asymptotic_cost_per_token), 0.41982, 2e-3);
  expect_rel(r.floor_gap, 1.1591, 2e-3);
  EXPECT_NE(r.what_stops_it.find("weights"), std::string::npos);
}

TEST(CheapestReplica, Llama70bOnH200ByHand) {
  // The default deployment of every pricing command (issue 30). On n H200 the memory-full
  // batch is floor((0.9 n 141 GB - 141.106 GB of weights) / 1.34218 GB per sequence) and
  // the cost 43.478 / B + 0.41982 $/Mtok on any n (weights and price both scale with n):
  //   n = 8: (1015.2 - 141.106) / 1.34218 = 651.2 -> 651, 0.48661 $/Mtok (the choice);
  //   n = 4: ( 507.6 - 141.106) / 1.34218 = 273.1 -> 273, 43.478 / 273 + 0.41982 = 0.57908;
  //   n = 2: ( 253.8 - 141.106) / 1.34218 =  83.96 -> 83, 0.94365; n = 1 does not hold the weights.
  const ReplicaChoice c = cheapest_replica(load_model("llama-3.1-70b"), load_system("h200"), {}, 4096);
  EXPECT_EQ(c.choice.n_chips, 8);
  EXPECT_EQ(c.choice.batch, 651);
  EXPECT_EQ(c.deployment.n_chips, 8);
  expect_rel(to_usd_per_mtok(*c.choice.cost_per_token), 0.48661, 2e-3);
  ASSERT_TRUE(c.runner_up);
  EXPECT_EQ(c.runner_up->n_chips, 4);
  EXPECT_EQ(c.runner_up->batch, 273);
  expect_rel(to_usd_per_mtok(*c.runner_up->cost_per_token), 0.57908, 2e-3);
  EXPECT_EQ(c.replica_sizes, (std::vector<int64_t>{1, 2, 4, 8}));
  ASSERT_EQ(c.excluded.size(), 1u);
  EXPECT_EQ(c.excluded[0].n_chips, 1);
}

TEST(CheapestReplica, IsTheCostFloorOfTheModesUnderTheEngineStep) {
  // One search: the choice is fast_and_slow_modes' cheapest point, and the runner-up, on
  // another replica size, costs at least as much.
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.model) + " on " + c.system);
    const ModelSpec m = load_model(c.model);
    const SystemSpec s = load_system(c.system);
    const ReplicaChoice r = cheapest_replica(m, s, o, 4096);
    const ModesReport modes = fast_and_slow_modes(m, s, o, {});
    EXPECT_EQ(r.choice.n_chips, modes.cheapest.n_chips);
    EXPECT_EQ(r.choice.batch, modes.cheapest.batch);
    EXPECT_EQ(r.choice.layout, modes.cheapest.layout);
    EXPECT_EQ(r.deployment.n_chips, r.choice.n_chips);
    // A runner-up exactly when another size holds the model (DeepSeek-V3 on H200: only 8).
    size_t fitting_sizes = r.replica_sizes.size();
    for (const auto& e : r.excluded) fitting_sizes -= e.n_chips != r.choice.n_chips ? 1 : 0;
    EXPECT_EQ(r.runner_up.has_value(), fitting_sizes > 1);
    EXPECT_EQ(r.runner_up.has_value(), std::string(c.model) != "deepseek-v3" || std::string(c.system) != "h200");
    if (r.runner_up) {
      EXPECT_NE(r.runner_up->n_chips, r.choice.n_chips);
      EXPECT_LE(r.runner_up->tokens_per_s_per_chip.value(), r.choice.tokens_per_s_per_chip.value() * (1 + 1e-9));
    }
    // The memory-full batch, or one within 64 below it no dearer (cheapest_batch.h).
    const int64_t full = r.choice.memory_full_batch, b = r.choice.batch;
    EXPECT_TRUE(memory_plan(r.deployment, b, 4096).fits && !memory_plan(r.deployment, full + 1, 4096).fits && b <= full && b >= full - 64);
    EXPECT_GE(r.choice.tokens_per_s_per_chip.value(), decode_step(r.deployment, full, 4096).tokens_per_s_per_chip.value());
  }
}

TEST(CheapestReplica, NoReplicaHoldsTheWeights) {
  // DeepSeek-V3 in bf16 (1.34 TB) on one 8 x 80 GB H100 domain: no size fits.
  DeploymentOptions o;
  o.weights = DType::bf16;
  EXPECT_THROW(
      {
        try {
          cheapest_replica(load_model("deepseek-v3"), load_system("h100-sxm"), o, 4096);
        } catch (const InputError& e) {
          EXPECT_EQ(e.field(), "--replica-chips");
          throw;
        }
      },
      InputError);
  EXPECT_THROW(cheapest_replica(load_model("llama-3.1-8b"), load_system("h100-sxm"), {}, -1), InputError);
}

TEST(ServingModes, FastAndSlowModeAnswersPrintedWithAssumptions) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.model) + " on " + c.system);
    const ModelSpec m = load_model(c.model);
    const SystemSpec s = load_system(c.system);
    ModesOptions o;
    o.speed_multiples = {2.5, 5};
    const ModesReport r = fast_and_slow_modes(m, s, {}, o);
    std::printf("\n%s on %s (%s, %s weights, bf16 KV, %lld tokens of context, $%.2f per chip-hour, replicas of 1..%lld "
                "chips, roofline without communication)\n",
                c.model, c.system, s.chip.name.c_str(), std::string(to_string(m.weights.experts)).c_str(),
                static_cast<long long>(r.context), to_usd_per_hour(*s.price_per_chip),
                static_cast<long long>(s.scale_up_domain));
    auto pt = [](const ModePoint& p) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "batch %lld on %lld chips, %.4g tok/s/user, $%.3g/Mtok",
                    static_cast<long long>(p.batch), static_cast<long long>(p.n_chips), p.tokens_per_s_per_user.value(),
                    to_usd_per_mtok(*p.cost_per_token));
      return std::string(buf);
    };
    std::printf("  baseline: %s\n", pt(r.baseline).c_str());
    for (const auto& q : r.fast) {
      if (q.point) std::printf("  %gx the speed costs %.3gx the price (%s)\n", q.speed_multiple, q.price_multiple, pt(*q.point).c_str());
      else std::printf("  %gx the speed is out of reach\n", q.speed_multiple);
    }
    for (const auto& q : r.budget) {
      std::printf("  %gx the price buys %.3gx the speed%s (%s)\n", q.price_multiple, q.speed_multiple,
                  q.capped_by_fastest ? ", capped by the fastest point" : "", pt(q.point).c_str());
    }
    std::printf("  fastest: %.3gx the speed at %.3gx the price (%s)\n", r.max_speed_multiple, r.price_multiple_at_fastest,
                pt(r.fastest).c_str());
    std::printf("  slow mode: floor within HBM %s = %.3gx the baseline price; floor of the hyperbola $%.3g/Mtok, "
                "%.3gx below\n",
                pt(r.cheapest).c_str(), r.slow_price_multiple, to_usd_per_mtok(*r.asymptotic_cost_per_token), r.floor_gap);

    // Faster costs more: the price multiples rise with the speed multiples, from >= 1.
    ASSERT_EQ(r.fast.size(), 2u);
    for (const auto& q : r.fast) {
      if (q.point) {
        EXPECT_GE(q.price_multiple, 0.99);
        EXPECT_GE(q.point->tokens_per_s_per_user.value(), q.speed_multiple * r.baseline.tokens_per_s_per_user.value());
      }
    }
    if (r.fast[0].point && r.fast[1].point) {
      EXPECT_GE(r.fast[1].price_multiple, r.fast[0].price_multiple);
    }
    // A budget is never exceeded, and more money never buys less speed.
    for (const auto& q : r.budget) EXPECT_LE(q.price_multiple_used, q.price_multiple * (1 + 1e-9));
    EXPECT_GE(r.budget[1].speed_multiple, r.budget[0].speed_multiple);
    // 100x the price cannot buy 100x the speed: the fastest point is batch 1 on at most one
    // scale-up domain, bound by reading the weights.
    EXPECT_LT(r.budget[1].speed_multiple, 100);
    EXPECT_EQ(r.fastest.batch, 1);
    EXPECT_EQ(r.fastest.step.bound, Bound::weights);
    // Slow mode: nothing is cheaper than the floor within HBM, and the hyperbola's floor lies
    // below it.
    EXPECT_LE(r.slow_price_multiple, 1.0);
    EXPECT_GE(r.floor_gap, 1.0 - 1e-9);
  }
}

TEST(ServingModes, WithMechanismsTheHyperbolaFloorIsBelowEveryBatch) {
  // DeepSeek-V3 on one GB200 NVL72 rack with mechanisms: the cost floor within HBM is
  // 34,776 sequences at 9,893 tok/s/chip. The floor of the hyperbola is the per-sequence
  // slope of the step; evaluated at B = 1 (as the roofline allows) one data-parallel rank
  // holds the whole sequence and the "floor" came out at 247 tok/s/chip, 40x above the
  // cost the rack reaches. It must lie below every batch's cost, and past the HBM-full
  // batch the step's slope adds only the linear terms: 13,606 tok/s/chip.
  DeploymentOptions mech;
  mech.mechanisms.enabled = true;
  ModesOptions o;
  o.replica_chips = {72};
  const ModesReport r = fast_and_slow_modes(load_model("deepseek-v3"), load_system("gb200-nvl72"), mech, o);
  EXPECT_EQ(r.cheapest.batch, 34776);
  EXPECT_GE(r.floor_gap, 1.0);
  // 13,630 before the router GEMM's FLOPs; 13,606 before the experts' per-tile fixed cost;
  // 12,935 before the norm and activation kernels paid their HBM traffic (engine/
  // memory_kernels.h), linear in the tokens past the floor: attention DP72, per token
  // (61 layers x 2 norms x 8 x 7168 + 58 shared SwiGLUs x 6 x 2048 + 3 dense x 6 x 18432) / 72
  // = 111,675 B at 8 TB/s x 0.92 = 15.17 ns of step; 1 / (12,935 x 72) = 1.0738 us a token
  // becomes 1.0890 us: 12,755 tok/s/chip. The routed experts' activation pass adds, per token,
  // 58 layers x 8 pairs x 12,288 B (4 x 2048 read, 2 x 2048 bf16 written) / 72 ranks =
  // 79,189 B, 10.76 ns at 7.36 TB/s (10.8 with the busiest rank's share): 1.0997 us, 12,630.
  EXPECT_NEAR(r.asymptotic_tokens_per_s_per_chip.value(), 12630, 10);
}

}  // namespace
}  // namespace chalk
