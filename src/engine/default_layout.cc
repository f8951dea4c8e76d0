// Default chips and layout (chalk/engine/default_layout.h).
#include "chalk/engine/default_layout.h"

#include <algorithm>
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"

namespace chalk {
namespace {

/// The stated layout leaves nothing to search: a degree, or two micro-batches, given.
bool layout_stated(const DeploymentOptions& o) {
  const ParallelLayout& l = o.mechanisms.layout;
  return l.tp_attention != 0 || l.tp_ffn != 0 || l.ep != 0 || l.tp_expert != 0 || l.overlap_micro_batches;
}

/// Weights, reserve and one sequence at `context` fit `base` placed as stated on n chips.
bool stated_fits(const ModelSpec& m, const SystemSpec& s, DeploymentOptions o, int64_t n, int64_t context) {
  o.n_chips = n;
  Deployment d;
  try {
    d = make_deployment(m, s, o);
  } catch (const InputError&) {
    return false;  // a stated degree that does not divide n
  }
  if (d.mechanisms.enabled && !attention_split_problem(m, d.mechanisms.layout.tp_attention).empty()) return false;
  const MemoryPlan mem = memory_plan(d, 1, context);
  return mem.weights_fit && mem.fits;
}

}  // namespace

ReplicaLayouts replica_layouts(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t n_chips,
                               int64_t context) {
  LayoutQuery q;
  q.n_chips = n_chips;
  q.context = context;
  ReplicaLayouts r;
  for (auto& c : search_layouts(m, s, base, q)) {
    if (!c.fits || c.replica_chips != n_chips) continue;
    // One replica without a pipeline: its callers deploy the layout (TP, EP, DP attention)
    // as one step; a pipeline candidate's stages would be dropped and its layout then
    // priced on all n chips as if they held the whole model (llama-3.1-405b on 16 H100:
    // PP2 x TP8 ranked first, deployed as TP8 on 16 chips, "weights do not fit").
    if (c.pp > 1) {
      if (!r.single && !r.pipeline) r.pipeline = c;
      continue;
    }
    r.single = c;
    break;
  }
  return r;
}

std::vector<LayoutCandidate> single_replica_layouts(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t n_chips,
                                                    int64_t context) {
  LayoutQuery q;
  q.n_chips = n_chips;
  q.context = context;
  std::vector<LayoutCandidate> out;
  for (auto& c : search_layouts(m, s, base, q)) {
    if (c.fits && c.replica_chips == n_chips && c.pp == 1) out.push_back(std::move(c));
  }
  return out;
}

std::optional<LayoutCandidate> best_single_replica_layout(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                                          int64_t n_chips, int64_t context) {
  return replica_layouts(m, s, base, n_chips, context).single;
}

int64_t smallest_replica_chips(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context) {
  const int64_t domain = std::max<int64_t>(1, s.scale_up_domain);
  // Within one domain, powers of two first (the group sizes engines are deployed on: heads,
  // KV heads and experts are powers of two in most models), then the domain itself, then any
  // other divisor of it; then whole domains. DeepSeek-V3 on GB200 NVL72 takes 8 chips
  // (EP8, 32 experts each), not 6 (EP6: 43 or 42), though 6 would hold it.
  std::vector<int64_t> sizes;
  for (int64_t r = 1; r <= domain; r *= 2) sizes.push_back(r);
  if (sizes.back() != domain) sizes.push_back(domain);
  for (int64_t r = 3; r < domain; ++r) {
    if (domain % r == 0 && (r & (r - 1)) != 0) sizes.push_back(r);
  }
  for (int64_t k = 2; k <= 64; ++k) sizes.push_back(k * domain);
  const bool search = base.mechanisms.enabled && !layout_stated(base);
  for (const int64_t n : sizes) {
    // Searched, a size is one the layout search lays out: it holds a candidate that an
    // engine runs (layout_split_problem) and that fits, the same candidate the command then
    // deploys (best_single_replica_layout), so `chalk layouts` and the default never
    // disagree. A stated layout is the user's to judge.
    if (search ? best_single_replica_layout(m, s, base, n, context).has_value() : stated_fits(m, s, base, n, context)) return n;
  }
  // A context beyond the model's own is the likelier fault than the chips: say it first.
  const std::string beyond = m.max_context > 0 && context > m.max_context
                                 ? "; the sequence of " + std::to_string(context) + " tokens is beyond " + m.name + "'s maximum context of " +
                                       std::to_string(m.max_context) + " tokens (max_position_embeddings): a shorter prompt or output fits sooner"
                                 : "";
  throw InputError("chips", "the model does not fit in HBM on up to 64 scale-up domains of " + std::to_string(domain) + " chips of " +
                                s.name + " (with one sequence of " + std::to_string(context) + " tokens)" + beyond);
}

}  // namespace chalk
