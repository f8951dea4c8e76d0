// The cheapest decode batch within HBM (issue 30 review L7): cost per token falls with the
// batch except where the engine pads a batch up to its next CUDA graph.
#pragma once

#include <cstdint>

#include "chalk/serving/serving.h"

namespace chalk {

/// The cheapest decode point of `d` at `context` up to `memory_full_batch` (memory_plan's
/// max_batch): that batch, or a smaller one the engine's CUDA graphs do not pad (review L7:
/// 273 padded cost $0.874/Mtok, 256 $0.865). Tries the multiples of 8 up to 64 below it (the
/// capture sizes of engine/cuda_graphs.h are 8 to 32 apart there) and the largest power of
/// two; most tokens/s per chip wins, a smaller batch only when clearly (1e-9) cheaper.
/// InputError when `memory_full_batch` < 1.
ModePoint cheapest_decode_point(const Deployment& d, int64_t memory_full_batch, int64_t context, const DecodeLevers& levers = {});

}  // namespace chalk
