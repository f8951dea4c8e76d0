// Hybrid, sliding-window, chunked and sparse-attention models read from their configs:
// parameters, KV bytes per token, fixed per-sequence state and FLOPs, each derived by hand
// below and checked against the authors' published counts (docs/models.md).
#include <gtest/gtest.h>

#include "chalk_testing/expect.h"

#include <cmath>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/model/model.h"

namespace chalk {
namespace {

using chalk::testing::rel;

int64_t layers_of(const ModelSpec& m, AttentionKind kind, bool windowed) {
  int64_t n = 0;
  for (const auto& g : m.groups) {
    if (g.attention.kind == kind && (g.attention.sliding_window > 0) == windowed) n += g.count;
  }
  return n;
}

// Qwen3-Next-80B-A3B (d 2048, 48 layers, full_attention_interval 4):
//  full attention (12 layers): q and its gate 2048 x 16 x 256 x 2 = 16,777,216; k, v
//    2048 x 2 x 256 x 2 = 2,097,152; o 4096 x 2048 = 8,388,608; QK-norm 512 -> 27,263,488
//  Gated DeltaNet (36 layers): q, k, v 2048 x (2048 + 2048 + 4096) = 16,777,216; z
//    8,388,608; out 8,388,608; b, a 2048 x 64 = 131,072; dt_bias, A_log 64; conv
//    8192 x 4 = 32,768; norm 128 -> 33,718,464
//  MoE (48 layers): 512 experts + 1 shared of 3 x 2048 x 512 = 3,145,728, router
//    2048 x 512, shared-expert gate 2048; embeddings 2 x 151936 x 2048; norms 2 x 2048 x 48 + 2048.
//  Total 79,674,391,296 and active (10 routed + 1 shared) 3,874,929,408: exactly the
//  safetensors totals other tools publish for this shape ("80B total, 3B active", model card).
TEST(Hybrid, Qwen3NextParametersKvAndState) {
  const ModelSpec m = load_model("qwen3-next-80b-a3b");
  EXPECT_EQ(layers_of(m, AttentionKind::gqa, false), 12);
  EXPECT_EQ(layers_of(m, AttentionKind::linear, false), 36);
  const ParamCounts p = count_params(m);
  EXPECT_DOUBLE_EQ(p.total(), 79674391296.0);
  EXPECT_DOUBLE_EQ(p.active(), 3874929408.0);
  EXPECT_LT(rel(p.total(), 80e9), 0.01);
  EXPECT_LT(rel(p.active_excluding_embedding(), 3e9), 0.2);  // "3B": one significant figure
  // KV: only the 12 full-attention layers, 2 x 2 heads x 256 x 2 bytes = 2048 B each:
  // 24,576 B/token (48 layers would give 98,304: the 4x overcount peers make).
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 4096, DType::bf16).value(), 24576.0);
  // State per sequence, 36 layers x (32 x 128 x 128 fp32 + 3 x 8192 bf16 conv)
  // = 36 x (2,097,152 + 49,152) = 77,266,944 B, whatever the context.
  EXPECT_DOUBLE_EQ(state_bytes_per_sequence(m).value(), 77266944.0);
  // Recurrence: 36 x (32 x 7 x 128 x 128 + 2 x 4 x 8192) = 134,479,872 FLOPs per token.
  EXPECT_DOUBLE_EQ(model_recurrent_flops_per_token(m), 134479872.0);
  EXPECT_DOUBLE_EQ(decode_flops_per_token(m, 0).value(), 2 * p.active_matmul() + 134479872.0);
  // Attention that grows with the context runs on the 12 full layers only (inference-sim
  // issue #1636 charged every layer): 12 x (2 + 2) x 16 heads x 256 x 4096 = 805,306,368
  // FLOPs more per token at 4096 than at 0 (all 48 layers would give 3,221,225,472).
  EXPECT_DOUBLE_EQ(decode_flops_per_token(m, 4096).value() - decode_flops_per_token(m, 0).value(), 805306368.0);
}

// Gemma 3 27B: 62 layers, sliding_window_pattern 6 -> layers 5, 11, ..., 59 global (10),
// 52 local of window 1024; KV per layer and token 2 x 16 x 128 x 2 B = 8192 B.
// At 32,768 tokens: (10 x 8192 x 32768 + 52 x 8192 x 1024) / 32768 = 81,920 + 13,312
// = 95,232 B/token. Parameters: tied table 262208 x 5376 = 1,409,630,208; attention
// 3 x 5376 x 4096 + 256 (QK-norm) = 66,060,544 per layer; GeGLU 3 x 5376 x 21504; four
// norms per layer + final: 27,009,346,304 in all (Google: "27B", of 27.4B with the 0.4B
// vision tower that chalk does not model).
TEST(Hybrid, Gemma3SlidingWindowFiveToOne) {
  const ModelSpec m = load_model("google/gemma-3-27b-it");
  EXPECT_EQ(layers_of(m, AttentionKind::gqa, true), 52);
  EXPECT_EQ(layers_of(m, AttentionKind::gqa, false), 10);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 32768, DType::bf16).value(), 95232.0);
  EXPECT_DOUBLE_EQ(count_params(m).total(), 27009346304.0);
  EXPECT_LT(rel(count_params(m).total(), 27e9), 0.01);
  EXPECT_TRUE(m.tie_embeddings);
}

// Gemma 2 27B: alternating local (window 4096) and global layers, 23 each; 27,227,128,320
// parameters (Gemma 2 report: 27.2B). At 8192 tokens: (23 x 8192 + 23 x 4096) x 8192 B /
// 8192 = 23 x 8192 x 1.5 = 282,624 B/token.
TEST(Hybrid, Gemma2Alternates) {
  const ModelSpec m = load_model("gemma-2-27b");
  EXPECT_EQ(layers_of(m, AttentionKind::gqa, true), 23);
  EXPECT_DOUBLE_EQ(count_params(m).total(), 27227128320.0);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 8192, DType::bf16).value(), 282624.0);
}

// Llama 4: attention 5120 x (40 + 8 + 8 + 40) x 128 = 62,914,560 per layer; one expert
// 3 x 5120 x 8192 = 125,829,120; untied 202048 x 5120 tables.
//  Scout: 48 MoE layers of 16 experts + 1 shared -> 107,769,861,120 total, 17,172,894,720
//   active (Meta: 109B / 17B, the total with the vision encoder).
//  Maverick: MoE every 2nd layer (128 + 1 experts), dense FFN 16384 in the others ->
//   400,711,848,960 / 17,184,691,200 (Meta: 400B / 17B).
// Chunked attention on 3 of 4 layers (NoPE every 4th is global): 36 chunked, 12 global.
TEST(Hybrid, Llama4ScoutAndMaverick) {
  const ModelSpec scout = load_model("meta-llama/Llama-4-Scout-17B-16E-Instruct");
  EXPECT_DOUBLE_EQ(count_params(scout).total(), 107769861120.0);
  EXPECT_DOUBLE_EQ(count_params(scout).active(), 17172894720.0);
  EXPECT_LT(rel(count_params(scout).total(), 109e9), 0.02);
  EXPECT_LT(rel(count_params(scout).active(), 17e9), 0.02);
  EXPECT_EQ(layers_of(scout, AttentionKind::gqa, true), 36);
  for (const auto& g : scout.groups) EXPECT_EQ(g.attention.chunked, g.attention.sliding_window == 8192);
  // KV at 1M tokens, 2 x 8 x 128 x 2 B = 4096 B per layer and token: 12 global layers
  // hold it all, 36 chunked hold 8192 each: (12 x 4096 x 2^20 + 36 x 4096 x 8192) / 2^20
  // = 49,152 + 1,152 = 50,304 B/token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(scout, 1 << 20, DType::bf16).value(), 50304.0);
  const ModelSpec mav = load_model("llama-4-maverick-17b-128e");
  EXPECT_DOUBLE_EQ(count_params(mav).total(), 400711848960.0);
  EXPECT_DOUBLE_EQ(count_params(mav).active(), 17184691200.0);
  EXPECT_LT(rel(count_params(mav).total(), 400e9), 0.01);
}

// DeepSeek-V3.2: MLA plus the lightning indexer. KV per token and layer: latent 512 + rope
// 64 + indexer key 128 = 704 elements; 61 layers x 704 x 2 B = 85,888 B/token in bf16.
// Indexer parameters per layer: wq_b 1536 x 64 x 128 + wk 7168 x 128 + LayerNorm 256 +
// weights_proj 7168 x 64 = 13,959,424 (x 61 = 851,524,864 on top of V3's 671B).
// Decode at 131,072 tokens: the main attention reads 2048 tokens per layer, the indexer
// scores all 131,072 at 2 x 64 x 128 + 2 x 64 = 16,512 FLOPs each: its linear term,
// 61 x 16,512 x 131,072 = 132.0 GFLOP per token, beside 61 x 2048 x (absorbed MLA
// 2 x 128 x 576 + 2 x 128 x 512 = 278,528) = 34.8 GFLOP for the main attention.
TEST(Hybrid, DeepSeekV32SparseAttentionAndIndexer) {
  const ModelSpec v3 = load_model("deepseek-v3");
  const ModelSpec m = load_model("deepseek-v3.2");
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 4096, DType::bf16).value(), 85888.0);
  EXPECT_DOUBLE_EQ(count_params(m).total() - count_params(v3).total(), 851524864.0);
  const double attn = attention_flops_per_token(m, 131072, true).value();
  EXPECT_DOUBLE_EQ(attn, 61.0 * 16512 * 131072 + 61.0 * 2048 * 278528);
  // Below top-k the main attention reads every token.
  EXPECT_DOUBLE_EQ(attention_flops_per_token(m, 1000, true).value(), 61.0 * 1000 * (16512 + 278528));
  // The reference-inference config of V3.2-Exp reads the same sparse attention.
  const ModelSpec exp = load_model("deepseek-v3.2-exp");
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(exp, 4096, DType::bf16).value(), 85888.0);
  EXPECT_DOUBLE_EQ(count_params(exp).total(), count_params(m).total());
}

// GLM-4.5: attention 5120 x 96 x 128 x 2 + 5120 x 8 x 128 x 2 + q, k, v biases 14,336 +
// QK-norm 256 = 136,329,472 per layer; 3 dense layers (FFN 12288), 89 MoE of 160 + 1 shared
// experts of 3 x 5120 x 1536. Total 352,797,829,024 (+ the MTP layer, excluded): zai-org
// states 355B total, 32B active; active excluding the input table 32,856,319,904.
TEST(Hybrid, Glm45) {
  const ParamCounts p = count_params(load_model("glm-4.5"));
  EXPECT_DOUBLE_EQ(p.total(), 352797829024.0);
  EXPECT_LT(rel(p.total(), 355e9), 0.01);
  EXPECT_LT(rel(p.active_excluding_embedding(), 32e9), 0.03);
}

// MiniMax-M1: 70 lightning layers, 10 softmax (attn_type_list). Lightning layer: q, k, v
// 6144 x 3 x 8192, output gate 6144 x 8192, out 8192 x 6144, norm 8192. 32 experts top-2 of
// 3 x 6144 x 9216. Total 456,089,655,296 (MiniMax: 456B); activated without the embedding
// and LM head 45,945,...: 48,403,306,496 - 2 x 1,229,193,216 = 45,944,920,064 (MiniMax:
// 45.9B). KV: 10 layers x 2 x 8 x 128 x 2 B = 40,960 B/token; state 70 x 64 x 128 x 128 x 4 B
// = 293,601,280 B per sequence.
TEST(Hybrid, MiniMaxM1LightningHybrid) {
  const ModelSpec m = load_model("minimax-m1");
  const ParamCounts p = count_params(m);
  EXPECT_DOUBLE_EQ(p.total(), 456089655296.0);
  EXPECT_DOUBLE_EQ(p.active() - p.embedding - p.lm_head, 45944920064.0);
  EXPECT_LT(rel(p.active() - p.embedding - p.lm_head, 45.9e9), 0.002);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 1 << 20, DType::bf16).value(), 40960.0);
  EXPECT_DOUBLE_EQ(state_bytes_per_sequence(m).value(), 293601280.0);
}

// MiniMax-M2.5 (M2 architecture): 62 layers, 256 experts top-8 of 3 x 3072 x 1536.
// 228,689,336,320 total, 10,415,527,936 active without the input table (MiniMax: 230B / 10B).
TEST(Hybrid, MiniMaxM2) {
  const ParamCounts p = count_params(load_model("minimax-m2.5"));
  EXPECT_DOUBLE_EQ(p.total(), 228689336320.0);
  EXPECT_LT(rel(p.total(), 230e9), 0.01);
  EXPECT_LT(rel(p.active_excluding_embedding(), 10e9), 0.05);
}

// Phi-4: 14,659,507,200 (Microsoft: 14B; HF lists 14.7B). Phi-3.5-MoE, by hand from its
// config: per layer q, o 4096^2 + 4096 and k, v 4096 x 1024 + 1024 (biased) = 41,953,280,
// experts 16 x 3 x 4096 x 6400 = 1,258,291,200, router 4096 x 16 = 65,536, two LayerNorms
// with bias 4 x 4096 = 16,384: 1,300,326,400 x 32 = 41,610,444,800; embedding and LM head
// 2 x 32064 x 4096 = 262,668,288, the LM-head bias 32,064 (lm_head_bias: true) and the
// final LayerNorm with its bias 2 x 4096 = 8,192: 41,873,153,344 total. Active: top-2 of 16
// experts, 6,640,999,744 (Microsoft: 41.9B / 6.6B). Before the biases of the head and the
// final norm were counted chalk printed 36,160 fewer (llm-analysis issue #19 is the same
// kind of fault: a norm's parameters counted too few).
TEST(Hybrid, PhiDenseAndMoe) {
  EXPECT_DOUBLE_EQ(count_params(load_model("phi-4")).total(), 14659507200.0);
  const ParamCounts moe = count_params(load_model("microsoft/Phi-3.5-MoE-instruct"));
  EXPECT_DOUBLE_EQ(moe.total(), 41873153344.0);
  EXPECT_DOUBLE_EQ(moe.active(), 6640999744.0);
  EXPECT_LT(rel(moe.total(), 41.9e9), 0.002);
  EXPECT_LT(rel(moe.active(), 6.6e9), 0.01);
}

// A new hybrid is a config: layer_types alone sets the pattern (here on a Qwen3-Next shape,
// full attention in layers 0 and 1 only).
TEST(Hybrid, LayerTypesAreData) {
  const std::string cfg = R"({"model_type": "qwen3_next", "hidden_size": 256, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000,
    "max_position_embeddings": 4096, "intermediate_size": 512, "moe_intermediate_size": 64,
    "num_experts": 8, "num_experts_per_tok": 2, "linear_num_value_heads": 4, "linear_num_key_heads": 2,
    "linear_key_head_dim": 32, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
    "layer_types": ["full_attention", "full_attention", "linear_attention", "linear_attention"]})";
  const ModelSpec m = model_from_hf_config(cfg, "t", "t.json");
  EXPECT_EQ(layers_of(m, AttentionKind::gqa, false), 2);
  EXPECT_EQ(layers_of(m, AttentionKind::linear, false), 2);
  // KV: 2 layers x 2 x 2 x 64 x 2 B = 1024 B/token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 100, DType::bf16).value(), 1024.0);
}

TEST(Hybrid, BadPatternsNameTheField) {
  auto err = [](const std::string& cfg) {
    try {
      model_from_hf_config(cfg, "t", "t.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string base = R"({"model_type": "gemma3_text", "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000,
    "max_position_embeddings": 4096, "intermediate_size": 512, "sliding_window": 128, )";
  EXPECT_NE(err(base + R"("layer_types": ["full_attention"]})").find("t.json: layer_types: expected a list of num_hidden_layers (2)"),
            std::string::npos);
  EXPECT_NE(err(base + R"("layer_types": ["full_attention", "mamba"]})").find("t.json: layer_types[1]: unknown layer type 'mamba'"),
            std::string::npos);
  EXPECT_NE(err(base + R"("layer_types": ["full_attention", "linear_attention"]})").find("no linear-attention keys"),
            std::string::npos);
  EXPECT_NE(err(base + R"("sliding_window_pattern": 0})").find("t.json: sliding_window_pattern: must be"), std::string::npos);
}

}  // namespace
}  // namespace chalk
