// Accelerators and the systems they sit in, as plain data (reference/hardware.md).
// No models here (DESIGN.md section 2).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
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
  Bytes hbm_capacity;             ///< usable HBM per chip
  BytesPerSecond hbm_bandwidth;   ///< peak HBM bandwidth per chip

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

  /// The matmul fraction for `p`, falling back to bf16's when `p` was not measured.
  double matmul_for(MatmulPrecision p) const;
};

/// A memory tier beside HBM (host DDR/LPDDR, local flash), per chip.
struct MemoryTier {
  std::string name;
  Bytes capacity_per_chip;
  BytesPerSecond bandwidth_per_chip;
  std::string source;
};

/// A system: chips in scale-up domains joined by a scale-out network.
struct SystemSpec {
  std::string name;         ///< catalog key, e.g. "h100-sxm"
  std::string description;
  std::string source;       ///< datasheets behind the entry
  std::string date;         ///< date of the newest source
  /// Year the system first shipped to customers (general availability), when the file
  /// states it; `year_source` says where it comes from. Used by `chalk scaleup` to place
  /// scale-up domains in time (lecture 40:32-45:52).
  std::optional<int> year;
  std::string year_source;
  ChipSpec chip;
  Efficiency efficiency;
  int64_t scale_up_domain = 1;                   ///< chips in one NVLink/ICI domain
  BytesPerSecond scale_up_bandwidth_per_direction;   ///< per chip, one direction
  BytesPerSecond scale_out_bandwidth_per_direction;  ///< per chip, one direction (0 = unknown)
  std::optional<UsdPerSecond> price_per_chip;    ///< rental price per chip, if public
  std::string price_source;
  std::vector<MemoryTier> host_tiers;
};

/// Peak FLOPs per byte of HBM bandwidth, F / W (lecture 18:00: "multiplies per second
/// per byte"; H100 bf16: 989.4e12 / 3.35e12 = 295).
FlopsPerByte flops_per_byte(const ChipSpec& c, MatmulPrecision p);

/// Time to read all of HBM once, capacity / bandwidth: the "batching window" (lecture
/// 22:44; Rubin 288 GB / 20 TB/s = 14.4 ms).
Seconds hbm_sweep_time(Bytes capacity, BytesPerSecond bandwidth);

/// Checks positivity and ranges of a system. Throws InputError naming `where`.
void validate(const SystemSpec& s, const std::string& where);

}  // namespace chalk
