// Parallel layouts of one replica: which splits engines can run, how a requested layout
// is completed, the kernels each layer launches, and the copies an expert-parallel
// exchange sends over scale-out (overhead.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"
#include "ep_kernels.h"

namespace chalk {
namespace {

void check_divides(int64_t degree, int64_t n, const char* field) {
  if (degree < 1 || n % degree != 0) {
    throw InputError(field, "must be a positive divisor of the " + std::to_string(n) + " chips, got " + std::to_string(degree));
  }
}

int64_t fewest_experts(const ModelSpec& m) {
  int64_t e = 0;
  for (const auto& g : m.groups) {
    if (g.ffn.kind == FfnKind::moe) e = e == 0 ? g.ffn.n_experts : std::min(e, g.ffn.n_experts);
  }
  return e;
}

/// True when expert TP `t` splits every routed expert's width into whole columns.
bool expert_tp_splits_width(const ModelSpec& m, int64_t t) {
  return std::all_of(m.groups.begin(), m.groups.end(), [t](const LayerGroup& g) { return g.ffn.kind != FfnKind::moe || g.ffn.d_ff % t == 0; });
}

}  // namespace

// The largest EP degree whose remaining chips split each expert into whole columns (review 6
// M8: DeepSeek-V3 on 1,120 TPU v5p chips was EP224 x TP5, 2048-wide experts split into
// 409.6 columns); where none does, the largest divisor of n, which layout_split_problem then
// refuses, naming the width.
int64_t expert_parallel_degree(const ModelSpec& m, int64_t n) {
  const int64_t e = fewest_experts(m);
  if (e == 0) return 1;
  int64_t first = 1;
  for (int64_t r = std::min(n, e); r > 1; --r) {
    if (n % r != 0) continue;
    if (expert_tp_splits_width(m, n / r)) return r;
    if (first == 1) first = r;
  }
  return expert_tp_splits_width(m, n) ? 1 : first;
}

std::string attention_split_problem(const ModelSpec& m, int64_t tp) {
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    if (a.n_heads % tp != 0) {
      return "TP" + std::to_string(tp) + " does not divide the " + std::to_string(a.n_heads) + " attention heads";
    }
    const int64_t kv = a.kind == AttentionKind::mla ? 1 : std::max<int64_t>(a.n_kv_heads, 1);
    if (kv % tp != 0 && tp % kv != 0) {
      return "TP" + std::to_string(tp) + " neither divides nor is a multiple of the " + std::to_string(kv) + " KV heads";
    }
  }
  return "";
}

std::string layout_split_problem(const ModelSpec& m, const ParallelLayout& l) {
  if (std::string problem = attention_split_problem(m, l.tp_attention); !problem.empty()) return problem;
  const int64_t tp = std::max<int64_t>(l.tp_ffn, 1);
  for (const auto& g : m.groups) {
    const FfnSpec& f = g.ffn;
    if (f.kind == FfnKind::moe) {
      const int64_t shared = f.d_shared_expert * f.n_shared_experts;
      if (shared > 0 && shared % tp != 0) {
        return "FFN TP" + std::to_string(tp) + " does not split the shared experts' width " + std::to_string(shared);
      }
      // Routed experts may spread unevenly over EP (vLLM's expert map), but expert TP splits
      // each expert's columns, as a column-parallel layer does: whole ones (review 6 M8).
      const int64_t etp = std::max<int64_t>(l.tp_expert, 1);
      if (f.d_ff % etp != 0) {
        return "expert TP" + std::to_string(etp) + " does not split the routed experts' width " + std::to_string(f.d_ff);
      }
    } else if (f.d_ff % tp != 0) {
      return "FFN TP" + std::to_string(tp) + " does not split the FFN width " + std::to_string(f.d_ff);
    }
  }
  return "";
}

std::string describe_layout(const ParallelLayout& l, bool moe) {
  std::string s = "attention TP" + std::to_string(l.tp_attention) + ", FFN TP" + std::to_string(l.tp_ffn);
  if (moe) s += ", experts EP" + std::to_string(l.ep) + " x TP" + std::to_string(l.tp_expert);
  if (moe && l.dispatch_bytes_per_element != 2) {
    char b[32];
    std::snprintf(b, sizeof b, ", dispatch %.3g B/element", l.dispatch_bytes_per_element);
    s += b;
  }
  if (l.kv_sharded_by_batch) s += ", KV by batch";
  if (l.weight_gathered) s += ", weight-gathered";
  // Only where there is expert-parallel traffic to hide (engine_step's condition).
  if (l.overlap_micro_batches && moe && l.ep > 1 && l.tp_attention < l.ep * l.tp_expert && !l.weight_gathered) {
    s += ", two micro-batches overlap EP traffic";
  }
  return s;
}

ParallelLayout resolve_layout(const ParallelLayout& requested, const ModelSpec& m, int64_t n, int64_t domain) {
  ParallelLayout l = requested;
  if (l.tp_attention == 0) {
    // The largest degree within one scale-up domain that divides the chips and that an
    // engine can split the heads over.
    const int64_t within = (n > domain && domain > 0 && n % domain == 0) ? domain : n;
    l.tp_attention = 1;
    for (int64_t t = within; t >= 1; --t) {
      if (within % t == 0 && attention_split_problem(m, t).empty()) {
        l.tp_attention = t;
        break;
      }
    }
  }
  check_divides(l.tp_attention, n, "layout.tp_attention");
  if (l.tp_ffn == 0) l.tp_ffn = l.tp_attention;
  check_divides(l.tp_ffn, n, "layout.tp_ffn");
  bool moe = false;
  for (const auto& g : m.groups) moe = moe || g.ffn.kind == FfnKind::moe;
  if (l.ep == 0) l.ep = moe ? (l.tp_expert > 0 ? n / l.tp_expert : expert_parallel_degree(m, n)) : 1;
  if (!moe && l.ep > 1) {
    throw InputError("layout.ep", m.name + " has no routed experts to spread; expected 1 (unset), got " + std::to_string(l.ep));
  }
  if (moe && l.ep > expert_parallel_degree(m, l.ep)) {
    throw InputError("layout.ep", "EP" + std::to_string(l.ep) + " exceeds the " + std::to_string(fewest_experts(m)) +
                                      " routed experts per layer; expected at most that, the rest splitting each expert (tp_expert)");
  }
  check_divides(l.ep, n, "layout.ep");
  if (l.tp_expert == 0) l.tp_expert = n / l.ep;
  check_divides(l.tp_expert, n, "layout.tp_expert");
  if (moe && l.ep * l.tp_expert != n) {
    throw InputError("layout.ep", "ep x tp_expert must equal the " + std::to_string(n) + " chips, got " + std::to_string(l.ep) +
                                      " x " + std::to_string(l.tp_expert));
  }
  if (!(l.dispatch_bytes_per_element > 0) || !(l.combine_bytes_per_element > 0)) {
    throw InputError("layout.dispatch_bytes_per_element", "must be positive");
  }
  if (l.description.empty()) l.description = describe_layout(l, moe) + (requested.tp_attention == 0 ? " (derived)" : "");
  return l;
}

int64_t kernels_per_layer(const LayerGroup& g) {
  int64_t k = g.attention.kind == AttentionKind::mla ? 9 : 5;
  if (g.ffn.kind == FfnKind::dense) {
    k += 4;
  } else {
    k += 8 + (g.ffn.n_shared_experts > 0 ? 3 : 0);
  }
  return k;
}

double ep_scale_out_copies(double domains, double top_k, bool low_latency_kernels) {
  if (domains <= 1) return 0.0;
  return low_latency_kernels ? top_k * (domains - 1) / domains : (domains - 1) * (1 - std::pow(1 - 1 / domains, top_k));
}

bool ep_low_latency_step(double decode_sequences, double prefill_sequences) { return decode_sequences > 0 && !(prefill_sequences > 0); }

}  // namespace chalk
