// torchtitan's op-level selective checkpointing: the forward FLOPs of the linears it reruns
// (attention_kernels.h, every_second_matmul_flops_per_token; docs/formulas.md, "Selective
// recomputation by engine").
#include "chalk/model/model.h"
#include "chalk/training/attention_kernels.h"

namespace chalk {

double every_second_matmul_flops_per_token(const ModelSpec& m) {
  const double h = static_cast<double>(m.d_model);
  double exact = 0;
  bool all_dense_gqa = true;
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    if (a.kind != AttentionKind::gqa || g.ffn.kind == FfnKind::moe || a.shares_kv_with_previous) {
      all_dense_gqa = false;
      break;
    }
    // The 2nd, 4th and 6th aten.mm of the block: wk (h -> kv_heads head_dim), wo
    // (heads v_head_dim -> h), then w3 (gated) or w2 (ungated), each h x d_ff.
    const double k = static_cast<double>(a.n_kv_heads * a.head_dim);
    const double o = static_cast<double>(a.n_heads * a.v_head_dim);
    exact += static_cast<double>(g.count) * 2 * h * (k + o + static_cast<double>(g.ffn.d_ff));
  }
  if (all_dense_gqa) return exact;
  return 0.5 * (2 * count_params(m).active_matmul() - 2 * h * static_cast<double>(m.vocab_size));
}

}  // namespace chalk
