// Quantization exclusion lists counted matrix by matrix and layer by layer (hf_quant.cc,
// hf_quant_modules.cc; docs/models.md, "Quantized checkpoints"), and ModelOpt's
// hf_quant_config.json read beside a snapshot's config.json (catalog.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "chalk/io/io.h"
#include "chalk/model/model.h"

namespace chalk {
namespace {

namespace fs = std::filesystem;

// Qwen3-32B's shape (64 layers, d_model 5120, 64 heads / 8 KV heads of 128, FFN 25600,
// untied vocab 151936) with a quantization_config spliced in.
ModelSpec excl_qwen32(const std::string& quant) {
  return model_from_hf_config(R"({"model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 64,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 25600,
      "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
      "quantization_config": )" + quant + "}", "q", "q.json");
}

// Qwen3-32B attention by hand, per layer: q 5120 x 8192 = 41,943,040; k and v 5120 x 1024 =
// 5,242,880 each; o 8192 x 5120 = 41,943,040: 94,371,840 in matrices, + 256 QK-norm
// weights = 94,372,096; x 64 layers = 6,039,814,144.
constexpr double kQwenAttnLayerMatrices = 94371840.0;
constexpr double kQwenAttn = 6039814144.0;

TEST(QuantExclusion, OneLayerOfAGroupIsCountedExactly) {
  // ModelOpt FP8 with model.layers.0.self_attn* excluded: 1 of 64 layers' attention stays
  // bf16. Attention bytes = (6,039,814,144 - 94,371,840) x 1 + 94,371,840 x 2 =
  // 6,134,185,984; as bits per weight 8 + 8 x 94,371,840 / 6,039,814,144 = 8.1250.
  const ModelSpec m =
      excl_qwen32(R"({"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head", "model.layers.0.self_attn*"]})");
  EXPECT_EQ(m.weights.attention, DType::fp8);
  EXPECT_DOUBLE_EQ(m.weights.attention_bits, 8 + 8 * kQwenAttnLayerMatrices / kQwenAttn);
  const ParamCounts p = count_params(m);
  EXPECT_DOUBLE_EQ(p.attention, kQwenAttn);
  EXPECT_NEAR(p.attention * m.weights.attention_bits / 8, 6134185984.0, 1e-3);
  EXPECT_NE(m.weights.quantization.find("attention 1.56%"), std::string::npos) << m.weights.quantization;
  // The dense FFN is whole: exactly 8 bits.
  EXPECT_DOUBLE_EQ(m.weights.dense_ffn_bits, 8.0);
}

TEST(QuantExclusion, OneMatrixOfAGroupIsCountedExactly) {
  // W4A16 (int4 group 128 symmetric: 4 + 16/128 = 4.125 bits) with every down_proj ignored:
  // gate, up and down are 5120 x 25600 each, so the dense FFN is 2/3 at 4.125 bits and 1/3
  // bf16: (2 x 4.125 + 16) / 3 = 8.08333 bits. Attention is whole at 4.125.
  const ModelSpec m = excl_qwen32(R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"],
      "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": true}}},
      "ignore": ["lm_head", "re:.*mlp\\.down_proj$"]})");
  EXPECT_EQ(m.weights.dense_ffn, DType::int4);
  EXPECT_DOUBLE_EQ(m.weights.dense_ffn_bits, (2 * 4.125 + 16) / 3);
  EXPECT_DOUBLE_EQ(m.weights.attention_bits, 4.125);
  // AWQ's modules_to_not_convert by component ("o_proj": transformers' substring test kept
  // to whole names): 41,943,040 of each layer's attention stays fp16/bf16.
  const ModelSpec awq = excl_qwen32(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
      "modules_to_not_convert": ["o_proj"]})");
  const double f = 64 * 41943040.0 / kQwenAttn;
  EXPECT_DOUBLE_EQ(awq.weights.attention_bits, (1 - f) * 4.15625 + f * 16);
  // "proj" names no whole component: nothing is excluded.
  EXPECT_DOUBLE_EQ(excl_qwen32(R"({"quant_method": "awq", "modules_to_not_convert": ["proj"]})").weights.attention_bits, 4.15625);
}

TEST(QuantExclusion, TheInputEmbeddingIsNeverQuantized) {
  // compressed-tensors NVFP4 on every Linear, lm_head not ignored: the LM head (151936 x
  // 5120) is at 4.5 bits, the input table of the same size (a lookup, not a Linear) bf16:
  // (4.5 + 16) / 2 = 10.25 bits over the pair.
  const ModelSpec m = excl_qwen32(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"],
      "weights": {"num_bits": 4, "type": "float", "group_size": 16}}}})");
  EXPECT_EQ(m.weights.embedding, DType::nvfp4);
  EXPECT_DOUBLE_EQ(m.weights.embedding_bits, 10.25);
}

TEST(QuantExclusion, OneRoutedExpertOfOneLayer) {
  // DeepSeek-V3 as NVFP4 experts with expert 3 of layer 5 ignored: one expert is 3 x 7168 x
  // 2048 = 44,040,192 parameters; routed experts 58 layers x 256 x 44,040,192 =
  // 653,908,770,816.
  auto j = nlohmann::json::parse(*detail::embedded_file("models/hf/deepseek-v3.json"));
  j["quantization_config"] = nlohmann::json::parse(R"({"quant_method": "compressed-tensors", "config_groups": {"g":
      {"targets": ["re:.*experts.*"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
      "ignore": ["model.layers.5.mlp.experts.3"]})");
  const ModelSpec m = model_from_hf_config(j.dump(), "dsv3", "dsv3.json");
  const double f = 44040192.0 / 653908770816.0;
  EXPECT_DOUBLE_EQ(count_params(m).routed_experts_total, 653908770816.0);
  EXPECT_DOUBLE_EQ(m.weights.experts_bits, (1 - f) * 4.5 + f * 16);
  EXPECT_EQ(m.weights.attention, DType::bf16);  // not targeted
}

/// A snapshot directory holding DeepSeek-V3's config.json without its own
/// quantization_config and NVIDIA's hf_quant_config.json beside it.
struct QuantSnapshot {
  fs::path dir;
  explicit QuantSnapshot(const std::string& excludes) {
    dir = fs::temp_directory_path() / ("chalk-quant-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto j = nlohmann::json::parse(*detail::embedded_file("models/hf/deepseek-v3.json"));
    j.erase("quantization_config");
    std::ofstream(dir / "config.json") << j.dump(2);
    std::ofstream(dir / "hf_quant_config.json")
        << R"({"producer": {"name": "modelopt", "version": "0.27.0"}, "quantization": {"quant_algo": "NVFP4",
        "kv_cache_quant_algo": null, "group_size": 16, "exclude_modules": )" + excludes + "}}";
  }
  ~QuantSnapshot() { fs::remove_all(dir); }
};

// nvidia/DeepSeek-V3-0324-NVFP4's exclude_modules (hf_quant_config.json as vendored by
// github.com/ai-dynamo/aiconfigurator, commit 6d449daaff3cde16ce997454494020b79988ac32):
// self_attn* of all 61 layers, the MTP layer 61*, lm_head, embed_tokens, model.norm and each
// layer's mlp.gate and norms. Only the patterns that name weight matrices matter here.
std::string dsv3_nvfp4_excludes(int first_attention_layer) {
  std::string s = R"(["lm_head", "model.embed_tokens", "model.norm", "model.layers.61*")";
  for (int i = 0; i < 61; ++i) {
    s += ", \"model.layers." + std::to_string(i) + ".mlp.gate\", \"model.layers." + std::to_string(i) + ".input_layernorm\"";
    if (i >= first_attention_layer) s += ", \"model.layers." + std::to_string(i) + ".self_attn*\"";
  }
  return s + "]";
}

TEST(QuantExclusion, ModelOptHfQuantConfigBesideConfigJson) {
  const QuantSnapshot snap(dsv3_nvfp4_excludes(0));
  const ModelSpec m = load_model(snap.dir.string());
  // Attention excluded in every layer: bf16 throughout. Dense FFN (3 layers), shared and
  // routed experts: NVFP4, 4 + 8/16 = 4.5 bits. Embedding, head, routers and norms bf16.
  EXPECT_EQ(m.weights.attention, DType::bf16);
  EXPECT_EQ(m.weights.dense_ffn, DType::nvfp4);
  EXPECT_DOUBLE_EQ(m.weights.dense_ffn_bits, 4.5);
  EXPECT_EQ(m.weights.experts, DType::nvfp4);
  EXPECT_DOUBLE_EQ(m.weights.experts_bits, 4.5);
  EXPECT_EQ(m.weights.embedding, DType::bf16);
  const ParamCounts p = count_params(m);
  EXPECT_DOUBLE_EQ(weight_bytes(m, m.weights).value(), (p.attention + p.embedding + p.lm_head + p.router + p.norms) * 2 +
                                                           (p.dense_ffn + p.shared_experts + p.routed_experts_total) * 4.5 / 8);
  // The same list less layer 0's attention: MLA per layer by hand, q_a 7168 x 1536 =
  // 11,010,048, q_b 1536 x 128 x 192 = 37,748,736, kv_a 7168 x 576 = 4,128,768, kv_b 512 x
  // 128 x 256 = 16,777,216, o 16384 x 7168 = 117,440,512: 187,105,280 in matrices, + 2,048
  // latent-norm weights; 60 of 61 layers' matrices stay bf16.
  const QuantSnapshot one(dsv3_nvfp4_excludes(1));
  const ModelSpec m1 = load_model((one.dir / "config.json").string());
  EXPECT_DOUBLE_EQ(count_params(m1).attention, 61 * 187107328.0);
  const double f = 60 * 187105280.0 / (61 * 187107328.0);
  EXPECT_EQ(m1.weights.attention, DType::nvfp4);
  EXPECT_DOUBLE_EQ(m1.weights.attention_bits, (1 - f) * 4.5 + f * 16);
}

TEST(QuantExclusion, BadEntriesNameTheField) {
  try {
    excl_qwen32(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float"}}}, "ignore": ["lm_head", "re:(("]})");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("quantization_config.ignore[1]: 're:((' is not a valid regular expression"), std::string::npos)
        << e.what();
  }
  const QuantSnapshot snap("[]");
  std::ofstream(snap.dir / "hf_quant_config.json") << R"({"producer": {"name": "modelopt"}})";
  try {
    load_model(snap.dir.string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hf_quant_config.json: expected ModelOpt's object with a \"quantization\" object"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace chalk
