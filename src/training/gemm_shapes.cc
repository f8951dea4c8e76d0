// GEMM efficiency by shape on one training rank (step.h, gemm_shape_factors;
// docs/training.md, "GEMM efficiency by shape").
#include <array>

#include "chalk/engine/gemm_shape.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

GemmShapeFactors compute_factors(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p) {
  GemmShapeFactors f;
  const double tp = static_cast<double>(p.tp), etp = static_cast<double>(p.etp), ep = static_cast<double>(p.ep);
  const double tokens = static_cast<double>(p.microbatch) * static_cast<double>(c.seq_len) / static_cast<double>(p.cp);
  const int64_t sms = s.sm_count;
  // FLOP-weighted harmonic means: sum of FLOPs over sum of FLOPs / efficiency.
  double w = 0, tf = 0, td = 0, tw = 0;
  for (const auto& g : c.gemms) {
    const double split = g.experts > 0 ? etp : tp;
    const double n = g.split_n ? g.n / split : g.n, k = g.split_k ? g.k / split : g.k;
    // A routed expert's grouped GEMM: E / ep local experts, each of tokens x top_k x ep / E rows.
    const double groups = g.experts > 0 ? g.experts / ep : 1.0;
    // The rank dispatches its tokens x etp / tp share (the step divides every GEMM's FLOPs by tp).
    const double m = g.experts > 0 ? tokens * etp / tp * g.top_k * ep / g.experts : tokens;
    const double flops = g.count * groups * m * n * k;  // per microbatch, up to the factor 2
    w += flops;
    // A grouped GEMM's tiles also pay the per-tile fixed cost of a pointer-array kernel
    // over their reduction length (grouped_gemm_reduction_efficiency): K forward, N for the
    // input gradient, the expert's M tokens for the weight gradient.
    const bool grouped = g.experts > 0;
    const auto fixed = [&](double reduction) { return grouped ? grouped_gemm_reduction_efficiency(reduction, s.compute) : 1.0; };
    tf += flops / (gemm_shape_efficiency(m, n, k, groups, sms, s.compute) * fixed(k));
    td += flops / (gemm_shape_efficiency(m, k, n, groups, sms, s.compute) * fixed(n));
    tw += flops / (gemm_shape_efficiency(n, k, m, groups, sms, s.compute) * fixed(m));
  }
  if (w > 0) {
    f.forward = w / tf;
    f.dgrad = w / td;
    f.wgrad = w / tw;
    f.inv_forward = tf / w;
    f.inv_dgrad = td / w;
    f.inv_wgrad = tw / w;
  }
  // The output head in bf16: M = tokens, N = vocab / tp, K = h.
  const double v = static_cast<double>(c.vocab) / tp, h = static_cast<double>(c.d_model);
  f.head_forward = gemm_shape_efficiency(tokens, v, h, 1, sms, MatmulPrecision::bf16);
  f.head_dgrad = gemm_shape_efficiency(tokens, h, v, 1, sms, MatmulPrecision::bf16);
  f.head_wgrad = gemm_shape_efficiency(v, h, tokens, 1, sms, MatmulPrecision::bf16);
  f.inv_head_forward = 1 / f.head_forward;
  f.inv_head_dgrad = 1 / f.head_dgrad;
  f.inv_head_wgrad = 1 / f.head_wgrad;
  return f;
}

/// What the factors depend on: the costs (their GEMM list's fingerprint, sequence length,
/// vocabulary, width), the plan's split of them and the chip.
struct Key {
  double fingerprint = -1;
  int64_t seq_len = 0, vocab = 0, d_model = 0, microbatch = 0, tp = 0, cp = 0, ep = 0, etp = 0, sms = 0;
  MatmulPrecision compute = MatmulPrecision::bf16;
  bool operator==(const Key&) const = default;
};

}  // namespace

GemmShapeFactors gemm_shape_factors(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p) {
  if (!s.gemm_shapes || s.sm_count <= 0) return {};
  // The layout search evaluates tens of thousands of plans over a few distinct splits
  // (bench/bench_training.cc: a step in about 100 ns); the last few splits' factors are kept
  // per thread, so a step pays the 45 shape evaluations once per split.
  constexpr int kSlots = 8;
  thread_local std::array<std::pair<Key, GemmShapeFactors>, kSlots> cache;
  thread_local int next = 0;
  const Key key{c.gemm_fingerprint, c.seq_len, c.vocab, c.d_model, p.microbatch, p.tp, p.cp, p.ep, p.etp, s.sm_count, s.compute};
  for (const auto& [k, f] : cache) {
    if (k == key) return f;
  }
  const GemmShapeFactors f = compute_factors(c, s, p);
  cache[next] = {key, f};
  next = (next + 1) % kSlots;
  return f;
}

}  // namespace chalk
