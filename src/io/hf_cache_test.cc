// Local models by name: a HF cache directory and a repo id resolve without network.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "hf_internal.h"

namespace chalk {
namespace {

namespace fs = std::filesystem;

/// A temporary hub with models--acme--Tiny-7B holding one snapshot; restores the env.
struct TempHub {
  fs::path root;
  std::string saved_hub, saved_home;
  bool had_hub = false, had_home = false;
  TempHub() {
    root = fs::temp_directory_path() / ("chalk-hub-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const fs::path snap = root / "hub" / "models--acme--Tiny-7B" / "snapshots" / "abc123";
    fs::create_directories(snap);
    std::ofstream(snap / "config.json") << R"({"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2,
      "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 2048,
      "intermediate_size": 1024, "tie_word_embeddings": false})";
    fs::create_directories(root / "hub" / "models--acme--Tiny-7B" / "refs");
    std::ofstream(root / "hub" / "models--acme--Tiny-7B" / "refs" / "main") << "abc123\n";
    if (const char* v = std::getenv("HF_HUB_CACHE")) had_hub = true, saved_hub = v;
    if (const char* v = std::getenv("HF_HOME")) had_home = true, saved_home = v;
    ::unsetenv("HF_HUB_CACHE");
    ::unsetenv("HUGGINGFACE_HUB_CACHE");
  }
  ~TempHub() {
    fs::remove_all(root);
    had_hub ? (void)::setenv("HF_HUB_CACHE", saved_hub.c_str(), 1) : (void)::unsetenv("HF_HUB_CACHE");
    had_home ? (void)::setenv("HF_HOME", saved_home.c_str(), 1) : (void)::unsetenv("HF_HOME");
  }
};

TEST(HfCache, RepoIdResolvesThroughHfHomeAndHubCache) {
  TempHub t;
  ::setenv("HF_HOME", t.root.string().c_str(), 1);
  const auto snap = hf_cache_snapshot("acme/Tiny-7B");
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(fs::path(*snap), t.root / "hub" / "models--acme--Tiny-7B" / "snapshots" / "abc123");
  // 2 layers: attention 512 x 512 x 2 + 512 x 128 x 2 = 655,360; MLP 3 x 512 x 1024 =
  // 1,572,864; two 1000 x 512 tables; norms 2 x 2 x 512 + 512: 5,483,008.
  const ModelSpec m = load_model("acme/Tiny-7B");
  EXPECT_EQ(m.name, "tiny-7b");
  EXPECT_DOUBLE_EQ(count_params(m).total(), 5483008.0);
  // HF_HUB_CACHE wins over HF_HOME.
  ::setenv("HF_HUB_CACHE", (t.root / "elsewhere").string().c_str(), 1);
  EXPECT_FALSE(hf_cache_snapshot("acme/Tiny-7B").has_value());
  ::setenv("HF_HUB_CACHE", (t.root / "hub").string().c_str(), 1);
  EXPECT_TRUE(hf_cache_snapshot("acme/Tiny-7B").has_value());
  // Not cached, not built in: the usual unknown-model error, no network.
  EXPECT_THROW(load_model("acme/Missing-1B"), InputError);
}

TEST(HfCache, SnapshotWithoutRefsMainAndAmbiguousOnes) {
  TempHub t;
  ::setenv("HF_HUB_CACHE", (t.root / "hub").string().c_str(), 1);
  fs::remove_all(t.root / "hub" / "models--acme--Tiny-7B" / "refs");
  EXPECT_EQ(load_model("acme/Tiny-7B").name, "tiny-7b");  // the only snapshot
  const fs::path second = t.root / "hub" / "models--acme--Tiny-7B" / "snapshots" / "def456";
  fs::create_directories(second);
  fs::copy_file(t.root / "hub" / "models--acme--Tiny-7B" / "snapshots" / "abc123" / "config.json", second / "config.json");
  try {
    load_model("acme/Tiny-7B");
    FAIL() << "two snapshots and no refs/main must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 2 snapshots and no refs/main"), std::string::npos) << e.what();
  }
  // A snapshot directory itself works as --model.
  EXPECT_EQ(load_model(second.string()).name, "tiny-7b");
}

}  // namespace
}  // namespace chalk
