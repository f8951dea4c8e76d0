// Matmul rate per weight format (matmul_rate.h).
#include "matmul_rate.h"

#include <algorithm>
#include <string>

#include "chalk/engine/collective.h"
#include "chalk/engine/overhead.h"

namespace chalk::detail {

// See matmul_rate.h for the three functions.
MatmulPrecision class_of(DType f, const ChipSpec& chip) {
  switch (f) {
    case DType::fp8:
      return chip.supports(MatmulPrecision::fp8) ? MatmulPrecision::fp8 : MatmulPrecision::bf16;
    case DType::int8:
    case DType::int4:
      return chip.supports(MatmulPrecision::int8) ? MatmulPrecision::int8 : MatmulPrecision::bf16;
    case DType::nvfp4:
    case DType::mxfp4:
      if (chip.supports(MatmulPrecision::fp4)) return MatmulPrecision::fp4;
      return chip.supports(MatmulPrecision::fp8) ? MatmulPrecision::fp8 : MatmulPrecision::bf16;
    default:
      return MatmulPrecision::bf16;
  }
}

FlopsPerSecond rate_for(const Deployment& dep, DType f) {
  const auto& chip = dep.system.chip;
  auto rate = [&](MatmulPrecision p) {
    const double eff = p == dep.compute ? dep.matmul_efficiency : dep.system.efficiency.matmul_for(p);
    return chip.peak_for(p) * eff;
  };
  return min(rate(class_of(f, chip)), rate(dep.compute));
}

double weight_stream_fraction(const Deployment& dep, DType f) {
  const Calibration& cal = dep.mechanisms.calibration;
  const bool sixteen_bit = f == DType::fp32 || f == DType::bf16 || f == DType::fp16;
  const std::string& engine = dep.mechanisms.tp_all_reduce.name;
  const bool torch_linear = engine == "vllm";  // the engine whose GEMM was measured
  const double fraction = sixteen_bit && torch_linear && !is_tpu(dep.system) ? cal.weight_stream_fraction_16bit : cal.weight_stream_fraction;
  return std::min(dep.hbm_efficiency, fraction);
}

}  // namespace chalk::detail
