// cheapest_replica_at_speed (serving.h): the cheapest replica and batch at a stated speed.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/serving_speed.h"

namespace chalk {
namespace {

TEST(SpeedChoice, TheLargestBatchAtTheSpeedOnTheCheapestReplica) {
  const ModelSpec m = load_model("llama-3.1-70b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  const SpeedChoice c = cheapest_replica_at_speed(m, s, o, 2048, TokensPerSecond(40));
  ASSERT_TRUE(c.point && c.deployment && c.fastest);
  EXPECT_GE(c.point->tokens_per_s_per_user.value(), 40.0);
  // One more sequence would be slower than the speed (or beyond memory).
  const DecodeStep next = decode_step(*c.deployment, c.point->batch + 1, 2048);
  const bool fits = memory_plan(*c.deployment, c.point->batch + 1, 2048).fits;
  EXPECT_TRUE(next.tokens_per_s_per_user.value() < 40.0 || !fits);
  // Several speeds at once answer as one at a time; faster asks cost more per token.
  const auto both = cheapest_replicas_at_speeds(m, s, o, 2048, {TokensPerSecond(40), TokensPerSecond(60)});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].point->batch, c.point->batch);
  EXPECT_EQ(both[0].point->n_chips, c.point->n_chips);
  ASSERT_TRUE(both[1].point);
  EXPECT_LT(both[1].point->tokens_per_s_per_chip.value(), both[0].point->tokens_per_s_per_chip.value());
}

TEST(SpeedChoice, BeyondTheFastestReplicaIsAValueNotAnError) {
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  const SpeedChoice c = cheapest_replica_at_speed(load_model("llama-3.1-70b"), load_system("h100-sxm"), o, 2048, TokensPerSecond(5000));
  EXPECT_FALSE(c.point.has_value());
  EXPECT_FALSE(c.deployment.has_value());
  ASSERT_TRUE(c.fastest.has_value());
  EXPECT_LT(c.fastest->tokens_per_s_per_user.value(), 5000.0);
  EXPECT_EQ(c.fastest->batch, 1);
  EXPECT_THROW(cheapest_replica_at_speed(load_model("llama-3.1-8b"), load_system("h100-sxm"), o, 2048, TokensPerSecond(0)), InputError);
  EXPECT_THROW(cheapest_replica_at_speed(load_model("llama-3.1-8b"), load_system("h100-sxm"), o, -1, TokensPerSecond(10)), InputError);
}

}  // namespace
}  // namespace chalk
