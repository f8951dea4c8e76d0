// Bulk decodes (step_bulk.cc): where they apply, and a run with them equal, every double bit
// for bit, to the same run visiting every running request every step (run_at_scheduler's
// allow_bulk false), through the cases that make the pass wake quiet requests: new blocks,
// last tokens, a budget that binds, and preemptions.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/sim/simulator.h"
#include "chalk/sim/traffic.h"
#include "chalk_testing/engine_deploy.h"
#include "scheduler.h"
#include "step_loop.h"

namespace chalk::sim {
namespace {

uint64_t bulk_bits(double x) { return std::bit_cast<uint64_t>(x); }

/// Every figure of the two runs, compared exactly; the count of differences.
int bulk_differences(const SimRun& a, const SimRun& b) {
  int diff = 0;
  const auto same = [&](bool eq) { diff += eq ? 0 : 1; };
  same(a.requests.size() == b.requests.size() && a.steps.size() == b.steps.size() && a.long_token_gaps_s.size() == b.long_token_gaps_s.size());
  if (diff > 0) return diff;
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord &x = a.requests[i], &y = b.requests[i];
    same(bulk_bits(x.scheduled_s) == bulk_bits(y.scheduled_s) && bulk_bits(x.first_token_s) == bulk_bits(y.first_token_s) &&
         bulk_bits(x.finish_s) == bulk_bits(y.finish_s) && x.preemptions == y.preemptions && x.rejected == y.rejected);
  }
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const StepSample &x = a.steps[i], &y = b.steps[i];
    same(bulk_bits(x.start_s) == bulk_bits(y.start_s) && bulk_bits(x.duration_s) == bulk_bits(y.duration_s) && x.decodes == y.decodes &&
         x.steady_tokens == y.steady_tokens && x.prefill_tokens == y.prefill_tokens && x.running == y.running && x.waiting == y.waiting &&
         x.kv_blocks_used == y.kv_blocks_used && bulk_bits(x.compute_s) == bulk_bits(y.compute_s) && bulk_bits(x.memory_s) == bulk_bits(y.memory_s));
  }
  for (std::size_t i = 0; i < a.long_token_gaps_s.size(); ++i) same(bulk_bits(a.long_token_gaps_s[i]) == bulk_bits(b.long_token_gaps_s[i]));
  same(a.n_steps == b.n_steps && a.kv_blocks_peak == b.kv_blocks_peak && a.kv_blocks_leaked == b.kv_blocks_leaked && a.preemptions == b.preemptions);
  same(bulk_bits(a.end_s) == bulk_bits(b.end_s) && bulk_bits(a.busy_s) == bulk_bits(b.busy_s) &&
       bulk_bits(a.requests_in_system_s) == bulk_bits(b.requests_in_system_s) && bulk_bits(a.decode_sequences_s) == bulk_bits(b.decode_sequences_s) &&
       bulk_bits(a.kv_blocks_s) == bulk_bits(b.kv_blocks_s));
  return diff;
}

std::vector<Request> bulk_traffic(int64_t n, double rate, const char* output, const char* input = "lognormal:600:0.8") {
  TrafficSpec t;
  t.requests = n;
  t.rate_per_s = rate;
  t.seed = 17;
  t.input = parse_length(input, "input");
  t.output = parse_length(output, "output");
  return generate_traffic(t);
}

TEST(StepBulk, AppliesToPlainDecodesOverTheWholeContextOnOneRank) {
  const Deployment llama = chalk::testing::engine_deploy("llama-3.1-70b", "h200", 8);
  EXPECT_TRUE(detail::bulk_decodes(llama, 1, false, 1, 1, false));
  EXPECT_FALSE(detail::bulk_decodes(llama, 3, false, 1, 1, false));  // drafts: K + 1 tokens, a drawn number kept
  EXPECT_FALSE(detail::bulk_decodes(llama, 1, true, 1, 1, false));   // the prefix cache commits blocks as they fill
  EXPECT_FALSE(detail::bulk_decodes(llama, 1, false, 2, 1, false));  // ranks' loads read each context
  EXPECT_FALSE(detail::bulk_decodes(llama, 1, false, 1, 2, false));  // micro-batches split the contexts
  EXPECT_FALSE(detail::bulk_decodes(llama, 1, false, 1, 1, true));   // adapters per request
  // gpt-oss-20b's sliding-window layers read min(context, window) of each decode.
  EXPECT_FALSE(detail::bulk_decodes(chalk::testing::engine_deploy("gpt-oss-20b", "h200", 1), 1, false, 1, 1, false));
}

TEST(StepBulk, RunsEqualTheRequestByRequestPassBitForBit) {
  const Deployment d = chalk::testing::engine_deploy("llama-3.1-70b", "h200", 8);
  struct Case {
    const char* what;
    SimOptions o;
    std::vector<Request> reqs;
    Phase phase = Phase::both;
  };
  std::vector<Case> cases;
  cases.push_back({"loaded", {}, bulk_traffic(800, 25, "lognormal:150:0.8")});
  SimOptions tight;  // 3,000 blocks of 16 tokens: requests are preempted and recomputed
  tight.kv_blocks = 3000;
  cases.push_back({"preempting", tight, bulk_traffic(800, 40, "lognormal:300:0.8")});
  // 32 tokens a step: prompts split into chunks that take what the decodes before them
  // leave (admission stops with the budget, so the running list never outgrows it).
  SimOptions small;
  small.policy.max_batched_tokens = 32;
  cases.push_back({"budget 32", small, bulk_traffic(400, 20, "lognormal:300:0.5", "lognormal:24:0.5")});
  SimOptions whole;  // whole prompts, blocks reserved to completion (TensorRT-LLM's defaults)
  whole.policy.chunked_prefill = false;
  whole.policy.reserve_to_completion = true;
  cases.push_back({"reserved", whole, bulk_traffic(600, 20, "lognormal:150:0.8")});
  // A disaggregated decode pool: requests arrive with their prompt's KV.
  cases.push_back({"decode pool", {}, bulk_traffic(800, 30, "lognormal:150:0.8"), Phase::decode});
  for (const Case& c : cases) {
    const SimRun bulk = detail::run_at_scheduler(d, c.reqs, c.o, c.phase, true);
    const SimRun each = detail::run_at_scheduler(d, c.reqs, c.o, c.phase, false);
    EXPECT_EQ(bulk_differences(bulk, each), 0) << c.what;
    EXPECT_GT(bulk.n_steps, 100) << c.what;
    if (c.o.kv_blocks > 0) EXPECT_GT(bulk.preemptions, 0) << c.what;
    if (c.o.policy.max_batched_tokens == 32) {
      int32_t most = 0;
      for (const StepSample& st : bulk.steps) most = std::max(most, st.decodes + (st.prefill_tokens > 0 ? 1 : 0));
      EXPECT_EQ(most, 32) << c.what;  // the budget binds
    }
  }
}

}  // namespace
}  // namespace chalk::sim
