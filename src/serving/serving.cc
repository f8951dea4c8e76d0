// Serving economics: levers, sweeps, balance points, the batching window, end to end
// (docs/formulas.md, section "serving"). The frontier and the modes are in
// serving_frontier.cc.
#include "chalk/serving/serving.h"
#include "chalk/base/count_cast.h"
#include "chalk/serving/cheapest_batch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "chalk/base/error.h"
#include "serving_replicas.h"

namespace chalk {
namespace {

using counts::d;

constexpr int64_t kMaxContextSearch = int64_t{1} << 30;  // tokens
constexpr int64_t kMaxBatchSearch = int64_t{1} << 40;    // sequences
constexpr int64_t kMaxBatchFill = int64_t{1} << 24;      // sequences
constexpr int64_t kMaxEveryInteger = int64_t{1} << 20;   // values

std::string serving_num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Smallest x in [lo, hi] with pred(x) true, for pred false-then-true; nullopt if
/// pred(hi) is false. Doubling from lo, then bisection.
template <class Pred>
std::optional<int64_t> first_true(int64_t lo, int64_t hi, Pred pred) {
  if (pred(lo)) return lo;
  int64_t bad = lo, good = -1;
  for (int64_t x = std::max<int64_t>(1, lo * 2); ; x = x > hi / 2 ? hi : x * 2) {
    if (pred(x)) {
      good = x;
      break;
    }
    bad = x;
    if (x == hi) return std::nullopt;
  }
  while (good - bad > 1) {
    const int64_t mid = bad + (good - bad) / 2;
    if (pred(mid)) good = mid;
    else bad = mid;
  }
  return good;
}

}  // namespace

void validate(const ServingLevers& l) {
  if (l.draft_tokens < 0 || l.draft_tokens > 64) {
    throw InputError("--draft", "must be in 0..64 drafted tokens per step, got " + std::to_string(l.draft_tokens));
  }
  if (!(l.acceptance >= 0 && l.acceptance <= 1)) {
    throw InputError("--acceptance", "must be a probability in [0, 1], got " + serving_num(l.acceptance));
  }
  if (l.accepted_tokens != 0 && !(l.accepted_tokens >= 1 && l.accepted_tokens <= d(1 + l.draft_tokens))) {
    throw InputError("--accepted-tokens", "mean tokens kept per step must be in [1, 1 + draft] = [1, " +
                                              std::to_string(1 + l.draft_tokens) + "], got " + serving_num(l.accepted_tokens));
  }
  switch (l.sparse) {
    case SparseAttention::dense: break;
    case SparseAttention::top_k:
      if (l.sparse_top_k < 1) {
        throw InputError("--sparse-top-k", "must be >= 1 tokens read per query, got " + std::to_string(l.sparse_top_k));
      }
      break;
    case SparseAttention::sqrt_context:
      if (!(l.sparse_sqrt_factor > 0) || !std::isfinite(l.sparse_sqrt_factor) || l.sparse_sqrt_factor > 1e6) {
        throw InputError("--sparse-sqrt", "must be a factor c in (0, 1e6] for c sqrt(S) tokens read, got " +
                                              serving_num(l.sparse_sqrt_factor));
      }
      break;
  }
}

std::optional<double> published_mtp_acceptance(const ModelSpec& m) {
  if (m.n_mtp_layers > 0 && m.architecture == "deepseek_v3") return kDeepSeekV3MtpAcceptance;
  return std::nullopt;
}

double tokens_kept_per_step(const ServingLevers& l) {
  validate(l);
  return l.accepted_tokens > 0 ? l.accepted_tokens : expected_accepted_tokens(l.draft_tokens, l.acceptance);
}

DecodeLevers resolve_levers(const ServingLevers& l, int64_t context) {
  validate(l);
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  DecodeLevers r;
  r.tokens_per_sequence = 1 + l.draft_tokens;
  r.accepted_tokens_per_step = tokens_kept_per_step(l);
  r.drafter = l.draft_tokens > 0 ? l.drafter : Drafter::none;
  r.draft_model = l.draft_model;
  switch (l.sparse) {
    case SparseAttention::dense: r.sparse_attention_top_k = 0; break;
    case SparseAttention::top_k: r.sparse_attention_top_k = l.sparse_top_k; break;
    case SparseAttention::sqrt_context:
      r.sparse_attention_top_k =
          std::max<int64_t>(1, static_cast<int64_t>(std::ceil(l.sparse_sqrt_factor * std::sqrt(d(context)))));
      break;
  }
  return r;
}

std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi) {
  if (lo < 1 || hi < lo) {
    throw InputError("--batch", "a range needs 1 <= low <= high, got " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  if (lo > (int64_t{1} << 62)) {  // the doubling below would overflow and never end
    throw InputError("--batch", "a range needs low <= 2^62, got " + std::to_string(lo));
  }
  std::vector<int64_t> out;
  int64_t p = 1;
  while (p < lo) p *= 2;
  for (; p <= hi; p *= 2) {
    out.push_back(p);
    if (p > hi / 2) break;
  }
  if (out.empty() || out.back() != hi) out.push_back(hi);
  return out;
}

std::vector<int64_t> every_integer(int64_t lo, int64_t hi) {
  if (lo < 1 || hi < lo) {
    throw InputError("--batch", "a range needs 1 <= low <= high, got " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  if (hi - lo >= kMaxEveryInteger) {
    throw InputError("--batch", "every integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                    " is more than 1,048,576 values; narrow the range");
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(hi - lo + 1));
  for (int64_t b = lo; b <= hi; ++b) out.push_back(b);
  return out;
}

std::optional<TermCosts> term_costs(const Deployment& dep, const DecodeStep& s) {
  if (!dep.price_per_chip) return std::nullopt;
  const Tokens kept = tokens(d(s.batch) * s.tokens_per_sequence);
  const UsdPerSecond rate = *dep.price_per_chip * d(dep.n_chips);
  auto per = [&](Seconds t) { return rate * t / kept; };
  return TermCosts{per(s.t_compute), per(s.t_weights), per(s.t_kv), per(s.t_comm), per(s.t_overhead), per(s.t_step)};
}

std::vector<ServingPoint> serving_sweep(const Deployment& dep, const std::vector<int64_t>& batches,
                                        const std::vector<int64_t>& contexts, const ServingLevers& levers) {
  validate(levers);
  std::vector<ServingPoint> out;
  out.reserve(batches.size() * contexts.size());
  for (int64_t s : contexts) {
    const DecodeLevers lev = resolve_levers(levers, s);
    const MemoryPlan mem = memory_plan(dep, 0, s);
    for (int64_t b : batches) {
      ServingPoint p;
      p.batch = b;
      p.context = s;
      p.tokens_read = lev.sparse_attention_top_k > 0 ? std::min(s, lev.sparse_attention_top_k) : s;
      p.step = decode_step(dep, b, s, lev);
      p.cost = term_costs(dep, p.step);
      p.max_batch = mem.max_batch;
      p.fits = mem.weights_fit && b <= mem.max_batch;
      out.push_back(p);
    }
  }
  return out;
}

BalancePoints balance_points(const Deployment& dep, int64_t context, int64_t crossover_batch, const ServingLevers& levers) {
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  if (crossover_batch < 1) throw InputError("--batch", "must be >= 1, got " + std::to_string(crossover_batch));
  validate(levers);
  BalancePoints r;
  r.context = context;
  r.crossover_batch = crossover_batch;
  // The weights a large-batch step reads: every stored weight but an untied input
  // embedding, of which a step gathers one row per token (make_deployment's
  // weight_bytes_always plus every routed expert). Counting the table would put B* above
  // the step's own balance (Llama 3.1 8B on H100: 316 against 295).
  const double untied_embedding = dep.model.tie_embeddings ? 0.0 : dep.params.embedding;
  const double n_total = dep.params.total() - untied_embedding;
  const double n_active = dep.params.active_matmul();
  const double b_w = (dep.weight_bytes_total.value() - untied_embedding * weight_bytes_per_element(dep.weights.embedding, dep.weights.embedding_bits)) / n_total;
  const auto& chip = dep.system.chip;
  r.lecture_batch_peak = lecture_balance_batch(n_total, n_active, b_w, chip.peak_for(dep.compute), chip.hbm_bandwidth);
  r.lecture_batch_effective = lecture_balance_batch(n_total, n_active, b_w, dep.flops_effective, dep.hbm_effective);

  const DecodeLevers lev0 = resolve_levers(levers, 0);
  r.batch_without_kv = first_true(1, kMaxBatchSearch, [&](int64_t b) {
    const DecodeStep s = decode_step(dep, b, 0, lev0);
    return s.t_compute >= s.t_weights;
  });

  const DecodeLevers lev = resolve_levers(levers, context);
  const DecodeStep slope = per_sequence_terms(dep, context, lev);
  // T_compute and T_kv are linear in B; T_weights is bounded. Compute can catch up with
  // memory only when its slope exceeds the KV slope.
  if (slope.t_compute > slope.t_kv) {
    r.batch_with_kv = first_true(1, kMaxBatchSearch, [&](int64_t b) {
      const DecodeStep s = decode_step(dep, b, context, lev);
      return s.t_compute >= s.t_memory;
    });
  }
  r.context_never_compute_bound = first_true(0, kMaxContextSearch, [&](int64_t s) {
    const DecodeStep st = per_sequence_terms(dep, s, resolve_levers(levers, s));
    return st.t_kv >= st.t_compute;
  });
  r.kv_overtakes_weights_context = first_true(0, kMaxContextSearch, [&](int64_t s) {
    const DecodeStep st = decode_step(dep, crossover_batch, s, resolve_levers(levers, s));
    return st.t_kv >= st.t_weights;
  });
  return r;
}

BatchingWindow batching_window(const Deployment& dep, int64_t context, const ServingLevers& levers) {
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  const DecodeLevers lev = resolve_levers(levers, context);
  BatchingWindow w;
  w.context = context;
  const auto& chip = dep.system.chip;
  w.hbm_sweep_peak = hbm_sweep_time(chip.hbm_capacity, chip.hbm_bandwidth);
  w.hbm_sweep_effective = hbm_sweep_time(chip.hbm_capacity, chip.hbm_bandwidth * dep.hbm_efficiency);
  const MemoryPlan mem = memory_plan(dep, 0, context);
  w.weights_fit = mem.weights_fit;
  w.max_batch_at_context = mem.weights_fit ? std::min(mem.max_batch, kMaxBatchFill) : 0;
  if (w.max_batch_at_context >= 1) {
    const DecodeStep s = decode_step(dep, w.max_batch_at_context, context, lev);
    w.step = s;
    w.steps_per_second = 1.0 / s.t_step.value();
    w.replica_tokens_per_s = s.tokens_per_s;
    w.tokens_per_s_per_user = s.tokens_per_s_per_user;
  }
  return w;
}

TokensPerSecond deployment_tokens_per_s(double batch, Seconds step) {
  if (!(batch >= 0) || !std::isfinite(batch)) throw InputError("--batch", "must be >= 0, got " + serving_num(batch));
  if (!(step.value() > 0)) throw InputError("--step-ms", "must be positive, got " + serving_num(step.value() * 1e3));
  return tokens(batch) / step;
}

int64_t largest_batch_at_speed(const Deployment& dep, int64_t context, const ServingLevers& levers,
                               TokensPerSecond per_user, int64_t max_batch) {
  if (max_batch < 1) return 0;
  const DecodeLevers lev = resolve_levers(levers, context);
  auto fast_enough = [&](int64_t b) { return decode_step(dep, b, context, lev).tokens_per_s_per_user >= per_user; };
  if (!fast_enough(1)) return 0;
  if (fast_enough(max_batch)) return max_batch;
  int64_t good = 1, bad = max_batch;
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    if (fast_enough(mid)) good = mid;
    else bad = mid;
  }
  return good;
}

EndToEnd end_to_end(const Deployment& dep, int64_t batch, int64_t input_tokens, int64_t output_tokens,
                    const ServingLevers& levers) {
  if (batch < 1) throw InputError("--batch", "must be >= 1, got " + std::to_string(batch));
  if (input_tokens < 1) throw InputError("--input-tokens", "must be >= 1, got " + std::to_string(input_tokens));
  if (output_tokens < 1) throw InputError("--output-tokens", "must be >= 1, got " + std::to_string(output_tokens));
  EndToEnd e;
  e.batch = batch;
  e.input_tokens = input_tokens;
  e.output_tokens = output_tokens;
  e.prefill = prefill_step(dep, batch, input_tokens, 0);
  const int64_t mean_context = input_tokens + output_tokens / 2;
  e.mean_step = decode_step(dep, batch, mean_context, resolve_levers(levers, mean_context));
  e.decode_steps = d(output_tokens) / e.mean_step.tokens_per_sequence;
  e.t_total = e.prefill.t_step + e.mean_step.t_step * e.decode_steps;
  e.output_tokens_per_s = tokens(d(batch) * d(output_tokens)) / e.t_total;
  return e;
}

ModePoint cheapest_decode_point(const Deployment& d, int64_t memory_full_batch, int64_t context, const DecodeLevers& levers) {
  if (memory_full_batch < 1) throw InputError("memory_full_batch", "must be >= 1, got " + std::to_string(memory_full_batch));
  const auto point = [&](int64_t batch) {
    ModePoint p = detail::mode_point(d, batch, context, levers);  // serving_replicas.h
    p.memory_full_batch = memory_full_batch;
    return p;
  };
  ModePoint best = point(memory_full_batch);
  std::vector<int64_t> candidates;
  for (int64_t b = (memory_full_batch - 1) / 8 * 8; b >= 8 && b >= memory_full_batch - 64; b -= 8) candidates.push_back(b);
  int64_t pow2 = 1;
  while (pow2 * 2 < memory_full_batch) pow2 *= 2;
  if (pow2 < memory_full_batch) candidates.push_back(pow2);
  for (const int64_t b : candidates) {
    const ModePoint p = point(b);
    if (p.tokens_per_s_per_chip.value() > best.tokens_per_s_per_chip.value() * (1 + 1e-9)) best = p;
  }
  return best;
}

}  // namespace chalk
