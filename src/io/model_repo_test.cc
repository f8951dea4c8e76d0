// The repository a launch file serves (model_repo.h).
#include "chalk/io/model_repo.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chalk/io/embedded.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

TEST(ModelRepo, BuiltInModelsNameTheRepositoryTheirConfigCameFrom) {
  // models.md: aiconfigurator's meta-llama--Meta-Llama-3.1-70B_config.json.
  EXPECT_EQ(builtin_model_repo("llama-3.1-70b"), "meta-llama/Meta-Llama-3.1-70B");
  EXPECT_EQ(builtin_model_repo("deepseek-v3"), "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(builtin_model_repo("qwen3-32b-fp8"), "Qwen/Qwen3-32B-FP8");
  // The papers' models never had one.
  EXPECT_EQ(builtin_model_repo("gpt-3-175b"), std::nullopt);
  EXPECT_EQ(builtin_model_repo("no-such-model"), std::nullopt);
}

TEST(ModelRepo, AnAliasOfOtherWeightsServesItsOwnRepo) {
  // aliases.json: deepseek-r1-distill-llama-70b has llama-3.3-70b's architecture but
  // DeepSeek's weights; a launch file must not serve Meta's. A spelling alias serves the
  // model's own repo.
  EXPECT_EQ(served_model("deepseek-r1-distill-llama-70b"), "deepseek-ai/DeepSeek-R1-Distill-Llama-70B");
  EXPECT_EQ(served_model("DeepSeek-R1-Distill-Llama-70B"), "deepseek-ai/DeepSeek-R1-Distill-Llama-70B");
  EXPECT_EQ(served_model("llama3.1-70b"), "meta-llama/Llama-3.1-70B-Instruct");  // served.json
  EXPECT_EQ(served_model("deepseek-r1-distill-qwen-32b"), "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B");  // a built-in of its own
}

TEST(ModelRepo, RemoteCodeFollowsTheConfigsAutoMap) {
  // data/models/hf/kimi-k2-instruct.json and deepseek-v3.json carry "auto_map" (classes in
  // the repo's own .py files); Llama 3.1's config names only transformers' own classes.
  EXPECT_TRUE(needs_remote_code("kimi-k2-instruct"));
  EXPECT_TRUE(needs_remote_code("deepseek-v3"));
  EXPECT_TRUE(needs_remote_code("moonshotai/Kimi-K2-Instruct"));  // a repo id resolve_model_name maps
  EXPECT_FALSE(needs_remote_code("llama-3.1-70b"));
  EXPECT_FALSE(needs_remote_code("no-such-model"));
  // A user's config.json, as a file and as its directory; a file that is not JSON is false.
  const auto dir = std::filesystem::temp_directory_path() / "chalk_remote_code_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "custom", "auto_map": {"AutoConfig": "configuration_x.XConfig"}})";
  EXPECT_TRUE(needs_remote_code((dir / "config.json").string()));
  EXPECT_TRUE(needs_remote_code(dir.string()));
  std::ofstream(dir / "config.json") << "not json";
  EXPECT_FALSE(needs_remote_code(dir.string()));
  std::filesystem::remove_all(dir);
}

TEST(ModelRepo, EveryRowIsABuiltInModelWithAnOrgSlashNameRepoAndASource) {
  const auto j = nlohmann::json::parse(*detail::embedded_file("models/repos.json"));
  const auto names = builtin_model_names();
  ASSERT_GE(j.at("repos").size(), 20u);
  for (const auto& [name, row] : j.at("repos").items()) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " is not a built-in model";
    const std::string repo = row.at("repo");
    EXPECT_EQ(std::count(repo.begin(), repo.end(), '/'), 1) << repo;
    EXPECT_FALSE(row.at("source").get<std::string>().empty()) << name;
  }
  // Every verbatim HF config of config in data/models/hf (data/models/README.md) has its repository.
  for (const char* n : {"deepseek-r1", "kimi-k2-instruct", "llama-3.1-8b", "llama-3.1-405b", "mixtral-8x7b", "mixtral-8x22b",
                        "qwen3-235b-a22b", "qwen3-30b-a3b", "qwen3-32b", "gpt-oss-120b", "gpt-oss-20b"}) {
    EXPECT_TRUE(builtin_model_repo(n).has_value()) << n;
  }
}

TEST(ModelRepo, ABaseModelIsServedAsItsInstructRepositoryWithItsFp8Checkpoint) {
  // Review 7 M4: hosts serve Llama 3.1 70B Instruct (data/prices/hosts/llama-3.1-70b.json),
  // not the pre-trained repo the config came from; repos.json keeps that one (host matching).
  EXPECT_EQ(builtin_model_repo("llama-3.1-70b"), "meta-llama/Meta-Llama-3.1-70B");
  EXPECT_EQ(builtin_served_repo("llama-3.1-70b"), "meta-llama/Llama-3.1-70B-Instruct");
  EXPECT_EQ(served_model("llama-3.1-8b"), "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(served_model("llama-3.1-405b"), "meta-llama/Llama-3.1-405B-Instruct");
  EXPECT_EQ(served_model("deepseek-v3"), "deepseek-ai/DeepSeek-V3");  // no entry: repos.json's
  // NVIDIA's ModelOpt FP8 checkpoint of the instruct model (Model Optimizer README, 2024/10/23).
  EXPECT_EQ(served_fp8_checkpoint("llama-3.1-70b"), "nvidia/Llama-3.1-70B-Instruct-FP8");
  EXPECT_EQ(served_fp8_checkpoint("deepseek-v3"), std::nullopt);
  // A repo id typed is served as typed, so chalk names no checkpoint of it; nor of an alias
  // with weights of its own.
  EXPECT_EQ(served_fp8_checkpoint("meta-llama/Llama-3.1-70B-Instruct"), std::nullopt);
  EXPECT_EQ(served_fp8_checkpoint("deepseek-r1-distill-llama-70b"), std::nullopt);
  const auto j = nlohmann::json::parse(*detail::embedded_file("models/served.json"));
  const auto names = builtin_model_names();
  for (const auto& [name, row] : j.at("served").items()) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " is not a built-in model";
    EXPECT_TRUE(builtin_model_repo(name).has_value()) << name << " has no repos.json row";
    for (const char* k : {"repo", "fp8"}) {
      if (!row.contains(k)) continue;
      const std::string repo = row.at(k);
      EXPECT_EQ(std::count(repo.begin(), repo.end(), '/'), 1) << repo;
    }
    EXPECT_FALSE(row.at("source").get<std::string>().empty()) << name;
  }
}

TEST(ModelRepo, TheServedModelIsWhatTheUserNamedOrTheBuiltInsRepository) {
  EXPECT_EQ(served_model("meta-llama/Llama-3.1-70B-Instruct"), "meta-llama/Llama-3.1-70B-Instruct");
  EXPECT_EQ(served_model("LLAMA-3.1-70B"), "meta-llama/Llama-3.1-70B-Instruct");
  EXPECT_EQ(served_model("palm-540b"), std::nullopt);
  EXPECT_EQ(served_model("nope"), std::nullopt);
  const auto dir = std::filesystem::temp_directory_path() / "chalk_model_repo_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << "{}";
  std::ofstream(dir / "mine.json") << "{}";
  EXPECT_EQ(served_model(dir.string()), dir.string());
  EXPECT_EQ(served_model((dir / "config.json").string()), dir.string());
  EXPECT_EQ(served_model((dir / "mine.json").string()), std::nullopt);  // a chalk-model file: no weights
  std::filesystem::remove_all(dir);
  // A HF cache folder: the repo id it caches (trailing slash or not).
  const auto cache = std::filesystem::temp_directory_path() / "chalk_model_repo_hub" / "models--meta-llama--Llama-3.1-8B-Instruct";
  std::filesystem::create_directories(cache);
  EXPECT_EQ(served_model(cache.string()), "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(served_model(cache.string() + "/"), "meta-llama/Llama-3.1-8B-Instruct");
  std::filesystem::remove_all(cache.parent_path());
}

}  // namespace
}  // namespace chalk
