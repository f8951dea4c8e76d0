// The matcher of quantization exclusion lists (hf_module_matcher.cc; issue 28): bounded on
// hostile patterns, the same answers as before on the patterns configs use, and experts
// counted without naming each one, so configs at the model limits read in well under a
// second where they took over 20 s.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/model/model.h"
#include "hf_internal.h"

namespace chalk {
namespace {

using hf::ModuleMatcher;

std::string matcher_error(const std::vector<std::string>& entries) {
  try {
    ModuleMatcher m(entries, "quantization_config.ignore");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Speed on these inputs is bench/bench_quant.cc's (no timed tests): here, the answers.

constexpr const char* kExpertName = "model.layers.12.mlp.experts.255.down_proj";

// 20,000 nested parentheses (40 KB) crashed std::regex's recursive compiler (exit 139):
// now one error naming the entry, its length and the limit.
TEST(QuantMatcher, LongPatternsAreRefusedNamingTheLimit) {
  const std::string nested = "re:" + std::string(20000, '(') + std::string(20000, ')');
  EXPECT_EQ(matcher_error({"lm_head", nested}),
            "quantization_config.ignore[1]: 're:" + std::string(37, '(') +
                "...' is 40003 characters; a regular expression may have at most 1024");
  EXPECT_EQ(matcher_error({std::string(1025, '*')}).find("quantization_config.ignore[0]: '****"), 0u);
  EXPECT_NE(matcher_error({std::string(1025, '*')}).find("is 1025 characters; a glob may have at most 1024"), std::string::npos);
  // Within the limit, deep nesting compiles and matches.
  const ModuleMatcher ok({"re:" + std::string(500, '(') + "lm_head" + std::string(500, ')')}, "f");
  EXPECT_TRUE(ok.matches("lm_head"));
  EXPECT_FALSE(ok.matches("model.embed_tokens"));
  // A literal module name is a lookup: no limit on its length.
  EXPECT_EQ(matcher_error({std::string(5000, 'a')}), "no error");
  // A pattern RE2 refuses names the entry and the reason.
  EXPECT_EQ(matcher_error({"lm_head", "re:(("}), "quantization_config.ignore[1]: 're:((' is not a valid regular expression (missing ))");
  const std::string huge = matcher_error({"re:(a{1000}){1000}"});
  EXPECT_NE(huge.find("quantization_config.ignore[0]: 're:(a{1000}){1000}' is not a valid regular expression"), std::string::npos)
      << huge;
}

// (.*)*(.*)*(.*)*(.*)*X backtracked for over 20 s in std::regex; eight *? pairs took 15 s
// in the recursive glob. Both are linear-time now: 10,000 names in well under a second.
TEST(QuantMatcher, HostilePatternsMatchInLinearTime) {
  const ModuleMatcher re({"re:(.*)*(.*)*(.*)*(.*)*X"}, "f");
  const ModuleMatcher glob({"*?*?*?*?*?*?*?*?X"}, "f");
  const std::string long_name = std::string(kExpertName) + std::string(200, 'a');
  int hits = 0;
  for (int i = 0; i < 10000; ++i) hits += re.matches(long_name) + glob.matches(long_name);
  EXPECT_EQ(hits, 0);
  EXPECT_TRUE(re.matches("model.X"));     // re.match: any name with an X
  EXPECT_TRUE(glob.matches("abcdefghX"));  // eight characters, then X
  EXPECT_FALSE(glob.matches("abcdefgX"));  // seven
  EXPECT_TRUE(glob.matches("abcdefghX.q_proj"));  // a module inside one it names
}

// The rules the configs rely on, unchanged: components for literal names, whole names or
// enclosing modules for globs, re.match (anchored at the start only) for "re:".
TEST(QuantMatcher, SameAnswersOnTheConfigsPatterns) {
  const ModuleMatcher m({"o_proj", "model.layers.3.mlp", "model.layers.*.self_attn", "re:.*mlp\\.down_proj$", "re:lm_"}, "f");
  EXPECT_TRUE(m.matches("model.layers.0.self_attn.o_proj"));
  EXPECT_FALSE(m.matches("model.layers.0.mlp.o_proj_x"));  // not a whole component
  EXPECT_TRUE(m.matches("model.layers.3.mlp.up_proj"));
  EXPECT_FALSE(m.matches("model.layers.13.mlp.up_proj"));
  EXPECT_TRUE(m.matches("model.layers.40.self_attn.q_proj"));
  EXPECT_FALSE(m.matches("model.layers.40.self_attn_x.q_proj"));
  EXPECT_TRUE(m.matches("model.layers.9.mlp.down_proj"));
  EXPECT_FALSE(m.matches("model.layers.9.mlp.down_proj.bias"));  // $ ends the name
  EXPECT_TRUE(m.matches("lm_head"));                             // a prefix is enough
  EXPECT_FALSE(m.matches("model.lm_head"));                      // but it starts at 0
  EXPECT_FALSE(m.matches("model.layers.9.mlp.gate_proj"));
  EXPECT_FALSE(ModuleMatcher({}, "f").matches("lm_head"));
  // A regular expression is tried on the names its leading literals begin; what follows a
  // quantified literal, a '|' or a flag does not count as such a prefix.
  const ModuleMatcher lit({"re:ab*c", "re:model\\.layers\\.5+\\.mlp", "re:x\\.1|lm_head", "re:(?i)EMBED"}, "f");
  EXPECT_TRUE(lit.matches("ac.q_proj"));
  EXPECT_TRUE(lit.matches("abbbc"));
  EXPECT_TRUE(lit.matches("model.layers.55.mlp.up_proj"));
  EXPECT_FALSE(lit.matches("model.layers.56.mlp.up_proj"));
  EXPECT_TRUE(lit.matches("lm_head"));
  EXPECT_TRUE(lit.matches("x.1"));
  EXPECT_TRUE(lit.matches("embed_tokens"));
  EXPECT_FALSE(lit.matches("model.embed_tokens"));
  // Many regular expressions are joined; names repeated across them still compile.
  std::vector<std::string> many;
  for (int i = 0; i < 3000; ++i) many.push_back("re:(?P<n>model\\.layers\\." + std::to_string(i) + ")\\.mlp");
  const ModuleMatcher joined(many, "f");
  EXPECT_TRUE(joined.matches("model.layers.2999.mlp.up_proj"));
  EXPECT_FALSE(joined.matches("model.layers.3000.mlp.up_proj"));
}

// count_experts agrees with matches() on every expert's name, for literal names, globs and
// regular expressions that tell experts apart by their digits, or by the count of them.
TEST(QuantMatcher, ExpertCountsEqualNameByName) {
  const std::vector<std::vector<std::string>> lists = {
      {"model.layers.5.mlp.experts.3", "experts.17.down_proj", "mlp.experts.250"},
      {"*experts.1?.*", "model.layers.5.mlp.experts.2*"},
      {"re:.*experts\\.(3|1[0-9]|2[0-4][0-9])\\.down", "re:.*\\.experts\\.\\d\\d\\.up_proj"},
      {"re:.*experts\\.[^5]\\.", "model.layers.5.mlp.experts.7.down_proj", "*.??.down_proj"},
      {"re:.*experts\\.\\x31", "re:.*mlp.gate$"},
      {"*experts.*"},
      {"model.layers.5.mlp"},
  };
  for (const auto& list : lists) {
    const ModuleMatcher m(list, "f");
    for (const int64_t copies : {1, 9, 10, 11, 100, 256, 1000, 4097}) {
      for (const char* suffix : {".down_proj", ".up_proj"}) {
        const std::string prefix = "model.layers.5.mlp.experts.";
        int64_t by_name = 0;
        for (int64_t e = 0; e < copies; ++e) by_name += m.matches(prefix + std::to_string(e) + suffix);
        EXPECT_EQ(m.count_experts(prefix, suffix, copies), by_name) << list[0] << " " << copies << suffix;
      }
    }
  }
  const ModuleMatcher one({"model.layers.5.mlp.experts.3"}, "f");
  EXPECT_EQ(one.count_experts("model.layers.5.mlp.experts.", ".w1", 65536), 1);
  EXPECT_EQ(one.count_experts("model.layers.6.mlp.experts.", ".w1", 65536), 0);
  EXPECT_EQ(one.count_experts("model.layers.5.mlp.experts.", ".w1", 3), 0);  // only 0..2
  EXPECT_EQ(ModuleMatcher({"*.mlp.*"}, "f").count_experts("model.layers.5.mlp.experts.", ".w1", 65536), 65536);
  EXPECT_EQ(ModuleMatcher({"*.experts.?.*"}, "f").count_experts("model.layers.5.mlp.experts.", ".w1", 65536), 10);
  EXPECT_EQ(ModuleMatcher({"re:.*experts\\.6553"}, "f").count_experts("model.layers.5.mlp.experts.", ".w1", 65536), 7);
}

// DeepSeek-V3 grown to 65,536 routed experts, expert 3 of layer 5 kept in bf16: every
// expert's name was matched against the list (over 20 s). One routed expert is 3 x 7168 x
// 2048 = 44,040,192 parameters; 58 MoE layers x 65,536 of them.
TEST(QuantMatcher, SixtyFiveThousandExpertsReadInLinearTime) {
  auto j = nlohmann::json::parse(read_file(std::string(CHALK_SOURCE_DIR) + "/data/models/hf/deepseek-v3.json"));
  j["n_routed_experts"] = 65536;
  j["quantization_config"] = nlohmann::json::parse(R"({"quant_method": "compressed-tensors", "config_groups": {"g":
      {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
      "ignore": ["lm_head", "re:.*mlp.gate$", "model.layers.5.mlp.experts.3"]})");
  const std::string text = j.dump();
  const ModelSpec m = model_from_hf_config(text, "x", "x.json");
  const double experts = 58 * 65536 * 44040192.0;
  EXPECT_DOUBLE_EQ(count_params(m).routed_experts_total, experts);
  const double f = 44040192.0 / experts;
  EXPECT_DOUBLE_EQ(m.weights.experts_bits, (1 - f) * 4.5 + f * 16);
}

// 10,000 Llama-3.1-8B layers and 2,000 entries: every 5th layer's attention by a glob, the
// next layer's down_proj by name. The 100,000-layer, 20,000-entry case (each name was once
// tried against every entry, over 20 s) is timed in bench/bench_quant.cc, not here.
// Per layer: attention 4096 x 4096 x 2 + 4096 x 1024 x 2 = 41,943,040; FFN 3 x 4096 x 14336,
// a third of it down_proj. FP8 (8 bits) with 10% of attention and 1/30 of the FFN bf16.
TEST(QuantMatcher, TenThousandLayersAndTwoThousandEntries) {
  auto j = nlohmann::json::parse(read_file(std::string(CHALK_SOURCE_DIR) + "/data/models/hf/llama-3.1-8b.json"));
  j["num_hidden_layers"] = 10000;
  nlohmann::json ex = nlohmann::json::array({"lm_head"});
  for (int i = 0; i < 1000; ++i) ex.push_back("model.layers." + std::to_string(5 * i) + ".self_attn*");
  for (int i = 0; i < 1000; ++i) ex.push_back("model.layers." + std::to_string(5 * i + 1) + ".mlp.down_proj");
  j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"exclude_modules", ex}};
  const std::string text = j.dump();
  const ModelSpec m = model_from_hf_config(text, "x", "x.json");
  EXPECT_DOUBLE_EQ(count_params(m).attention, 1e4 * 41943040.0);
  EXPECT_NEAR(m.weights.attention_bits, 0.9 * 8 + 0.1 * 16, 1e-12);
  EXPECT_NEAR(m.weights.dense_ffn_bits, 8 + 8.0 / 30, 1e-12);
}

}  // namespace
}  // namespace chalk
