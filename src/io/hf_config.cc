// HuggingFace config.json -> ModelSpec (docs/file-formats.md, "HF configs").
#include <algorithm>
#include <cstdio>
#include <string>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/io/json_util.h"
#include "chalk/model/model.h"
#include "hf_internal.h"

namespace chalk::hf {

using detail::Obj;
using namespace model_limits;

bool is_one_of(const std::string& s, std::initializer_list<const char*> list) {
  for (const char* x : list) if (s == x) return true;
  return false;
}

/// Gated MLPs (SwiGLU/GeGLU) are the only kind these architectures use.
void require_gated(const Obj& c) {
  for (const char* key : {"hidden_act", "hidden_activation"}) {
    const auto act = c.opt_string(key);
    if (act && !is_one_of(*act, {"silu", "swiglu", "gelu", "gelu_pytorch_tanh"})) {
      throw InputError(c.field(key), "unsupported activation '" + *act + "'; expected silu or gelu (gated MLP)");
    }
  }
}

DType base_dtype(const Obj& c) {
  const char* key = c.has("torch_dtype") ? "torch_dtype" : "dtype";
  const auto t = c.opt_string(key);
  if (!t) return DType::bf16;
  return parse_dtype(*t, c.field(key));
}

AttentionSpec gqa_attention(const Obj& c) {
  AttentionSpec a;
  a.kind = AttentionKind::gqa;
  a.n_heads = c.integer_in("num_attention_heads", 1, heads);
  a.n_kv_heads = c.opt_integer_in("num_key_value_heads", 1, heads).value_or(a.n_heads);
  const int64_t d_model = c.integer_in("hidden_size", 1, width);
  // Without head_dim, transformers derives it as hidden_size // num_attention_heads; a width
  // the heads do not divide would truncate it (4095 / 32 -> 127) and silently drop
  // channels, so it must be stated.
  if (auto hd = c.opt_integer_in("head_dim", 1, width)) {
    a.head_dim = *hd;
  } else if (d_model % a.n_heads != 0) {
    throw InputError(c.field("head_dim"), "missing, and hidden_size " + std::to_string(d_model) + " is not a multiple of num_attention_heads " +
                                              std::to_string(a.n_heads) + "; expected head_dim stated or hidden_size divisible by the heads");
  } else {
    a.head_dim = d_model / a.n_heads;
  }
  a.v_head_dim = a.head_dim;
  return a;
}

FfnSpec dense_ffn(const Obj& c, const char* key) {
  FfnSpec f;
  f.kind = FfnKind::dense;
  f.d_ff = c.integer_in(key, 1, width);
  f.bias = c.opt_boolean("mlp_bias").value_or(false);
  return f;
}

/// Appends one layer to the groups, merging it with an equal group (a group's layers
/// need not be consecutive: every count chalk forms is a sum over layers).
void push_layer(ModelSpec& m, const AttentionSpec& a, const FfnSpec& f) {
  for (size_t i = 0; i < m.groups.size(); ++i) {
    auto& g = m.groups[i];
    if (g.attention == a && g.ffn == f) {
      ++g.count;
      m.layer_group.push_back(static_cast<int32_t>(i));
      return;
    }
  }
  m.groups.push_back({a, f, 1});
  m.layer_group.push_back(static_cast<int32_t>(m.groups.size() - 1));
}

ModelSpec common(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m;
  m.name = name;
  m.source = where;
  m.architecture = type;
  m.d_model = c.integer_in("hidden_size", 1, width);
  m.vocab_size = c.integer_in("vocab_size", 1, vocab);
  m.max_context = c.integer_in("max_position_embeddings", 1, context);
  m.tie_embeddings = c.opt_boolean("tie_word_embeddings").value_or(false);
  m.rotary_fraction = c.opt_number("partial_rotary_factor").value_or(1.0);
  if (!(m.rotary_fraction >= 0 && m.rotary_fraction <= 1)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", m.rotary_fraction);
    throw InputError(c.field("partial_rotary_factor"), std::string("expected a share of the head width in [0, 1], got ") + got);
  }
  const DType base = base_dtype(c);
  m.weights.embedding = m.weights.attention = m.weights.dense_ffn = m.weights.experts = m.weights.router = base;
  return m;
}

int64_t layer_count(const Obj& c) {
  return c.integer_in("num_hidden_layers", 1, layers);
}

/// Llama, Mistral, Qwen2/3 dense, Mixtral, Qwen2/3-MoE.
ModelSpec llama_like(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec a = gqa_attention(c);
  const bool attention_bias = c.opt_boolean("attention_bias").value_or(false);
  if (type == "qwen2" || type == "qwen2_moe") {
    a.qkv_bias = true;  // Qwen2 always biases q, k, v (transformers Qwen2Attention)
  } else {
    a.qkv_bias = a.o_bias = attention_bias;
  }
  a.qk_norm = type == "qwen3" || type == "qwen3_moe";
  const int64_t layers = layer_count(c);
  // Sliding windows: Mistral/Mixtral apply sliding_window to every layer; Qwen only when
  // use_sliding_window is true, to layers from max_window_layers on.
  int64_t window = 0;
  int64_t first_windowed = 0;
  const bool is_qwen = type.rfind("qwen", 0) == 0;
  if (!is_qwen || c.opt_boolean("use_sliding_window").value_or(false)) {
    window = c.opt_integer_in("sliding_window", 0, context).value_or(0);
    if (is_qwen) first_windowed = c.opt_integer_in("max_window_layers", 0, model_limits::layers).value_or(0);
  }
  FfnSpec moe;
  bool is_moe = false;
  std::vector<bool> dense_layer(static_cast<size_t>(layers), false);  // mlp_only_layers, by index
  int64_t sparse_step = 1;
  if (type == "mixtral") {
    is_moe = true;
    moe.kind = FfnKind::moe;
    moe.d_ff = c.integer_in("intermediate_size", 1, width);
    moe.n_experts = c.integer_in("num_local_experts", 1, heads);
    moe.top_k = c.integer_in("num_experts_per_tok", 1, heads);
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    is_moe = true;
    moe.kind = FfnKind::moe;
    moe.d_ff = c.integer_in("moe_intermediate_size", 1, width);
    moe.n_experts = c.integer_in("num_experts", 1, heads);
    moe.top_k = c.integer_in("num_experts_per_tok", 1, heads);
    if (type == "qwen2_moe" && c.has("shared_expert_intermediate_size")) {
      moe.n_shared_experts = 1;
      moe.d_shared_expert = c.integer_in("shared_expert_intermediate_size", 1, width);
      moe.shared_expert_gate = true;  // Qwen2MoeSparseMoeBlock.shared_expert_gate: Linear(hidden, 1)
    }
    sparse_step = c.opt_integer_in("decoder_sparse_step", 1, layers).value_or(1);
    if (c.has("mlp_only_layers")) {
      // One pass, marking each index: linear in the list and the layers (a 1 MB list is
      // 500,000 indices, each checked once).
      const auto& list = c.raw("mlp_only_layers");
      if (!list.is_array()) throw InputError(c.field("mlp_only_layers"), "expected a list of layer indices, got " + detail::describe(list));
      for (size_t k = 0; k < list.size(); ++k) {
        const auto& v = list[k];
        const std::string f = c.field("mlp_only_layers") + "[" + std::to_string(k) + "]";
        if (!v.is_number_integer()) throw InputError(f, "expected a layer index, got " + detail::describe(v));
        if (v.is_number_unsigned() ? v.get<uint64_t>() >= static_cast<uint64_t>(layers)
                                   : (v.get<int64_t>() < 0 || v.get<int64_t>() >= layers)) {
          throw InputError(f, "must be a layer index in 0.." + std::to_string(layers - 1) + ", got " + detail::describe(v));
        }
        dense_layer[static_cast<size_t>(v.get<int64_t>())] = true;
      }
    }
  }
  for (int64_t i = 0; i < layers; ++i) {
    AttentionSpec li = a;
    li.sliding_window = (window > 0 && i >= first_windowed) ? window : 0;
    const bool dense_here = !is_moe || dense_layer[static_cast<size_t>(i)] || (i + 1) % sparse_step != 0;
    push_layer(m, li, dense_here ? dense_ffn(c) : moe);
  }
  return m;
}

/// DeepSeek-V2/V3, Kimi K2: MLA, shared experts, first_k_dense_replace dense layers.
/// Multi-head latent attention (DeepSeek-V2/V3): the ranks and head dims share their key
/// names in the HF config and DeepSeek's own inference config; the head count does not.
AttentionSpec mla_attention(const Obj& c, const char* heads_key) {
  AttentionSpec a;
  a.kind = AttentionKind::mla;
  a.n_heads = c.integer_in(heads_key, 1, heads);
  a.q_lora_rank = c.opt_integer_in("q_lora_rank", 0, width).value_or(0);
  a.kv_lora_rank = c.integer_in("kv_lora_rank", 1, width);
  a.qk_rope_head_dim = c.integer_in("qk_rope_head_dim", 1, width);
  a.head_dim = c.integer_in("qk_nope_head_dim", 0, width) + a.qk_rope_head_dim;  // <= 2^21: no overflow
  a.v_head_dim = c.integer_in("v_head_dim", 1, width);
  return a;
}

ModelSpec deepseek_like(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  require_gated(c);
  AttentionSpec a = mla_attention(c, "num_attention_heads");
  a.qkv_bias = a.o_bias = c.opt_boolean("attention_bias").value_or(false);
  apply_sparse_attention(c, a);  // DeepSeek-V3.2 (deepseek_v32)
  FfnSpec moe;
  moe.kind = FfnKind::moe;
  moe.d_ff = c.integer_in("moe_intermediate_size", 1, width);
  moe.n_experts = c.integer_in("n_routed_experts", 1, heads);
  moe.top_k = c.integer_in("num_experts_per_tok", 1, heads);
  moe.n_shared_experts = c.opt_integer_in("n_shared_experts", 0, heads).value_or(0);
  moe.d_shared_expert = moe.d_ff;  // DeepseekV3MoE: shared MLP width = moe_intermediate_size x n_shared
  moe.router_bias = c.opt_string("topk_method").value_or("") == "noaux_tc";  // e_score_correction_bias
  // Group-limited routing: DeepSeek-V2's "group_limited_greedy" and V3's "noaux_tc" pick
  // topk_group of n_group groups first (HF modeling_deepseek.py MoEGate); "greedy" does not.
  const std::string method = c.opt_string("topk_method").value_or("");
  if (method == "group_limited_greedy" || method == "noaux_tc") {
    moe.n_group = c.opt_integer_in("n_group", 1, heads).value_or(1);
    moe.topk_group = c.opt_integer_in("topk_group", 1, heads).value_or(moe.n_group);
  }
  const int64_t n = layer_count(c);
  const int64_t first_dense = c.opt_integer_in("first_k_dense_replace", 0, n).value_or(0);
  const int64_t freq = c.opt_integer_in("moe_layer_freq", 1, n).value_or(1);
  const int64_t layers = n;
  for (int64_t i = 0; i < layers; ++i) {
    const bool moe_here = i >= first_dense && i % freq == 0;
    push_layer(m, a, moe_here ? moe : dense_ffn(c));
  }
  m.n_mtp_layers = c.opt_integer_in("num_nextn_predict_layers", 0, layers).value_or(0);
  return m;
}

/// gpt-oss: alternating sliding/full attention from layer_types, sinks, biased experts.
ModelSpec gpt_oss(const Obj& c, const std::string& name, const std::string& where, const std::string& type) {
  ModelSpec m = common(c, name, where, type);
  AttentionSpec a = gqa_attention(c);
  a.qkv_bias = a.o_bias = c.opt_boolean("attention_bias").value_or(true);
  a.sinks = true;
  FfnSpec moe;
  moe.kind = FfnKind::moe;
  moe.d_ff = c.integer_in("intermediate_size", 1, width);
  moe.n_experts = c.integer_in("num_local_experts", 1, heads);
  moe.top_k = c.has("num_experts_per_tok") ? c.integer_in("num_experts_per_tok", 1, heads) : c.integer_in("experts_per_token", 1, heads);
  moe.bias = true;
  moe.router_bias = true;
  const int64_t window = c.integer_in("sliding_window", 1, context);
  const int64_t layers = layer_count(c);
  const auto& types = c.raw("layer_types");
  if (!types.is_array() || static_cast<int64_t>(types.size()) != layers) {
    throw InputError(c.field("layer_types"), "expected a list of num_hidden_layers (" + std::to_string(layers) + ") entries");
  }
  for (int64_t i = 0; i < layers; ++i) {
    const auto& t = types[static_cast<size_t>(i)];
    AttentionSpec li = a;
    if (t == "sliding_attention") li.sliding_window = window;
    else if (t != "full_attention") {
      throw InputError(c.field("layer_types") + "[" + std::to_string(i) + "]",
                       "unknown layer type " + detail::describe(t) + "; expected sliding_attention or full_attention");
    }
    push_layer(m, li, moe);
  }
  return m;
}

/// DeepSeek's own reference-inference config (deepseek-ai/DeepSeek-V3 inference/configs/
/// config_671B.json, read by inference/model.py's ModelArgs): no model_type, short keys. The
/// dense layers come first (n_dense_layers), then MoE layers; "dtype": "fp8" means block-scaled
/// FP8 linear layers with bf16 embeddings, head and router, as the HF checkpoint. The context
/// limit is ModelArgs' original_seq_len x rope_factor (YaRN; defaults 4096 x 40 = 163,840, the
/// HF config's max_position_embeddings). MTP modules are not part of this format.
ModelSpec deepseek_inference(const Obj& c, const std::string& name, const std::string& where) {
  c.only({"max_batch_size", "max_seq_len", "dtype", "scale_fmt", "vocab_size", "dim", "inter_dim", "moe_inter_dim", "n_layers",
          "n_dense_layers", "n_heads", "n_routed_experts", "n_shared_experts", "n_activated_experts", "n_expert_groups",
          "n_limited_groups", "score_func", "route_scale", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
          "v_head_dim", "original_seq_len", "rope_theta", "rope_factor", "beta_fast", "beta_slow", "mscale",
          "index_n_heads", "index_head_dim", "index_topk"});
  ModelSpec m;
  m.name = name;
  m.source = where;
  m.architecture = "deepseek_v3 (DeepSeek inference config)";
  m.d_model = c.integer_in("dim", 1, width);
  m.vocab_size = c.integer_in("vocab_size", 1, vocab);
  // The product is formed in double and bounded before the cast (a cast of 1e300 to int64
  // is undefined); the error names the key the user wrote.
  const int64_t original = c.opt_integer_in("original_seq_len", 1, context).value_or(4096);
  const double rope_factor = c.opt_number("rope_factor").value_or(40);
  const double max_context = static_cast<double>(original) * rope_factor;
  if (!(max_context >= 1 && max_context <= static_cast<double>(context))) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", rope_factor);
    throw InputError(c.field("rope_factor"), "original_seq_len x rope_factor must be a context of 1.." + std::to_string(context) +
                                                 " tokens, got " + std::to_string(original) + " x " + factor);
  }
  m.max_context = static_cast<int64_t>(max_context);
  m.tie_embeddings = false;
  const std::string dtype = c.opt_string("dtype").value_or("bf16");
  if (dtype != "fp8" && dtype != "bf16") throw InputError(c.field("dtype"), "expected fp8 or bf16, got '" + dtype + "'");
  const DType body = dtype == "fp8" ? DType::fp8 : DType::bf16;
  m.weights.attention = m.weights.dense_ffn = m.weights.experts = body;  // embedding, router stay bf16
  if (body == DType::fp8) {
    // inference/model.py quantizes in 128 x 128 blocks with one fp32 scale (block_size = 128),
    // as the HF checkpoint's weight_block_size: 8 + 32 / 16384 bits per weight (hf_quant.cc).
    m.weights.attention_bits = m.weights.dense_ffn_bits = m.weights.experts_bits = 8 + 32.0 / (128 * 128);
    m.weights.quantization = "fp8 block 128x128 (fp32 scales)";
  }
  AttentionSpec a = mla_attention(c, "n_heads");
  apply_sparse_attention(c, a);  // config_671B_v3.2.json
  FfnSpec dense;
  dense.kind = FfnKind::dense;
  dense.d_ff = c.integer_in("inter_dim", 1, width);
  FfnSpec moe;
  moe.kind = FfnKind::moe;
  moe.d_ff = c.integer_in("moe_inter_dim", 1, width);
  moe.n_experts = c.integer_in("n_routed_experts", 1, heads);
  moe.top_k = c.integer_in("n_activated_experts", 1, heads);
  moe.n_shared_experts = c.opt_integer_in("n_shared_experts", 0, heads).value_or(0);
  moe.d_shared_expert = moe.d_ff;
  moe.router_bias = c.opt_string("score_func").value_or("softmax") == "sigmoid";  // model.py Gate: bias with sigmoid scoring (V3)
  const int64_t n = c.integer_in("n_layers", 1, layers);
  const int64_t first_dense = c.opt_integer_in("n_dense_layers", 0, n).value_or(0);
  for (int64_t i = 0; i < n; ++i) push_layer(m, a, i < first_dense ? dense : moe);
  return m;
}

}  // namespace chalk::hf

namespace chalk {

using detail::Obj;
using namespace hf;

ModelSpec model_from_hf_config(std::string_view text, const std::string& name, const std::string& where) {
  const auto j = detail::parse_json(text, where);
  const Obj top(j, where + ": ");
  if (!top.has("model_type") && top.has("kv_lora_rank") && top.has("dim") && top.has("n_layers")) {
    ModelSpec m = deepseek_inference(top, name, where);
    validate(m, where);
    return m;
  }
  // Multimodal wrappers (Gemma3ForConditionalGeneration, Llama4ForConditionalGeneration)
  // keep the language model in text_config; its own model_type (gemma3_text, llama4_text)
  // names the architecture. The vision tower is not modelled (docs/models.md).
  const auto text_config = top.opt_object("text_config");
  const Obj& c = text_config ? *text_config : top;
  const std::string type = c.has("model_type") ? c.string("model_type") : top.string("model_type");
  ModelSpec m;
  if (is_one_of(type, {"llama", "mistral", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe"})) {
    m = llama_like(c, name, where, type);
  } else if (is_one_of(type, {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2"})) {
    m = deepseek_like(c, name, where, type);
  } else if (type == "gpt_oss") {
    m = gpt_oss(c, name, where, type);
  } else if (!hybrid_model(c, name, where, type, m)) {
    throw InputError(c.field("model_type"), "unsupported architecture '" + type +
                                                "'; supported: llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, "
                                                "qwen3_moe, qwen3_next, deepseek_v2, deepseek_v3, deepseek_v32, kimi_k2, "
                                                "gpt_oss, gemma2, gemma3, gemma3_text, llama4, llama4_text, glm4_moe, "
                                                "minimax, minimax_m1, minimax_text_01, minimax_m2, phi3, phimoe (or write a "
                                                "chalk-model/1 file)");
  }
  if (text_config) {
    // The wrapper holds the checkpoint's dtype and tying when the text config does not.
    if (!c.has("torch_dtype") && !c.has("dtype")) {
      const DType base = base_dtype(top);
      m.weights.embedding = m.weights.attention = m.weights.dense_ffn = m.weights.experts = m.weights.router = base;
    }
    if (!c.has("tie_word_embeddings") && top.has("tie_word_embeddings")) m.tie_embeddings = *top.opt_boolean("tie_word_embeddings");
  }
  apply_quantization(top.has("quantization_config") ? top : c, m);
  validate(m, where);
  return m;
}

}  // namespace chalk
