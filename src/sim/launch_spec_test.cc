// Speculative decoding in the launch files (launch.h, LaunchTarget::draft_tokens;
// launch_speculation.cc): each engine's options for the drafter simulated, every name and
// value one the engine defines (tests/data/engine-args/), and the drafters an engine cannot run.
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/sim/launch.h"
#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

/// The text of `path` in `l` ("" when absent).
std::string spec_text_of(const std::vector<EngineLaunch>& l, const std::string& path) {
  const LaunchFile* f = launch_file_at(l, path);
  return f ? f->text : std::string();
}

/// The problem of `engine` in `l`.
std::string spec_problem_of(const std::vector<EngineLaunch>& l, const std::string& engine) {
  for (const auto& e : l) {
    if (e.engine == engine) return e.problem;
  }
  return "(no such engine)";
}

/// vLLM's --speculative-config JSON in a serve script, as the shell hands it to vLLM: the
/// quotes of a single-quoted word dropped, or of a double-quoted one with \" unescaped.
std::string spec_vllm_json(const std::string& script) {
  const auto at = script.find("--speculative-config ");
  if (at == std::string::npos) return "";
  std::string word = script.substr(at + 21, script.find('\n', at) - at - 21);
  if (word.ends_with(" \\")) word.resize(word.size() - 2);
  if (word == "\"$SPECULATIVE_CONFIG\"") {  // the JSON in its variable's line
    const auto line = script.find("\nSPECULATIVE_CONFIG=");
    if (line == std::string::npos) return "";
    word = script.substr(line + 20, script.find('\n', line + 1) - line - 20);
  }
  if (word.size() >= 2 && word.front() == '\'') return word.substr(1, word.size() - 2);
  word = word.substr(1, word.size() - 2);
  return std::regex_replace(word, std::regex(R"(\\")"), "\"");
}

/// Every key of `json` is one of vLLM's SpeculativeConfig fields chalk's list holds, and its
/// method one of SpeculativeMethod's values (tests/data/engine-args/vllm.txt).
void spec_check_vllm_json(const std::string& json) {
  const LaunchEngineArgs a = launch_engine_args("vllm");
  ASSERT_TRUE(a.names.count("speculative-config")) << "vllm.txt lists no speculative-config keys";
  int keys = 0;
  const std::regex key(R"re("([a-z_]+)":)re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), key); it != std::sregex_iterator(); ++it, ++keys) {
    EXPECT_TRUE(a.names.at("speculative-config").count((*it)[1].str())) << (*it)[1].str() << " in " << json;
  }
  EXPECT_GE(keys, 2) << json;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json, m, std::regex(R"re("method":"([a-z0-9_]+)")re"))) << json;
  EXPECT_TRUE(a.values.at("speculative-config.method").count(m[1].str())) << m[1].str();
}

LaunchTarget spec_target(const std::string& drafter, int64_t k, const std::string& model_type) {
  LaunchTarget t = launch_test_target();
  t.draft_tokens = k;
  t.drafter = drafter;
  t.model_type = model_type;
  return t;
}

/// One replica of 8 chips, TP8 (no DP attention).
PlanCandidate spec_tp8() {
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 8;
  c.parallel.tp_ffn = 8;
  c.parallel.ep = 1;
  c.parallel.tp_expert = 8;
  return c;
}

TEST(LaunchSpeculation, MtpIsEachEnginesOwnModuleOption) {
  // DeepSeek-V3's MTP module drafting 1 token a step: vLLM method mtp (the module is the
  // checkpoint's: no model), SGLang NEXTN chained 1 step of top-1 verifying 1 + 1 = 2 tokens,
  // TensorRT-LLM decoding_type MTP with one next-n layer. Every name is the engine's own.
  LaunchTarget t = spec_target("mtp", 1, "deepseek_v3");
  t.moe = true;
  PlanCandidate c = launch_dp_attention_moe();  // DP attention at TP1 over EP8: every engine states it
  c.parallel.tp_attention = 1;
  c.parallel.tp_ffn = 1;
  const auto l = launch_files(c, t);
  EXPECT_GE(launch_check_against_engines(l), 60);
  for (const auto& e : l) EXPECT_EQ(e.problem, "") << e.engine;
  const std::string v = spec_text_of(l, "vllm/serve.sh");
  EXPECT_EQ(spec_vllm_json(v), R"({"method":"mtp","num_speculative_tokens":1})") << v;
  spec_check_vllm_json(spec_vllm_json(v));
  EXPECT_NE(v.find("# Simulated with speculative decoding: 1 token drafted a step by"), std::string::npos) << v;
  // Dynamo's worker carries the same JSON as a YAML single-quoted scalar.
  EXPECT_NE(spec_text_of(l, "vllm/dynamo.yaml").find("            - --speculative-config\n            - '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'\n"),
            std::string::npos) << spec_text_of(l, "vllm/dynamo.yaml");
  const std::string g = spec_text_of(l, "sglang/serve.sh");
  for (const char* want : {"--speculative-algorithm NEXTN \\\n", "--speculative-draft-model-path \"$MODEL\" \\\n", "--speculative-num-steps 1 \\\n",
                           "--speculative-eagle-topk 1 \\\n", "--speculative-num-draft-tokens 2"}) {
    EXPECT_NE(g.find(want), std::string::npos) << want << "\n" << g;
  }
  const std::string y = spec_text_of(l, "trtllm/extra_llm_api_options.yaml");
  EXPECT_NE(y.find("speculative_config:\n"), std::string::npos) << y;
  EXPECT_NE(y.find("  decoding_type: MTP\n  num_nextn_predict_layers: 1\n"), std::string::npos) << y;
}

TEST(LaunchSpeculation, AnEagle3HeadIsTheOperatorsCheckpoint) {
  // Llama 3.1 70B drafted by an EAGLE-3 head, 3 tokens a step: the head's checkpoint is
  // DRAFT_MODEL (required: chalk knows none), so no Dynamo manifest; vLLM method eagle3 with
  // it as model, SGLang EAGLE3 3 steps verifying 4 tokens, TensorRT-LLM Eagle with
  // max_draft_len 3 and a speculative_model_dir to set.
  const LaunchTarget t = spec_target("eagle3", 3, "llama");
  const auto l = launch_files(spec_tp8(), t);
  EXPECT_GE(launch_check_against_engines(l), 40);
  for (const auto& e : l) EXPECT_EQ(e.problem, "") << e.engine;
  const std::string v = spec_text_of(l, "vllm/serve.sh");
  EXPECT_NE(v.find("DRAFT_MODEL=\"${DRAFT_MODEL:?set DRAFT_MODEL: the EAGLE-3 head trained for MODEL}\"\n"), std::string::npos) << v;
  for (const auto& e : l) {
    for (const auto& f : e.files) {
      std::istringstream lines(f.text);
      for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << f.path << ": " << line;
    }
  }
  EXPECT_EQ(spec_vllm_json(v), R"({"method":"eagle3","model":"$DRAFT_MODEL","num_speculative_tokens":3})") << v;
  spec_check_vllm_json(spec_vllm_json(v));
  EXPECT_EQ(launch_file_at(l, "vllm/dynamo.yaml"), nullptr);
  const std::string g = spec_text_of(l, "sglang/serve.sh");
  EXPECT_NE(g.find("--speculative-algorithm EAGLE3 \\\n  --speculative-draft-model-path \"$DRAFT_MODEL\" \\\n  --speculative-num-steps 3 \\\n"
                   "  --speculative-eagle-topk 1 \\\n  --speculative-num-draft-tokens 4"),
            std::string::npos) << g;
  EXPECT_NE(g.find("DRAFT_MODEL=\"${DRAFT_MODEL:?"), std::string::npos) << g;
  const std::string y = spec_text_of(l, "trtllm/extra_llm_api_options.yaml");
  EXPECT_NE(y.find("  decoding_type: Eagle\n  max_draft_len: 3\n"), std::string::npos) << y;
  EXPECT_NE(y.find("  speculative_model_dir: SET_THE_DRAFT_CHECKPOINT\n"), std::string::npos) << y;
}

TEST(LaunchSpeculation, EachEngineRefusesTheDrafterItCannotRun) {
  // vLLM (the v0.11 line) runs EAGLE-3 on llama, qwen, minicpm and gpt_oss targets only, and no
  // separate draft model; TensorRT-LLM's PyTorch backend no EAGLE-1 head; SGLang's STANDALONE
  // draft model no DP attention. The others still launch.
  const auto ds = launch_files(spec_tp8(), spec_target("eagle3", 2, "deepseek_v3"));
  EXPECT_EQ(spec_problem_of(ds, "vllm"), "vLLM (the v0.11 line) runs EAGLE-3 only on llama, qwen, minicpm and gpt_oss targets, not deepseek_v3");
  EXPECT_EQ(spec_problem_of(ds, "sglang"), "");
  const auto eagle1 = launch_files(spec_tp8(), spec_target("eagle", 2, "llama"));
  EXPECT_EQ(spec_problem_of(eagle1, "vllm"), "");
  EXPECT_NE(spec_problem_of(eagle1, "trtllm").find("EAGLE-3 heads (decoding_type Eagle)"), std::string::npos);
  spec_check_vllm_json(spec_vllm_json(spec_text_of(eagle1, "vllm/serve.sh")));
  LaunchTarget draft = spec_target("draft_model", 4, "llama");
  draft.draft_model = "meta-llama/Llama-3.2-1B-Instruct";
  draft.draft_model_name = "llama-3.2-1b";
  const auto tp = launch_files(spec_tp8(), draft);
  EXPECT_NE(spec_problem_of(tp, "vllm").find("runs no separate draft model"), std::string::npos) << spec_problem_of(tp, "vllm");
  EXPECT_GE(launch_check_against_engines(tp), 30);
  EXPECT_NE(spec_text_of(tp, "sglang/serve.sh").find("DRAFT_MODEL=\"${DRAFT_MODEL:-meta-llama/Llama-3.2-1B-Instruct}\""), std::string::npos);
  EXPECT_NE(spec_text_of(tp, "sglang/serve.sh").find("--speculative-algorithm STANDALONE"), std::string::npos);
  EXPECT_NE(spec_text_of(tp, "trtllm/extra_llm_api_options.yaml")
                .find("  decoding_type: Draft_Target\n  max_draft_len: 4\n  speculative_model_dir: meta-llama/Llama-3.2-1B-Instruct\n"),
            std::string::npos);
  draft.moe = true;  // DP attention under one expert split: an MoE's layout every engine states
  const auto dp = launch_files(launch_dp_attention_moe(), draft);  // attention TP2 x DP4
  EXPECT_NE(spec_problem_of(dp, "sglang").find("does not run with DP attention"), std::string::npos) << spec_problem_of(dp, "sglang");
}

TEST(LaunchSpeculation, FreeDraftsAndNoDraftsWriteNoDrafting) {
  // --drafter none prices the drafts as free, which no engine runs: the files say so and
  // write no drafting; a plan without drafts writes none and says nothing of it.
  const auto none = launch_files(spec_tp8(), spec_target("none", 2, "llama"));
  const auto plain = launch_files(spec_tp8(), launch_test_target());
  for (const auto* l : {&none, &plain}) {
    for (const auto& e : *l) {
      EXPECT_EQ(e.problem, "") << e.engine;
      for (const auto& f : e.files) {
        EXPECT_EQ(f.text.find("--speculative"), std::string::npos) << f.path;
        EXPECT_EQ(f.text.find("speculative_config"), std::string::npos) << f.path;
      }
    }
  }
  EXPECT_NE(spec_text_of(none, "vllm/serve.sh").find("drafted for free (--drafter none: an"), std::string::npos) << spec_text_of(none, "vllm/serve.sh");
  EXPECT_EQ(spec_text_of(plain, "vllm/serve.sh").find("speculative decoding"), std::string::npos);
}

}  // namespace
}  // namespace chalk::sim
