// Parameter, byte and FLOP counts of a transformer (docs/formulas.md sections 1-3).
#include "chalk/model/model.h"
#include "chalk/base/count_cast.h"

#include <algorithm>

#include "chalk/base/error.h"
#include "chalk/model/context_math.h"
#include "chalk/base/dtype.h"

namespace chalk {
namespace {

using detail::attended;
using detail::causal_attended_sum;

using counts::d;

/// Attention parameters of one layer, latent norms, QK-norms, biases and sinks included.
double attention_params(const AttentionSpec& a, int64_t d_model) {
  const double dm = d(d_model), h = d(a.n_heads), hd = d(a.head_dim), vd = d(a.v_head_dim);
  double p = 0;
  if (a.kind == AttentionKind::linear) {
    // q and k (n_kv_heads x head_dim each), v (n_heads x v_head_dim), output gate, out_proj.
    const double qk = d(a.n_kv_heads) * hd, v = h * vd;
    p += dm * (2 * qk + v) + (a.output_gate ? dm * v : 0) + v * dm;
    if (a.linear_kind == LinearKind::gated_deltanet) {
      // in_proj_ba (step size b and decay a per value head), dt_bias and A_log, the causal
      // conv (one filter of conv_kernel taps per q, k, v channel, no bias), and the gated
      // RMSNorm shared by the heads (v_head_dim): HF Qwen3NextGatedDeltaNet.
      p += dm * 2 * h + 2 * h + (2 * qk + v) * d(a.conv_kernel) + vd;
    } else {
      p += v;  // RMSNorm over the heads' outputs (MiniMax-01 lightning attention `norm`)
    }
    return p;
  }
  if (a.kind == AttentionKind::mla) {
    const double ql = d(a.q_lora_rank), kl = d(a.kv_lora_rank), rope = d(a.qk_rope_head_dim);
    p += a.q_lora_rank > 0 ? dm * ql + ql + ql * h * hd : dm * h * hd;  // q (DeepSeek-V3 q_a, norm, q_b)
    p += dm * (kl + rope) + kl;                                         // kv_a_proj_with_mqa + kv_a_layernorm
    p += kl * h * ((hd - rope) + vd);                                   // kv_b_proj
  } else {
    const double kv = d(a.n_kv_heads);
    p += dm * h * hd + (a.qkv_bias ? h * hd : 0);
    if (!a.shares_kv_with_previous) p += dm * kv * (hd + vd) + (a.qkv_bias ? kv * (hd + vd) : 0);
    if (a.qk_norm) p += 2 * hd;
  }
  p += h * vd * dm + (a.o_bias ? dm : 0);  // o_proj
  if (a.output_gate) p += dm * h * vd;      // Qwen3-Next: q_proj emits queries and a gate
  if (a.sinks) p += h;
  if (a.sparse_top_k > 0) {
    // DSA lightning indexer (DeepSeek-V3.2-Exp inference/model.py Indexer): wq_b from the
    // query latent (or d_model), wk, its LayerNorm (weight and bias), weights_proj.
    const double ih = d(a.index_n_heads), id = d(a.index_head_dim);
    const double q_in = a.q_lora_rank > 0 ? d(a.q_lora_rank) : dm;
    p += q_in * ih * id + dm * id + 2 * id + dm * ih;
  }
  return p;
}

/// Parameters of one MLP of width `ff` (also one expert).
double mlp_params(int64_t d_model, int64_t ff, bool gated, bool bias) {
  const double dm = d(d_model), f = d(ff);
  if (gated) return 3 * dm * f + (bias ? 2 * f + dm : 0);
  return 2 * dm * f + (bias ? f + dm : 0);
}

}  // namespace

double attention_output_fraction(const AttentionSpec& a, int64_t d_model) {
  const double total = attention_params(a, d_model);
  if (!(total > 0)) return 0;
  double after = d(a.n_heads) * d(a.v_head_dim) * d(d_model) + (a.o_bias ? d(d_model) : 0);
  if (a.kind == AttentionKind::mla) after += d(a.kv_lora_rank) * d(a.n_heads) * d(a.v_head_dim);
  return after / total;
}

double kv_elements_per_token(const AttentionSpec& a) {
  if (a.shares_kv_with_previous || a.kind == AttentionKind::linear) return 0;
  if (a.kind == AttentionKind::mla) return d(a.kv_lora_rank + a.qk_rope_head_dim) + indexer_elements_per_token(a);
  return d(a.n_kv_heads) * d(a.head_dim + a.v_head_dim) + indexer_elements_per_token(a);
}

double indexer_elements_per_token(const AttentionSpec& a) {
  return a.sparse_top_k > 0 ? d(a.index_head_dim) : 0;
}

double indexer_flops_per_attended(const AttentionSpec& a) {
  if (a.sparse_top_k <= 0) return 0;
  return 2 * d(a.index_n_heads) * d(a.index_head_dim) + 2 * d(a.index_n_heads);
}

int64_t attention_reach(const AttentionSpec& a) {
  const int64_t w = a.sliding_window, k = a.sparse_top_k;
  if (w > 0 && k > 0) return std::min(w, k);
  return w > 0 ? w : k;
}

double attended_main(const AttentionSpec& a, int64_t context) {
  if (a.kind == AttentionKind::linear) return 0;
  return attended(context, attention_reach(a));
}

double recurrent_state_elements(const AttentionSpec& a) {
  if (a.kind != AttentionKind::linear) return 0;
  return d(a.n_heads) * d(a.head_dim) * d(a.v_head_dim);
}

double conv_state_elements(const AttentionSpec& a) {
  if (a.kind != AttentionKind::linear || a.conv_kernel < 2) return 0;
  return d(a.conv_kernel - 1) * (2 * d(a.n_kv_heads) * d(a.head_dim) + d(a.n_heads) * d(a.v_head_dim));
}

Bytes state_bytes_per_layer(const AttentionSpec& a) {
  return Bytes(recurrent_state_elements(a) * bytes_per_element(a.state_dtype) +
               conv_state_elements(a) * bytes_per_element(DType::bf16));
}

Bytes state_bytes_per_sequence(const ModelSpec& m) {
  double b = 0;
  for (const auto& g : m.groups) b += d(g.count) * state_bytes_per_layer(g.attention).value();
  return Bytes(b);
}

double recurrent_flops_per_token(const AttentionSpec& a) {
  if (a.kind != AttentionKind::linear) return 0;
  const double per_head = (a.linear_kind == LinearKind::gated_deltanet ? 7.0 : 5.0) * d(a.head_dim) * d(a.v_head_dim);
  const double channels = 2 * d(a.n_kv_heads) * d(a.head_dim) + d(a.n_heads) * d(a.v_head_dim);
  return d(a.n_heads) * per_head + 2 * d(a.conv_kernel) * channels;
}

double model_recurrent_flops_per_token(const ModelSpec& m) {
  double f = 0;
  for (const auto& g : m.groups) f += d(g.count) * recurrent_flops_per_token(g.attention);
  return f;
}


double attention_flops_per_attended(const AttentionSpec& a, bool absorbed_mla) {
  if (a.kind == AttentionKind::linear) return 0;
  const double h = d(a.n_heads);
  if (a.kind == AttentionKind::mla && absorbed_mla) {
    // Scores over the latent plus rope key, values over the latent (FlashMLA: 576 / 512).
    return 2 * h * d(a.kv_lora_rank + a.qk_rope_head_dim) + 2 * h * d(a.kv_lora_rank);
  }
  return 2 * h * d(a.head_dim) + 2 * h * d(a.v_head_dim);
}



double mla_prefix_flops(const AttentionSpec& a, int64_t prompt, double cached) {
  if (a.kind != AttentionKind::mla || cached <= 0 || prompt <= 0) return 0;
  const double h = d(a.n_heads);
  const double up = 2 * d(a.kv_lora_rank) * h * d(a.head_dim - a.qk_rope_head_dim + a.v_head_dim);
  const double absorbed_extra = attention_flops_per_attended(a, true) - attention_flops_per_attended(a, false);
  return cached * std::min(up, d(prompt) * std::max(0.0, absorbed_extra));
}

int64_t n_layers(const ModelSpec& m) {
  int64_t n = 0;
  for (const auto& g : m.groups) n += g.count;
  return n;
}

double ParamCounts::total() const {
  return embedding + lm_head + attention + dense_ffn + router + shared_experts + routed_experts_total + norms;
}
double ParamCounts::active() const {
  return embedding + lm_head + attention + dense_ffn + router + shared_experts + routed_experts_active + norms;
}
double ParamCounts::active_excluding_embedding() const { return active() - embedding; }
double ParamCounts::active_matmul() const {
  const double head = lm_head > 0 ? lm_head : embedding;  // tied: the table is the head
  return head + attention + dense_ffn + router + shared_experts + routed_experts_active;
}

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts p;
  const double dm = d(m.d_model);
  p.embedding = d(m.vocab_size) * dm;
  p.lm_head = m.tie_embeddings ? 0 : d(m.vocab_size) * dm;
  if (m.lm_head_bias) (m.tie_embeddings ? p.embedding : p.lm_head) += d(m.vocab_size);
  p.norms = dm;  // final norm
  for (const auto& g : m.groups) {
    const double n = d(g.count);
    p.attention += n * attention_params(g.attention, m.d_model);
    p.norms += n * d(m.norms_per_layer) * dm;
    const auto& f = g.ffn;
    if (f.kind == FfnKind::dense) {
      p.dense_ffn += n * mlp_params(m.d_model, f.d_ff, f.gated, f.bias);
    } else {
      const double expert = mlp_params(m.d_model, f.d_ff, f.gated, f.bias);
      p.router += n * (dm * d(f.n_experts) + (f.router_bias ? d(f.n_experts) : 0));
      p.routed_experts_total += n * d(f.n_experts) * expert;
      p.routed_experts_active += n * d(f.top_k) * expert;
      p.shared_experts += n * d(f.n_shared_experts) * mlp_params(m.d_model, f.d_shared_expert, f.gated, f.bias);
      if (f.shared_expert_gate) p.router += n * dm;
    }
  }
  if (m.norm_bias) p.norms *= 2;  // LayerNorm: a bias vector beside each weight vector
  return p;
}

Bytes expert_bytes(const ModelSpec& m, const LayerGroup& g, DType experts, double bits) {
  return Bytes(mlp_params(m.d_model, g.ffn.d_ff, g.ffn.gated, g.ffn.bias) * weight_bytes_per_element(experts, bits));
}

Bytes weight_bytes(const ModelSpec& m, const WeightFormats& f) {
  const ParamCounts p = count_params(m);
  const double b = (p.embedding + p.lm_head) * weight_bytes_per_element(f.embedding, f.embedding_bits) +
                   p.attention * weight_bytes_per_element(f.attention, f.attention_bits) +
                   (p.dense_ffn + p.shared_experts) * weight_bytes_per_element(f.dense_ffn, f.dense_ffn_bits) +
                   p.routed_experts_total * weight_bytes_per_element(f.experts, f.experts_bits) +
                   (p.router + p.norms) * weight_bytes_per_element(f.router, f.router_bits);
  return Bytes(b);
}

Bytes kv_bytes_per_sequence(const ModelSpec& m, int64_t context, DType kv) {
  double elements = 0;
  for (const auto& g : m.groups) {
    elements += d(g.count) * kv_elements_per_token(g.attention) * attended(context, g.attention.sliding_window);
  }
  return Bytes(elements * bytes_per_element(kv));
}

Bytes sequence_bytes(const ModelSpec& m, int64_t context, DType kv) {
  return kv_bytes_per_sequence(m, context, kv) + state_bytes_per_sequence(m);
}

BytesPerToken kv_bytes_per_token(const ModelSpec& m, int64_t context, DType kv) {
  return kv_bytes_per_sequence(m, context, kv) / tokens(d(std::max<int64_t>(context, 1)));
}

Flops attention_flops_per_token(const ModelSpec& m, int64_t context, bool absorbed_mla) {
  double f = 0;
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    f += d(g.count) * (attention_flops_per_attended(a, absorbed_mla) * attended_main(a, context) +
                       indexer_flops_per_attended(a) * attended(context, a.sliding_window));
  }
  return Flops(f);
}

FlopsPerToken decode_flops_per_token(const ModelSpec& m, int64_t context) {
  const double matmul = 2 * count_params(m).active_matmul() + model_recurrent_flops_per_token(m);
  return FlopsPerToken(matmul + attention_flops_per_token(m, context, true).value());
}

Flops prefill_flops(const ModelSpec& m, int64_t prompt, int64_t prefix) {
  double f = (2 * count_params(m).active_matmul() + model_recurrent_flops_per_token(m)) * d(prompt);
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    if (a.kind == AttentionKind::linear) continue;
    f += d(g.count) * attention_flops_per_attended(a, false) * causal_attended_sum(prefix, prompt, attention_reach(a));
    f += d(g.count) * indexer_flops_per_attended(a) * causal_attended_sum(prefix, prompt, a.sliding_window);
    f += d(g.count) * mla_prefix_flops(a, prompt, attended(prefix, attention_reach(a)));
  }
  return Flops(f);
}

void validate(const ModelSpec& m, const std::string& where) {
  auto in = [&](int64_t v, int64_t lo, int64_t hi, const char* field) {
    if (v < lo || v > hi) {
      throw InputError(where + ": " + field, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(v));
    }
  };
  using namespace model_limits;
  in(m.d_model, 1, width, "hidden_size");
  in(m.vocab_size, 1, vocab, "vocab_size");
  in(m.max_context, 1, context, "max_position_embeddings");
  in(m.n_mtp_layers, 0, layers, "num_nextn_predict_layers");
  if (m.groups.empty()) throw InputError(where + ": num_hidden_layers", "the model has no layers");
  int64_t total = 0;
  for (const auto& g : m.groups) {
    in(g.count, 1, layers, "num_hidden_layers");
    total += g.count;  // <= 2^17 per group and checked per step: no overflow
    in(total, 1, layers, "num_hidden_layers");
    const auto& a = g.attention;
    in(a.n_heads, 1, heads, "num_attention_heads");
    in(a.sparse_top_k, 0, context, "index_topk");
    if (a.sparse_top_k > 0) {
      in(a.index_n_heads, 1, heads, "index_n_heads");
      in(a.index_head_dim, 1, width, "index_head_dim");
    }
    if (a.kind == AttentionKind::linear) {
      in(a.n_kv_heads, 1, heads, "linear_num_key_heads");
      in(a.head_dim, 1, width, "linear_key_head_dim");
      in(a.v_head_dim, 1, width, "linear_value_head_dim");
      in(a.conv_kernel, 0, 1024, "linear_conv_kernel_dim");
    }
    in(a.head_dim, 1, width, "head_dim");
    in(a.v_head_dim, 1, width, "v_head_dim");
    in(a.sliding_window, 0, context, "sliding_window");
    if (a.kind == AttentionKind::mla) {
      in(a.kv_lora_rank, 1, width, "kv_lora_rank");
      in(a.qk_rope_head_dim, 1, width, "qk_rope_head_dim");
      in(a.q_lora_rank, 0, width, "q_lora_rank");
      if (a.qk_rope_head_dim > a.head_dim) {
        throw InputError(where + ": qk_rope_head_dim", "must be at most the q/k head dim (" + std::to_string(a.head_dim) +
                                                           "), got " + std::to_string(a.qk_rope_head_dim));
      }
    } else {
      in(a.n_kv_heads, 1, heads, "num_key_value_heads");
      if (a.n_kv_heads > a.n_heads || a.n_heads % a.n_kv_heads != 0) {
        throw InputError(where + ": num_key_value_heads",
                         "must divide num_attention_heads (" + std::to_string(a.n_heads) + "), got " +
                             std::to_string(a.n_kv_heads));
      }
    }
    const auto& f = g.ffn;
    if (f.kind == FfnKind::dense) {
      in(f.d_ff, 1, width, "intermediate_size");
    } else {
      in(f.d_ff, 1, width, "moe_intermediate_size");
      in(f.n_experts, 1, heads, "n_routed_experts");
      in(f.top_k, 1, heads, "num_experts_per_tok");
      if (f.top_k > f.n_experts) {
        throw InputError(where + ": num_experts_per_tok", "must be <= the number of experts (" +
                                                              std::to_string(f.n_experts) + "), got " +
                                                              std::to_string(f.top_k));
      }
      if (f.n_group < 1 || f.n_experts % f.n_group != 0) {
        throw InputError(where + ": n_group", "must be >= 1 and divide n_routed_experts (" + std::to_string(f.n_experts) +
                                                  "), got " + std::to_string(f.n_group));
      }
      if (f.topk_group < 1 || f.topk_group > f.n_group || f.top_k > f.topk_group * (f.n_experts / f.n_group)) {
        throw InputError(where + ": topk_group", "must be in 1..n_group (" + std::to_string(f.n_group) +
                                                     ") with room for num_experts_per_tok, got " + std::to_string(f.topk_group));
      }
      in(f.n_shared_experts, 0, heads, "n_shared_experts");
      if (f.n_shared_experts > 0) in(f.d_shared_expert, 1, width, "shared expert width");
    }
  }
  if (m.groups.front().attention.shares_kv_with_previous) {
    throw InputError(where + ": shares_kv_with_previous",
                     "the first layer has no previous layer to share KV with (some layer must store its own KV)");
  }
}

}  // namespace chalk
