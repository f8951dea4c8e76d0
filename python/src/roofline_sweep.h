// A roofline decode sweep over hypothetical chips: one model on one base system and chip
// count, with each point's peak FLOP/s, HBM capacity and bandwidth and price replaced.
// The plain roofline (lecture 2:21-15:30; chalk/engine/roofline.h decode_step) is linear
// in 1/F and 1/W, so a point costs one decode_step and two memory_plan calls (~0.1 us):
// a million points in well under a second on one core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chalk/engine/roofline.h"

namespace chalk::python {

/// Per-point inputs, each an array of `n` values. A NaN override keeps the base system's
/// value; a set one must be finite and > 0 (InputError naming the column and the row).
struct SweepInputs {
  const int64_t* batch = nullptr;              ///< sequences per step (>= 1)
  const int64_t* context_tokens = nullptr;     ///< tokens in each sequence's KV cache (>= 0)
  const double* compute_tflop_per_s = nullptr;    ///< dense peak per chip in the deployment's compute class, TFLOP/s
  const double* hbm_gb_per_chip = nullptr;     ///< HBM capacity per chip, GB (1e9 bytes)
  const double* hbm_tb_per_s_per_chip = nullptr;  ///< HBM bandwidth per chip, TB/s (1e12 bytes/s)
  const double* price_usd_per_chip_hour = nullptr;  ///< rental price per chip-hour, USD
};

/// Per-point outputs (the vocabulary of docs/output-schema.md), each an array of `n`.
struct SweepOutputs {
  double *t_compute_ms, *t_weights_ms, *t_kv_ms, *t_step_ms;
  double *tok_per_s, *tok_per_s_per_user, *tok_per_s_per_chip;
  double* cost_usd_per_mtok;  ///< NaN without a price or where memory_fits is false
  int8_t* bound;              ///< chalk::Bound: 0 compute, 1 weights, 2 kv_cache
  bool* memory_fits;          ///< weights + reserve + the batch's KV fit in n x capacity
  int64_t* max_batch_at_context;  ///< largest batch that fits at this context (-1: unbounded)
};

/// Evaluates n points of the decode roofline of `base` (mechanisms are switched off: this
/// is the lower bound, the lecture's blackboard) with the per-point chip figures of `in`.
/// Throws InputError for a bad point; writes nothing past n. From Python,
/// Deployment.roofline_sweep(columns, out=None) returns the outputs as a dict of arrays, new
/// ones or, given `out`, the caller's (exact dtypes, contiguous, n long: no copy).
void roofline_sweep(const Deployment& base, std::size_t n, const SweepInputs& in, const SweepOutputs& out);

/// One axis of a product grid (grid(): the last list varies fastest): a row's position on
/// it is (row / stride) % size.
struct ProductAxis {
  int64_t size = 0;
  int64_t stride = 1;
};

/// A column of a product grid: its `axis.size` distinct values (ints for batch and
/// context_tokens, doubles for the chip figures; size 0: the column is absent, the base
/// system's figure holds).
struct ProductColumn {
  ProductAxis axis;
  const int64_t* ints = nullptr;
  const double* values = nullptr;
};

/// A product grid's inputs: each column's values and axis, and one base deployment per
/// group code, the code of a row being its positions on `group_axes` (the model, hardware,
/// chips lists) in mixed radix, the first axis most significant.
struct ProductSweepInputs {
  ProductColumn batch, context_tokens, compute_tflop_per_s, hbm_gb_per_chip, hbm_tb_per_s_per_chip, price_usd_per_chip_hour;
  std::vector<ProductAxis> group_axes;
  std::vector<const Deployment*> bases;
};

/// Rows start..stop-1 of a product grid, each evaluated exactly as roofline_sweep evaluates
/// a point (same per-point code), without building the grid's columns: each row's values
/// are stepped along like an odometer. Writes out[row - start]; InputError names the row of
/// the whole grid. Used by dask_sweep's workers (python/chalk/_dask.py).
void roofline_product_sweep(const ProductSweepInputs& in, int64_t start, int64_t stop, const SweepOutputs& out);

}  // namespace chalk::python
