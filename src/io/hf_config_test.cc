// Importing real HuggingFace configs and refusing what cannot be imported.
#include <gtest/gtest.h>

#include <string>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/model/moe.h"

namespace chalk {
namespace {

std::string error_of(const std::string& json) {
  try {
    model_from_hf_config(json, "x", "cfg.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HfConfig, EveryBuiltInConfigImports) {
  for (const auto& name : builtin_model_names()) {
    const ModelSpec m = load_model(name);
    EXPECT_GT(n_layers(m), 0) << name;
    EXPECT_GT(count_params(m).total(), 1e9) << name;
  }
  EXPECT_GE(builtin_model_names().size(), 17u);
}

TEST(HfConfig, DeepSeekV3Structure) {
  const ModelSpec m = load_model("deepseek-v3");
  ASSERT_EQ(m.groups.size(), 2u);  // 3 dense layers, 58 MoE layers
  EXPECT_EQ(m.groups[0].count, 3);
  EXPECT_EQ(m.groups[0].ffn.kind, FfnKind::dense);
  EXPECT_EQ(m.groups[1].count, 58);
  EXPECT_EQ(m.groups[1].ffn.n_experts, 256);
  EXPECT_EQ(m.groups[1].ffn.n_shared_experts, 1);
  EXPECT_EQ(m.groups[1].attention.kind, AttentionKind::mla);
  EXPECT_EQ(m.n_mtp_layers, 1);  // excluded from counts
  EXPECT_EQ(m.weights.experts, DType::fp8);
  EXPECT_EQ(m.weights.embedding, DType::bf16);
}

// DeepSeek's own inference config (deepseek-ai/DeepSeek-V3 @ 9b4e978,
// inference/configs/config_671B.json, verbatim): the same model as the HF config.
constexpr const char* kDeepSeekInferenceConfig = R"({
    "vocab_size": 129280, "dim": 7168, "inter_dim": 18432, "moe_inter_dim": 2048, "n_layers": 61,
    "n_dense_layers": 3, "n_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
    "n_activated_experts": 8, "n_expert_groups": 8, "n_limited_groups": 4, "route_scale": 2.5,
    "score_func": "sigmoid", "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "dtype": "fp8"
})";

TEST(HfConfig, DeepSeekInferenceConfigIsTheSameModel) {
  const ModelSpec ref = model_from_hf_config(kDeepSeekInferenceConfig, "ds", "config_671B.json");
  const ModelSpec hf = load_model("deepseek-v3");
  // Every parameter the HF config counts (671.0B total, 37.5B active without MTP).
  EXPECT_EQ(count_params(ref).total(), count_params(hf).total());
  EXPECT_EQ(count_params(ref).active(), count_params(hf).active());
  EXPECT_EQ(kv_bytes_per_token(ref, 4096, DType::bf16).value(), 70272);  // 61 x (512 + 64) x 2 B
  EXPECT_EQ(ref.max_context, 163840);  // original_seq_len 4096 x rope_factor 40 (ModelArgs defaults)
  EXPECT_EQ(ref.weights.experts, DType::fp8);
  EXPECT_EQ(ref.weights.attention, DType::fp8);
  EXPECT_EQ(ref.weights.embedding, DType::bf16);
  EXPECT_EQ(ref.groups.size(), 2u);
  EXPECT_EQ(ref.groups[0].count, 3);
  EXPECT_EQ(ref.n_mtp_layers, 0);
  // A misspelled key is an error, not a default; so is an unknown dtype.
  std::string typo = kDeepSeekInferenceConfig;
  typo.replace(typo.find("n_dense_layers"), 14, "n_dense_layer");
  EXPECT_NE(error_of(typo).find("n_dense_layer: unknown field"), std::string::npos) << error_of(typo);
  std::string dtype = kDeepSeekInferenceConfig;
  dtype.replace(dtype.find("\"fp8\""), 5, "\"fp4\"");
  EXPECT_NE(error_of(dtype).find("dtype: expected fp8 or bf16, got 'fp4'"), std::string::npos) << error_of(dtype);
}

TEST(HfConfig, GptOssAlternatesSlidingAndFullLayers) {
  const ModelSpec m = load_model("gpt-oss-120b");
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].count + m.groups[1].count, 36);
  EXPECT_EQ(m.groups[0].attention.sliding_window, 128);
  EXPECT_EQ(m.groups[1].attention.sliding_window, 0);
  EXPECT_EQ(m.weights.experts, DType::mxfp4);     // quantization_config: mxfp4 experts only
  EXPECT_EQ(m.weights.attention, DType::bf16);
}

TEST(HfConfig, KimiHasOneDenseLayer) {
  const ModelSpec m = load_model("kimi-k2-instruct");
  EXPECT_EQ(m.groups[0].count, 1);
  EXPECT_EQ(m.groups[1].ffn.n_experts, 384);
}

TEST(HfConfig, ReadsAConfigFromAPath) {
  const std::string path = std::string(CHALK_SOURCE_DIR) + "/data/models/hf/qwen3-32b.json";
  const ModelSpec m = load_model(path);
  EXPECT_EQ(m.name, "qwen3-32b");
  EXPECT_TRUE(m.groups[0].attention.qk_norm);
}

TEST(HfConfig, MissingFieldIsNamed) {
  EXPECT_EQ(error_of(R"({"model_type": "llama", "hidden_size": 4096, "vocab_size": 32000,
                         "max_position_embeddings": 4096, "num_attention_heads": 32,
                         "intermediate_size": 11008})"),
            "cfg.json: num_hidden_layers: missing required field");
}

TEST(HfConfig, WrongTypeIsNamed) {
  EXPECT_EQ(error_of(R"({"model_type": "llama", "hidden_size": "big"})"),
            "cfg.json: hidden_size: expected an integer, got \"big\"");
}

TEST(HfConfig, UnsupportedArchitectureIsRefusedNotGuessed) {
  EXPECT_NE(error_of(R"({"model_type": "falcon_mamba"})").find("cfg.json: model_type: unsupported architecture 'falcon_mamba'"),
            std::string::npos);
}

TEST(HfConfig, UnsupportedQuantizationIsRefused) {
  const std::string cfg = R"({"model_type": "llama", "hidden_size": 4096, "vocab_size": 32000,
      "max_position_embeddings": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
      "intermediate_size": 11008, "quantization_config": {"quant_method": "hqq"}})";
  EXPECT_NE(error_of(cfg).find("quantization_config.quant_method: unsupported quantization 'hqq'"), std::string::npos);
}

// QA report: hidden_size 4095 over 32 heads truncated head_dim to 127 (4095 // 32) and
// dropped 31 channels silently. Refused unless head_dim is stated; 4096 / 32 = 128 derives.
TEST(HfConfig, HeadDimIsNeverTruncated) {
  const std::string base = R"({"model_type": "llama", "vocab_size": 32000, "max_position_embeddings": 4096,
      "num_attention_heads": 32, "num_hidden_layers": 2, "intermediate_size": 11008, )";
  EXPECT_EQ(error_of(base + R"("hidden_size": 4095})"),
            "cfg.json: head_dim: missing, and hidden_size 4095 is not a multiple of num_attention_heads 32; "
            "expected head_dim stated or hidden_size divisible by the heads");
  EXPECT_NE(error_of(base + R"("hidden_size": 16})").find("head_dim: missing"), std::string::npos);
  EXPECT_EQ(model_from_hf_config(base + R"("hidden_size": 4095, "head_dim": 128})", "x", "cfg.json").groups[0].attention.head_dim, 128);
  EXPECT_EQ(model_from_hf_config(base + R"("hidden_size": 4096})", "x", "cfg.json").groups[0].attention.head_dim, 128);
}

TEST(HfConfig, MalformedJson) {
  EXPECT_NE(error_of("{\"model_type\": ").find("cfg.json: malformed JSON"), std::string::npos);
}

TEST(HfConfig, TopKAboveExpertsIsRefused) {
  const std::string cfg = R"({"model_type": "mixtral", "hidden_size": 4096, "vocab_size": 32000,
      "max_position_embeddings": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
      "intermediate_size": 11008, "num_local_experts": 8, "num_experts_per_tok": 9})";
  EXPECT_EQ(error_of(cfg), "cfg.json: num_experts_per_tok: must be <= the number of experts (8), got 9");
}

TEST(NativeModel, UnknownKeyIsAnError) {
  try {
    model_from_native(R"({"format": "chalk-model/1", "name": "m", "source": "s", "d_model": 8, "vocab_size": 8,
                          "max_context": 8, "layers": [{"count": 1, "attention": {"kind": "mha", "n_heads": 2,
                          "head_dim": 4}, "ffn": {"d_ff": 16, "gatd": true}}]})",
                      "m.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 39), "m.json: layers[0].ffn.gatd: unknown fie");
  }
}

TEST(NativeModel, MqaAndMhaFixTheKvHeads) {
  const ModelSpec palm = load_model("palm-540b");
  EXPECT_EQ(palm.groups[0].attention.n_kv_heads, 1);
  const ModelSpec gpt3 = load_model("gpt-3-175b");
  EXPECT_EQ(gpt3.groups[0].attention.n_kv_heads, 96);
  EXPECT_FALSE(gpt3.groups[0].ffn.gated);
}

// Issue 12: group-limited routing is readable in the native format too, not only in HF
// configs. DeepSeek-V3's routed layer written natively (256 experts, top 8, 8 groups of 32,
// at most 4 groups per token) routes as the HF config does: at one token the 8 experts fall
// in 4 groups (two per group), so with 32 experts per chip on 8 chips the busiest chip holds
// 3.486 of them, not the 2.564 of ungrouped routing (moe.h derives both).
TEST(NativeModel, GroupLimitedRoutingReadsLikeHf) {
  auto native = [](const std::string& groups) {
    return model_from_native(R"({"format": "chalk-model/1", "name": "m", "source": "s", "d_model": 7168, "vocab_size": 129280,
        "max_context": 4096, "layers": [{"count": 1, "attention": {"kind": "mha", "n_heads": 2, "head_dim": 128},
        "ffn": {"kind": "moe", "d_ff": 2048, "n_experts": 256, "top_k": 8, "n_shared_experts": 1)" + groups + "}}]}",
                             "m.json");
  };
  const ModelSpec grouped = native(R"(, "n_group": 8, "topk_group": 4)");
  EXPECT_EQ(grouped.groups[0].ffn.n_group, 8);
  EXPECT_EQ(grouped.groups[0].ffn.topk_group, 4);
  const ModelSpec v3 = load_model("deepseek-v3");
  const FfnSpec* hf = nullptr;
  for (const auto& g : v3.groups) {
    if (g.ffn.kind == FfnKind::moe) hf = &g.ffn;
  }
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->n_group, grouped.groups[0].ffn.n_group);
  EXPECT_EQ(hf->topk_group, grouped.groups[0].ffn.topk_group);
  const auto& f = grouped.groups[0].ffn;
  EXPECT_NEAR(busiest_chip_experts({f.n_experts, f.top_k, f.n_group, f.topk_group}, 1, 8), 3.486, 0.001);
  // Absent: no limit (n_group 1, topk_group 1), the ungrouped 2.564.
  const ModelSpec ungrouped = native("");  // held: a reference into the temporary would dangle
  const auto& u = ungrouped.groups[0].ffn;
  EXPECT_EQ(u.n_group, 1);
  EXPECT_EQ(u.topk_group, 1);
  EXPECT_NEAR(busiest_chip_experts({u.n_experts, u.top_k, u.n_group, u.topk_group}, 1, 8), 2.564, 0.001);
  // A group count that does not divide the experts, or topk_group above n_group: one line each.
  EXPECT_THROW(native(R"(, "n_group": 7, "topk_group": 4)"), InputError);
  try {
    native(R"(, "n_group": 8, "topk_group": 9)");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "m.json: layers[0].ffn.topk_group: must be in 1..8, got 9");
  }
}

}  // namespace
}  // namespace chalk
