// Collective communication times under the alpha-beta model (DESIGN.md section 1.3;
// docs/sources/training-and-systems.md section 5): time = latency terms + bytes over the
// achieved per-direction bandwidth of the link the collective uses. Latency constants
// are NCCL's own (nccl @5067397 src/graph/tuning.cc, section 5.2) for NVLink and
// InfiniBand, and about 1 us per ICI hop (plus 5 us per collective) on TPUs (scaling
// book, sharding.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/base/units.h"

namespace chalk {

/// One protocol a collective library can use on a link (NCCL's LL, LL128, Simple).
struct LinkProtocol {
  std::string name;
  Seconds base_latency;       ///< once per collective
  Seconds step_latency;       ///< per algorithm step (hop)
  double bandwidth_fraction;  ///< of the link's achieved bandwidth this protocol carries
};

/// A link class (scale-up NVLink or ICI, scale-out network) with achieved rates.
struct LinkModel {
  std::string name;
  BytesPerSecond bandwidth;  ///< achieved, per chip, one direction
  /// Dimensions of the torus the ranks form (TPU ICI: 3); 0 = a switch, where a ring
  /// over n ranks takes n - 1 steps.
  int torus_dimensions = 0;
  std::vector<LinkProtocol> protocols;
  std::string source;
  /// Per-direction peak rate of one chip's links (the datasheet figure, before any
  /// achieved fraction): the custom all-reduce kernels' fractions are of this.
  BytesPerSecond peak_bandwidth;
  /// Every chip loads and stores its peers' memory through switches at full rate (NVLink
  /// with NVSwitch, topology `switch`): where the serving engines' custom all-reduce kernels
  /// run with the latency measured for them (kCustomAllReduceStageLatencyUs). False on AMD
  /// Infinity Fabric's full mesh (vLLM's ROCm build runs its custom kernels there too, but no
  /// latency of theirs is measured here, so RCCL's ring prices them), PCIe, TPU ICI and the
  /// scale-out network.
  bool peer_to_peer = false;
  /// The least time one all-reduce takes through the system's collective library at
  /// kSmallAllReduceRanks or more ranks on this link, in seconds (SystemSpec::small_all_reduce,
  /// the scale-up link only); 0 = none stated, the protocols' times alone.
  double all_reduce_floor_s = 0;
};

/// Ranks at which the hardware files' small-message all-reduce floors were measured
/// (nccl-tests/rccl-tests all_reduce_perf on one 8-GPU node). A ring over more ranks takes
/// more steps, so the floor holds as a lower bound there; below 8 ranks no figure is in
/// reach and NCCL's protocol latencies alone price the call.
inline constexpr int64_t kSmallAllReduceRanks = 8;

/// Achieved fractions of link bandwidth (per direction) used by scale_up_link and
/// scale_out_link. Sources: 8 x H200 ring all-reduce busBW 367 GB/s of 450 (0.82) and
/// 8 x B200 682 of 900 (0.76), ml-engineering network/README.md, training-and-systems.md
/// 5.3 -> 0.8; DeepEP low-latency all-to-all at EP128 (16 nodes of 8): 39 GB/s per GPU
/// counting every token-expert copy (DeepEP docs/legacy.md, measurements row
/// DEEPEP-LL-EP128), of which the 15/16 bound for other nodes cross the 50 GB/s NIC and
/// the rest NVLink (the kernels' default allow_nvlink_for_low_latency_mode; its EP8 row,
/// 98 GB/s on one node, is above any NIC): 39 x 15/16 / 50 = 0.731 of the NIC.
inline constexpr double kScaleUpAchievedFraction = 0.8;
inline constexpr double kScaleOutAchievedFraction = 39.0 * 15.0 / 16.0 / 50.0;

/// Fraction of the achieved bandwidth NCCL's LL protocol carries: AZURE-NCCL-H100
/// measures a 1 MB all-reduce on 8 x H100 at 43.7 GB/s busBW, i.e. 2(7/8) x 1048576 B /
/// 43.7 GB/s = 42.0 us; the ring LL latency is 6.6 + 14 x 0.6 = 15.0 us, leaving 27.0 us
/// for 1.835 MB: 68 GB/s = 0.19 of 450 x 0.8 GB/s. (The 16 MB point, 125 us measured, is
/// then LL128's 127.7 us.) NCCL itself picks LL up to about 1 MiB on 8 x H200.
inline constexpr double kLowLatencyProtocolFraction = 0.19;

/// True for Google TPU systems (name or chip starting with "tpu"), whose scale-up
/// network is a torus of ICI links rather than a switch.
bool is_tpu(const SystemSpec& s);

/// The scale-up link of a system: NVLink/Infinity Fabric with NCCL's ring protocols
/// (LL: 6.6 us + 0.6 us per step at kLowLatencyProtocolFraction of the bandwidth; LL128:
/// 14 + 1.9 us, 120 of 128 bytes; Simple: 8.4 + 3.4 us, all of it), or TPU ICI on a 3D
/// torus (1 us per hop plus 5 us per collective: the scaling book measured 8 us for a
/// latency-bound 3-hop all-gather). NVLS (in-switch reduction) is not modelled.
/// Bandwidth = per-direction link rate x the system's SystemSpec::collective_efficiency
/// where its file states one (RCCL on 8 MI300X: 0.706), else kScaleUpAchievedFraction. A
/// stated SystemSpec::collective_latency replaces the bandwidth protocol's fixed time
/// (Simple's 8.4 us + 3.4 us per step; ICI's 5 us + 1 us per hop) with that time per call,
/// no per-step term; LL and LL128 keep NCCL's latencies (docs/formulas.md, "Collective
/// rate per system"). A stated SystemSpec::small_all_reduce becomes the link's
/// all_reduce_floor_s (docs/formulas.md, "Small-message all-reduce floor"). Every scale-up
/// all-reduce, all-gather, reduce-scatter, all-to-all and pipeline send, serving and
/// training, is priced on this link.
LinkModel scale_up_link(const SystemSpec& s);

/// The scale-out network (InfiniBand/RoCE) with NCCL's network step latencies (LL 2.7,
/// LL128 4.0, Simple 14 us). Bandwidth = per-direction NIC rate x
/// kScaleOutAchievedFraction. Throws InputError when the system states no scale-out
/// bandwidth.
LinkModel scale_out_link(const SystemSpec& s);

/// A collective's time and the protocol that gives it.
struct CollectiveTime {
  Seconds time;
  std::string protocol;
};

/// Algorithm steps of a ring collective over `ranks` that moves data `passes` times
/// around the ring (all-reduce 2, all-gather / reduce-scatter 1): passes x (n - 1) on a
/// switch; on a d-dimensional torus the ring runs per dimension, passes x d x (n^(1/d) - 1).
inline double ring_steps(int64_t ranks, int passes, int torus_dimensions) {
  if (ranks <= 1) return 0;
  if (torus_dimensions <= 0) return passes * (static_cast<double>(ranks) - 1);
  const double side = std::pow(static_cast<double>(ranks), 1.0 / torus_dimensions);
  return passes * torus_dimensions * std::max(side - 1, 0.0);
}

/// Ring all-reduce of `message` bytes (the full array) among `ranks`:
/// min over protocols of base + steps x step_latency + 2(n-1)/n x M / (B x fraction)
/// (nccl-tests doc/PERFORMANCE.md; NCCL picks the fastest protocol the same way), and at
/// ranks >= kSmallAllReduceRanks never below link.all_reduce_floor_s (the library's
/// measured small-message time; protocol "floor" where it binds). 0 for ranks <= 1.
/// Throws InputError for a negative message.
CollectiveTime all_reduce(Bytes message, int64_t ranks, const LinkModel& link);

/// Ring all-gather of an array of `message` bytes in total (each rank ends with all of
/// it): base + steps x step_latency + (n-1)/n x M / (B x fraction). Reduce-scatter costs
/// the same.
CollectiveTime all_gather(Bytes message, int64_t ranks, const LinkModel& link);

/// All-to-all on a full-bisection switch where each rank sends `send_per_rank` bytes,
/// split evenly over the ranks: base + one step + (n-1)/n x M / (B x fraction) (the n-1
/// sends proceed in parallel).
CollectiveTime all_to_all(Bytes send_per_rank, int64_t ranks, const LinkModel& link);

/// How a serving engine all-reduces tensor-parallel activations (the output of an
/// attention or FFN block, tokens x d_model x 2 bytes) inside one scale-up domain. Below
/// `max_bytes`, on a peer-to-peer link, at a supported TP degree, the engine runs its own
/// kernel instead of NCCL:
/// - one-shot: every rank reads the whole message from each of its n - 1 peers and sums it
///   locally: one barrier, (n - 1) M bytes into each chip;
/// - two-shot: a reduce-scatter then an all-gather over peer memory: two barriers,
///   2 (n - 1)/n M bytes into each chip.
/// Above `max_bytes`, or where the custom kernel does not run, NCCL's ring (all_reduce).
struct TpAllReduce {
  std::string name;                   ///< "vllm", "sglang", "trtllm" or "nccl"
  bool custom = false;                ///< false: NCCL always
  Bytes max_bytes;                    ///< the custom kernel takes messages strictly below this
  std::vector<int64_t> ranks;         ///< TP degrees the custom kernel supports
  /// One-shot while the message holds at most this many tokens (TensorRT-LLM); 0: by bytes.
  int64_t one_shot_max_tokens = 0;
  /// By bytes (vLLM): one-shot at 2 ranks always; at <= 4 ranks below the first, at <= 8
  /// ranks below the second; two-shot otherwise.
  Bytes one_shot_below_4_ranks, one_shot_below_8_ranks;
  /// The residual add and the RMSNorm after the all-reduce run inside its kernel: one
  /// kernel fewer per all-reduce (TensorRT-LLM's AllReduceFusionOp RESIDUAL_RMS_NORM).
  bool fused_norm = false;
  std::string source;
};

/// Latency of one barrier stage of a custom all-reduce kernel over NVLink, kernel launch
/// inside a CUDA graph included: 6.45 +- 0.46 us, the intercept of a least-squares line
/// through vLLM's one-shot (ca_1stage) times on 4 x H100 at 0.5-4 MiB (vllm-project/vllm
/// PR #24532, benchmark_device_communicators.py, TP 4: 10, 14, 19, 23, 30, 38 us at 0.5,
/// 1, 1.5, 2, 3, 4 MiB). Two-shot's intercept, 12.3 +- 1.1 us on the same rows, is two of
/// them.
inline constexpr double kCustomAllReduceStageLatencyUs = 6.45;
/// Fraction of the peak per-direction link rate that one-shot reads achieve: its slope on
/// the same rows, 7.94 +- 0.20 us per MiB for 3 MiB read per MiB of message, is 396 GB/s
/// = 0.88 +- 0.02 of H100's 450 GB/s.
inline constexpr double kOneShotBandwidthFraction = 0.88;
/// Fraction for two-shot: 7.41 +- 0.48 us per MiB for 1.5 MiB moved per MiB of message,
/// 212 GB/s = 0.47 +- 0.03 of 450 GB/s (same rows).
inline constexpr double kTwoShotBandwidthFraction = 0.47;

/// The tensor-parallel all-reduce of a serving engine:
/// - "vllm" (V1 and V0): custom all-reduce below 8 MiB (CustomAllreduce max_size
///   8192 x 1024, vllm/distributed/device_communicators/custom_all_reduce.py @00d618a) at TP
///   2, 4, 6, 8 over full NVLink; one-shot at TP 2, below 512 KiB at TP <= 4, below 256 KiB
///   at TP <= 8, else two-shot (csrc/custom_all_reduce.cuh @c9eabec, REDUCE_CASE); NCCL
///   above; no norm fusion (the FlashInfer all-reduce + RMSNorm pass is opt-in).
/// - "sglang": the same kernels and thresholds (SGLang's custom_all_reduce is vLLM's port;
///   its FlashInfer all-reduce fusion is opt-in): treated as vllm.
/// - "trtllm": TensorRT-LLM's all-reduce fused with the residual add and RMSNorm
///   (allReduceFusionKernels.cu: one-shot while tokens <= kOneShotMaxToken = 128, else
///   two-shot; TP 2, 4, 8, 16); its NCCL switch-over is taken as vLLM's 8 MiB (assumed).
/// - "nccl" (any other engine): NCCL's ring always.
TpAllReduce engine_tp_all_reduce(std::string_view engine);

/// Time of one tensor-parallel all-reduce of `message` bytes holding `tokens` tokens among
/// `ranks` chips on `link` by `algo`:
/// - one-shot: a + (n - 1) M / (f1 x peak), a = `stage_latency` (default
///   kCustomAllReduceStageLatencyUs; an engine profile's allreduce_latency_s, fitted by
///   `chalk calibrate`, replaces it: Calibration::allreduce_latency), f1 =
///   kOneShotBandwidthFraction;
/// - two-shot: 2a + 2 (n - 1)/n x M / (f2 x peak), f2 = kTwoShotBandwidthFraction;
/// - otherwise NCCL's all_reduce (its own protocol latencies; `stage_latency` unused), with
///   the link's small-message floor where the engine runs NCCL (not `algo.custom`, an
///   unsupported TP degree, a message of `max_bytes` or more); where the engine runs its
///   own kernel on a link without a measured latency for it (not peer_to_peer: vLLM's ROCm
///   build on MI300X), the ring prices it without the floor, which is NCCL's, not the
///   kernel's.
/// The protocol is "one-shot", "two-shot" or NCCL's. 0 for ranks <= 1. Throws InputError
/// for a negative message or negative tokens.
CollectiveTime tp_all_reduce(Bytes message, double tokens, int64_t ranks, const LinkModel& link, const TpAllReduce& algo,
                             Seconds stage_latency = microseconds(kCustomAllReduceStageLatencyUs));

namespace detail {
/// Throws InputError naming `what`: a collective's message must be a finite number of
/// bytes >= 0.
[[noreturn]] void bad_collective_message(double bytes, const char* what);
inline void check_collective_message(Bytes message, const char* what) {
  if (message.value() < 0 || !std::isfinite(message.value())) bad_collective_message(message.value(), what);
}
/// The fastest protocol's time for a collective with `steps` hops moving `wire_bytes` per
/// rank: min over protocols of base + steps x step latency + bytes / (B x fraction).
inline double fastest_protocol_time(double steps, double wire_bytes, const LinkModel& link) {
  double best = std::numeric_limits<double>::infinity();
  const double bw = link.bandwidth.value();
  for (const auto& p : link.protocols) {
    best = std::min(best, p.base_latency.value() + p.step_latency.value() * steps + wire_bytes / (bw * p.bandwidth_fraction));
  }
  return best;
}
}  // namespace detail

/// The times of all_reduce, all_gather and all_to_all without the protocol's name (no
/// string is built): the same numbers, for inner loops such as the training layout search
/// (inline there: issue 13's plan evaluation within 100 ns).
inline Seconds all_reduce_time(Bytes message, int64_t ranks, const LinkModel& link) {
  detail::check_collective_message(message, "all_reduce");
  if (ranks <= 1) return Seconds(0);
  const double n = static_cast<double>(ranks);
  const double t = detail::fastest_protocol_time(ring_steps(ranks, 2, link.torus_dimensions), message.value() * (2 * (n - 1) / n), link);
  return Seconds(ranks >= kSmallAllReduceRanks ? std::max(t, link.all_reduce_floor_s) : t);
}
inline Seconds all_gather_time(Bytes message, int64_t ranks, const LinkModel& link) {
  detail::check_collective_message(message, "all_gather");
  if (ranks <= 1) return Seconds(0);
  const double n = static_cast<double>(ranks);
  return Seconds(detail::fastest_protocol_time(ring_steps(ranks, 1, link.torus_dimensions), message.value() * ((n - 1) / n), link));
}
inline Seconds all_to_all_time(Bytes send_per_rank, int64_t ranks, const LinkModel& link) {
  detail::check_collective_message(send_per_rank, "all_to_all");
  if (ranks <= 1) return Seconds(0);
  const double n = static_cast<double>(ranks);
  return Seconds(detail::fastest_protocol_time(1, send_per_rank.value() * ((n - 1) / n), link));
}

}  // namespace chalk
