// Matmul rate per weight format (matmul_rate.h).
#include "matmul_rate.h"

namespace chalk::detail {

// See matmul_rate.h for both functions.
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

}  // namespace chalk::detail
