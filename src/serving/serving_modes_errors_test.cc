// Bad input to the fast/slow-mode search names the option, the value and what was expected
// (serving_frontier_test.cc holds the modes' figures).
#include <string>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/serving.h"

namespace chalk {
namespace {

TEST(ServingModes, BadInputNamesTheOption) {
  const ModelSpec m = load_model("llama-3.1-70b");
  const SystemSpec s = load_system("h200");
  auto field = [&](ModesOptions o) {
    try {
      fast_and_slow_modes(m, s, {}, o);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  ModesOptions o;
  o.speed_multiples = {0};
  EXPECT_EQ(field(o), "--speed-multiple");
  o = {};
  o.price_multiples = {-6};
  EXPECT_EQ(field(o), "--price-multiple");
  o = {};
  o.baseline_tokens_per_s_per_user = 1e6;  // faster than batch 1 (230 tok/s)
  EXPECT_EQ(field(o), "--baseline-tok-per-s-per-user");
  o = {};
  o.replica_chips = {1};  // 141.1 GB of weights + reserve do not fit in one H200
  EXPECT_EQ(field(o), "--replica-chips");
  o = {};
  o.baseline_cost_tolerance = 1.5;
  EXPECT_EQ(field(o), "--baseline-cost-tolerance");
}

}  // namespace
}  // namespace chalk
