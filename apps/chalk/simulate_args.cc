// `chalk simulate`'s checks between its pool flags (simulate_args.h).
#include "simulate_args.h"

#include <string>
#include <utility>

#include "chalk/base/error.h"

namespace chalk::cli {

bool check_simulate_pools(SimulateArgs& a) {
  if (a.replicas < 1 || a.prefill_replicas < 1 || a.decode_replicas < 1) {
    throw InputError(a.replicas < 1 ? "--replicas" : a.prefill_replicas < 1 ? "--prefill-replicas" : "--decode-replicas", "must be >= 1");
  }
  if (!a.disaggregate && (a.prefill_chips || a.decode_chips || a.compare)) {
    throw InputError(a.compare ? "--compare" : a.prefill_chips ? "--prefill-chips" : "--decode-chips",
                     "applies to disaggregated serving: add --disaggregate");
  }
  if (!a.disaggregate && (!a.prefill_hardware.empty() || !a.decode_hardware.empty())) {
    throw InputError(a.prefill_hardware.empty() ? "--decode-hardware" : "--prefill-hardware", "applies to disaggregated serving: add --disaggregate");
  }
  const bool mixed = a.disaggregate && (!a.prefill_hardware.empty() || !a.decode_hardware.empty());
  if (mixed && a.compare) throw InputError("--compare", "compares pools on the same chips; drop --prefill-hardware and --decode-hardware");
  if (mixed && a.deployment.price_usd_per_chip_hour) {
    throw InputError("--price-usd-per-chip-hour", "prices one chip type; mixed chips take each system's own price");
  }
  if (mixed) {
    // A pool without its own system runs on --hardware at --chips; the header then describes
    // the decode pool's system (the pools line names both).
    const std::optional<int64_t> stated = a.deployment.chips ? std::optional<int64_t>(a.deployment.chips) : std::nullopt;
    if (a.prefill_hardware.empty()) a.prefill_hardware = a.deployment.hardware, a.prefill_chips = a.prefill_chips ? a.prefill_chips : stated;
    if (a.decode_hardware.empty()) a.decode_hardware = a.deployment.hardware, a.decode_chips = a.decode_chips ? a.decode_chips : stated;
    a.deployment.hardware = a.decode_hardware;
  }
  for (const auto& [flag, chips] : {std::pair{"--prefill-chips", a.prefill_chips}, std::pair{"--decode-chips", a.decode_chips}}) {
    if (chips && *chips < 1) throw InputError(flag, "must be >= 1, got " + std::to_string(*chips));
  }
  if (a.pp && *a.pp < 1) throw InputError("--pp", "must be >= 1 stage, got " + std::to_string(*a.pp));
  if (a.pp && a.disaggregate) throw InputError("--pp", "stages an aggregated replica; drop --disaggregate or --pp");
  return mixed;
}

}  // namespace chalk::cli
