// Private to src/engine: the matmul rate of each weight format on a deployment's chip,
// shared by the engine step (overhead.cc) and its tests.
#pragma once

#include "chalk/engine/roofline.h"

namespace chalk::detail {

/// Matmul rate class of weights stored in `f` on `chip`: each computes at its own class
/// when the chip states a dense rate for it (fp8 at fp8, int8 and int4 at int8 as W8A8 or
/// W4A8 kernels, 4-bit floats at fp4), else at the next class the chip has (4-bit floats
/// at fp8; int8 and int4 weight-only, dequantized to bf16 as AQT in Pope et al. 2022);
/// every other format at bf16.
MatmulPrecision class_of(DType f, const ChipSpec& chip);

/// Achieved matmul rate per chip (peak x fraction) for weights in `f`: class_of's rate at
/// the system's measured fraction, never above the deployment's compute class at its
/// fraction (Deployment::compute, matmul_efficiency), which is the roofline's rate.
FlopsPerSecond rate_for(const Deployment& dep, DType f);

/// Fraction of the HBM peak at which a decode GEMM streams weights stored in `f`, never
/// above the deployment's own HBM fraction (hbm_efficiency, the chip's STREAM figure):
/// Calibration::weight_stream_fraction_16bit for fp32, bf16 and fp16 weights on a GPU in
/// vLLM (the engine whose kernels the step uses, TpAllReduce::name, is "vllm": F.linear, the
/// GEMM vLLM PR #49363 measured), else Calibration::weight_stream_fraction (TPUs pay no
/// kernel floor; SGLang's, TensorRT-LLM's and other engines' GEMMs are unmeasured; 8-bit and
/// narrower weights keep it too, their own slope, 0.851, not applied: docs/formulas.md).
/// Llama-2-70B fp16 at TP4 in vLLM on H100: min(0.87, 0.911) = 0.87, 34.5 GB per GPU in
/// 11.8 ms (12.9 ms at 0.796).
double weight_stream_fraction(const Deployment& dep, DType f);

}  // namespace chalk::detail
