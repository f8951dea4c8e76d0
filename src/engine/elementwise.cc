// Elementwise kernels of a serving step beyond the kernel floor (elementwise.h).
#include "elementwise.h"

#include <algorithm>

namespace chalk::detail {

ElementwiseExcess elementwise_excess(const Deployment& dep, double norm_rows, double ffn_rows, double floor_s, double bandwidth) {
  ElementwiseExcess r;
  if (!(bandwidth > 0)) return r;
  constexpr double kActivationBytes = 2;  // bf16 activations, as the step's collectives
  const double d_model = static_cast<double>(dep.model.d_model);
  const double tp_ffn = static_cast<double>(std::max<int64_t>(dep.mechanisms.layout.tp_ffn, 1));
  auto beyond_floor = [&](double bytes) { return std::max(0.0, bytes / bandwidth - floor_s); };
  r.norm_s = beyond_floor(4 * norm_rows * d_model * kActivationBytes);
  for (const auto& g : dep.model.groups) {
    if (g.ffn.kind != FfnKind::dense || g.ffn.d_ff <= 0) continue;
    r.dense_ffn_layers += static_cast<double>(g.count);
    if (r.activation_s == 0) {
      const double width = static_cast<double>(g.ffn.d_ff) / tp_ffn;
      r.activation_s = beyond_floor((g.ffn.gated ? 3.0 : 2.0) * ffn_rows * width * kActivationBytes);
    }
  }
  return r;
}

}  // namespace chalk::detail
