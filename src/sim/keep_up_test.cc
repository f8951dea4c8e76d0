// keep_up_of against hand derivations on made-up records (review 11 H1: a run whose requests
// waited 18 s behind one LoRA slot passed the capacity probe and the OVERLOADED check).
#include "chalk/sim/keep_up.h"

#include <gtest/gtest.h>

namespace chalk::sim {
namespace {

/// Four requests arriving at 0, 1, 2, 3 s, 10 output tokens each, request i waiting wait[i]
/// seconds and then served in 2 s, on one aggregated replica (or end to end).
ClusterRun keep_up_four(const std::vector<double>& wait, bool disaggregated = false) {
  SimRun r;
  for (int i = 0; i < 4; ++i) {
    RequestRecord q;
    q.arrival_s = i;
    q.scheduled_s = i + wait[static_cast<std::size_t>(i)];
    q.first_token_s = q.scheduled_s + 0.1;
    q.finish_s = q.scheduled_s + 2;
    q.output_tokens = 10;
    r.requests.push_back(q);
  }
  ClusterRun c;
  c.disaggregated = disaggregated;
  if (disaggregated) {
    c.end_to_end = r;
  } else {
    c.runs.push_back(r);
  }
  return c;
}

std::vector<Request> keep_up_arrivals(double gap) {
  std::vector<Request> t(4);
  for (int i = 0; i < 4; ++i) t[static_cast<std::size_t>(i)].arrival_s = gap * i;
  return t;
}

TEST(KeepUp, AStandingQueueLongerThanTheServiceIsNotKeepingUp) {
  // Each waits 5 s, is served in 2: Q 5 > S 2. Offered: (4 - 1) / 3 s x 10 = 10 tok/s;
  // served 40 / (3 + 5 + 2 = 10 s) = 4; queue-free 40 / (the last's 3 + 2 s) = 8.
  const KeepUp k = keep_up_of(keep_up_four({5, 5, 5, 5}), keep_up_arrivals(1), Overload{});
  EXPECT_FALSE(k.keeps_up);
  EXPECT_EQ(k.why, "queue holds");
  EXPECT_DOUBLE_EQ(k.queue_mean_s, 5);
  EXPECT_DOUBLE_EQ(k.service_mean_s, 2);
  EXPECT_DOUBLE_EQ(k.offered_output_tok_per_s, 10);
  EXPECT_DOUBLE_EQ(k.served_output_tok_per_s, 4);
  EXPECT_DOUBLE_EQ(k.queue_free_output_tok_per_s, 8);
}

TEST(KeepUp, AShortWaitKeepsUp) {
  // 0.1 s each: served 40 / (3 + 0.1 + 2) = 7.843 >= 0.95 x 8 = 7.6.
  const KeepUp k = keep_up_of(keep_up_four({0.1, 0.1, 0.1, 0.1}), keep_up_arrivals(1), Overload{});
  EXPECT_TRUE(k.keeps_up) << k.why;
  EXPECT_NEAR(k.served_output_tok_per_s, 40 / 5.1, 1e-12);
}

TEST(KeepUp, ADrainAfterTheArrivalsFallsShort) {
  // Only the last waits, 3.6 s: Q = 0.9 < S = 2, but the run ends at 3 + 3.6 + 2 = 8.6 s:
  // served 40 / 8.6 = 4.65 < 0.95 x 8 = 7.6.
  const KeepUp k = keep_up_of(keep_up_four({0, 0, 0, 3.6}), keep_up_arrivals(1), Overload{});
  EXPECT_FALSE(k.keeps_up);
  EXPECT_EQ(k.why, "falls short");
  EXPECT_NEAR(k.served_output_tok_per_s, 40 / 8.6, 1e-12);
}

TEST(KeepUp, ALongLastRequestIsItsServiceNotAQueue) {
  // A trace's tail (mooncake, 7 requests, queue mean 16 ms once read as falling short): the
  // last, arriving at 3 s, runs 10 s with no wait. Queue-free end = max(0 + 2, 1 + 2, 2 + 2,
  // 3 + 10) = 13 s = the run's end: served = queue-free = 40 / 13.
  ClusterRun c = keep_up_four({0, 0, 0, 0});
  c.runs[0].requests[3].finish_s = 13;
  const KeepUp k = keep_up_of(c, keep_up_arrivals(1), Overload{});
  EXPECT_TRUE(k.keeps_up) << k.why;
  EXPECT_DOUBLE_EQ(k.queue_free_output_tok_per_s, 40.0 / 13);
  EXPECT_DOUBLE_EQ(k.served_output_tok_per_s, 40.0 / 13);
}

TEST(KeepUp, AGrowingQueueIsNotKeepingUpHoweverBusy) {
  // The records keep up; the run's TTFT growth (overload_of) of 0.06 > kOverloadGrowth does not.
  Overload o;
  o.ttft_growth = 0.06;
  const KeepUp k = keep_up_of(keep_up_four({0.1, 0.1, 0.1, 0.1}), keep_up_arrivals(1), o);
  EXPECT_FALSE(k.keeps_up);
  EXPECT_EQ(k.why, "queue grows");
}

TEST(KeepUp, ArrivalsAtOneInstantAreAQueueByDesign) {
  // All at t = 0 (span 0): waits of 5 s are the burst's own queue.
  const KeepUp k = keep_up_of(keep_up_four({5, 5, 5, 5}), keep_up_arrivals(0), Overload{});
  EXPECT_TRUE(k.keeps_up);
  EXPECT_DOUBLE_EQ(k.queue_free_output_tok_per_s, 0);
}

TEST(KeepUp, DisaggregatedRunsAreJudgedEndToEnd) {
  const KeepUp k = keep_up_of(keep_up_four({5, 5, 5, 5}, true), keep_up_arrivals(1), Overload{});
  EXPECT_FALSE(k.keeps_up);
  EXPECT_DOUBLE_EQ(k.queue_mean_s, 5);
}

}  // namespace
}  // namespace chalk::sim
