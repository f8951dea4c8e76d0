#include "roofline_sweep.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "chalk/base/error.h"

namespace chalk::python {
namespace {

// NaN keeps the base value; anything else must be a finite positive number.
bool override_value(double v, std::size_t row, const char* name, double& value) {
  if (std::isnan(v)) return false;
  value = v;
  if (!std::isfinite(value) || value <= 0) {
    throw InputError(name, "row " + std::to_string(row) + ": must be a finite number > 0, got " + std::to_string(value));
  }
  return true;
}

// Point i of a sweep: `d` is a working copy of `base` whose chip figures are replaced by
// the point's (NaN: the base's); `row` names the point in errors.
void evaluate_point(Deployment& d, const Deployment& base, int64_t b, int64_t s, const double (&chip)[4], std::size_t row,
                    const SweepOutputs& out, std::size_t i) {
  if (b < 1) throw InputError("batch", "row " + std::to_string(row) + ": must be >= 1, got " + std::to_string(b));
  if (s < 0) throw InputError("context_tokens", "row " + std::to_string(row) + ": must be >= 0, got " + std::to_string(s));
  const int compute = static_cast<int>(d.compute);
  const ChipSpec& chip0 = base.system.chip;
  double v = 0;
  d.system.chip.peak[compute] = override_value(chip[0], row, "compute_tflop_per_s", v) ? FlopsPerSecond(v * 1e12) : chip0.peak[compute];
  d.system.chip.hbm_capacity = override_value(chip[1], row, "hbm_gb_per_chip", v) ? Bytes(v * 1e9) : chip0.hbm_capacity;
  d.system.chip.hbm_bandwidth = override_value(chip[2], row, "hbm_tb_per_s_per_chip", v) ? BytesPerSecond(v * 1e12) : chip0.hbm_bandwidth;
  d.price_per_chip = override_value(chip[3], row, "price_usd_per_chip_hour", v) ? std::optional(UsdPerSecond(v / 3600)) : base.price_per_chip;
  // As make_deployment (roofline.cc): n x peak x efficiency, n x bandwidth x efficiency.
  const double n_chips = static_cast<double>(d.n_chips);
  d.flops_effective = d.system.chip.peak[compute] * (n_chips * d.matmul_efficiency);
  d.hbm_effective = d.system.chip.hbm_bandwidth * (n_chips * d.hbm_efficiency);
  const DecodeStep r = decode_step(d, b, s);
  out.t_compute_ms[i] = to_ms(r.t_compute);
  out.t_weights_ms[i] = to_ms(r.t_weights);
  out.t_kv_ms[i] = to_ms(r.t_kv);
  out.t_step_ms[i] = to_ms(r.t_step);
  out.tok_per_s[i] = r.tokens_per_s.value();
  out.tok_per_s_per_user[i] = r.tokens_per_s_per_user.value();
  out.tok_per_s_per_chip[i] = r.tokens_per_s_per_chip.value();
  out.memory_fits[i] = memory_plan(d, b, s).fits;
  // As `chalk decode`: a batch the replica cannot hold is not priced (NaN; issue 30).
  out.cost_usd_per_mtok[i] = r.cost_per_token && out.memory_fits[i] ? to_usd_per_mtok(*r.cost_per_token) : std::numeric_limits<double>::quiet_NaN();
  out.bound[i] = static_cast<int8_t>(r.bound);
  const int64_t max_batch = memory_plan(d, 1, s).max_batch;
  out.max_batch_at_context[i] = max_batch == INT64_MAX ? -1 : max_batch;
}

Deployment working_copy(const Deployment& base) {
  Deployment d = base;
  d.mechanisms.enabled = false;
  return d;
}

// A row's position on one axis of a product, stepped row by row without dividing.
struct Odometer {
  int64_t size, stride, digit, left;
  Odometer(ProductAxis a, int64_t start)
      : size(a.size), stride(a.stride), digit((start / a.stride) % a.size), left(a.stride - start % a.stride) {}
  void step() {
    if (--left == 0) {
      left = stride;
      if (++digit == size) digit = 0;
    }
  }
};

}  // namespace

void roofline_sweep(const Deployment& base, std::size_t n, const SweepInputs& in, const SweepOutputs& out) {
  Deployment d = working_copy(base);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < n; ++i) {
    const double chip[4] = {in.compute_tflop_per_s ? in.compute_tflop_per_s[i] : nan, in.hbm_gb_per_chip ? in.hbm_gb_per_chip[i] : nan,
                            in.hbm_tb_per_s_per_chip ? in.hbm_tb_per_s_per_chip[i] : nan,
                            in.price_usd_per_chip_hour ? in.price_usd_per_chip_hour[i] : nan};
    evaluate_point(d, base, in.batch[i], in.context_tokens[i], chip, i, out, i);
  }
}

void roofline_product_sweep(const ProductSweepInputs& in, int64_t start, int64_t stop, const SweepOutputs& out) {
  if (start < 0 || stop < start) throw InputError("rows", "must be 0 <= start <= stop, got " + std::to_string(start) + ", " + std::to_string(stop));
  for (const ProductAxis& a : in.group_axes) {
    if (a.size < 1 || a.stride < 1) throw InputError("group_axes", "sizes and strides must be >= 1");
  }
  std::vector<Odometer> group;
  int64_t codes = 1;
  for (const ProductAxis& a : in.group_axes) {
    group.emplace_back(a, start);
    codes *= a.size;
  }
  if (static_cast<int64_t>(in.bases.size()) != codes) {
    throw InputError("deployments", "expected " + std::to_string(codes) + " (one per group code), got " + std::to_string(in.bases.size()));
  }
  std::vector<Odometer> column;  // batch, context, then the four chip figures (size 0: absent)
  const ProductColumn* cols[6] = {&in.batch, &in.context_tokens, &in.compute_tflop_per_s, &in.hbm_gb_per_chip,
                                  &in.hbm_tb_per_s_per_chip, &in.price_usd_per_chip_hour};
  for (const ProductColumn* c : cols) {
    if (c->axis.size < 0 || (c->axis.size > 0 && c->axis.stride < 1)) throw InputError("columns", "sizes must be >= 0 and strides >= 1");
    column.emplace_back(c->axis.size > 0 ? c->axis : ProductAxis{1, 1}, start);
  }
  if (in.batch.axis.size < 1 || in.context_tokens.axis.size < 1) throw InputError("columns", "batch and context_tokens need values");
  std::vector<Deployment> work;  // a working copy per group code, made when first met
  std::vector<bool> made(in.bases.size(), false);
  work.resize(in.bases.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t row = start; row < stop; ++row) {
    int64_t code = 0;
    for (const Odometer& g : group) code = code * g.size + g.digit;
    if (!made[code]) {
      work[code] = working_copy(*in.bases[code]);
      made[code] = true;
    }
    const int64_t b = in.batch.ints[column[0].digit], s = in.context_tokens.ints[column[1].digit];
    double chip[4];
    for (int k = 0; k < 4; ++k) chip[k] = cols[2 + k]->axis.size > 0 ? cols[2 + k]->values[column[2 + k].digit] : nan;
    evaluate_point(work[code], *in.bases[code], b, s, chip, static_cast<std::size_t>(row), out, static_cast<std::size_t>(row - start));
    for (Odometer& g : group) g.step();
    for (Odometer& c : column) c.step();
  }
}

}  // namespace chalk::python
