// Two-batch overlap's compute windows for one decode step (overlap_windows.h).
#include "overlap_windows.h"

#include "chalk/model/model.h"

namespace chalk::detail {

DecodeWindows decode_windows(const Deployment& dep, Seconds projections, Seconds shared, Seconds core, Seconds router, Seconds floor) {
  double moe_layers = 0, layers = 0, kernels_dispatch = 0, kernels_combine = 0, after = 0;
  for (const auto& g : dep.model.groups) {
    const double count = static_cast<double>(g.count);
    layers += count;
    if (g.ffn.kind != FfnKind::moe) continue;
    moe_layers += count;
    after += count * attention_output_fraction(g.attention, dep.model.d_model);
    // kernels_per_layer's stages: MLA 6 before the core (norm, q_a/kv_a, latent norms,
    // q_b, k_b BMM, RoPE + KV write) and 3 from it (core, v_b BMM, output); GQA 3 and 2;
    // the shared expert 3; the router 3 (norm, GEMM, top-k). Two micro-batches each.
    const bool mla = g.attention.kind == AttentionKind::mla;
    kernels_dispatch += 2 * count * ((mla ? 6 : 3) + (g.ffn.n_shared_experts > 0 ? 3 : 0));
    kernels_combine += 2 * count * ((mla ? 3 : 2) + 3);
  }
  if (moe_layers <= 0) return {};
  const double share = moe_layers / layers;
  after /= moe_layers;
  return {shared + projections * ((1 - after) * share) + floor * kernels_dispatch,
          (core + projections * after) * share + router + floor * kernels_combine};
}

}  // namespace chalk::detail
