// HF configs of hybrid, sliding-window and sparse-attention families: Qwen3-Next, Gemma 2/3,
// Llama 4, GLM-4.5, MiniMax-01/M1/M2, Phi-3/Phi-4, Phi-3.5-MoE, and DeepSeek Sparse
// Attention (docs/models.md). Every layer is built from the config's per-layer pattern
// (hf_layers.cc), so a new hybrid of known layer kinds needs a config, not code.
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "hf_internal.h"

namespace chalk::hf {

using detail::Obj;
using namespace model_limits;

namespace {

/// A Gated DeltaNet layer from Qwen3-Next's linear_* keys (HF Qwen3NextGatedDeltaNet).
AttentionSpec gated_deltanet(const Obj& c) {
  AttentionSpec a;
  a.kind = AttentionKind::linear;
  a.linear_kind = LinearKind::gated_deltanet;
  a.n_heads = c.integer_in("linear_num_value_heads", 1, heads);
  a.n_kv_heads = c.integer_in("linear_num_key_heads", 1, heads);
  a.head_dim = c.integer_in("linear_key_head_dim", 1, width);
  a.v_head_dim = c.integer_in("linear_value_head_dim", 1, width);
  a.conv_kernel = c.opt_integer_in("linear_conv_kernel_dim", 0, 1024).value_or(4);
  a.output_gate = true;  // z in in_proj_qkvz
  // The recurrent state's format: mamba_ssm_dtype when given (Qwen3.5 configs), else fp32,
  // the format the reference kernels (fla chunk_gated_delta_rule) keep it in.
  const auto dt = c.opt_string("mamba_ssm_dtype");
  a.state_dtype = dt ? parse_dtype(*dt, c.field("mamba_ssm_dtype")) : DType::fp32;
  return a;
}

/// A lightning-attention layer (MiniMax-01 / M1, MiniMaxText01LightningAttention): q, k, v
/// of num_attention_heads x head_dim, an output gate, per-head decayed state of head_dim^2.
AttentionSpec lightning(const Obj& c, const AttentionSpec& full) {
  AttentionSpec a;
  a.kind = AttentionKind::linear;
  a.linear_kind = LinearKind::lightning;
  a.n_heads = a.n_kv_heads = full.n_heads;
  a.head_dim = a.v_head_dim = full.head_dim;
  a.output_gate = true;
  a.state_dtype = DType::fp32;
  (void)c;
  return a;
}

/// The attention of one layer of kind `kind` (attention_pattern's names).
AttentionSpec layer_attention(const std::string& kind, const AttentionSpec& full, const AttentionSpec& linear,
                              int64_t window, const Obj& c, int64_t i) {
  if (kind == "linear_attention") {
    if (linear.kind != AttentionKind::linear) {
      throw InputError(c.field("layer_types") + "[" + std::to_string(i) + "]",
                       "linear_attention, but this architecture has no linear-attention keys");
    }
    return linear;
  }
  AttentionSpec a = full;
  if (kind == "sliding_attention" || kind == "chunked_attention") {
    if (window < 1) {
      throw InputError(c.field(kind == "chunked_attention" ? "attention_chunk_size" : "sliding_window"),
                       "layer " + std::to_string(i) + " is " + kind + " but no window size is given");
    }
    a.sliding_window = window;
    a.chunked = kind == "chunked_attention";
  }
  return a;
}

FfnSpec moe_ffn(const Obj& c, const char* width_key, const char* experts_key) {
  FfnSpec f;
  f.kind = FfnKind::moe;
  f.d_ff = c.integer_in(width_key, 1, width);
  f.n_experts = c.integer_in(experts_key, 1, heads);
  f.top_k = c.integer_in("num_experts_per_tok", 1, heads);
  return f;
}

/// Builds every layer from the two patterns.
void build_layers(const Obj& c, ModelSpec& m, const std::vector<std::string>& kinds, const std::vector<bool>& moe_here,
                  const AttentionSpec& full, const AttentionSpec& linear, int64_t window, const FfnSpec& dense,
                  const FfnSpec& moe) {
  for (size_t i = 0; i < kinds.size(); ++i) {
    push_layer(m, layer_attention(kinds[i], full, linear, window, c, static_cast<int64_t>(i)), moe_here[i] ? moe : dense);
  }
}

ModelSpec qwen3_next(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec full = gqa_attention(c);
  full.qk_norm = true;
  full.output_gate = c.opt_boolean("attn_output_gate").value_or(true);  // Qwen3NextAttention: q_proj x 2
  full.qkv_bias = full.o_bias = c.opt_boolean("attention_bias").value_or(false);
  const int64_t n = layer_count(c);
  FfnSpec moe = moe_ffn(c, "moe_intermediate_size", "num_experts");
  if (c.opt_integer("shared_expert_intermediate_size").value_or(0) > 0) {
    moe.n_shared_experts = 1;
    moe.d_shared_expert = c.integer_in("shared_expert_intermediate_size", 1, width);
    moe.shared_expert_gate = true;
  }
  const FfnSpec dense = c.has("intermediate_size") ? dense_ffn(c) : moe;
  build_layers(c, m, attention_pattern(c, n, "full_attention"), moe_pattern(c, n), full, gated_deltanet(c), 0, dense, moe);
  return m;
}

ModelSpec gemma(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  m.tie_embeddings = c.opt_boolean("tie_word_embeddings").value_or(true);  // Gemma ties its head
  m.norms_per_layer = 4;  // input, post_attention, pre_feedforward, post_feedforward
  AttentionSpec full = gqa_attention(c);
  full.qkv_bias = full.o_bias = c.opt_boolean("attention_bias").value_or(false);
  full.qk_norm = type != "gemma2";  // Gemma 3: q_norm, k_norm of head_dim
  const int64_t n = layer_count(c);
  const int64_t window = c.opt_integer_in("sliding_window", 1, context).value_or(0);
  std::vector<std::string> kinds = attention_pattern(c, n, "full_attention");
  if (type == "gemma2" && !c.has("layer_types")) {
    // HF Gemma2DecoderLayer before layer_types: is_sliding = not bool(layer_idx % 2).
    for (int64_t i = 0; i < n; ++i) kinds[static_cast<size_t>(i)] = i % 2 == 0 ? "sliding_attention" : "full_attention";
  }
  const FfnSpec dense = dense_ffn(c);
  build_layers(c, m, kinds, std::vector<bool>(static_cast<size_t>(n), false), full, {}, window, dense, dense);
  return m;
}

ModelSpec llama4(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec full = gqa_attention(c);
  full.qkv_bias = full.o_bias = c.opt_boolean("attention_bias").value_or(false);
  // use_qk_norm is Llama4TextL2Norm: an L2 norm without weights, so no parameters.
  const int64_t n = layer_count(c);
  FfnSpec moe = moe_ffn(c, "intermediate_size", "num_local_experts");
  moe.n_shared_experts = 1;  // Llama4TextMoe.shared_expert, of intermediate_size
  moe.d_shared_expert = moe.d_ff;
  const FfnSpec dense = dense_ffn(c, c.has("intermediate_size_mlp") ? "intermediate_size_mlp" : "intermediate_size");
  const int64_t chunk = c.opt_integer_in("attention_chunk_size", 1, context).value_or(0);
  build_layers(c, m, attention_pattern(c, n, "full_attention"), moe_pattern(c, n), full, {}, chunk, dense, moe);
  return m;
}

ModelSpec glm4_moe(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec full = gqa_attention(c);
  full.qkv_bias = c.opt_boolean("attention_bias").value_or(false);  // Glm4MoeAttention: o_proj has no bias
  full.qk_norm = c.opt_boolean("use_qk_norm").value_or(false);
  const int64_t n = layer_count(c);
  FfnSpec moe = moe_ffn(c, "moe_intermediate_size", "n_routed_experts");
  moe.n_shared_experts = c.opt_integer_in("n_shared_experts", 0, heads).value_or(0);
  moe.d_shared_expert = moe.d_ff;
  moe.router_bias = true;  // Glm4MoeTopkRouter.e_score_correction_bias
  moe.n_group = c.opt_integer_in("n_group", 1, heads).value_or(1);
  moe.topk_group = c.opt_integer_in("topk_group", 1, heads).value_or(moe.n_group);
  build_layers(c, m, attention_pattern(c, n, "full_attention"), moe_pattern(c, n), full, {}, 0, dense_ffn(c), moe);
  m.n_mtp_layers = c.opt_integer_in("num_nextn_predict_layers", 0, n).value_or(0);
  return m;
}

ModelSpec minimax(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec full = gqa_attention(c);
  const int64_t n = layer_count(c);
  FfnSpec moe = moe_ffn(c, "intermediate_size", "num_local_experts");
  if (c.opt_integer("shared_intermediate_size").value_or(0) > 0) {
    moe.n_shared_experts = 1;
    moe.d_shared_expert = c.integer_in("shared_intermediate_size", 1, width);
  }
  if (type == "minimax_m2") {
    // MiniMax-M2: full attention in every layer, QK-norm, sigmoid routing with a bias.
    full.qk_norm = c.opt_boolean("use_qk_norm").value_or(false);
    moe.router_bias = c.opt_boolean("use_routing_bias").value_or(false);
    build_layers(c, m, attention_pattern(c, n, "full_attention"), moe_pattern(c, n), full, {}, 0, moe, moe);
    m.n_mtp_layers = c.opt_boolean("use_mtp").value_or(false) ? c.opt_integer_in("num_mtp_modules", 0, n).value_or(0) : 0;
    return m;
  }
  // MiniMax-01 / M1: lightning attention with a softmax layer every 8th (attn_type_list).
  build_layers(c, m, attention_pattern(c, n, "linear_attention"), moe_pattern(c, n), full, lightning(c, full), 0, moe, moe);
  return m;
}

ModelSpec phi(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec full = gqa_attention(c);
  const int64_t n = layer_count(c);
  if (type == "phimoe") {
    // PhiMoE (Phi-3.5-MoE): biased q, k, v, o; nn.LayerNorm with bias for the two norms of
    // each layer and the final one; a biased LM head when lm_head_bias (HF modeling_phimoe.py).
    full.qkv_bias = full.o_bias = c.opt_boolean("attention_bias").value_or(true);
    m.norm_bias = true;
    m.lm_head_bias = c.opt_boolean("lm_head_bias").value_or(false);
    const FfnSpec moe = moe_ffn(c, "intermediate_size", "num_local_experts");
    const int64_t window = c.opt_integer_in("sliding_window", 0, context).value_or(0);
    build_layers(c, m, attention_pattern(c, n, window > 0 ? "sliding_attention" : "full_attention"), moe_pattern(c, n),
                 full, {}, window, moe, moe);
    return m;
  }
  // Phi-3 / Phi-4 (Phi3ForCausalLM): fused qkv_proj and gate_up_proj, the same counts as
  // separate matrices; sliding_window applies to every layer when set (Phi-3-mini: 2047).
  full.qkv_bias = full.o_bias = c.opt_boolean("attention_bias").value_or(false);
  const int64_t window = c.opt_integer_in("sliding_window", 0, context).value_or(0);
  const FfnSpec dense = dense_ffn(c);
  build_layers(c, m, attention_pattern(c, n, window > 0 ? "sliding_attention" : "full_attention"),
               std::vector<bool>(static_cast<size_t>(n), false), full, {}, window, dense, dense);
  return m;
}

}  // namespace

void apply_sparse_attention(const Obj& c, AttentionSpec& a) {
  if (!c.has("index_topk") || !c.opt_integer("index_topk")) return;
  a.sparse_top_k = c.integer_in("index_topk", 1, context);
  a.index_n_heads = c.integer_in("index_n_heads", 1, heads);
  a.index_head_dim = c.integer_in("index_head_dim", 1, width);
}

bool hybrid_model(const Obj& c, const std::string& name, const std::string& where, const std::string& type, ModelSpec& out) {
  if (type == "qwen3_next") out = qwen3_next(c, name, where, type);
  else if (is_one_of(type, {"gemma2", "gemma3", "gemma3_text"})) out = gemma(c, name, where, type);
  else if (is_one_of(type, {"llama4", "llama4_text"})) out = llama4(c, name, where, type);
  else if (type == "glm4_moe") out = glm4_moe(c, name, where, type);
  else if (is_one_of(type, {"minimax", "minimax_m1", "minimax_text_01", "minimax_m2"})) out = minimax(c, name, where, type);
  else if (is_one_of(type, {"phi3", "phimoe"})) out = phi(c, name, where, type);
  else return false;
  return true;
}

}  // namespace chalk::hf
