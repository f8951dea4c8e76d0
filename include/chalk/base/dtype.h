// Number formats of weights, KV cache and matmuls, with their storage cost.
#pragma once

#include <string>
#include <string_view>

namespace chalk {

/// Storage formats. MXFP4 and NVFP4 are 4-bit floats with block scales; int4 is a
/// group-quantized integer format.
enum class DType { fp32, bf16, fp16, fp8, int8, mxfp4, nvfp4, int4 };

/// The matmul rate class a format runs at on a chip's tensor units (the dense peak
/// table of hardware.md has one column per class).
enum class MatmulPrecision { bf16, fp8, int8, fp4 };

/// Bits stored per element, block scales included:
/// fp32 32; bf16/fp16 16; fp8 8 (DeepSeek-V3's 128x128 FP32 block scales add 0.002
/// bit, ignored); int8 8; MXFP4 4 + 8/32 = 4.25 (OCP Microscaling spec v1.0: 32-element
/// blocks, one E8M0 scale); NVFP4 4 + 8/16 = 4.5 (16-element blocks, one E4M3 scale;
/// NVIDIA Blackwell docs); int4 4 + 16/128 = 4.125 (group 128 with a bf16 scale, the
/// AWQ/GPTQ default).
double bits_per_element(DType d);

/// Bytes per element = bits_per_element / 8.
inline double bytes_per_element(DType d) { return bits_per_element(d) / 8.0; }

/// The rate class a format computes at when it is also the activation format.
/// Throws InputError for fp32 (no dense fp32 tensor peak is modelled).
MatmulPrecision matmul_precision(DType d, const std::string& field);

std::string_view to_string(DType d);
std::string_view to_string(MatmulPrecision p);

/// Parses "fp32", "bf16", "fp16", "fp8" (also "fp8_e4m3", "e4m3"), "int8", "mxfp4",
/// "nvfp4", "fp4" (= nvfp4), "int4". Throws InputError naming `field` otherwise.
DType parse_dtype(std::string_view text, const std::string& field);

/// Parses "bf16", "fp8", "int8", "fp4". Throws InputError naming `field` otherwise.
MatmulPrecision parse_matmul_precision(std::string_view text, const std::string& field);

}  // namespace chalk
