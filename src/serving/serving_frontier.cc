// The latency-cost frontier over batch and chips per replica, and the fast- and
// slow-mode answers read off it (docs/formulas.md, section "serving").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <set>

#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/model/moe.h"
#include "chalk/serving/serving.h"
#include "chalk/serving/cheapest_batch.h"
#include "serving_replicas.h"

namespace chalk {
namespace {

using detail::Replica;
using detail::replica_sizes;
using detail::resolve_replicas;
using detail::mode_point;
using detail::make_point;
using detail::pipeline_point;
using detail::replica_point;
using detail::cheaper;
using detail::clearly_more;
using detail::faster;
using detail::cheapest_at_speed;
using detail::fastest_at_cost;
using detail::memory_full_points;
using detail::cheapest_of;

using counts::d;

constexpr int64_t kMaxCandidates = 8'000'000;

std::string fmt1(double v, const char* f = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ms(Seconds t) { return fmt1(to_ms(t), "%.3g") + " ms"; }

std::string explain_fastest(const ModePoint& f, const SystemSpec& s, const std::vector<ExcludedReplica>& excluded,
                            int64_t largest_tried) {
  const DecodeStep& st = f.step;
  std::string w;
  w += "Batch 1 on " + std::to_string(f.n_chips) + " chip(s) (the scale-up domain holds " +
       std::to_string(s.scale_up_domain) + "): T_step " + ms(st.t_step) + " = ";
  if (st.t_comm.value() > 0 || st.t_overhead.value() > 0) {
    w += "operations " + ms(st.t_operations) + " (T_compute " + ms(st.t_compute) + ", T_weights " + ms(st.t_weights) + ", T_kv " +
         ms(st.t_kv) + ") + T_comm " + ms(st.t_comm) + " + T_overhead " + ms(st.t_overhead);
  } else {
    w += "max(T_compute " + ms(st.t_compute) + ", T_weights " + ms(st.t_weights) + " + T_kv " + ms(st.t_kv) + ")";
  }
  if (st.governs == "overhead") {
    w += ". At batch 1 the largest share is the kernel launch floor: every dependent kernel costs a fixed time however "
         "many chips share it, so more money does not buy it down; fewer, fused kernels would.";
  } else if (st.governs == "communication") {
    w += ". At batch 1 the largest share is communication: the collectives' fixed latencies grow with the chips, so "
         "more chips stop paying well before the weights are spread thin.";
  } else {
    w += ". At batch 1 the step is bound by " + std::string(to_string(st.bound)) +
         ": every step each chip must read its share of the weights, so more money buys speed only by adding chips, "
         "and T_weights falls as 1/n only while the chips share the work evenly.";
  }
  if (st.experts_touched > 0) {
    w += " Mixture of experts: one token touches " + fmt1(st.experts_touched, "%.3g") +
         " experts per layer, and the busiest chip reads " + fmt1(st.experts_on_busiest_chip, "%.3g") +
         " of them, against a mean of " + fmt1(st.experts_touched / d(f.n_chips), "%.3g") +
         " per chip: beyond a few chips per expert touched, extra chips sit idle while the busiest one reads.";
  }
  if (largest_tried >= s.scale_up_domain) {
    w += " A replica larger than the scale-up domain would carry its all-to-all or all-reduce over the scale-out "
         "network, about 8x slower (lecture 36:27-39:34), so the frontier stops at " +
         std::to_string(s.scale_up_domain) + " chips.";
  }
  if (st.t_comm.value() <= 0 && st.t_overhead.value() <= 0) {
    w += " Communication and per-step launch latency are not in the step (T_comm = T_overhead = 0), so this speed "
         "is an upper bound: measured batch-1 decode is several times slower (TRT-LLM DeepSeek-R1 on 8 B200: "
         "111 tok/s per user).";
  }
  if (!excluded.empty()) {
    w += " Replicas of " + std::to_string(excluded.front().n_chips) + ".." + std::to_string(excluded.back().n_chips) +
         " chips were excluded (" + excluded.front().reason + ").";
  }
  return w;
}

/// The one error of frontier, modes and plot when no replica size holds the model: the
/// last size's reason (the widest tried), and the option that widens the search.
InputError no_replica_fits(const ModelSpec& m, const SystemSpec& s, int64_t context, const std::vector<ExcludedReplica>& excluded) {
  return InputError("--replica-chips", "no replica size fits " + m.name + " at " + std::to_string(context) + " tokens of context on " +
                                           s.name + (excluded.empty() ? std::string() : " (" + std::to_string(excluded.back().n_chips) + " chips: " +
                                                                                         excluded.back().reason + ")") +
                                           "; expected sizes that hold it: state wider replicas with --replica-chips");
}

}  // namespace

namespace detail {

ModePoint mode_point(const Deployment& dep, int64_t batch, int64_t context, const DecodeLevers& lev) {
  ModePoint p;
  p.n_chips = dep.n_chips;
  p.layout = dep.mechanisms.enabled ? dep.mechanisms.layout.description : std::string();
  p.batch = batch;
  p.step = decode_step(dep, batch, context, lev);
  p.tokens_per_s_per_user = p.step.tokens_per_s_per_user;
  p.tokens_per_s_per_chip = p.step.tokens_per_s_per_chip;
  p.cost_per_token = p.step.cost_per_token;
  return p;
}

}  // namespace detail

Frontier latency_cost_frontier(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                               const FrontierOptions& o) {
  if (o.context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(o.context));
  validate(o.levers);
  std::vector<int64_t> batches = o.batches.empty() ? powers_of_two(1, 65536) : o.batches;
  for (int64_t b : batches) {
    if (b < 1) throw InputError("--batch", "must be >= 1, got " + std::to_string(b));
  }
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  const int64_t stages = detail::checked_stages(o.pipeline_stages, o.levers);
  // A pipeline's replicas are its stages: the model cut into `stages`, each size per stage.
  const ModelSpec stage_model = stages > 1 ? pipeline_stage_model(m, stages) : ModelSpec{};
  const ModelSpec& mm = stages > 1 ? stage_model : m;
  const std::vector<int64_t> sizes = replica_sizes(mm, s, o.replica_chips);
  if (static_cast<double>(batches.size()) * static_cast<double>(sizes.size()) * (base.mechanisms.enabled ? 2 : 1) > kMaxCandidates) {
    throw InputError("--batch", std::to_string(batches.size()) + " batches x " + std::to_string(sizes.size()) +
                                    " replica sizes is more than 8,000,000 points; narrow --batch or --replica-chips");
  }
  Frontier f;
  f.context = o.context;
  const DecodeLevers lev = resolve_levers(o.levers, o.context);
  // A stage's memory at `batch` holds the KV of every sequence in flight over its layers
  // (pipeline_decode's stage_memory), so a stage's memory-full batch is the pipeline's.
  const std::vector<Replica> reps = resolve_replicas(mm, s, base, sizes, o.context, int64_t{1} << 24, f.excluded);
  // No size fits: the error modes and plot give for the same input, not an empty table.
  if (reps.empty()) throw no_replica_fits(mm, s, o.context, f.excluded);
  if (stages > 1) {  // every chip of the pipeline, as the points count them; the reason is a stage's
    for (auto& e : f.excluded) {
      e.reason = "each of " + std::to_string(stages) + " stages on " + std::to_string(e.n_chips) + " chips: " + e.reason;
      e.n_chips *= stages;
    }
  }
  auto point = [&](const Replica& r, int64_t b, bool full) {
    return stages > 1 ? pipeline_point(r.dep, stages, b, o.context, full) : make_point(r.dep, decode_step(r.dep, b, o.context, lev), full);
  };
  f.points.reserve(reps.size() * (batches.size() + 1));
  for (const auto& r : reps) {
    f.has_price = f.has_price || r.dep.price_per_chip.has_value();
    for (int64_t b : batches) {
      if (b > r.max_batch) {
        ++f.points_beyond_memory;
        continue;
      }
      f.points.push_back(point(r, b, b == r.max_batch));
    }
    if (o.add_memory_full_batch && !std::binary_search(batches.begin(), batches.end(), r.max_batch)) {
      f.points.push_back(point(r, r.max_batch, true));
    }
  }
  // Pareto sweep: fastest first; a point joins when it is cheaper (more tokens/s per
  // chip, beyond rounding) than every faster point.
  std::vector<size_t> order(f.points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& pa = f.points[a];
    const auto& pb = f.points[b];
    if (pa.tokens_per_s_per_user != pb.tokens_per_s_per_user) return pa.tokens_per_s_per_user > pb.tokens_per_s_per_user;
    if (pa.tokens_per_s_per_chip != pb.tokens_per_s_per_chip) return pa.tokens_per_s_per_chip > pb.tokens_per_s_per_chip;
    if (pa.n_chips != pb.n_chips) return pa.n_chips < pb.n_chips;
    return pa.batch < pb.batch;
  });
  double best = -1;
  for (size_t i : order) {
    auto& p = f.points[i];
    if (best < 0 || clearly_more(p.tokens_per_s_per_chip.value(), best)) {
      p.on_frontier = true;
      best = p.tokens_per_s_per_chip.value();
      f.frontier.push_back(p);
    }
  }
  std::reverse(f.frontier.begin(), f.frontier.end());
  return f;
}

ModesReport fast_and_slow_modes(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                const ModesOptions& o) {
  if (o.context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(o.context));
  validate(o.levers);
  for (double x : o.speed_multiples) {
    if (!(x > 0) || !std::isfinite(x)) throw InputError("--speed-multiple", "must be positive, got " + fmt1(x, "%g"));
  }
  for (double x : o.price_multiples) {
    if (!(x > 0) || !std::isfinite(x)) throw InputError("--price-multiple", "must be positive, got " + fmt1(x, "%g"));
  }
  if (o.baseline_tokens_per_s_per_user &&
      (!(*o.baseline_tokens_per_s_per_user > 0) || !std::isfinite(*o.baseline_tokens_per_s_per_user))) {
    throw InputError("--baseline-tok-per-s-per-user", "must be positive, got " + fmt1(*o.baseline_tokens_per_s_per_user, "%g"));
  }
  if (!(o.baseline_cost_tolerance >= 0 && o.baseline_cost_tolerance < 1)) {
    throw InputError("--baseline-cost-tolerance", "must be a fraction in [0, 1), got " + fmt1(o.baseline_cost_tolerance, "%g"));
  }
  if (o.max_batch < 1) throw InputError("--max-batch", "must be >= 1, got " + std::to_string(o.max_batch));
  ModesReport r;
  r.context = o.context;
  const int64_t stages = detail::checked_stages(o.pipeline_stages, o.levers);
  const ModelSpec stage_model = stages > 1 ? pipeline_stage_model(m, stages) : ModelSpec{};
  const ModelSpec& mm = stages > 1 ? stage_model : m;
  const std::vector<int64_t> sizes = replica_sizes(mm, s, o.replica_chips);
  std::vector<Replica> reps = resolve_replicas(mm, s, base, sizes, o.context, o.max_batch, r.excluded);
  if (reps.empty()) throw no_replica_fits(mm, s, o.context, r.excluded);
  for (auto& rep : reps) rep.stages = stages;
  if (stages > 1) {
    for (auto& e : r.excluded) {
      e.reason = "each of " + std::to_string(stages) + " stages on " + std::to_string(e.n_chips) + " chips: " + e.reason;
      e.n_chips *= stages;
    }
  }
  r.has_price = reps.front().dep.price_per_chip.has_value();
  const DecodeLevers lev = resolve_levers(o.levers, o.context);

  // The cost floor within HBM: each replica at the batch that fills it.
  const std::vector<ModePoint> floors = memory_full_points(reps, o.context, lev);
  const size_t cheapest_at = cheapest_of(floors);
  r.cheapest = floors[cheapest_at];
  const Replica* cheapest_rep = &reps[cheapest_at];
  // The fastest point: batch 1 on each replica.
  for (size_t i = 0; i < reps.size(); ++i) {
    // A pipeline's fastest batch is one sequence per stage: they ride the same pass as one
    // sequence alone, at `stages` times the tokens per chip.
    ModePoint p = replica_point(reps[i], std::min<int64_t>(stages, reps[i].max_batch), o.context, lev);
    if (i == 0 || faster(p, r.fastest)) r.fastest = p;
  }
  if (o.baseline_tokens_per_s_per_user) {
    const TokensPerSecond target(*o.baseline_tokens_per_s_per_user);
    auto b = cheapest_at_speed(reps, o.context, o.levers, lev, target);
    if (!b) {
      throw InputError("--baseline-tok-per-s-per-user",
                       "no point reaches " + fmt1(target.value(), "%g") + " tok/s per user; the fastest is " +
                           fmt1(r.fastest.tokens_per_s_per_user.value(), "%.4g") + " (batch 1 on " +
                           std::to_string(r.fastest.n_chips) + " chips)");
    }
    r.baseline = *b;
    r.baseline_rule = "the cheapest point at least " + fmt1(target.value(), "%g") + " tok/s per user";
  } else {
    const double tol = o.baseline_cost_tolerance;
    const TokensPerSecond near_floor(r.cheapest.tokens_per_s_per_chip.value() / (1 + tol));
    auto b = fastest_at_cost(reps, o.context, lev, near_floor);
    r.baseline = b ? *b : r.cheapest;
    r.baseline_rule = "the fastest point within " + fmt1(100 * tol, "%g") +
                      "% of the cost floor within HBM (the floor: the cheapest replica at its cheapest batch within HBM)";
  }
  const double s0 = r.baseline.tokens_per_s_per_user.value();
  const double c0 = r.baseline.tokens_per_s_per_chip.value();  // cost multiple = c0 / per_chip

  for (double mult : o.speed_multiples) {
    PriceForSpeed q;
    q.speed_multiple = mult;
    q.point = cheapest_at_speed(reps, o.context, o.levers, lev, TokensPerSecond(mult * s0));
    if (q.point) q.price_multiple = c0 / q.point->tokens_per_s_per_chip.value();
    r.fast.push_back(q);
  }
  for (double mult : o.price_multiples) {
    SpeedForPrice q;
    q.price_multiple = mult;
    const TokensPerSecond floor_per_chip(c0 / mult);
    auto p = fastest_at_cost(reps, o.context, lev, floor_per_chip);
    // Every budget >= the cheapest point's cost has an answer; a smaller one is answered
    // with the cheapest point.
    q.point = p ? *p : r.cheapest;
    q.below_floor = !p.has_value();
    q.speed_multiple = q.point.tokens_per_s_per_user.value() / s0;
    q.price_multiple_used = c0 / q.point.tokens_per_s_per_chip.value();
    q.capped_by_fastest = r.fastest.tokens_per_s_per_chip >= floor_per_chip;
    r.budget.push_back(q);
  }
  r.max_speed_multiple = r.fastest.tokens_per_s_per_user.value() / s0;
  r.price_multiple_at_fastest = c0 / r.fastest.tokens_per_s_per_chip.value();
  if (stages > 1) {
    // The stage's own step, as explained for one replica, then the pass through every stage.
    ModePoint stage_view = r.fastest;
    stage_view.n_chips = r.fastest.n_chips / stages;
    stage_view.step.t_step = stage_view.step.t_operations + stage_view.step.t_comm + stage_view.step.t_overhead;
    for (const auto& rep : reps) {
      if (rep.dep.n_chips == stage_view.n_chips && rep.dep.mechanisms.layout.description + ")" ==
                                                       r.fastest.layout.substr(r.fastest.layout.find('(') + 1)) {
        stage_view.step = decode_step(rep.dep, 1, o.context, lev);
      }
    }
    r.what_stops_it = "Each of " + std::to_string(stages) + " pipeline stages: " + explain_fastest(stage_view, s, {}, sizes.back()) +
                      " A token passes every stage in turn, so a user waits " + std::to_string(stages) + " stage steps of " +
                      ms(stage_view.step.t_step) + " and the sends between them: " + ms(r.fastest.step.t_step) +
                      " (lecture 1:16:47); more stages hold a larger model, never a faster token.";
  } else {
    r.what_stops_it = explain_fastest(r.fastest, s, r.excluded, sizes.back());
  }

  // The floor of the hyperbola on the cheapest replica: the slope of T_step in B, per token
  // kept. (At B = 1 with mechanisms one data-parallel rank holds the whole sequence, so
  // T(1) is not the per-sequence term.)
  // Measured between two batches far past any that fits, so the bounded terms cancel.
  // A pipeline's: the slope of its cycle in the batch over every stage's chips.
  const int64_t far = (cheapest_rep->dep.n_chips * stages) << 16;
  const ModePoint at_far = replica_point(*cheapest_rep, far, o.context, lev);
  const Seconds per_seq = (replica_point(*cheapest_rep, 2 * far, o.context, lev).step.t_step - at_far.step.t_step) / d(far);
  r.asymptotic_tokens_per_s_per_chip = tokens(at_far.step.tokens_per_sequence) / per_seq / d(at_far.n_chips);
  if (cheapest_rep->dep.price_per_chip) {
    r.asymptotic_cost_per_token = *cheapest_rep->dep.price_per_chip / r.asymptotic_tokens_per_s_per_chip;
  }
  r.floor_gap = r.asymptotic_tokens_per_s_per_chip.value() / r.cheapest.tokens_per_s_per_chip.value();
  r.slow_price_multiple = c0 / r.cheapest.tokens_per_s_per_chip.value();
  r.slow_speed_multiple = r.cheapest.tokens_per_s_per_user.value() / s0;
  return r;
}

ReplicaChoice cheapest_replica(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context,
                               const ServingLevers& levers) {
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  validate(levers);
  ReplicaChoice c;
  c.replica_sizes = replica_sizes(m, s, {});
  const std::vector<Replica> reps = resolve_replicas(m, s, base, c.replica_sizes, context, int64_t{1} << 24, c.excluded);
  if (reps.empty()) throw no_replica_fits(m, s, context, c.excluded);
  const DecodeLevers lev = resolve_levers(levers, context);
  const std::vector<ModePoint> floors = memory_full_points(reps, context, lev);
  const size_t at = cheapest_of(floors);
  c.choice = floors[at];
  c.deployment = reps[at].dep;
  const size_t second = cheapest_of(floors, c.choice.n_chips);
  if (second < floors.size()) c.runner_up = floors[second];
  return c;
}

}  // namespace chalk
