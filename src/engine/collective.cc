// Alpha-beta collective times (docs/formulas.md, fidelity section).
#include "chalk/base/count_cast.h"
#include "chalk/engine/engine_name.h"
#include "chalk/engine/collective.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "chalk/base/error.h"

namespace chalk {
namespace {

using counts::d;

bool starts_with_tpu(const std::string& s) {
  return s.size() >= 3 && (s[0] == 't' || s[0] == 'T') && (s[1] == 'p' || s[1] == 'P') && (s[2] == 'u' || s[2] == 'U');
}

/// Fastest protocol for a collective with `steps` hops moving `wire_bytes` per rank.
CollectiveTime fastest(double steps, Bytes wire_bytes, const LinkModel& link) {
  CollectiveTime best{Seconds(std::numeric_limits<double>::infinity()), ""};
  for (const auto& p : link.protocols) {
    const Seconds t = p.base_latency + p.step_latency * steps + wire_bytes / (link.bandwidth * p.bandwidth_fraction);
    if (t < best.time) best = {t, p.name};
  }
  return best;
}

}  // namespace

bool is_tpu(const SystemSpec& s) { return starts_with_tpu(s.name) || starts_with_tpu(s.chip.name); }

LinkModel scale_up_link(const SystemSpec& s) {
  LinkModel l;
  // The system's measured large-message fraction where its file states one (MI300X: RCCL's
  // 0.706), else NVLink's 0.8.
  const bool own_fraction = s.collective_efficiency > 0;
  l.bandwidth = s.scale_up_bandwidth_per_direction * (own_fraction ? s.collective_efficiency : kScaleUpAchievedFraction);
  if (is_tpu(s)) {
    l.name = "ICI torus";
    l.torus_dimensions = 3;
    l.protocols = {{"ici", microseconds(5.0), microseconds(1.0), 1.0}};
    l.source = "ICI: 1 us per hop plus 5 us per collective (scaling-book sharding.md: a 3-hop latency-bound all-gather measured 8 us); "
               "bandwidth x 0.8 achieved";
  } else {
    l.name = "scale-up switch (NVLink)";
    l.protocols = {{"ring-LL", microseconds(6.6), microseconds(0.6), kLowLatencyProtocolFraction},
                   {"ring-LL128", microseconds(14.0), microseconds(1.9), 120.0 / 128.0},
                   {"ring-Simple", microseconds(8.4), microseconds(3.4), 1.0}};
    l.source = "NCCL 2.30.7 tuning.cc ring latencies on NVLink; bandwidth x 0.8 achieved (ml-engineering 8xH200/B200 ring busBW); "
               "LL at 0.19 of it (AZURE-NCCL-H100, 1 MB)";
    l.peer_to_peer = s.scale_up_topology == ScaleUpTopology::switched;
  }
  // The figures only: their sources stay in the hardware file (scale_up.collective_*_source).
  if (own_fraction) l.source += fmt::format("; this system's own fraction, {:.3g} (scale_up.collective_efficiency)", s.collective_efficiency);
  if (s.collective_latency) {
    // The measured intercept replaces the bandwidth protocol's fixed time, its ring hops
    // included (the last protocol: Simple, or ICI's one); LL and LL128 keep NCCL's.
    LinkProtocol& bulk = l.protocols.back();
    bulk.base_latency = *s.collective_latency;
    bulk.step_latency = Seconds(0);
    l.source += fmt::format("; {} at {:.3g} us a call, hops included (scale_up.collective_latency_s)", bulk.name, s.collective_latency->value() * 1e6);
  }
  if (s.small_all_reduce) {
    l.all_reduce_floor_s = s.small_all_reduce->value();
    l.source += fmt::format("; all-reduce at {}+ ranks never below {:.3g} us (scale_up.small_all_reduce_s)", kSmallAllReduceRanks,
                            l.all_reduce_floor_s * 1e6);
  }
  l.peak_bandwidth = s.scale_up_bandwidth_per_direction;
  return l;
}

LinkModel scale_out_link(const SystemSpec& s) {
  if (!(s.scale_out_bandwidth_per_direction.value() > 0)) {
    throw InputError(s.name + ": scale_out.gb_per_s_per_direction", "the system states no scale-out network; expected a positive bandwidth");
  }
  LinkModel l;
  l.name = "scale-out network";
  l.bandwidth = s.scale_out_bandwidth_per_direction * kScaleOutAchievedFraction;
  l.protocols = {{"ring-LL", microseconds(6.6), microseconds(2.7), kLowLatencyProtocolFraction},
                 {"ring-LL128", microseconds(14.0), microseconds(4.0), 120.0 / 128.0},
                 {"ring-Simple", microseconds(8.4), microseconds(14.0), 1.0}};
  l.source = "NCCL 2.30.7 tuning.cc network step latencies; NIC x 0.731 achieved (DeepEP LL EP128: 39 GB/s per GPU, 15/16 of it over the 50 GB/s NIC)";
  l.peak_bandwidth = s.scale_out_bandwidth_per_direction;
  return l;
}

CollectiveTime all_reduce(Bytes message, int64_t ranks, const LinkModel& link) {
  detail::check_collective_message(message, "all_reduce");
  if (ranks <= 1) return {Seconds(0), "none"};
  const double n = d(ranks);
  CollectiveTime t = fastest(ring_steps(ranks, 2, link.torus_dimensions), message * (2 * (n - 1) / n), link);
  if (ranks >= kSmallAllReduceRanks && t.time.value() < link.all_reduce_floor_s) t = {Seconds(link.all_reduce_floor_s), "floor"};
  return t;
}

CollectiveTime all_gather(Bytes message, int64_t ranks, const LinkModel& link) {
  detail::check_collective_message(message, "all_gather");
  if (ranks <= 1) return {Seconds(0), "none"};
  const double n = d(ranks);
  return fastest(ring_steps(ranks, 1, link.torus_dimensions), message * ((n - 1) / n), link);
}

CollectiveTime all_to_all(Bytes send_per_rank, int64_t ranks, const LinkModel& link) {
  detail::check_collective_message(send_per_rank, "all_to_all");
  if (ranks <= 1) return {Seconds(0), "none"};
  const double n = d(ranks);
  return fastest(1, send_per_rank * ((n - 1) / n), link);
}

TpAllReduce engine_tp_all_reduce(std::string_view name) {
  constexpr double kKiB = 1024, kMiB = 1024 * 1024;
  const std::string_view engine = engine_family(name);  // "vllm-0.10": vLLM's kernels
  TpAllReduce a;
  a.name = std::string(engine);
  if (engine == "vllm" || engine == "sglang") {
    a.custom = true;
    a.max_bytes = Bytes(8 * kMiB);
    a.ranks = {2, 4, 6, 8};
    a.one_shot_below_4_ranks = Bytes(512 * kKiB);
    a.one_shot_below_8_ranks = Bytes(256 * kKiB);
    a.source = "vLLM custom all-reduce: below 8 MiB (custom_all_reduce.py max_size), TP 2/4/6/8; one-shot at TP2, < 512 KiB at TP<=4, "
               "< 256 KiB at TP<=8, else two-shot (csrc/custom_all_reduce.cuh); NCCL above";
    if (engine == "sglang") a.source += " (SGLang's port: sgl-kernel/csrc/allreduce/custom_all_reduce.cuh, the same REDUCE_CASE thresholds)";
  } else if (engine == "trtllm") {
    a.custom = true;
    a.max_bytes = Bytes(8 * kMiB);
    a.ranks = {2, 4, 8, 16};
    a.one_shot_max_tokens = 128;
    a.fused_norm = true;
    a.source = "TensorRT-LLM all-reduce fused with residual + RMSNorm (allReduceFusionKernels.cu: one-shot at <= 128 tokens, else two-shot; "
               "TP 2/4/8/16); NCCL above 8 MiB (assumed, as vLLM)";
  } else {
    a.name = "nccl";
    a.source = "NCCL ring (no custom all-reduce)";
  }
  return a;
}

CollectiveTime tp_all_reduce(Bytes message, double tokens, int64_t ranks, const LinkModel& link, const TpAllReduce& algo, Seconds stage_latency) {
  detail::check_collective_message(message, "all_reduce");
  if (!(tokens >= 0) || !std::isfinite(tokens)) {
    throw InputError("all_reduce", "tokens must be a finite number >= 0, got " + std::to_string(tokens));
  }
  if (ranks <= 1) return {Seconds(0), "none"};
  const bool supported = std::find(algo.ranks.begin(), algo.ranks.end(), ranks) != algo.ranks.end();
  if (!algo.custom || !supported || !(message < algo.max_bytes)) return all_reduce(message, ranks, link);  // the engine runs NCCL
  const double n = d(ranks);
  if (!link.peer_to_peer || !(link.peak_bandwidth.value() > 0)) {
    // The engine's own kernel, with no measured latency on this link: NCCL's ring prices
    // it, without NCCL's small-message floor (collective.h, tp_all_reduce).
    return fastest(ring_steps(ranks, 2, link.torus_dimensions), message * (2 * (n - 1) / n), link);
  }
  bool one_shot = false;
  if (algo.one_shot_max_tokens > 0) {
    one_shot = tokens <= d(algo.one_shot_max_tokens);
  } else {
    one_shot = ranks == 2 || (ranks <= 4 && message < algo.one_shot_below_4_ranks) || (ranks <= 8 && message < algo.one_shot_below_8_ranks);
  }
  if (!(stage_latency.value() >= 0) || !std::isfinite(stage_latency.value())) {
    throw InputError("allreduce_latency_s", fmt::format("must be a finite number of seconds >= 0, got {:.6g}", stage_latency.value()));
  }
  const Seconds stage = stage_latency;
  if (one_shot) return {stage + message * (n - 1) / (link.peak_bandwidth * kOneShotBandwidthFraction), "one-shot"};
  return {stage * 2.0 + message * (2 * (n - 1) / n) / (link.peak_bandwidth * kTwoShotBandwidthFraction), "two-shot"};
}

namespace detail {

void bad_collective_message(double bytes, const char* what) {
  throw InputError(what, "message must be a finite number of bytes >= 0, got " + std::to_string(bytes));
}

}  // namespace detail

}  // namespace chalk
