// The weight matrices of a model under their HuggingFace module names, and the matching of
// quantization exclusion lists against them (hf_internal.h; docs/models.md, "Quantized
// checkpoints"). Names follow the transformers modelling files: LlamaAttention /
// DeepseekV3Attention (self_attn.{q,k,v,o}_proj; q_a_proj, q_b_proj, kv_a_proj_with_mqa,
// kv_b_proj; indexer.{wq_b,wk,weights_proj}), Qwen3NextGatedDeltaNet
// (linear_attn.{in_proj_qkvz,in_proj_ba,out_proj}), MiniMax lightning attention
// (self_attn.{qkv_proj,output_gate,out_proj}), LlamaMLP (mlp.{gate,up,down}_proj; Phi-3:
// mlp.gate_up_proj; Llama 4: feed_forward.*), MoE blocks (mlp.experts.E.*, mlp.gate,
// mlp.shared_experts / mlp.shared_expert; Mixtral, PhiMoE and MiniMax:
// block_sparse_moe.experts.E.w1/w2/w3 and block_sparse_moe.gate; gpt-oss and Llama 4:
// fused experts without an index, mlp.router / feed_forward.router). The lists are matched
// against these names in hf_module_matcher.cc.
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "hf_internal.h"

namespace chalk::hf {

namespace {

double dd(int64_t x) { return static_cast<double>(x); }

struct Naming {
  std::string moe;      // the MoE block: "mlp", "block_sparse_moe", "feed_forward"
  std::string dense;    // the dense MLP: "mlp", "feed_forward"
  std::string router;   // "gate", "router"
  std::string shared;   // "shared_experts", "shared_expert"
  bool w123 = false;    // experts' matrices named w1 (gate), w3 (up), w2 (down)
  bool fused_experts = false;  // one gate_up_proj / down_proj tensor over all experts
  bool gate_up = false;        // dense MLP with one gate_up_proj (Phi-3)
};

Naming naming_of(const std::string& arch) {
  Naming n{"mlp", "mlp", "gate", "shared_experts"};
  if (arch == "mixtral" || arch == "phimoe" || arch.rfind("minimax", 0) == 0) n.moe = "block_sparse_moe", n.w123 = true;
  if (arch == "minimax_m2") n.moe = "block_sparse_moe", n.w123 = true;
  if (arch == "qwen2_moe" || arch == "qwen3_next") n.shared = "shared_expert";
  if (arch == "gpt_oss") n.router = "router", n.fused_experts = true;
  if (arch.rfind("llama4", 0) == 0) n.moe = n.dense = "feed_forward", n.router = "router", n.shared = "shared_expert", n.fused_experts = true;
  if (arch == "phi3") n.gate_up = true;
  return n;
}

void add(std::vector<QuantMatrix>& out, std::string name, double params, QuantGroup g) {
  out.push_back({std::move(name), "", params, 1, g});
}

void attention(std::vector<QuantMatrix>& out, const std::string& p, const AttentionSpec& a, int64_t d_model) {
  const double dm = dd(d_model), h = dd(a.n_heads), hd = dd(a.head_dim), vd = dd(a.v_head_dim), kv = dd(a.n_kv_heads);
  if (a.kind == AttentionKind::linear) {
    const double qk = kv * hd, v = h * vd;
    if (a.linear_kind == LinearKind::gated_deltanet) {
      add(out, p + "linear_attn.in_proj_qkvz", dm * (2 * qk + v) + (a.output_gate ? dm * v : 0), q_attention);
      add(out, p + "linear_attn.in_proj_ba", dm * 2 * h, q_attention);
      add(out, p + "linear_attn.out_proj", v * dm, q_attention);
    } else {
      add(out, p + "self_attn.qkv_proj", dm * (2 * qk + v), q_attention);
      if (a.output_gate) add(out, p + "self_attn.output_gate", dm * v, q_attention);
      add(out, p + "self_attn.out_proj", v * dm, q_attention);
    }
    return;
  }
  const std::string s = p + "self_attn.";
  if (a.kind == AttentionKind::mla) {
    const double ql = dd(a.q_lora_rank), kl = dd(a.kv_lora_rank), rope = dd(a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      add(out, s + "q_a_proj", dm * ql, q_attention);
      add(out, s + "q_b_proj", ql * h * hd, q_attention);
    } else {
      add(out, s + "q_proj", dm * h * hd, q_attention);
    }
    add(out, s + "kv_a_proj_with_mqa", dm * (kl + rope), q_attention);
    add(out, s + "kv_b_proj", kl * h * ((hd - rope) + vd), q_attention);
  } else {
    add(out, s + "q_proj", dm * h * hd + (a.output_gate ? dm * h * vd : 0) + (a.qkv_bias ? h * hd : 0), q_attention);
    if (!a.shares_kv_with_previous) {
      add(out, s + "k_proj", dm * kv * hd + (a.qkv_bias ? kv * hd : 0), q_attention);
      add(out, s + "v_proj", dm * kv * vd + (a.qkv_bias ? kv * vd : 0), q_attention);
    }
  }
  add(out, s + "o_proj", h * vd * dm + (a.o_bias ? dm : 0), q_attention);
  if (a.sparse_top_k > 0) {
    const double ih = dd(a.index_n_heads), id = dd(a.index_head_dim);
    add(out, s + "indexer.wq_b", (a.q_lora_rank > 0 ? dd(a.q_lora_rank) : dm) * ih * id, q_attention);
    add(out, s + "indexer.wk", dm * id, q_attention);
    add(out, s + "indexer.weights_proj", dm * ih, q_attention);
  }
}

/// One MLP's matrices under `p` (".gate_proj" etc.), gate/up/down of d_model x ff each.
void mlp(std::vector<QuantMatrix>& out, const std::string& p, int64_t d_model, int64_t ff, bool gated, bool bias, QuantGroup g,
         const Naming& n, bool expert) {
  const double dm = dd(d_model), f = dd(ff);
  const bool w = expert && n.w123;
  if (n.gate_up && !expert && gated) {
    add(out, p + "gate_up_proj", 2 * dm * f + (bias ? 2 * f : 0), g);
  } else {
    if (gated) add(out, p + (w ? "w1" : "gate_proj"), dm * f + (bias ? f : 0), g);
    add(out, p + (w ? "w3" : "up_proj"), dm * f + (bias ? f : 0), g);
  }
  add(out, p + (w ? "w2" : "down_proj"), f * dm + (bias ? dm : 0), g);
}

}  // namespace

std::vector<QuantMatrix> quant_matrices(const ModelSpec& m) {
  std::vector<QuantMatrix> out;
  const Naming n = naming_of(m.architecture);
  const double dm = dd(m.d_model);
  add(out, "model.embed_tokens", dd(m.vocab_size) * dm, q_head);
  if (!m.tie_embeddings) add(out, "lm_head", dd(m.vocab_size) * dm, q_head);
  std::vector<int32_t> order = m.layer_group;
  if (static_cast<int64_t>(order.size()) != n_layers(m)) {
    order.clear();
    for (size_t gi = 0; gi < m.groups.size(); ++gi) order.insert(order.end(), static_cast<size_t>(m.groups[gi].count), static_cast<int32_t>(gi));
  }
  for (size_t layer = 0; layer < order.size(); ++layer) {
    const LayerGroup& g = m.groups[static_cast<size_t>(order[layer])];
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    attention(out, p, g.attention, m.d_model);
    const FfnSpec& f = g.ffn;
    if (f.kind == FfnKind::dense) {
      mlp(out, p + n.dense + ".", m.d_model, f.d_ff, f.gated, f.bias, q_dense_ffn, n, false);
      continue;
    }
    const std::string b = p + n.moe + ".";
    add(out, b + n.router, dm * dd(f.n_experts) + (f.router_bias ? dd(f.n_experts) : 0), q_router);
    if (f.shared_expert_gate) add(out, b + "shared_expert_gate", dm, q_router);
    for (int64_t s = 0; s < f.n_shared_experts; ++s) {
      const std::string sp = b + n.shared + (f.n_shared_experts > 1 && n.shared == "shared_expert" ? "s." + std::to_string(s) : "") + ".";
      mlp(out, sp, m.d_model, f.d_shared_expert, f.gated, f.bias, q_dense_ffn, n, false);
    }
    const size_t first = out.size();
    if (n.fused_experts) {
      mlp(out, b + "experts.", m.d_model, f.d_ff, f.gated, f.bias, q_experts, n, true);
      for (size_t i = first; i < out.size(); ++i) out[i].params *= dd(f.n_experts);
      continue;
    }
    mlp(out, b + "experts.0.", m.d_model, f.d_ff, f.gated, f.bias, q_experts, n, true);
    const std::string tail = "experts." + std::to_string(f.n_experts - 1) + ".";
    for (size_t i = first; i < out.size(); ++i) {
      auto& q = out[i];
      q.copies = f.n_experts;
      q.last = q.name;
      q.last.replace(q.last.find("experts.0."), 10, tail);
    }
  }
  return out;
}

}  // namespace chalk::hf
