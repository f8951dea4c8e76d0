// `chalk simulate`'s words for a run that did not keep up with its traffic (sim/keep_up.h;
// review 11 H1) or missed the SLO it was given (review 11 M1): one warning line each, and the
// max-loras search a rate question runs when --lora states no max-loras (docs/simulator.md,
// "Keeping up" and "Replicas for a rate").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/sim/keep_up.h"
#include "chalk/sim/lora.h"
#include "chalk/sim/metrics.h"

namespace chalk::cli {

/// "aggregated: FALLS BEHIND: requests waited 20.2 s in the queue on average, longer than the
/// 3.22 s they took to serve (served 971 of the 1,030 output tok/s offered); ...": what the
/// check found (KeepUp::why), the cause where the run names one (fewer LoRA slots than
/// adapters in `lora`), and what sizes a deployment that keeps up.
std::string keep_up_warning(const std::string& mode, const sim::KeepUp& k, const sim::LoraSpec& lora);

/// With an SLO the run misses (SimSummary::meets_slo false): "aggregated: misses the SLO: TPOT
/// p99 77.2 ms > 50 ms; 31.2% of requests meet it (goodput 6.17 of 20.6 req/s); simulate sizes
/// for the rate, not the SLO: run chalk plan to size for the SLO". nullopt without an SLO or
/// when met. `arrival_req_per_s` is the traffic's rate.
std::optional<std::string> slo_miss_warning(const std::string& mode, const sim::SimSummary& s, const sim::Slo& slo, double arrival_req_per_s);

/// One --max-loras value simulate sized a deployment for (a rate, no -n, no --replicas,
/// --lora without max-loras): the size x count chosen for it and whether its run kept up.
struct MaxLorasSizing {
  int64_t max_loras = 0;
  int64_t replica_chips = 0, replicas = 0;
  std::optional<double> usd_per_hour;
  bool keeps_up = false;
  double ttft_p50_s = 0;
  std::string why;  ///< KeepUp::why, "" when it kept up
};

/// Index of the value simulate runs: among those whose run kept up, the least $/hour (chips
/// when unpriced), ties to the lower TTFT p50, then fewer slots; when none kept up, the first
/// (vLLM's default of one slot). `tried` is ascending and not empty.
std::size_t choose_max_loras(const std::vector<MaxLorasSizing>& tried);

/// The "max_loras_choice" object (docs/output-schema.md): `max_loras` (the value run) and
/// `max_loras_tried`, each {max_loras, replica_chips, replicas, cost_usd_per_hour, keeps_up,
/// ttft_p50_ms}.
nlohmann::json max_loras_choice_json(const std::vector<MaxLorasSizing>& tried, std::size_t chosen);
/// "max-loras 8 of 1, 2, 4, 8: the least $/hour whose run keeps up (1: queue holds; ...)".
std::string max_loras_choice_text(const std::vector<MaxLorasSizing>& tried, std::size_t chosen);

}  // namespace chalk::cli
