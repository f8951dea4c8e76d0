// Speculative decoding in the launch files (launch.h, LaunchTarget::draft_tokens): each
// engine's own options for the drafter a plan simulated, and the drafters an engine cannot run.
// Names and values: tests/data/engine-args/ (vLLM's SpeculativeConfig, SGLang's speculative
// decoding section of ServerArgs, TensorRT-LLM's DecodingBaseConfig and its subclasses).
#include <string>
#include <vector>

#include "launch_internal.h"

namespace chalk::sim::launch_detail {
namespace {

/// "the MTP module", "an EAGLE-3 head", "llama-3.2-1b (a draft model)", for comments.
std::string drafter_words(const LaunchTarget& t) {
  if (t.drafter == "mtp") return "the checkpoint's MTP module";
  if (t.drafter == "eagle") return "an EAGLE head";
  if (t.drafter == "eagle3") return "an EAGLE-3 head";
  if (t.drafter == "draft_model") return (t.draft_model_name.empty() ? std::string("a draft model") : t.draft_model_name + " (a draft model)");
  return "free drafts (--drafter none)";
}

bool spec_drafts(const LaunchTarget& t) { return t.draft_tokens > 0 && t.drafter != "none"; }

}  // namespace

bool needs_draft_checkpoint(const LaunchTarget& t) {
  return spec_drafts(t) && (t.drafter == "eagle" || t.drafter == "eagle3" || t.drafter == "draft_model");
}

std::string speculation_note(const LaunchTarget& t) {
  if (t.draft_tokens < 1) return "";
  if (t.drafter == "none") {
    return "Simulated with speculative decoding, " + count(t.draft_tokens, "draft") +
           " a step drafted for free (--drafter none: an upper bound no engine runs): no drafting is written.";
  }
  std::string s = "Simulated with speculative decoding: " + count(t.draft_tokens, "token") + " drafted a step by " + drafter_words(t) +
                  " and verified by the model in the same step.";
  if (t.drafter == "eagle" || t.drafter == "eagle3") {
    s += " The head trained for MODEL is yours to name (chalk knows none): DRAFT_MODEL, or TensorRT-LLM's speculative_model_dir.";
  }
  return s;
}

std::string draft_model_var(const LaunchTarget& t) {
  if (!needs_draft_checkpoint(t)) return "";
  if (t.drafter == "draft_model" && t.draft_model) return "DRAFT_MODEL=\"${DRAFT_MODEL:-" + *t.draft_model + "}\"";
  const std::string what = t.drafter == "draft_model" ? "the checkpoint of " + (t.draft_model_name.empty() ? std::string("the draft model") : t.draft_model_name)
                                                      : std::string(t.drafter == "eagle3" ? "the EAGLE-3" : "the EAGLE") + " head trained for MODEL";
  return "DRAFT_MODEL=\"${DRAFT_MODEL:?set DRAFT_MODEL: " + what + "}\"";  // within 100 columns
}

std::string vllm_speculation_problem(const LaunchTarget& t) {
  if (!spec_drafts(t)) return "";
  if (t.drafter == "draft_model") {
    // SpeculativeConfig.__post_init__ of the v0.11 line: a draft model that is no EAGLE,
    // Medusa, MLP speculator or MTP head raises NotImplementedError.
    return "vLLM (the v0.11 line) runs no separate draft model (\"Speculative decoding with draft model is not supported yet\"): "
           "the plan drafted with " + drafter_words(t);
  }
  if (t.drafter == "eagle3") {
    // SpeculativeConfig._verify_args: eagle3_target_supported = ["llama", "qwen", "minicpm", "gpt_oss"].
    for (const char* family : {"llama", "qwen", "minicpm", "gpt_oss"}) {
      if (t.model_type.find(family) != std::string::npos) return "";
    }
    return "vLLM (the v0.11 line) runs EAGLE-3 only on llama, qwen, minicpm and gpt_oss targets, not " +
           (t.model_type.empty() ? std::string("this model") : t.model_type);
  }
  return "";
}

std::string vllm_speculative_config(const LaunchTarget& t) {
  if (!spec_drafts(t)) return "";
  const std::string k = std::to_string(t.draft_tokens);
  // method "mtp" serves the target's own module (model unset: the target's); "deepseek_mtp"
  // and the other *_mtp names are deprecated aliases of it on the v0.11 line.
  if (t.drafter == "mtp") return "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":" + k + "}'";
  return "--speculative-config \"$SPECULATIVE_CONFIG\"";  // vllm_speculative_config_var: the JSON names DRAFT_MODEL
}

std::string vllm_speculative_config_var(const LaunchTarget& t) {
  if (!spec_drafts(t) || t.drafter == "mtp") return "";
  return "SPECULATIVE_CONFIG=\"{\\\"method\\\":\\\"" + t.drafter + "\\\",\\\"model\\\":\\\"$DRAFT_MODEL\\\",\\\"num_speculative_tokens\\\":" +
         std::to_string(t.draft_tokens) + "}\"";
}

std::string sglang_speculation_problem(const LaunchTarget& t, const std::vector<Pool>& pools) {
  if (!spec_drafts(t) || t.drafter != "draft_model") return "";
  for (const auto& p : pools) {
    // _handle_speculative_decoding: "Currently standalone speculative decoding does not support dp attention."
    if (p.d.dp > 1) return "SGLang's separate draft model (--speculative-algorithm STANDALONE) does not run with DP attention, which the plan chose";
  }
  return "";
}

std::vector<std::string> sglang_speculation_args(const LaunchTarget& t) {
  if (!spec_drafts(t)) return {};
  // NEXTN is the MTP module (SGLang runs it as EAGLE, the draft being the checkpoint itself);
  // STANDALONE a separate draft model. A chain: one token a step (top-k 1), K steps, K + 1
  // tokens verified (the drafts and the token the model adds).
  const std::string algorithm = t.drafter == "mtp" ? "NEXTN" : t.drafter == "eagle" ? "EAGLE" : t.drafter == "eagle3" ? "EAGLE3" : "STANDALONE";
  return {"--speculative-algorithm " + algorithm,
          std::string("--speculative-draft-model-path ") + (t.drafter == "mtp" ? "\"$MODEL\"" : "\"$DRAFT_MODEL\""),
          "--speculative-num-steps " + std::to_string(t.draft_tokens), "--speculative-eagle-topk 1",
          "--speculative-num-draft-tokens " + std::to_string(t.draft_tokens + 1)};
}

std::string trtllm_speculation_problem(const LaunchTarget& t) {
  if (!spec_drafts(t) || t.drafter != "eagle") return "";
  // EagleDecodingConfig's modes are EAGLE3 and EAGLE3_ONE_MODEL (spec_dec_mode).
  return "TensorRT-LLM's PyTorch backend drafts with EAGLE-3 heads (decoding_type Eagle), not the EAGLE head the plan simulated";
}

std::string trtllm_speculative_yaml(const LaunchTarget& t) {
  if (!spec_drafts(t)) return "";
  const std::string k = std::to_string(t.draft_tokens);
  std::string y = "speculative_config:\n  # " + count(t.draft_tokens, "token") + " drafted a step by " + drafter_words(t) + ", as simulated\n";
  if (t.drafter == "mtp") return y + "  decoding_type: MTP\n  num_nextn_predict_layers: " + k + "\n";
  y += std::string("  decoding_type: ") + (t.drafter == "eagle3" ? "Eagle" : "Draft_Target") + "\n  max_draft_len: " + k + "\n";
  if (t.drafter == "draft_model" && t.draft_model) return y + "  speculative_model_dir: " + *t.draft_model + "\n";
  return y + "  # set to " + (t.drafter == "eagle3" ? std::string("the EAGLE-3 head trained for the model") : "the draft model's checkpoint") +
         " (chalk knows none)\n  speculative_model_dir: SET_THE_DRAFT_CHECKPOINT\n";
}

}  // namespace chalk::sim::launch_detail
