// The training layout search.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/layouts.h"
#include "chalk/training/memory.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(TrainingLayouts, Gpt3On64A100RanksFittingPlansAndSaysWhyOthersDoNot) {
  const ModelSpec m = load_model("gpt-3-175b");
  const SystemSpec sys = load_system("a100-80gb");
  TrainingQuery q;
  q.chips = 64;
  q.global_batch = 64;
  q.seq_len = 2048;
  const TrainingLayouts r = search_training_layouts(m, sys, q);
  ASSERT_FALSE(r.fitting.empty());
  ASSERT_FALSE(r.too_big.empty());
  EXPECT_GT(r.evaluated, r.fit);
  for (size_t i = 1; i < r.fitting.size(); ++i) EXPECT_LE(r.fitting[i - 1].t_step_s, r.fitting[i].t_step_s);
  // 175B x 16 bytes = 2.8 TB of model states: no plan fits without sharding them 64 ways,
  // so every fitting plan uses TP x PP x (ZeRO over DP) and none is plain DP64.
  for (const auto& c : r.fitting) {
    EXPECT_TRUE(c.fits);
    EXPECT_LE(c.memory_bytes, 80e9);
    EXPECT_FALSE(c.tp == 1 && c.pp == 1 && c.zero_stage == 0);
  }
  for (const auto& c : r.too_big) EXPECT_GT(c.memory_bytes, c.capacity_bytes);
  // The winner re-evaluated through check_plan gives the same step.
  const TrainingCandidate& best = r.fitting.front();
  const TrainingPlan p = plan_of(best, q);
  const TrainingStep st = training_step(make_training_costs(m, 2048), make_training_system(sys, p.compute), p, check_plan(m, sys, 64, p));
  EXPECT_DOUBLE_EQ(st.t_step.value(), best.t_step_s);
  // The Pareto front: memory rises while step time falls.
  ASSERT_FALSE(r.pareto.empty());
  for (size_t i = 1; i < r.pareto.size(); ++i) {
    EXPECT_GE(r.pareto[i].memory_bytes, r.pareto[i - 1].memory_bytes);
    EXPECT_LT(r.pareto[i].t_step_s, r.pareto[i - 1].t_step_s);
  }
  EXPECT_DOUBLE_EQ(r.pareto.back().t_step_s, best.t_step_s);
}

TEST(TrainingLayouts, EqualStepAndMemoryAreOnePlan) {
  // Issue 30: plans that differ only in a ZeRO stage or recomputation that changes neither
  // the step time nor the memory, or that changes the memory but not the step time, are
  // listed once, at the least memory, with the others counted.
  const ModelSpec m = load_model("gpt-3-175b");
  const SystemSpec sys = load_system("a100-80gb");
  TrainingQuery q;
  q.chips = 64;
  q.global_batch = 64;
  q.seq_len = 2048;
  q.limit = 1'000'000'000;  // every fitting plan: each one listed or folded, exactly once
  const TrainingLayouts r = search_training_layouts(m, sys, q);
  auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
  int64_t accounted = 0, groups = 0;
  for (size_t i = 0; i < r.fitting.size(); ++i) {
    const auto& c = r.fitting[i];
    accounted += 1 + c.equivalents;
    for (size_t k = 0; k < i; ++k) {
      const auto& o = r.fitting[k];
      EXPECT_FALSE(same(o.t_step_s, c.t_step_s) && same(o.memory_bytes, c.memory_bytes)) << i << " repeats " << k;
      // Item 8: the same layout and microbatch at one step time under another ZeRO stage or
      // recomputation is one plan, listed at its least memory.
      const bool same_layout = o.dp == c.dp && o.tp == c.tp && o.pp == c.pp && o.cp == c.cp && o.ep == c.ep &&
                               o.microbatch == c.microbatch && o.schedule == c.schedule && o.virtual_stages == c.virtual_stages;
      EXPECT_FALSE(same(o.t_step_s, c.t_step_s) && same_layout) << i << " is a ZeRO/recompute twin of " << k;
    }
    groups += c.equivalents > 0 ? 1 : 0;
  }
  // 1,757 plans fit; 1,152 distinct ones are listed, 377 of them with 605 twins folded in
  // (measured 2026-12-06; 1,361 when only equal memory folded): the count pins that folding
  // happens, the sum that nothing is lost.
  EXPECT_EQ(accounted, r.fit);
  EXPECT_GT(groups, 0);
  EXPECT_LT(static_cast<int64_t>(r.fitting.size()), r.fit);
  // A short list counts the folded plans of the rows it keeps, the same as the full one.
  q.limit = 5;
  const TrainingLayouts top = search_training_layouts(m, sys, q);
  ASSERT_EQ(top.fitting.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(top.fitting[i].t_step_s, r.fitting[i].t_step_s);
    EXPECT_EQ(top.fitting[i].equivalents, r.fitting[i].equivalents);
  }
}

TEST(TrainingLayouts, DefaultSchedulesAreMegatronLmsAndOthersOnlyWhenAsked) {
  // Review finding M0: Megatron-LM runs 1F1B and interleaved 1F1B only (schedules.py,
  // get_forward_backward_func), so the default search tries those; a one-stage plan has no
  // schedule and is tried whatever the set.
  EXPECT_EQ(kMegatronSchedules, schedule_bit(PipelineSchedule::one_f_one_b) | schedule_bit(PipelineSchedule::interleaved));
  EXPECT_EQ(parse_schedule_set("1f1b,interleaved", "s"), kMegatronSchedules);
  EXPECT_EQ(parse_schedule_set("all", "s"), kAllSchedules);
  // zb-v is enum value 4: bit 16; 1f1b value 1: bit 2.
  EXPECT_EQ(parse_schedule_set("zb-v,1f1b", "s"), 16u + 2u);
  EXPECT_EQ(schedule_set_string(kMegatronSchedules), "1f1b,interleaved");
  EXPECT_EQ(schedule_set_string(kAllSchedules), "gpipe,1f1b,interleaved,zb-h1,zb-v,dualpipe");
  for (const char* bad : {"", "1f1b,", "zb-x"}) {
    try {
      parse_schedule_set(bad, "--schedules");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "--schedules");
    }
  }
  const ModelSpec m = load_model("gpt-3-175b");
  const SystemSpec sys = load_system("a100-80gb");
  TrainingQuery q;
  q.chips = 64;
  q.global_batch = 64;
  q.seq_len = 2048;
  q.limit = 1'000'000'000;
  const TrainingLayouts megatron = search_training_layouts(m, sys, q);
  q.schedules = kAllSchedules;
  const TrainingLayouts all = search_training_layouts(m, sys, q);
  // Each pp > 1 layout is tried under 2 of the 6 schedules instead of 6 (dualpipe also skips
  // some microbatch counts), pp = 1 under one in both: fewer plans, none of the other four.
  EXPECT_LT(megatron.evaluated, all.evaluated);
  for (const auto& c : megatron.fitting) {
    EXPECT_TRUE(c.pp == 1 || c.schedule == PipelineSchedule::one_f_one_b || c.schedule == PipelineSchedule::interleaved) << static_cast<int>(c.schedule);
  }
  EXPECT_TRUE(std::any_of(all.fitting.begin(), all.fitting.end(), [](const auto& c) { return c.schedule == PipelineSchedule::zb_v; }));
  // The fastest of every schedule is at least as fast as Megatron-LM's (a superset).
  EXPECT_LE(all.fitting.front().t_step_s, megatron.fitting.front().t_step_s);
  // ZB-V alone: every pp > 1 plan is ZB-V, and one-stage plans are still tried.
  q.schedules = schedule_bit(PipelineSchedule::zb_v);
  const TrainingLayouts zbv = search_training_layouts(m, sys, q);
  for (const auto& c : zbv.fitting) EXPECT_TRUE(c.pp == 1 || c.schedule == PipelineSchedule::zb_v);
}

TEST(TrainingLayouts, MoeSearchesExpertParallelism) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const SystemSpec sys = load_system("h100-sxm");
  TrainingQuery q;
  q.chips = 16;
  q.global_batch = 64;
  q.seq_len = 4096;
  const TrainingLayouts r = search_training_layouts(m, sys, q);
  ASSERT_FALSE(r.fitting.empty());
  bool any_ep = false;
  for (const auto& c : r.fitting) any_ep = any_ep || c.ep > 1;
  EXPECT_TRUE(any_ep);
}

TEST(TrainingLayouts, Errors) {
  const ModelSpec m = load_model("gpt-3-175b");
  const SystemSpec sys = load_system("a100-80gb");
  TrainingQuery q;
  q.chips = 0;
  q.global_batch = 64;
  q.seq_len = 2048;
  EXPECT_THROW(search_training_layouts(m, sys, q), InputError);
  q.chips = 101;  // a prime: tp 101 does not divide the 96 heads, pp 101 exceeds the 98 slots, dp 101 does not divide 64 sequences
  EXPECT_THROW(search_training_layouts(m, sys, q), InputError);
  try {
    search_training_layouts(m, sys, q);
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "chips");  // no plan splits: the degrees are the cause
  }
  q.chips = 8;
  q.seq_len = 0;
  EXPECT_THROW(search_training_layouts(m, sys, q), InputError);
}

// QA: on a system without a scale-out network (L40S: PCIe cards, no NIC stated) 256 chips
// split fine (TP 8 x DP 32 divides Llama 3.1 8B's 32 heads and a 256-sequence batch), but
// every such plan crosses scale-up domains; the search says so, as `train step` does, not
// "degrees must split heads, layers and the batch".
TEST(TrainingLayouts, NoScaleOutNetworkIsTheCauseWhenEveryPlanCrossesDomains) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec sys = load_system("l40s");
  ASSERT_FALSE(sys.scale_out_bandwidth_per_direction.value() > 0);
  TrainingQuery q;
  q.chips = 256;
  q.global_batch = 256;
  q.seq_len = 4096;
  try {
    search_training_layouts(m, sys, q);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "hardware");
    EXPECT_NE(std::string(e.what()).find("states no scale-out bandwidth"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("crosses scale-up domains"), std::string::npos) << e.what();
  }
  // Within one domain the same search runs and skips nothing.
  q.chips = sys.scale_up_domain;
  q.global_batch = 64;
  const TrainingLayouts within = search_training_layouts(m, sys, q);
  EXPECT_GT(within.evaluated, 0);
  EXPECT_EQ(within.skipped_no_scale_out, 0);
}

}  // namespace
}  // namespace chalk
