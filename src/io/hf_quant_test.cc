// quantization_config: the bytes of each weight group, scales and zero points included
// (docs/models.md, "Quantized checkpoints"), by hand and against published checkpoint sizes.
#include <gtest/gtest.h>

#include "chalk_testing/expect.h"

#include <cmath>
#include <string>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/model/model.h"

namespace chalk {
namespace {

using chalk::testing::rel;

// Qwen3-32B's shape with a quantization_config spliced in.
ModelSpec qwen32(const std::string& quant) {
  return model_from_hf_config(R"({"model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 64,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 25600,
      "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
      "quantization_config": )" + quant + "}", "q", "q.json");
}

double body_bits(const ModelSpec& m) { return m.weights.attention_bits; }

TEST(Quantization, Fp8BlockScaledCountsItsScales) {
  // Block 128 x 128 with one fp32 scale: 8 + 32 / 16384 = 8.001953125 bits per weight on
  // attention and MLPs; embedding and head stay bf16 (Qwen3-32B-FP8, verbatim config).
  const ModelSpec m = load_model("Qwen/Qwen3-32B-FP8");
  EXPECT_EQ(m.weights.attention, DType::fp8);
  EXPECT_DOUBLE_EQ(m.weights.attention_bits, 8.001953125);
  EXPECT_DOUBLE_EQ(m.weights.dense_ffn_bits, 8.001953125);
  EXPECT_EQ(m.weights.embedding, DType::bf16);
  const ParamCounts p = count_params(m);
  const double want = (p.attention + p.dense_ffn) * 8.001953125 / 8 + (p.embedding + p.lm_head + p.norms) * 2;
  EXPECT_DOUBLE_EQ(weight_bytes(m, m.weights).value(), want);
  // Per tensor: exactly 8 bits.
  EXPECT_DOUBLE_EQ(body_bits(qwen32(R"({"quant_method": "fp8", "activation_scheme": "static"})")), 8.0);
}

TEST(Quantization, AwqAndGptqCountScalesAndZeroPoints) {
  // int4, group 128: 4 + 16/128 (fp16 scale) + 4/128 (packed zero point) = 4.15625 bits.
  const ModelSpec awq = qwen32(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
      "version": "gemm", "modules_to_not_convert": null})");
  EXPECT_EQ(awq.weights.attention, DType::int4);
  EXPECT_DOUBLE_EQ(awq.weights.attention_bits, 4.15625);
  EXPECT_DOUBLE_EQ(awq.weights.dense_ffn_bits, 4.15625);
  EXPECT_EQ(awq.weights.embedding, DType::bf16);  // lm_head is never quantized by AWQ
  // Without zero points: 4.125. GPTQ stores qzeros even when symmetric: 4.15625; group 32:
  // 4 + 16/32 + 4/32 = 4.625.
  EXPECT_DOUBLE_EQ(body_bits(qwen32(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": false})")), 4.125);
  EXPECT_DOUBLE_EQ(body_bits(qwen32(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": true})")), 4.15625);
  EXPECT_DOUBLE_EQ(body_bits(qwen32(R"({"quant_method": "gptq", "bits": 4, "group_size": 32, "sym": true})")), 4.625);
  // Qwen3-32B-AWQ by hand: 31.21B body parameters at 4.15625 bits, 1.556B embedding + head
  // and 0.66M norms at 2 bytes.
  const ParamCounts p = count_params(awq);
  EXPECT_DOUBLE_EQ(weight_bytes(awq, awq.weights).value(),
                   (p.attention + p.dense_ffn) * 4.15625 / 8 + (p.embedding + p.lm_head + p.norms) * 2);
}

TEST(Quantization, CompressedTensorsGroupsTargetsAndIgnore) {
  // W4A16 (llm-compressor's scheme): int4 group 128 symmetric on every Linear but lm_head.
  const ModelSpec w4 = qwen32(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
      "strategy": "group", "group_size": 128, "symmetric": true}}}, "ignore": ["lm_head"]})");
  EXPECT_DOUBLE_EQ(w4.weights.attention_bits, 4.125);
  EXPECT_EQ(w4.weights.embedding, DType::bf16);
  EXPECT_EQ(w4.weights.embedding_bits, 0.0);
  // FP8 dynamic, per channel: 8 + 16 / 5120 bits.
  const ModelSpec fp8 = qwen32(R"({"quant_method": "compressed-tensors", "format": "float-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
      "strategy": "channel", "symmetric": true}}}, "ignore": ["lm_head"]})");
  EXPECT_EQ(fp8.weights.dense_ffn, DType::fp8);
  EXPECT_DOUBLE_EQ(fp8.weights.dense_ffn_bits, 8 + 16.0 / 5120);
  // Not ignoring lm_head quantizes it too (the input table stays bf16: the pair averages
  // (4.5 + 16) / 2 = 10.25 bits; hf_quant_exclusion_test.cc).
  const ModelSpec all = qwen32(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"],
      "weights": {"num_bits": 4, "type": "float", "group_size": 16}}}})");
  EXPECT_EQ(all.weights.embedding, DType::nvfp4);
  EXPECT_DOUBLE_EQ(all.weights.embedding_bits, 10.25);
}

TEST(Quantization, ModelOptNvfp4WithExclusions) {
  // ModelOpt NVFP4 (hf_quant_config.json's "quantization" nested in quantization_config):
  // 4 + 8/16 = 4.5 bits; lm_head excluded; attention excluded in every layer (64 entries)
  // drops the group; in some layers only, that part is counted exactly (reported).
  std::string excl = R"(["lm_head")";
  for (int i = 0; i < 64; ++i) excl += ", \"model.layers." + std::to_string(i) + ".self_attn*\"";
  const ModelSpec m = qwen32(R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": )" + excl + "]}}");
  EXPECT_EQ(m.weights.dense_ffn, DType::nvfp4);
  EXPECT_DOUBLE_EQ(m.weights.dense_ffn_bits, 4.5);
  EXPECT_EQ(m.weights.attention, DType::bf16);
  EXPECT_EQ(m.weights.embedding, DType::bf16);
  const ModelSpec some = qwen32(R"({"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head", "model.layers.0.self_attn*"]})");
  EXPECT_EQ(some.weights.attention, DType::fp8);
  EXPECT_GT(some.weights.attention_bits, 8.0);  // 1/64 of it bf16: hf_quant_exclusion_test.cc
  EXPECT_NE(some.weights.quantization.find("unquantized: embedding/LM head, attention 1.56%"), std::string::npos) << some.weights.quantization;
}

TEST(Quantization, Mxfp4GptOssMatchesThePublishedCheckpoint) {
  // gpt-oss: MXFP4 routed experts (4 + 8/32 = 4.25 bits), everything else bf16
  // (modules_to_not_convert: self_attn, router, embed_tokens, lm_head).
  for (const char* name : {"gpt-oss-120b", "gpt-oss-20b"}) {
    const ModelSpec m = load_model(name);
    EXPECT_EQ(m.weights.experts, DType::mxfp4) << name;
    EXPECT_DOUBLE_EQ(m.weights.experts_bits, 4.25) << name;
    EXPECT_EQ(m.weights.attention, DType::bf16) << name;
  }
  // OpenAI's gpt-oss model card (Table 1, "Checkpoint size"): 60.8 GiB and 12.8 GiB. The
  // expert biases are bf16 in the checkpoint but counted at 4.25 bits here (0.04B of 116.8B
  // parameters): within 2%.
  const double gib = 1024.0 * 1024 * 1024;
  const ModelSpec big = load_model("gpt-oss-120b"), small = load_model("gpt-oss-20b");
  EXPECT_LT(rel(weight_bytes(big, big.weights).value() / gib, 60.8), 0.02) << weight_bytes(big, big.weights).value() / gib;
  EXPECT_LT(rel(weight_bytes(small, small.weights).value() / gib, 12.8), 0.02) << weight_bytes(small, small.weights).value() / gib;
}

TEST(Quantization, BadConfigsNameTheField) {
  auto err = [](const std::string& q) {
    try {
      qwen32(q);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err(R"({"quant_method": "fp8", "weight_block_size": [128]})").find("q.json: quantization_config.weight_block_size: expected two positive block sides"),
            std::string::npos);
  EXPECT_NE(err(R"({"quant_method": "awq", "bits": 3})").find("quantization_config.bits: expected 4 or 8, got 3"), std::string::npos);
  EXPECT_NE(err(R"({"quant_method": "modelopt", "quant_algo": "INT2"})").find("quantization_config.quant_algo: unsupported ModelOpt algorithm 'INT2'"),
            std::string::npos);
  EXPECT_NE(err(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 3, "type": "int"}}}})")
                .find("unsupported compressed-tensors weights: int 3 bits"),
            std::string::npos);
  EXPECT_NE(err(R"({"quant_method": "awq", "modules_to_not_convert": "lm_head"})").find("modules_to_not_convert: expected a list"),
            std::string::npos);
}

}  // namespace
}  // namespace chalk
