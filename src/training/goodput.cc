// Whole-run goodput from interruptions and checkpoints (goodput.h; docs/formulas.md,
// "Run goodput").
#include "chalk/training/goodput.h"

#include <cmath>
#include <sstream>

#include "chalk/base/error.h"

namespace chalk {
namespace {

std::string goodput_num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

Seconds young_daly_interval(Seconds save_stall, Seconds mtbf) {
  if (!(save_stall.value() > 0) || !std::isfinite(save_stall.value()))
    throw InputError("save_stall", "must be a positive time in seconds, got " + goodput_num(save_stall.value()));
  if (!(mtbf.value() > 0) || !std::isfinite(mtbf.value()))
    throw InputError("mtbf", "must be a positive time in seconds, got " + goodput_num(mtbf.value()));
  return Seconds(std::sqrt(2 * save_stall.value() * mtbf.value()));
}

double checkpoint_bytes(const ModelSpec& m, const StateBytes& state) {
  return count_params(m).total() * (state.weights + state.optimizer);
}

InterruptionGoodput interruption_goodput(int64_t n_chips, double bytes, const InterruptionModel& model) {
  if (n_chips < 1) throw InputError("n_chips", "must be >= 1 chip, got " + std::to_string(n_chips));
  const double rate = model.interruptions_per_chip_hour;
  if (!(rate >= 0) || !std::isfinite(rate))
    throw InputError("interruptions_per_chip_hour", "must be >= 0 interruptions per chip-hour, got " + goodput_num(rate));
  if (!(model.restart_time.value() >= 0) || !std::isfinite(model.restart_time.value()))
    throw InputError("restart_s", "must be >= 0 s, got " + goodput_num(model.restart_time.value()));
  if (!(model.checkpoint_write_bytes_per_s > 0) || !std::isfinite(model.checkpoint_write_bytes_per_s))
    throw InputError("checkpoint_write_bytes_per_s", "must be > 0 bytes/s, got " + goodput_num(model.checkpoint_write_bytes_per_s));
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw InputError("checkpoint_bytes", "must be >= 0 bytes, got " + goodput_num(bytes));

  InterruptionGoodput g;
  g.interruptions_per_hour = rate * static_cast<double>(n_chips);
  g.checkpoint_bytes = bytes;
  g.save_stall = Seconds(bytes / model.checkpoint_write_bytes_per_s);
  g.restart_time = model.restart_time;
  if (g.interruptions_per_hour == 0) return g;  // nothing to recover from: no checkpoint cost either
  const double lambda = g.interruptions_per_hour / 3600;  // per second
  // A free save (stall 0) would be taken continuously: no work lost, interval 0.
  if (g.save_stall.value() > 0) {
    g.checkpoint_interval = young_daly_interval(g.save_stall, Seconds(1 / lambda));
    g.checkpoint_fraction = g.save_stall.value() / g.checkpoint_interval.value();
  }
  g.lost_per_interruption = Seconds(g.restart_time.value() + g.checkpoint_interval.value() / 2);
  g.interruption_fraction = lambda * g.lost_per_interruption.value();
  const double lost = g.checkpoint_fraction + g.interruption_fraction;
  if (!(lost < 1))
    throw InputError("goodput", "interruptions take the whole run: " + goodput_num(g.interruptions_per_hour) + " per hour x " +
                                    goodput_num(g.lost_per_interruption.value()) + " s lost each + checkpoint stalls = " +
                                    goodput_num(lost) + " of the wall clock; give a goodput or fewer chips");
  g.goodput = 1 - lost;
  return g;
}

}  // namespace chalk
