// The points the latency-cost frontier and the fast and slow modes are read from (a replica
// at a batch, alone or as a pipeline) and the searches over them: the cheapest point at a
// speed, the fastest at a cost, each replica at the batch that fills its HBM
// (docs/formulas.md, section "serving"; declared in serving_replicas.h).
#include <optional>
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/serving/cheapest_batch.h"
#include "chalk/serving/serving.h"
#include "serving_replicas.h"

namespace chalk::detail {
namespace {

std::string point_layout(const Deployment& dep) { return dep.mechanisms.enabled ? dep.mechanisms.layout.description : std::string(); }

}  // namespace

bool clearly_more(double a, double b) { return a > b * (1 + kTie); }

FrontierPoint make_point(const Deployment& dep, const DecodeStep& s, bool memory_full) {
  FrontierPoint p;
  p.n_chips = dep.n_chips;
  p.layout = point_layout(dep);
  p.batch = s.batch;
  p.memory_full = memory_full;
  p.t_compute = s.t_compute;
  p.t_weights = s.t_weights;
  p.t_kv = s.t_kv;
  p.t_comm = s.t_comm;
  p.t_overhead = s.t_overhead;
  p.t_host = s.t_host;
  p.t_step = s.t_step;
  p.bound = s.bound;
  p.tokens_per_s_per_user = s.tokens_per_s_per_user;
  p.tokens_per_s_per_chip = s.tokens_per_s_per_chip;
  p.cost_per_token = s.cost_per_token;
  p.microbatch = s.batch;
  p.t_stage = s.t_step;
  p.t_pass = s.t_step;
  return p;
}

/// A point of a pipelined replica whose busiest stage is `stage` (FrontierOptions::
/// pipeline_stages): pipeline_decode's cycle, speed and cost; the terms of its stage step.
FrontierPoint pipeline_point(const Deployment& stage, int64_t stages, int64_t batch, int64_t context, bool memory_full) {
  PipelineShape shape;
  shape.stages = stages;
  shape.microbatches = stages;  // every stage busy (the lecture; pipeline_cli's default)
  const PipelineDecode r = pipeline_decode(stage, shape, batch, context);
  FrontierPoint p = make_point(stage, r.stage, memory_full);
  p.n_chips = stages * stage.n_chips;
  p.layout = stage.mechanisms.enabled ? "PP" + std::to_string(stages) + " x (" + stage.mechanisms.layout.description + ")" : "PP" + std::to_string(stages);
  p.batch = batch;
  p.t_step = r.cycle;
  p.tokens_per_s_per_user = r.tokens_per_s_per_user;
  p.tokens_per_s_per_chip = r.tokens_per_s_per_chip;
  p.cost_per_token = r.cost_per_token;
  p.pp = r.stages;
  p.microbatches = r.microbatches;
  p.microbatch = r.microbatch;
  p.t_stage = r.stage.t_step;
  p.t_hop = r.t_hop;
  p.t_pass = r.t_pass;
  p.stage_busy = r.stage_busy;
  return p;
}

/// A mode point of replica `r` at `batch`: mode_point, or for a pipeline (r.stages > 1)
/// pipeline_point's figures with the stage's step terms and the cycle as its t_step.
ModePoint replica_point(const Replica& r, int64_t batch, int64_t context, const DecodeLevers& lev) {
  if (r.stages <= 1) return mode_point(r.dep, batch, context, lev);
  const FrontierPoint f = pipeline_point(r.dep, r.stages, batch, context, false);
  ModePoint p;
  p.n_chips = f.n_chips;
  p.layout = f.layout;
  p.batch = batch;
  p.step = decode_step(r.dep, f.microbatch, context);
  p.step.t_step = f.t_step;  // the cycle a user waits between tokens
  p.step.batch = batch;
  p.step.tokens_per_s_per_user = f.tokens_per_s_per_user;
  p.step.tokens_per_s_per_chip = f.tokens_per_s_per_chip;
  p.step.cost_per_token = f.cost_per_token;
  p.tokens_per_s_per_user = f.tokens_per_s_per_user;
  p.tokens_per_s_per_chip = f.tokens_per_s_per_chip;
  p.cost_per_token = f.cost_per_token;
  p.pp = f.pp;
  return p;
}

/// Better for a speed target: more tokens/s per chip, then faster.
bool cheaper(const ModePoint& a, const ModePoint& b) {
  const double x = a.tokens_per_s_per_chip.value(), y = b.tokens_per_s_per_chip.value();
  if (clearly_more(x, y) || clearly_more(y, x)) return x > y;
  return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
}
bool faster(const ModePoint& a, const ModePoint& b) {
  const double x = a.tokens_per_s_per_user.value(), y = b.tokens_per_s_per_user.value();
  if (clearly_more(x, y) || clearly_more(y, x)) return x > y;
  return a.tokens_per_s_per_chip > b.tokens_per_s_per_chip;
}

/// The cheapest point at least `per_user` fast, over every replica; empty if none.
std::optional<ModePoint> cheapest_at_speed(const std::vector<Replica>& reps, int64_t context, const ServingLevers& levers,
                                           const DecodeLevers& lev, TokensPerSecond per_user) {
  std::optional<ModePoint> best;
  for (const auto& r : reps) {
    int64_t b = 0;
    if (r.stages <= 1) {
      b = largest_batch_at_speed(r.dep, context, levers, per_user, r.max_batch);
    } else {  // the same bisection on the pipeline's cycle (speed per user falls with batch)
      auto fast_enough = [&](int64_t x) { return replica_point(r, x, context, lev).tokens_per_s_per_user >= per_user; };
      if (fast_enough(1)) {
        int64_t good = 1, bad = r.max_batch + 1;
        if (fast_enough(r.max_batch)) good = r.max_batch;
        while (bad - good > 1) {
          const int64_t mid = good + (bad - good) / 2;
          (fast_enough(mid) ? good : bad) = mid;
        }
        b = good;
      }
    }
    if (b < 1) continue;
    ModePoint p = replica_point(r, b, context, lev);
    if (!best || cheaper(p, *best)) best = p;
  }
  return best;
}

/// The fastest point with tokens/s per chip >= `per_chip` (cost <= budget), over every
/// replica; empty if none. Tokens/s per chip does not fall with batch: bisect for the
/// smallest batch that meets it.
std::optional<ModePoint> fastest_at_cost(const std::vector<Replica>& reps, int64_t context, const DecodeLevers& lev,
                                         TokensPerSecond per_chip) {
  std::optional<ModePoint> best;
  for (const auto& r : reps) {
    auto ok = [&](int64_t b) { return replica_point(r, b, context, lev).tokens_per_s_per_chip >= per_chip; };
    if (!ok(r.max_batch)) continue;
    int64_t good = r.max_batch;
    if (ok(1)) {
      good = 1;
    } else {
      int64_t bad = 1;
      while (good - bad > 1) {
        const int64_t mid = bad + (good - bad) / 2;
        if (ok(mid)) good = mid;
        else bad = mid;
      }
    }
    ModePoint p = replica_point(r, good, context, lev);
    if (!best || faster(p, *best)) best = p;
  }
  return best;
}

/// Each replica at its cheapest batch up to the one that fills its HBM at `context`
/// (cheapest_decode_point: cost per token falls with batch except where the engine pads a
/// batch up to its next CUDA-graph size).
std::vector<ModePoint> memory_full_points(const std::vector<Replica>& reps, int64_t context, const DecodeLevers& lev) {
  std::vector<ModePoint> out;
  out.reserve(reps.size());
  for (const auto& rep : reps) {
    // A pipeline at the batch its stages' HBM holds (CUDA-graph padding is a stage's detail).
    out.push_back(rep.stages > 1 ? replica_point(rep, rep.max_batch, context, lev) : cheapest_decode_point(rep.dep, rep.max_batch, context, lev));
  }
  return out;
}

/// The index of the cheapest of `points` (cheaper(): tokens/s per chip, ties to the
/// faster); the first of equals. `points` is not empty.
size_t cheapest_of(const std::vector<ModePoint>& points, int64_t skip_chips) {
  size_t best = points.size();
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].n_chips == skip_chips) continue;
    if (best == points.size() || cheaper(points[i], points[best])) best = i;
  }
  return best;
}

int64_t checked_stages(int64_t stages, const ServingLevers& levers) {
  if (stages < 1) throw InputError("--pp", "must be >= 1 stage, got " + std::to_string(stages));
  if (stages > 1 && (levers.draft_tokens > 0 || levers.sparse != SparseAttention::dense)) {
    throw InputError("--pp", std::to_string(stages) + " stages: speculative drafting and sparse attention are priced without a pipeline; "
                             "give --pp 1 with them");
  }
  return stages;
}

}  // namespace chalk::detail
