// A model's training costs at one sequence length, and a system's training rates
// (docs/training.md, "Costs").
#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"
#include "chalk/training/step.h"
#include "chalk/training/kernel_fixed_time.h"

namespace chalk {
namespace {

using counts::d;

}  // namespace

TrainingCosts make_training_costs(const ModelSpec& m, int64_t seq_len) {
  if (seq_len < 1) throw InputError("seq_len", "expected 1 or more tokens, got " + std::to_string(seq_len));
  TrainingCosts c;
  c.model = m.name;
  c.layers = n_layers(m);
  c.d_model = m.d_model;
  c.padded_layers = c.layers + 2 + m.n_mtp_layers;
  c.vocab = m.vocab_size;
  c.seq_len = seq_len;
  const ParamCounts pc = count_params(m);
  c.matmul_flops_per_token = 2 * pc.active_matmul();
  c.lm_head_flops_per_token = 2 * d(m.d_model) * d(m.vocab_size);
  const double prefill = prefill_flops(m, seq_len, 0).value();
  c.attention_flops_per_token = (prefill - d(seq_len) * c.matmul_flops_per_token) / d(seq_len);
  c.attention_flops_per_token_noncausal = attention_flops_per_token(m, seq_len, false).value();
  c.every_second_matmul_flops_per_token = every_second_matmul_flops_per_token(m);
  c.dense_layer_params = pc.attention + pc.dense_ffn + pc.router + pc.shared_experts + pc.norms;
  c.expert_params = pc.routed_experts_total;
  c.embedding_params = pc.embedding;
  c.lm_head_params = pc.lm_head;
  c.total_params = pc.total();
  c.active_params = pc.active();
  const double h = d(m.d_model);
  const double L = d(c.layers);
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    const double n = d(g.count) / L;
    double q = d(a.n_heads * a.head_dim), k, v, o = d(a.n_heads * a.v_head_dim);
    if (a.kind == AttentionKind::mla) {
      k = q;  // training materialises per-head keys and values from the latent
      v = o;
    } else {
      k = d(a.n_kv_heads * a.head_dim);
      v = d(a.n_kv_heads * a.v_head_dim);
    }
    // Korthikanti 4.1: QKV input 2h, Q 2q, K 2k, V 2v, output-projection input 2o, dropout
    // mask h; MLA also keeps its latents, the inputs of q_b and kv_b (2 (q_lora + kv_lora)).
    const double latents = a.kind == AttentionKind::mla ? 2 * d(a.q_lora_rank + a.kv_lora_rank) : 0.0;
    const double attention = 2 * h + 2 * q + 2 * k + 2 * v + 2 * o + h + latents;
    c.act_norm_outputs += n * 4 * h;
    c.act_linear_inputs_sharded += n * (2 * o + latents);
    if (a.kind == AttentionKind::mla) {
      c.act_mla_qkv += n * (2 * q + 2 * k + 2 * v);
      const double nope = d(a.head_dim - a.qk_rope_head_dim);
      c.mla_up_proj_flops_per_token += n * 2 * (d(a.q_lora_rank) * q + d(a.kv_lora_rank) * d(a.n_heads) * (nope + d(a.v_head_dim)));
    }
    const double per_ffn = g.ffn.gated ? 6.0 : 4.0;  // GeLU: its input 2 + second linear input 2 (per d_ff); SwiGLU: gate, up, product
    double mlp = 3 * h;                               // first linear input 2h, dropout mask h
    if (g.ffn.kind == FfnKind::moe) {
      mlp += d(g.ffn.top_k) * (2 * h + per_ffn * d(g.ffn.d_ff)) + d(g.ffn.n_shared_experts) * per_ffn * d(g.ffn.d_shared_expert);
      const double f_all = d(g.ffn.top_k) * d(g.ffn.d_ff) + d(g.ffn.n_shared_experts) * d(g.ffn.d_shared_expert);
      c.act_linear_inputs_sharded += n * (d(g.ffn.top_k) * 2 * h + 2 * f_all);
      c.act_moe_fc2_inputs += n * 2 * f_all;
      c.act_moe_fn_inputs += n * (per_ffn - 2) * f_all;
      c.moe_act_fn_forward_elements += n * (g.ffn.gated ? 3.0 : 2.0) * f_all;
      c.moe_routed_width += n * d(g.ffn.top_k) * h;
      c.moe_hidden_width += n * h;
      c.moe_router_width += n * d(g.ffn.n_experts);
      c.moe = true;
      c.routed_tokens_per_token += n * d(g.ffn.top_k);
      c.moe_layer_fraction += n;
      if (c.top_k == 0) c.top_k = g.ffn.top_k;
    } else {
      mlp += per_ffn * d(g.ffn.d_ff);
      c.act_linear_inputs_sharded += n * 2 * d(g.ffn.d_ff);
    }
    const double norms = 4 * h;  // two LayerNorm inputs
    const double total = attention + mlp + norms;
    c.act_replicated_per_token += n * 10 * h;
    c.act_sharded_per_token += n * (total - 10 * h);
    c.act_scores_per_token_per_ctx += n * 5 * d(a.n_heads);
    c.act_dropout_per_token += n * 2 * h;
    c.act_scores_dropout_per_token_per_ctx += n * 3 * d(a.n_heads);
    c.kv_elements_per_token += n * kv_elements_per_token(a);
    c.q_elements_per_token += n * q;
    c.o_elements_per_token += n * o;

    // Memory-bound kernels (kernels.h): norms, the activation function, the GEMMs' widths.
    c.norm_width += n * d(m.norms_per_layer) * h;
    const double f_token = g.ffn.kind == FfnKind::moe
                               ? d(g.ffn.top_k) * d(g.ffn.d_ff) + d(g.ffn.n_shared_experts) * d(g.ffn.d_shared_expert)
                               : d(g.ffn.d_ff);
    c.act_fn_forward_elements += n * (g.ffn.gated ? 3.0 : 2.0) * f_token;
    c.act_fn_backward_elements += n * (g.ffn.gated ? 5.0 : 3.0) * f_token;
    if (g.ffn.gated) c.gated_act_width += n * f_token;
    // Attention GEMMs. GQA/MHA: QKV (in h replicated, out q + k + v sharded), output
    // projection (in o sharded, out h replicated). MLA: the down-projections q_a and kv_a
    // share the input h and are replicated (out q_lora + kv_lora + rope), the
    // up-projections q_b (in q_lora) and kv_b (in kv_lora) have replicated inputs and
    // sharded outputs (q; heads x (nope + v)).
    if (a.kind == AttentionKind::mla) {
      const double ql = d(a.q_lora_rank), kl = d(a.kv_lora_rank), rope = d(a.qk_rope_head_dim);
      const double nope = d(a.head_dim - a.qk_rope_head_dim);
      c.gemm_in_replicated += n * (h + ql + kl);
      c.gemm_out_replicated += n * ((ql > 0 ? ql : 0.0) + kl + rope + h);
      c.gemm_out_sharded += n * ((ql > 0 ? q : 0.0) + d(a.n_heads) * (nope + d(a.v_head_dim)));
      if (ql == 0) c.gemm_out_replicated += n * q;  // queries projected from h directly
      c.gemm_in_sharded += n * o;
      // Shapes (gemm_shape_factors): the down-projections q_a + kv_a (replicated), q_b (or
      // q from h), kv_b (column-parallel), the output projection (row-parallel).
      c.gemms.push_back({.n = (ql > 0 ? ql : 0.0) + kl + rope, .k = h, .count = n});
      c.gemms.push_back({.n = q, .k = ql > 0 ? ql : h, .count = n, .split_n = true});
      c.gemms.push_back({.n = d(a.n_heads) * (nope + d(a.v_head_dim)), .k = kl, .count = n, .split_n = true});
      c.gemms.push_back({.n = h, .k = o, .count = n, .split_k = true});
    } else {
      c.gemm_in_replicated += n * h;
      c.gemm_out_sharded += n * (q + (a.shares_kv_with_previous ? 0.0 : k + v));
      c.gemm_in_sharded += n * o;
      c.gemm_out_replicated += n * h;
      c.gemms.push_back({.n = q + (a.shares_kv_with_previous ? 0.0 : k + v), .k = h, .count = n, .split_n = true});
      c.gemms.push_back({.n = h, .k = o, .count = n, .split_k = true});
    }
    // MLP GEMMs per expert a token visits: first (in h, out f or gate + up 2f), second (in f, out h).
    const double copies = g.ffn.kind == FfnKind::moe ? d(g.ffn.top_k) + d(g.ffn.n_shared_experts) : 1.0;
    if (a.kind == AttentionKind::mla) {
      c.rotary_width_sharded += n * d(a.n_heads) * d(a.qk_rope_head_dim);
      c.rotary_width_replicated += n * d(a.qk_rope_head_dim);
    } else if (a.kind == AttentionKind::gqa) {  // linear-attention layers (Gated DeltaNet, lightning) rotate nothing
      c.rotary_width_sharded += n * m.rotary_fraction * (q + (a.shares_kv_with_previous ? 0.0 : k));
    }
    if (a.qkv_bias) c.bias_width_sharded += n * (q + (a.shares_kv_with_previous ? 0.0 : k + v));
    if (a.o_bias) c.bias_width_replicated += n * h;
    if (g.ffn.bias) {
      c.bias_width_sharded += n * (g.ffn.gated ? 2.0 : 1.0) * f_token;
      c.bias_width_replicated += n * copies * h;
    }
    const double gate = g.ffn.gated ? 2.0 : 1.0;
    if (g.ffn.kind == FfnKind::moe) {
      const double ex = d(g.ffn.n_experts), kk = d(g.ffn.top_k), fs = d(g.ffn.n_shared_experts) * d(g.ffn.d_shared_expert);
      c.gemms.push_back({.n = gate * d(g.ffn.d_ff), .k = h, .count = n, .split_n = true, .experts = ex, .top_k = kk});
      c.gemms.push_back({.n = h, .k = d(g.ffn.d_ff), .count = n, .split_k = true, .experts = ex, .top_k = kk});
      if (fs > 0) {
        c.gemms.push_back({.n = gate * fs, .k = h, .count = n, .split_n = true});
        c.gemms.push_back({.n = h, .k = fs, .count = n, .split_k = true});
      }
    } else {
      c.gemms.push_back({.n = gate * d(g.ffn.d_ff), .k = h, .count = n, .split_n = true});
      c.gemms.push_back({.n = h, .k = d(g.ffn.d_ff), .count = n, .split_k = true});
    }
    c.gemm_in_replicated += n * copies * h;
    c.gemm_out_sharded += n * (g.ffn.gated ? 2.0 : 1.0) * f_token;
    c.gemm_in_sharded += n * f_token;
    c.gemm_out_replicated += n * copies * h;
  }
  for (size_t i = 0; i < c.gemms.size(); ++i) {
    const auto& g = c.gemms[i];
    const double w = static_cast<double>(i + 1);
    c.gemm_fingerprint += w * (g.n + 3 * g.k + 7 * g.count + 11 * g.experts + 13 * g.top_k + (g.split_n ? 17 : 0) + (g.split_k ? 19 : 0));
    // The GEMM kernel counts (kernel_fixed_time.h), summed once here.
    if (g.experts > 0) {
      c.expert_gemms += g.count;
      c.expert_gemm_experts += g.count * g.experts;
    } else {
      c.dense_gemms += g.count;
    }
  }
  return c;
}

TrainingSystem make_training_system(const SystemSpec& s, MatmulPrecision compute) {
  if (!s.chip.supports(compute)) {
    throw InputError("compute", s.chip.name + " has no dense " + std::string(to_string(compute)) + " matmul rate");
  }
  TrainingSystem t;
  t.name = s.name;
  t.domain = std::max<int64_t>(1, s.scale_up_domain);
  t.compute = compute;
  t.peak_bf16 = s.chip.peak_for(MatmulPrecision::bf16);
  t.matmul_rate = s.chip.peak_for(compute) * s.efficiency.matmul_for(compute);
  t.head_matmul_rate = t.peak_bf16 * s.efficiency.matmul_for(MatmulPrecision::bf16);
  t.attention_rate = t.peak_bf16 * (Calibration{}.attention_compute_fraction * s.efficiency.sustained_clock);
  t.sm_count = s.chip.sm_count;
  t.hbm_rate = s.chip.hbm_bandwidth * s.efficiency.hbm;
  t.communication_sm_fraction = is_tpu(s) ? 0.0 : Calibration{}.communication_sm_fraction;
  t.hbm_capacity = s.chip.hbm_capacity;
  t.gemm_kernel_fixed_s = op_floor(s, Calibration{}).value();
  t.kernel_gap_s = is_tpu(s) ? 0.0 : kKernelGapS;
  t.up = scale_up_link(s);
  t.has_scale_out = s.scale_out_bandwidth_per_direction.value() > 0;
  if (t.has_scale_out) t.out = scale_out_link(s);
  return t;
}

}  // namespace chalk
