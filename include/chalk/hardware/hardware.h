// Accelerators and the systems they sit in, as plain data (docs/sources/hardware.md).
// No models here (DESIGN.md section 2).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/base/dtype.h"
#include "chalk/base/units.h"

namespace chalk {

/// One accelerator (a GPU, a TPU chip, or a Rubin two-die package).
struct ChipSpec {
  std::string name;
  /// Dense peak matmul rate per precision class (indexed by MatmulPrecision); 0 = the
  /// chip has no such rate. Never the 2:4-sparse marketing figure.
  std::array<FlopsPerSecond, 4> peak{};
  Bytes hbm_capacity;             ///< usable HBM per chip (the chip's main memory, whatever its type: memory_type)
  BytesPerSecond hbm_bandwidth;   ///< peak HBM bandwidth per chip
  /// The main memory's type as people should read it: "HBM" (every stacked-DRAM chip), or
  /// "GDDR6" for the L4, L40S and A10G, whose memory the hbm_* fields carry (chalk-hardware/1
  /// chip.memory_type; default "HBM").
  std::string memory_type = "HBM";
  /// Streaming multiprocessors (NVIDIA SMs) that run a GEMM's output tiles side by side,
  /// from the chip's datasheet or whitepaper (chalk-hardware/1 chip.sm_count; docs/sources/
  /// hardware.md: A100 108, H100/H200/H800 SXM 132, B200 148); 0 = not stated, and GEMMs
  /// are priced without wave or tile quantization (engine/gemm_shape.h).
  int64_t sm_count = 0;
  std::string sm_count_source;  ///< where sm_count comes from

  FlopsPerSecond peak_for(MatmulPrecision p) const { return peak[static_cast<int>(p)]; }
  bool supports(MatmulPrecision p) const { return peak_for(p).value() > 0; }
};

/// Achievable fractions of peak, with where each came from.
struct Efficiency {
  /// Fraction of the dense peak a large matmul reaches, per precision (0 = not
  /// measured: falls back to bf16's figure).
  std::array<double, 4> matmul{};
  double hbm = 0;  ///< fraction of peak HBM bandwidth a streaming kernel reaches
  std::string matmul_source;
  std::string hbm_source;
  /// The SM clock this system sustains under dense matmul load, as a fraction in (0, 1] of
  /// the clock at which the `matmul` fractions were measured (chalk-hardware/1
  /// efficiency.sustained_clock; default 1: the MAMF figures, at the chip's rated power, carry its
  /// power-limited clock where their burst ran long enough to throttle). A system run below that
  /// power (an H100 at 500 W) or measured to throttle past its burst (B200: 0.853) states it here:
  /// tensor-core throughput is SM count x FLOP per clock x clock (Klockwood, "peak FLOPS":
  /// 132 SMs x 4 tensor cores x 1024 FLOP/clock x 1.83 GHz = 989.4 TFLOP/s), so every
  /// matmul and attention rate scales with it; HBM runs on its own clock and does not move.
  /// `sustained_clock_source` says where the figure comes from.
  double sustained_clock = 1;
  std::string sustained_clock_source;

  /// The matmul fraction for `p`, falling back to bf16's when `p` was not measured, times
  /// sustained_clock: the fraction of the dense peak a large matmul reaches on this system.
  double matmul_for(MatmulPrecision p) const;
};

/// A memory tier beside HBM (host DDR/LPDDR, local flash), per chip.
struct MemoryTier {
  std::string name;
  Bytes capacity_per_chip;
  BytesPerSecond bandwidth_per_chip;
  std::string source;
  /// The link from this tier to one chip, one direction (chalk-hardware/1
  /// host_tiers[].link_gb_per_s_per_chip; 0 = not stated): PCIe Gen5 x16 on HGX hosts,
  /// NVLink-C2C on Grace. A KV fetch from the tier runs at min(bandwidth_per_chip, this)
  /// (sim/kv_offload.h). `link_source` says where the figure comes from.
  BytesPerSecond link_per_chip{};
  std::string link_source;
};

/// Whether a system's figures describe a shipping product or a vendor announcement
/// (roadmap keynotes: Rubin NVL144 and NVL576 at GTC 2025 / CES 2026).
enum class SystemStatus { shipping, announced };

/// How the chips of one scale-up domain are joined. `switched`: every chip reaches every
/// other through switches at full per-chip bandwidth (NVLink + NVSwitch); `full_mesh`: a
/// direct link to each peer (AMD Infinity Fabric, 8 GPUs); `torus_2d` / `torus_3d`: each chip
/// links to its neighbours only (TPU ICI, Trainium NeuronLink), so the per-chip bandwidth is
/// split over 4 or 6 links; `pcie`: no accelerator link, peers talk over PCIe (L40S).
enum class ScaleUpTopology { switched, full_mesh, torus_2d, torus_3d, pcie };

std::string_view to_string(SystemStatus s);
std::string_view to_string(ScaleUpTopology t);
/// Parses "shipping" or "announced". Throws InputError naming `field` otherwise.
SystemStatus parse_system_status(std::string_view text, const std::string& field);
/// Parses "switch", "full-mesh", "2d-torus", "3d-torus", "pcie". Throws InputError naming
/// `field` otherwise.
ScaleUpTopology parse_scale_up_topology(std::string_view text, const std::string& field);

/// A system: chips in scale-up domains joined by a scale-out network.
struct SystemSpec {
  std::string name;         ///< catalog key, e.g. "h100-sxm"
  std::string description;
  std::string source;       ///< datasheets behind the entry
  std::string date;         ///< date of the newest source
  SystemStatus status = SystemStatus::shipping;  ///< announced: vendor keynote figures, not a datasheet
  /// Year the system first shipped to customers (general availability), when the file
  /// states it; `year_source` says where it comes from. Used by `chalk scaleup` to place
  /// scale-up domains in time (lecture 40:32-45:52).
  std::optional<int> year;
  std::string year_source;
  ChipSpec chip;
  std::string chip_source;  ///< where the peaks and HBM figures come from (empty: see `source`)
  Efficiency efficiency;
  int64_t scale_up_domain = 1;                   ///< chips in one NVLink/ICI domain
  /// Chips (GPUs) under one operating system: one host, one launcher process tree, one
  /// Kubernetes node. 0 = not stated: chips_per_host() assumes an 8-GPU HGX board (or the
  /// domain, when smaller). GB200 NVL72: 4 (a compute tray holds two GB200 superchips, each
  /// 1 Grace + 2 B200; NVIDIA GB200 NVL72 product page: 18 compute trays of 72 GPUs).
  /// `host_chips_source` says where it comes from.
  int64_t host_chips = 0;
  std::string host_chips_source;
  BytesPerSecond scale_up_bandwidth_per_direction;   ///< per chip, one direction
  std::optional<ScaleUpTopology> scale_up_topology;  ///< how the domain is wired, if stated
  /// Torus extent per dimension (TPU v5p 16 x 20 x 28 = 8960); empty when not published.
  /// Its length matches the torus kind and its product is scale_up_domain.
  std::vector<int64_t> scale_up_torus_dims;
  std::string scale_up_source;
  std::string scale_up_name;  ///< the link, as the file names it ("NVLink4", "PCIe Gen4 x16 (no NVLink)")
  /// Fraction of scale_up_bandwidth_per_direction that the collective library's all-reduce
  /// reaches as bus bandwidth at large messages on this system (nccl-tests/rccl-tests busBW
  /// over the per-direction link rate; chalk-hardware/1 scale_up.collective_efficiency, in
  /// (0, 1], with collective_efficiency_source). 0 = not stated: kScaleUpAchievedFraction
  /// (0.8, NVLink rings; engine/collective.h). Every scale-up collective's bandwidth term,
  /// serving and training, uses it (scale_up_link). MI300X: 0.706 (RCCL, 316 of 448 GB/s).
  double collective_efficiency = 0;
  std::string collective_efficiency_source;
  /// Fixed time of one collective call at large messages on this system, the ring's hops
  /// included: the intercept of time = latency + wire bytes / (rate x collective_efficiency)
  /// fitted to the library's large-message all-reduce times (chalk-hardware/1
  /// scale_up.collective_latency_s, in (0, 0.01] s, with collective_latency_source). It
  /// replaces the bandwidth protocol's latency (NCCL Simple: 8.4 us + 3.4 us per ring step;
  /// TPU ICI: 5 us + 1 us per hop); the low-latency protocols keep theirs. Absent: those
  /// defaults. MI300X: 69 us (RCCL 2.22.3, 8 ranks, 8 MB to 8 GB).
  std::optional<Seconds> collective_latency;
  std::string collective_latency_source;
  /// The least time one all-reduce takes through the system's collective library at 8 ranks
  /// inside the domain, at any message size: the floor of NCCL's/RCCL's low-latency (LL)
  /// regime, the minimum over sizes of 1.75 x bytes / busBW in a published
  /// nccl-tests/rccl-tests all_reduce_perf table (chalk-hardware/1
  /// scale_up.small_all_reduce_s, in (0, 0.01] s, with small_all_reduce_source). Every
  /// all-reduce through the library at 8 or more ranks on the scale-up link is priced no
  /// faster than this (scale_up_link; the engines' own one-shot/two-shot kernels are not).
  /// Absent: NCCL's protocol latencies alone (ring LL: 15 us at 8 ranks). A100 SXM4: 41.9 us
  /// (NCCL 2.18.5, 32 KB), where NCCL's LL model gives 15.
  std::optional<Seconds> small_all_reduce;
  std::string small_all_reduce_source;
  BytesPerSecond scale_out_bandwidth_per_direction;  ///< per chip, one direction (0 = unknown)
  std::string scale_out_source;
  std::optional<UsdPerSecond> price_per_chip;    ///< rental price per chip, if public
  std::string price_source;
  /// Board/module power per chip in watts (TDP or TGP from the datasheet), if public.
  std::optional<double> power_w_per_chip;
  std::string power_source;
  std::vector<MemoryTier> host_tiers;
  /// Fixed time of one dependent operation of the step's program on this chip, where its
  /// file states one (data/hardware `op_floor`): a compiled XLA program on a TPU pays it per
  /// fused op (pipeline fill and drain, the op's sync flags) as a GPU pays its kernel floor.
  /// Absent: the GPU kernel floor, Calibration::kernel_floor, applies (engine_step;
  /// docs/formulas.md, "Fixed time per operation").
  std::optional<Seconds> op_floor;
  std::string op_floor_kind;    ///< what one operation is on this chip ("XLA fused op")
  std::string op_floor_source;  ///< where the figure comes from
};

/// Peak FLOPs per byte of HBM bandwidth, F / W (lecture 18:00: "multiplies per second
/// per byte"; H100 bf16: 989.4e12 / 3.35e12 = 295).
FlopsPerByte flops_per_byte(const ChipSpec& c, MatmulPrecision p);

/// Time to read all of HBM once, capacity / bandwidth: the "batching window" (lecture
/// 22:44; Rubin 288 GB / 20 TB/s = 14.4 ms).
Seconds hbm_sweep_time(Bytes capacity, BytesPerSecond bandwidth);

/// The most chips one deployment, replica or layout search may use: 1,048,576 (2^20), the
/// one cap of every command (--chips, --replica-chips, layouts). Far above any built
/// system (xAI Colossus: about 200,000 GPUs) and low enough that chips x any per-chip
/// figure stays finite and exact.
inline constexpr int64_t max_chips = int64_t{1} << 20;

/// Bounds on every number of a system, in the units of the chalk-hardware/1 file
/// (docs/file-formats.md), each more than 100x beyond any chip built (GB300: 15,000 dense
/// fp4 TFLOP/s, 288 GB; Rubin: 20 TB/s; NVLink 5: 900 GB/s per direction). validate()
/// checks each after unit conversion, so a value that overflows (1e308 GB -> inf bytes) or
/// underflows to 0 is an error, never an inf or NaN in a figure.
namespace hardware_limits {
inline constexpr double peak_tflop_per_s_max = 1e7;  ///< dense peak per chip, each precision
inline constexpr double hbm_gb_max = 1e6;            ///< HBM per chip
inline constexpr double hbm_tb_per_s_max = 1e4;      ///< HBM bandwidth per chip
inline constexpr double link_gb_per_s_max = 1e6;     ///< scale-up, scale-out, host tier bandwidth
inline constexpr double host_gb_max = 1e9;           ///< a host memory tier's capacity per chip
inline constexpr double usd_per_chip_hour_max = 1e6; ///< rental price
inline constexpr double power_w_max = 1e6;            ///< board power per chip (GB300: 1,400 W)
inline constexpr int64_t sm_count_max = 100000;      ///< SMs per chip (B200: 148)
inline constexpr double min_positive = 1e-6;         ///< the least positive value of any of them
/// scale_up.collective_latency_s: a fixed time per collective call above 10 ms would be a
/// step's, not a call's (RCCL on 8 MI300X: 69 us).
inline constexpr double collective_latency_s_max = 1e-2;
/// scale_up.small_all_reduce_s: the same bound, for the same reason (A100: 41.9 us).
inline constexpr double small_all_reduce_s_max = 1e-2;
}  // namespace hardware_limits

/// Checks every number of a system once, after unit conversion: finite, within
/// hardware_limits, efficiencies, sustained_clock and scale_up.collective_efficiency (0 = not
/// stated) in (0, 1], scale_up.collective_latency_s in (0, collective_latency_s_max], scale_up.small_all_reduce_s in (0, small_all_reduce_s_max], sm_count in 0..sm_count_max, scale_up.domain_chips in 1..max_chips, torus
/// extents matching the torus kind and multiplying to the domain size.
/// Throws InputError naming `where` and the file's field, the value and the range.
void validate(const SystemSpec& s, const std::string& where);

/// The chips one host holds (issue 30 item 7: launch files split a replica over hosts by
/// it): SystemSpec::host_chips when stated, else min(scale-up domain, 8), the HGX board.
inline int64_t chips_per_host(const SystemSpec& s) {
  return s.host_chips > 0 ? s.host_chips : std::min<int64_t>(std::max<int64_t>(s.scale_up_domain, 1), 8);
}

}  // namespace chalk
