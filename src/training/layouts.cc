// Training layout search (docs/training.md, "Layouts").
#include "chalk/training/layouts.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "chalk/base/error.h"
#include "chalk/training/memory.h"
#include "chalk/training/step.h"
#include "chalk/training/step_split.h"

namespace chalk {
namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i == 0) {
      out.push_back(i);
      if (i != n / i) out.push_back(n / i);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool heads_split(const ModelSpec& m, int64_t tp) {
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    if (a.n_heads % tp != 0) return false;
    if (a.kind == AttentionKind::gqa && a.n_kv_heads % tp != 0 && tp % a.n_kv_heads != 0) return false;
  }
  return true;
}

int64_t training_fewest_experts(const ModelSpec& m) {
  int64_t e = 0;
  for (const auto& g : m.groups) {
    if (g.ffn.kind == FfnKind::moe) e = e == 0 ? g.ffn.n_experts : std::min(e, g.ffn.n_experts);
  }
  return e;
}

}  // namespace

unsigned parse_schedule_set(std::string_view text, const std::string& field) {
  if (text == "all") return kAllSchedules;
  unsigned set = 0;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view name = text.substr(at, comma - at);
    try {
      set |= schedule_bit(parse_schedule(name, field));
    } catch (const InputError&) {
      throw InputError(field, "expected a comma-separated list of gpipe, 1f1b, interleaved, zb-h1, zb-v, dualpipe (or all), got '" +
                                  std::string(name) + "' in '" + std::string(text) + "'");
    }
    at = comma + 1;
  }
  return set;
}

std::string schedule_set_string(unsigned schedules) {
  std::string out;
  for (int si = 0; si < 6; ++si) {
    const auto s = static_cast<PipelineSchedule>(si);
    if ((schedules & schedule_bit(s)) != 0) out += (out.empty() ? "" : ",") + std::string(to_string(s));
  }
  return out;
}

TrainingPlan plan_of(const TrainingCandidate& c, const TrainingQuery& q) {
  TrainingPlan p = q.base;
  p.dp = c.dp;
  p.tp = c.tp;
  p.pp = c.pp;
  p.cp = c.cp;
  p.ep = c.ep;
  p.etp = 1;
  p.sequence_parallel = c.tp > 1;
  p.schedule = c.schedule;
  p.virtual_stages = c.virtual_stages;
  p.microbatch = c.microbatch;
  p.recompute = c.recompute;
  p.zero_stage = c.zero_stage;
  p.global_batch = q.global_batch;
  p.seq_len = q.seq_len;
  return p;
}

TrainingLayouts search_training_layouts(const ModelSpec& m, const SystemSpec& sys, const TrainingQuery& q) {
  if (q.chips < 1) throw InputError("chips", "expected 1 or more chips, got " + std::to_string(q.chips));
  if (q.global_batch < 1) throw InputError("global_batch", "expected 1 or more sequences, got " + std::to_string(q.global_batch));
  const TrainingCosts c = make_training_costs(m, q.seq_len);
  const TrainingSystem s = make_training_system(sys, q.base.compute);
  const int64_t L = c.layers, padded = c.padded_layers;
  const int64_t experts = training_fewest_experts(m);
  std::vector<TrainingCandidate> fitting, too_big;
  TrainingLayouts out;
  TrainingPlan p = q.base;
  p.global_batch = q.global_batch;
  p.seq_len = q.seq_len;
  p.etp = 1;
  auto splits = [&](int64_t parts) { return parts <= padded; };  // evenly or not (place_plan)
  for (int64_t tp : divisors(q.chips)) {
    if (tp > s.domain || !heads_split(m, tp)) continue;
    for (int64_t cp = 1; q.chips % (tp * cp) == 0 && q.seq_len % cp == 0 && (cp == 1 || q.seq_len / cp >= 1024); cp *= 2) {
      for (int64_t pp : divisors(q.chips / (tp * cp))) {
        if (!splits(pp)) continue;
        const int64_t dp = q.chips / (tp * cp * pp);
        if (q.global_batch % dp != 0) continue;
        const int64_t per_replica = q.global_batch / dp;
        std::vector<int64_t> eps{1};
        if (experts > 0) {
          eps.clear();
          for (int64_t e : divisors(experts)) {
            if ((tp * cp * dp) % e == 0) eps.push_back(e);
          }
        }
        for (int64_t ep : eps) {
          // The step's per-layer terms of this split, once for the plans below
          // (prepare_training_step reads none of what the loops below vary).
          p.tp = tp;
          p.cp = cp;
          p.ep = ep;
          p.sequence_parallel = tp > 1;
          const TrainingStepSplit split = prepare_training_step(c, s, p);
          for (int si = 0; si < 6; ++si) {
            const auto sched = static_cast<PipelineSchedule>(si);
            // One stage has no schedule (tried once, as 1F1B); more try the query's set.
            if (pp == 1 ? sched != PipelineSchedule::one_f_one_b : (q.schedules & schedule_bit(sched)) == 0) continue;
            const int64_t v = sched == PipelineSchedule::interleaved ? 2 : 1;
            const int64_t chunks = sched == PipelineSchedule::interleaved || sched == PipelineSchedule::zb_v || sched == PipelineSchedule::dualpipe ? 2 : 1;
            if (!splits(pp * chunks)) continue;
            for (int64_t b = 1; b <= per_replica; b *= 2) {
              if (per_replica % b != 0) continue;
              const int64_t micro = per_replica / b;
              if (sched == PipelineSchedule::interleaved && micro % pp != 0) continue;
              if (sched == PipelineSchedule::dualpipe && (pp % 2 != 0 || micro % 2 != 0 || micro < 2 * pp)) continue;
              p.dp = dp;
              p.pp = pp;
              p.schedule = sched;
              p.virtual_stages = v;
              p.microbatch = b;
              // The placement reads neither the recomputation nor the ZeRO stage: once for
              // the plans below (it builds its description string).
              const Placement pl = place_plan(L, padded, s.domain, p);
              const bool unreachable = (!pl.dp_in_domain || !pl.pp_in_domain || !pl.ep_in_domain || !pl.cp_in_domain) && !s.has_scale_out;
              for (int ri = 0; ri < 3; ++ri) {
                // Under FlashAttention selective recomputation stores and reruns nothing
                // more than none: the same plan, evaluated once.
                if (ri == 1 && q.base.flash_attention) continue;
                for (int z = 0; z <= 3; ++z) {
                  p.recompute = static_cast<Recompute>(ri);
                  p.zero_stage = z;
                  if (unreachable) {
                    ++out.skipped_no_scale_out;
                    continue;
                  }
                  ++out.evaluated;
                  TrainingCandidate cand;
                  cand.dp = static_cast<int32_t>(dp);
                  cand.tp = static_cast<int32_t>(tp);
                  cand.pp = static_cast<int32_t>(pp);
                  cand.cp = static_cast<int32_t>(cp);
                  cand.ep = static_cast<int32_t>(ep);
                  cand.microbatch = static_cast<int32_t>(b);
                  cand.virtual_stages = static_cast<int32_t>(v);
                  cand.schedule = sched;
                  cand.recompute = p.recompute;
                  cand.zero_stage = static_cast<int8_t>(z);
                  const TrainingMemory mem = training_memory(c, s, p, pl);
                  cand.memory_bytes = mem.total.value();
                  cand.capacity_bytes = mem.capacity.value();
                  cand.fits = mem.fits;
                  if (!mem.fits) {
                    too_big.push_back(cand);
                    continue;
                  }
                  const TrainingStep st = training_step(c, s, p, pl, mem, split);
                  cand.t_step_s = st.t_step.value();
                  cand.mfu = st.mfu;
                  fitting.push_back(cand);
                }
              }
            }
          }
        }
      }
    }
  }
  if (out.evaluated == 0 && out.skipped_no_scale_out > 0) {
    // Plans did split heads, layers and the batch; each crossed a scale-up domain on a
    // system without a scale-out network (training_step's own refusal, said up front).
    throw InputError("hardware", sys.name + " states no scale-out bandwidth, and every one of the " +
                                     std::to_string(out.skipped_no_scale_out) + " plans of " + m.name + " on " + std::to_string(q.chips) +
                                     " chips that split heads, layers and the batch crosses scale-up domains of " + std::to_string(s.domain) +
                                     " chips (at most " + std::to_string(s.domain) + " chips train within one domain)");
  }
  if (out.evaluated == 0) {
    throw InputError("chips", "no valid plan of " + m.name + " on " + std::to_string(q.chips) + " chips at a global batch of " +
                                  std::to_string(q.global_batch) + " (degrees must split heads, layers and the batch)");
  }
  out.fit = static_cast<int64_t>(fitting.size());
  // Pareto front: by memory ascending, keep each plan faster than every one before it.
  auto key0 = [](const TrainingCandidate& c) {
    return std::tuple(c.tp, c.pp, c.cp, c.ep, static_cast<int>(c.schedule), c.virtual_stages, static_cast<int>(c.recompute), c.zero_stage,
                      -c.microbatch);
  };
  std::sort(fitting.begin(), fitting.end(), [&](const auto& a, const auto& b) {
    if (a.memory_bytes != b.memory_bytes) return a.memory_bytes < b.memory_bytes;
    if (a.t_step_s != b.t_step_s) return a.t_step_s < b.t_step_s;
    return key0(a) < key0(b);
  });
  double best = INFINITY;
  for (auto& f : fitting) {
    if (f.t_step_s < best) {
      best = f.t_step_s;
      f.pareto = true;
      out.pareto.push_back(f);
    }
  }
  const auto keep = static_cast<size_t>(std::max<int64_t>(0, q.limit));
  // Ties (CP traffic hidden behind attention, say) go to the less memory, then the
  // simpler plan: lower degrees, less recomputation, lower ZeRO stage.
  auto key = [](const TrainingCandidate& c) {
    return std::tuple(c.tp, c.pp, c.cp, c.ep, static_cast<int>(c.schedule), c.virtual_stages, static_cast<int>(c.recompute), c.zero_stage,
                      -c.microbatch);
  };
  auto fastest = [&](const auto& a, const auto& b) {
    if (a.t_step_s != b.t_step_s) return a.t_step_s < b.t_step_s;
    if (a.memory_bytes != b.memory_bytes) return a.memory_bytes < b.memory_bytes;
    return key(a) < key(b);
  };
  // One plan per group of equal step time and memory (within a relative 1e-9): a ZeRO
  // stage or recomputation that changes neither is the same plan (issue 30: DeepSeek-V3's
  // top 8 on 1,024 GB200 were one). In step-time order the first of a group is its
  // simplest (the key above); a group's members lie within one step-time window.
  std::sort(fitting.begin(), fitting.end(), fastest);
  constexpr double kSame = 1e-9;
  auto same = [](double a, double b) { return std::abs(a - b) <= kSame * std::max(std::abs(a), std::abs(b)); };
  // The same layout and microbatch at the same step time under another ZeRO stage or
  // recomputation is folded too, into the one with the least memory (sorted first): it
  // costs memory and buys no time (issue 30 item 8: DeepSeek-V3 on 1,024 GB200 listed
  // every plan twice, as ZeRO-2 and ZeRO-1 at one step time).
  auto same_layout = [](const TrainingCandidate& a, const TrainingCandidate& b) {
    return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep && a.microbatch == b.microbatch &&
           a.virtual_stages == b.virtual_stages && a.schedule == b.schedule;
  };
  size_t window = 0;  // the first kept plan whose step time equals the current one's
  for (const auto& f : fitting) {
    while (window < out.fitting.size() && !same(out.fitting[window].t_step_s, f.t_step_s)) ++window;
    bool folded = false;
    for (size_t i = window; i < out.fitting.size() && !folded; ++i) {
      if (same(out.fitting[i].memory_bytes, f.memory_bytes) || same_layout(out.fitting[i], f)) {
        ++out.fitting[i].equivalents;
        folded = true;
      }
    }
    if (folded) continue;
    // Past the last kept plan's step time nothing more can fold into the kept ones.
    if (out.fitting.size() >= keep) {
      if (out.fitting.empty() || !same(out.fitting.back().t_step_s, f.t_step_s)) break;
      continue;
    }
    out.fitting.push_back(f);
  }
  auto least_over = [&](const auto& a, const auto& b) {
    return a.memory_bytes != b.memory_bytes ? a.memory_bytes < b.memory_bytes : key(a) < key(b);
  };
  const size_t nb = std::min(keep, too_big.size());
  std::partial_sort(too_big.begin(), too_big.begin() + static_cast<long>(nb), too_big.end(), least_over);
  out.too_big.assign(too_big.begin(), too_big.begin() + static_cast<long>(nb));
  return out;
}

}  // namespace chalk
