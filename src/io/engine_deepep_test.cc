// data/engines/deepep.json (engine_deepep.h): every claim names the engine file it was read
// from at a commit, so a reader can open it (review 11 H2).
#include "chalk/io/engine_deepep.h"

#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chalk/io/embedded.h"

namespace chalk {
namespace {

TEST(EngineDeepEp, EverySglangEntryCitesAModelFileAtACommit) {
  const auto text = detail::embedded_file("engines/deepep.json");
  ASSERT_TRUE(text.has_value());
  const auto j = nlohmann::json::parse(*text);
  const std::regex at_commit("python/sglang/srt/models/[a-z0-9_]+\\.py @ [0-9a-f]{40}: ");
  int entries = 0;
  for (const auto& [type, entry] : j.at("engines").at("sglang").at("models").items()) {
    EXPECT_TRUE(std::regex_search(entry.at("source").get<std::string>(), at_commit)) << type;
    ++entries;
  }
  EXPECT_EQ(entries, 6);  // deepseek_v3, kimi_k2, deepseek_v32, glm4_moe, qwen3_moe, gpt_oss
  EXPECT_NE(j.at("low_latency_hidden_sizes").at("source").get<std::string>().find("deepseek-ai/DeepEP @ 2bd56ae"), std::string::npos);
  // An engine the table does not name is said, not assumed.
  EXPECT_EQ(engine_deepep_problem("sglang", "deepseek_v3", 0), "");
}

}  // namespace
}  // namespace chalk
