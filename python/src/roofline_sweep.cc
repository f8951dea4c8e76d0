#include "roofline_sweep.h"

#include <cmath>
#include <limits>
#include <string>

#include "chalk/base/error.h"

namespace chalk::python {
namespace {

// NaN keeps the base value; anything else must be a finite positive number.
bool override_value(const double* column, std::size_t i, const char* name, double& value) {
  if (column == nullptr || std::isnan(column[i])) return false;
  value = column[i];
  if (!std::isfinite(value) || value <= 0) {
    throw InputError(name, "row " + std::to_string(i) + ": must be a finite number > 0, got " + std::to_string(value));
  }
  return true;
}

}  // namespace

void roofline_sweep(const Deployment& base, std::size_t n, const SweepInputs& in, const SweepOutputs& out) {
  Deployment d = base;
  d.mechanisms.enabled = false;
  const int compute = static_cast<int>(d.compute);
  const double n_chips = static_cast<double>(d.n_chips);
  const ChipSpec chip0 = base.system.chip;
  const auto price0 = base.price_per_chip;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t b = in.batch[i], s = in.context_tokens[i];
    if (b < 1) throw InputError("batch", "row " + std::to_string(i) + ": must be >= 1, got " + std::to_string(b));
    if (s < 0) throw InputError("context_tokens", "row " + std::to_string(i) + ": must be >= 0, got " + std::to_string(s));
    double v = 0;
    d.system.chip.peak[compute] = override_value(in.compute_tflop_per_s, i, "compute_tflop_per_s", v) ? FlopsPerSecond(v * 1e12) : chip0.peak[compute];
    d.system.chip.hbm_capacity = override_value(in.hbm_gb_per_chip, i, "hbm_gb_per_chip", v) ? Bytes(v * 1e9) : chip0.hbm_capacity;
    d.system.chip.hbm_bandwidth =
        override_value(in.hbm_tb_per_s_per_chip, i, "hbm_tb_per_s_per_chip", v) ? BytesPerSecond(v * 1e12) : chip0.hbm_bandwidth;
    d.price_per_chip = override_value(in.price_usd_per_chip_hour, i, "price_usd_per_chip_hour", v) ? std::optional(UsdPerSecond(v / 3600)) : price0;
    // As make_deployment (roofline.cc): n x peak x efficiency, n x bandwidth x efficiency.
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
    out.cost_usd_per_mtok[i] = r.cost_per_token ? to_usd_per_mtok(*r.cost_per_token) : nan;
    out.bound[i] = static_cast<int8_t>(r.bound);
    out.memory_fits[i] = memory_plan(d, b, s).fits;
    const int64_t max_batch = memory_plan(d, 1, s).max_batch;
    out.max_batch_at_context[i] = max_batch == INT64_MAX ? -1 : max_batch;
  }
}

}  // namespace chalk::python
