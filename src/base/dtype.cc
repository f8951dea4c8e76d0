#include "chalk/base/dtype.h"

#include "chalk/base/error.h"

namespace chalk {

double bits_per_element(DType d) {
  switch (d) {
    case DType::fp32: return 32.0;
    case DType::bf16: return 16.0;
    case DType::fp16: return 16.0;
    case DType::fp8: return 8.0;
    case DType::int8: return 8.0;
    case DType::mxfp4: return 4.25;
    case DType::nvfp4: return 4.5;
    case DType::int4: return 4.125;
  }
  return 16.0;
}

MatmulPrecision matmul_precision(DType d, const std::string& field) {
  switch (d) {
    case DType::bf16:
    case DType::fp16: return MatmulPrecision::bf16;
    case DType::fp8: return MatmulPrecision::fp8;
    case DType::int8:
    case DType::int4: return MatmulPrecision::int8;
    case DType::mxfp4:
    case DType::nvfp4: return MatmulPrecision::fp4;
    case DType::fp32: break;
  }
  throw InputError(field, "fp32 has no dense tensor-core peak in chalk; expected bf16, fp16, fp8, int8 or fp4");
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp8: return "fp8";
    case DType::int8: return "int8";
    case DType::mxfp4: return "mxfp4";
    case DType::nvfp4: return "nvfp4";
    case DType::int4: return "int4";
  }
  return "?";
}

std::string_view to_string(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::bf16: return "bf16";
    case MatmulPrecision::fp8: return "fp8";
    case MatmulPrecision::int8: return "int8";
    case MatmulPrecision::fp4: return "fp4";
  }
  return "?";
}

DType parse_dtype(std::string_view t, const std::string& field) {
  if (t == "fp32" || t == "float32") return DType::fp32;
  if (t == "bf16" || t == "bfloat16") return DType::bf16;
  if (t == "fp16" || t == "float16") return DType::fp16;
  if (t == "fp8" || t == "fp8_e4m3" || t == "e4m3" || t == "float8") return DType::fp8;
  if (t == "int8") return DType::int8;
  if (t == "mxfp4") return DType::mxfp4;
  if (t == "nvfp4" || t == "fp4") return DType::nvfp4;
  if (t == "int4") return DType::int4;
  throw InputError(field, "unknown dtype '" + std::string(t) +
                              "'; expected one of fp32, bf16, fp16, fp8, int8, mxfp4, nvfp4 (fp4), int4");
}

MatmulPrecision parse_matmul_precision(std::string_view t, const std::string& field) {
  // The rate class of a format's tensor-core GEMMs: the block-scaled formats run at their
  // element type's rate (MXFP8 at FP8's, NVFP4 and MXFP4 at FP4's: NVIDIA Blackwell
  // datasheet; OCP Microscaling spec v1.0), so a training row or flag may name either.
  if (t == "bf16" || t == "fp16" || t == "bfloat16" || t == "float16") return MatmulPrecision::bf16;
  if (t == "fp8" || t == "fp8_e4m3" || t == "e4m3" || t == "mxfp8" || t == "float8") return MatmulPrecision::fp8;
  if (t == "int8") return MatmulPrecision::int8;
  if (t == "fp4" || t == "nvfp4" || t == "mxfp4") return MatmulPrecision::fp4;
  throw InputError(field, "unknown matmul precision '" + excerpt(t) + "'; expected bf16 (fp16), fp8 (mxfp8), int8 or fp4 (nvfp4, mxfp4)");
}

}  // namespace chalk
