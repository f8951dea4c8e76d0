// Whole training runs (run.h; docs/training-runs.md).
#include "chalk/training/run.h"

#include <cmath>
#include <sstream>

#include "chalk/base/error.h"
#include "chalk/hardware/power.h"

namespace chalk {
namespace {

std::string run_num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool finite_positive(double v) { return v > 0 && std::isfinite(v); }

}  // namespace

FlopsPerToken training_flops_per_token(const ModelSpec& m, int64_t sequence_length, bool causal) {
  if (sequence_length < 1)
    throw InputError("sequence_length", "must be a positive number of tokens, got " + std::to_string(sequence_length));
  const double forward = causal ? prefill_flops(m, sequence_length, 0).value() / static_cast<double>(sequence_length)
                                : 2 * count_params(m).active_matmul() +
                                      attention_flops_per_token(m, sequence_length, false).value();
  return FlopsPerToken(3 * forward);
}

RunReport plan_run(const RunInputs& in) {
  if (in.phases.empty()) throw InputError("phases", "a run needs at least one phase");
  validate_pue(in.pue);
  if (!(in.chip_power_w >= 0) || !std::isfinite(in.chip_power_w))
    throw InputError("chip_power_w", "must be >= 0 W (0 = unknown), got " + run_num(in.chip_power_w));
  if (in.price_per_chip && !(in.price_per_chip->value() >= 0))
    throw InputError("price_per_chip", "must be >= 0 USD per chip-hour, got " + run_num(in.price_per_chip->value() * 3600));
  const FlopsPerSecond peak = in.system.chip.peak_for(in.peak_precision);
  if (!(peak.value() > 0))
    throw InputError("peak_precision", in.system.chip.name + " has no dense " +
                                           std::string(to_string(in.peak_precision)) + " peak");

  // The interruption model is the run's, not a phase's: its inputs are checked once (one chip, no bytes).
  interruption_goodput(1, 0, in.interruptions);
  RunReport r;
  r.price_per_chip = in.price_per_chip ? in.price_per_chip : in.system.price_per_chip;
  r.price_source = in.price_per_chip ? "given" : in.system.price_source;
  r.chip_power_w = in.chip_power_w;
  r.pue = in.pue;
  r.peak_per_chip = peak;
  for (size_t i = 0; i < in.phases.size(); ++i) {
    const RunPhase& p = in.phases[i];
    const std::string at = "phases[" + std::to_string(i) + "]";
    if (p.n_chips < 1) throw InputError(at + ".n_chips", "must be >= 1 chip, got " + std::to_string(p.n_chips));
    if ((p.tokens > 0) == (p.flops > 0) || p.tokens < 0 || p.flops < 0 || !std::isfinite(p.tokens) ||
        !std::isfinite(p.flops))
      throw InputError(at + ".tokens", "give exactly one positive budget, tokens or flops (got tokens " +
                                           run_num(p.tokens) + ", flops " + run_num(p.flops) + ")");
    if (p.mfu.has_value() == p.step_time.has_value())
      throw InputError(at + ".mfu", "give exactly one of mfu or step_time (with tokens_per_step)");
    if (p.goodput && !(*p.goodput > 0 && *p.goodput <= 1))
      throw InputError(at + ".goodput", "must be a fraction in (0, 1], got " + run_num(*p.goodput));

    PhaseReport q;
    q.name = p.name;
    q.n_chips = p.n_chips;
    q.sequence_length = p.sequence_length;
    try {
      q.flops_per_token = training_flops_per_token(in.model, p.sequence_length, in.causal_attention_flops);
    } catch (const InputError& e) {
      throw InputError(at + ".sequence_length", "must be a positive number of tokens, got " +
                                                    std::to_string(p.sequence_length));
    }
    q.tokens = p.tokens > 0 ? p.tokens : p.flops / q.flops_per_token.value();
    q.flops = q.tokens * q.flops_per_token.value();
    const double cluster_peak = peak.value() * static_cast<double>(p.n_chips);
    if (p.mfu) {
      if (!(*p.mfu > 0 && *p.mfu <= 1)) throw InputError(at + ".mfu", "must be a fraction in (0, 1], got " + run_num(*p.mfu));
      q.mfu = *p.mfu;
      q.speed_from = "mfu";
      q.tokens_per_s = TokensPerSecond(q.mfu * cluster_peak / q.flops_per_token.value());
    } else {
      if (!finite_positive(p.step_time->value()))
        throw InputError(at + ".step_time", "must be a positive time in seconds, got " + run_num(p.step_time->value()));
      if (!finite_positive(p.tokens_per_step))
        throw InputError(at + ".tokens_per_step", "must be a positive number of tokens, got " + run_num(p.tokens_per_step));
      q.speed_from = "step_time";
      q.tokens_per_s = TokensPerSecond(p.tokens_per_step / p.step_time->value());
      q.mfu = q.tokens_per_s.value() * q.flops_per_token.value() / cluster_peak;
      // The --mfu path refuses > 1; a step time implying it is the same impossibility:
      // the step's model FLOPs (tokens_per_step x flops_per_token) at the cluster's peak
      // take at least that long.
      if (q.mfu > 1) {
        const double floor_s = p.tokens_per_step * q.flops_per_token.value() / cluster_peak;
        throw InputError(at + ".step_time",
                         run_num(p.step_time->value()) + " s implies MFU " + run_num(q.mfu) + " (" + run_num(p.tokens_per_step) + " tokens x " +
                             run_num(q.flops_per_token.value()) + " FLOP/token over " + std::to_string(p.n_chips) + " chips x " +
                             run_num(peak.value() / 1e12) + " TFLOP/s peak), above 1: a step of that many tokens takes at least " +
                             run_num(floor_s) + " s at peak");
      }
    }
    if (p.goodput) {
      q.goodput = *p.goodput;
    } else {
      try {
        q.goodput_parts = interruption_goodput(p.n_chips, checkpoint_bytes(in.model, in.checkpoint_state), in.interruptions);
      } catch (const InputError& e) {
        throw InputError(at + "." + e.field(), std::string(e.what()).substr(e.field().size() + 2));
      }
      q.goodput = q.goodput_parts->goodput;
    }
    q.wall_clock = Seconds(q.tokens / q.tokens_per_s.value() / q.goodput);
    q.chip_hours = static_cast<double>(p.n_chips) * q.wall_clock.value() / 3600;
    if (r.price_per_chip) q.cost = Usd(q.chip_hours * 3600 * r.price_per_chip->value());
    // chip-hours x W x PUE, through the facility formula serving energy uses (power.h).
    if (in.chip_power_w > 0) q.energy_mwh = facility_energy_j(q.chip_hours * 3600 * in.chip_power_w, Facility{0, in.pue}, 0, 0) / 3.6e9;

    r.tokens += q.tokens;
    r.flops += q.flops;
    r.chip_hours += q.chip_hours;
    r.wall_clock += q.wall_clock;
    if (q.cost) r.cost = r.cost.value_or(Usd(0)) + *q.cost;
    if (q.energy_mwh) r.energy_mwh = r.energy_mwh.value_or(0) + *q.energy_mwh;
    r.phases.push_back(std::move(q));
  }
  return r;
}

}  // namespace chalk
