// The replica sizes and layouts the latency-cost frontier compares (serving_replicas.h).
#include "serving_replicas.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"

namespace chalk::detail {
namespace {

std::string fmt1(double v, const char* f = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// The layouts tried on each replica size: the options' own; with mechanisms and a derived
/// attention layout on an MoE model, also data-parallel attention (each rank its own
/// sequences, experts over all: the layout SGLang and DeepSeek serve MoE with, which
/// layout_search.h finds far ahead for throughput), without and with two micro-batches
/// (unless the options already ask for them).
std::vector<DeploymentOptions> variants_of(const ModelSpec& m, const DeploymentOptions& base, int64_t n, int64_t domain) {
  std::vector<DeploymentOptions> out{base};
  const bool moe = std::any_of(m.groups.begin(), m.groups.end(), [](const LayerGroup& g) { return g.ffn.kind == FfnKind::moe; });
  // A dense model whose heads split over fewer chips than the replica's (within a domain)
  // keeps its FFN over all of them, as layout_search does (Llama 3.1 405B on 12 chips:
  // attention TP4 x 3, FFN TP12, instead of three copies of the FFN weights).
  if (base.mechanisms.enabled && base.mechanisms.layout.tp_attention == 0 && base.mechanisms.layout.tp_ffn == 0 && !moe && n > 1) {
    const int64_t within = (n > domain && domain > 0 && n % domain == 0) ? domain : n;
    const int64_t t = resolve_layout({}, m, n, domain).tp_attention;
    if (t < within) {
      DeploymentOptions mixed = base;
      mixed.mechanisms.layout.tp_attention = t;
      mixed.mechanisms.layout.tp_ffn = within;
      out.push_back(mixed);
    }
  }
  // A dense model on a replica wider than the domain: tensor parallelism over all n chips,
  // one copy of the weights, as `decode -n n` lays it (review 2 M8: Llama 3.1 405B on 16
  // H100 was priced as two TP8 copies, 1,623.5 GB, so no size beyond the domain ever fit).
  if (base.mechanisms.enabled && base.mechanisms.layout.tp_attention == 0 && base.mechanisms.layout.tp_ffn == 0 && !moe && domain > 0 &&
      n > domain) {
    DeploymentOptions wide = base;
    wide.mechanisms.layout.tp_attention = n;
    wide.mechanisms.layout.tp_ffn = n;
    out.push_back(wide);
  }
  if (base.mechanisms.enabled && base.mechanisms.layout.tp_attention == 0 && base.mechanisms.layout.tp_ffn == 0 && moe && n > 1) {
    DeploymentOptions dp = base;
    dp.mechanisms.layout.tp_attention = 1;
    dp.mechanisms.layout.tp_ffn = 1;
    out.push_back(dp);
    if (!dp.mechanisms.layout.overlap_micro_batches) {
      dp.mechanisms.layout.overlap_micro_batches = true;
      out.push_back(dp);
    }
  }
  return out;
}

}  // namespace

std::string sweep_size_problem(const ModelSpec& m, int64_t n) {
  if (n == 1) return "";
  bool moe = false, experts_split = true;
  std::string tp_problem = attention_split_problem(m, n);
  for (const auto& g : m.groups) {
    const FfnSpec& f = g.ffn;
    if (f.kind == FfnKind::moe) {
      moe = true;
      if (f.n_experts % n != 0) experts_split = false;
      if (tp_problem.empty() && f.n_shared_experts > 0 && (f.d_shared_expert * f.n_shared_experts) % n != 0) {
        tp_problem = "the shared experts' width " + std::to_string(f.d_shared_expert * f.n_shared_experts) + " does not split over " +
                     std::to_string(n) + " chips";
      }
    } else if (tp_problem.empty() && f.d_ff % n != 0) {
      tp_problem = "the FFN width " + std::to_string(f.d_ff) + " does not split over " + std::to_string(n) + " chips";
    }
  }
  if (tp_problem.empty() || (moe && experts_split)) return "";
  return moe ? tp_problem + ", and the routed experts do not spread evenly over them" : tp_problem;
}

std::vector<int64_t> replica_sizes(const ModelSpec& m, const SystemSpec& s, const std::vector<int64_t>& asked) {
  std::vector<int64_t> out = asked;
  if (out.empty()) {
    for (int64_t n = 1; n <= s.scale_up_domain; ++n) {
      if (sweep_size_problem(m, n).empty()) out.push_back(n);
    }
  }
  for (int64_t n : out) {
    if (n < 1 || n > max_chips) throw InputError("--replica-chips", "each must be in 1.." + std::to_string(max_chips) + ", got " + std::to_string(n));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Resolves every replica size; those whose weights (or one sequence's KV) do not fit go
/// to `excluded` with the reason.
std::vector<Replica> resolve_replicas(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                      const std::vector<int64_t>& sizes, int64_t context, int64_t cap,
                                      std::vector<ExcludedReplica>& excluded) {
  std::vector<Replica> out;
  std::optional<InputError> first_error;
  for (int64_t n : sizes) {
    const auto variants = variants_of(m, base, n, s.scale_up_domain);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      // The options' own layout says why a size is excluded; a further variant that does
      // not fit, or equals it, is skipped.
      const bool extra = v > 0;
      DeploymentOptions o = variants[v];
      o.n_chips = n;
      Deployment dep;
      try {
        dep = make_deployment(m, s, o);
      } catch (const InputError& e) {
        if (extra) continue;
        // A stated parallel layout may fit some replica sizes and not others.
        if (!first_error) first_error = e;
        excluded.push_back({n, std::string("cannot be placed: ") + e.what()});
        continue;
      }
      const MemoryPlan mem = memory_plan(dep, 0, context);
      if (!mem.weights_fit || mem.max_batch < 1) {
        if (extra) continue;
        if (!mem.weights_fit) {
          excluded.push_back({n, "weights " + fmt1(to_gb(mem.weights)) + " GB + reserve " + fmt1(to_gb(mem.reserve)) +
                                     " GB exceed the HBM of " + std::to_string(n) + " x " +
                                     fmt1(to_gb(s.chip.hbm_capacity), "%.0f") + " GB = " + fmt1(to_gb(mem.hbm_total)) + " GB"});
        } else {
          excluded.push_back({n, "the weights fit but the KV cache of one sequence at " + std::to_string(context) +
                                     " tokens does not (" + fmt1(to_gb(memory_plan(dep, 1, context).kv_cache), "%.2f") +
                                     " GB > " + fmt1(to_gb(mem.free), "%.2f") + " GB free)"});
        }
        continue;
      }
      const auto& prev = out.empty() ? dep.mechanisms.layout : out.back().dep.mechanisms.layout;
      if (extra && !out.empty() && out.back().dep.n_chips == n && prev.tp_attention == dep.mechanisms.layout.tp_attention &&
          prev.tp_ffn == dep.mechanisms.layout.tp_ffn && prev.overlap_micro_batches == dep.mechanisms.layout.overlap_micro_batches) {
        continue;
      }
      // The size fits after all (the options' own layout did not): not excluded.
      if (extra && !excluded.empty() && excluded.back().n_chips == n) excluded.pop_back();
      out.push_back({std::move(dep), std::min(mem.max_batch, cap)});
    }
  }
  // When no size could even be placed, the options themselves are wrong: say so.
  if (out.empty() && first_error && excluded.size() == sizes.size()) {
    bool all_errors = true;
    for (const auto& e : excluded) all_errors = all_errors && e.reason.rfind("cannot be placed: ", 0) == 0;
    if (all_errors) throw *first_error;
  }
  return out;
}

}  // namespace chalk::detail
