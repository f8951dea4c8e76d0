// The default global batch (default_batch.h, review 11 M3): one sequence per chip, at most
// 2^24 tokens, rounded down to what the plan's degrees split.
#include "chalk/training/default_batch.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"

namespace chalk {
namespace {

TEST(DefaultBatch, OneSequenceAChipUpToLlama3sSixteenMillionTokens) {
  // Llama 3 405B on 16,384 H100 at 8,192 tokens: 2^24 / 8,192 = 2,048 sequences, Meta's batch
  // (Table 4: 16M tokens); at 4,096 tokens 2^24 / 4,096 = 4,096 (was 16,384 = 67M tokens).
  EXPECT_EQ(default_global_batch(16384, 8192), 2048);
  EXPECT_EQ(default_global_batch(16384, 4096), 4096);
  // Below the cap, one a chip: 8 chips -> 8; 2,048 H800 at 4,096 -> 2,048 (8.4M tokens).
  EXPECT_EQ(default_global_batch(8, 4096), 8);
  EXPECT_EQ(default_global_batch(2048, 4096), 2048);
  // A sequence longer than the cap still makes one: 2^24 / 2^25 rounds to 0 -> 1.
  EXPECT_EQ(default_global_batch(64, int64_t{1} << 25), 1);
  // Rounded down to a multiple: 24 chips at 4,096 with dp x microbatch = 16 -> 16; never below
  // the multiple: 4 chips with a multiple of 8 -> 8.
  EXPECT_EQ(default_global_batch(24, 4096, 16), 16);
  EXPECT_EQ(default_global_batch(4, 4096, 8), 8);
  // 3,000-token sequences: floor(16,777,216 / 3,000) = 5,592 sequences on 8,192 chips.
  EXPECT_EQ(default_global_batch(8192, 3000), 5592);
}

TEST(DefaultBatch, AStatedPlanGetsABatchItsDegreesSplit) {
  TrainingPlan p;
  p.seq_len = 8192;
  p.tp = 8, p.pp = 16, p.dp = 128;  // Meta's 16,384-GPU layout: 2,048 sequences, 16 a replica
  EXPECT_EQ(default_global_batch(p), 2048);
  // Interleaved over pp 16 needs microbatches a multiple of 16: dp x mb x pp = 128 x 1 x 16 = 2,048.
  p.schedule = PipelineSchedule::interleaved;
  p.virtual_stages = 2;
  EXPECT_EQ(default_global_batch(p), 2048);
  // DP 8, microbatch 2 on 8 chips: 8 sequences round up to the multiple 16 (one microbatch a rank).
  TrainingPlan q;
  q.seq_len = 4096, q.dp = 8, q.microbatch = 2;
  EXPECT_EQ(default_global_batch(q), 16);
  // DualPipe over pp 4, dp 2 on 8 chips: 8 sequences, a multiple of 2 x 1 x 2 = 4 -> 8.
  TrainingPlan r;
  r.seq_len = 4096, r.dp = 2, r.pp = 4, r.schedule = PipelineSchedule::dualpipe;
  EXPECT_EQ(default_global_batch(r), 8);
}

TEST(DefaultBatch, SaysWhatItChose) {
  EXPECT_EQ(default_batch_text(2048, 8192),
            "default: 2048 sequences = 16.78M tokens (one sequence a chip, at most 16.78M tokens, Llama 3 405B's batch); -B sets it");
  // 64 x 4,096 = 262,144 tokens; 2 x 2,048 = 4,096.
  EXPECT_EQ(default_batch_text(64, 4096).substr(0, 46), "default: 64 sequences = 262.1K tokens (one seq");
  EXPECT_EQ(default_batch_text(2, 2048).substr(0, 40), "default: 2 sequences = 4096 tokens (one ");
  EXPECT_THROW(default_global_batch(0, 4096), InputError);
  EXPECT_THROW(default_global_batch(8, 0), InputError);
  EXPECT_THROW(default_global_batch(8, 4096, 0), InputError);
}

}  // namespace
}  // namespace chalk
