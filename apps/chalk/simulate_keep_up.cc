// `chalk simulate`'s keep-up and SLO warnings and its max-loras search's words
// (simulate_keep_up.h; review 11 H1 and M1).
#include "simulate_keep_up.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "table.h"

namespace chalk::cli {
namespace {

/// The comparable rent of a max-loras value's deployment: $/hour, or its chips when unpriced.
double max_loras_rent(const MaxLorasSizing& t) {
  return t.usd_per_hour ? *t.usd_per_hour : static_cast<double>(t.replica_chips * t.replicas);
}

std::string seconds_text(double s) { return format_number(s, 3) + " s"; }

}  // namespace

std::string keep_up_warning(const std::string& mode, const sim::KeepUp& k, const sim::LoraSpec& lora) {
  const std::string served = fmt::format("served {} of the {} output tok/s offered", readable(k.served_output_tok_per_s, 4),
                                         readable(k.offered_output_tok_per_s, 4));
  std::string what;
  if (k.why == "queue grows") {
    what = fmt::format("TTFT grows {} s per second of arrivals ({})", format_number(k.ttft_growth, 3), served);
  } else if (k.why == "queue holds") {
    what = fmt::format("requests waited {} in the queue on average, longer than the {} they took to serve ({})", seconds_text(k.queue_mean_s),
                       seconds_text(k.service_mean_s), served);
  } else {
    what = fmt::format("{}, {} with no queue: the queue drained after the arrivals stopped", served, readable(k.queue_free_output_tok_per_s, 4));
  }
  const std::string cause =
      lora.enabled() && lora.max_loras < lora.adapters
          ? fmt::format("{} for {} adapters: requests of the other adapters wait until the running ones finish (vLLM --max-loras); "
                        "more slots (max-loras:M in --lora), or chalk plan --lora, which sizes them",
                        counted(static_cast<double>(lora.max_loras), "LoRA slot"), lora.adapters)
          : std::string("add chips or lower the rate; chalk plan sizes a deployment that keeps up");
  return fmt::format("{}: FALLS BEHIND: {}; the latencies are the queue's, not the engine's; {}", mode, what, cause);
}

std::optional<std::string> slo_miss_warning(const std::string& mode, const sim::SimSummary& s, const sim::Slo& slo, double arrival_req_per_s) {
  if ((!slo.ttft_s && !slo.tpot_s) || s.meets_slo) return std::nullopt;
  const std::string p = fmt::format("{:g}", slo.percentile);
  std::string miss;
  const auto add = [&](const char* name, double at, const std::optional<double>& target) {
    if (target && at > *target) miss += fmt::format("{}{} p{} {} ms > {} ms", miss.empty() ? "" : ", ", name, p, format_number(at * 1e3, 3), fmt::format("{:g}", *target * 1e3));
  };
  add("TTFT", s.ttft_at_slo_percentile_s, slo.ttft_s);
  add("TPOT", s.tpot_at_slo_percentile_s, slo.tpot_s);
  if (miss.empty()) miss = fmt::format("{} of {} requests rejected", s.rejected, s.requests);
  return fmt::format("{}: misses the SLO: {}; {}% of requests meet it (goodput {} of {} req/s); simulate sizes for the rate, "
                     "not the SLO: run chalk plan to size for the SLO",
                     mode, miss, format_number(100 * s.slo_attainment, 3), readable(s.goodput_req_per_s, 3), readable(arrival_req_per_s, 3));
}

std::size_t choose_max_loras(const std::vector<MaxLorasSizing>& tried) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < tried.size(); ++i) {
    const auto& a = tried[i];
    const auto& b = tried[best];
    if (a.keeps_up != b.keeps_up) {
      if (a.keeps_up) best = i;
      continue;
    }
    if (!a.keeps_up) continue;  // none kept up so far: the first, vLLM's default
    const double ra = max_loras_rent(a), rb = max_loras_rent(b);
    if (std::abs(ra - rb) > 1e-9 * std::max(ra, rb)) {
      if (ra < rb) best = i;
      continue;
    }
    if (a.ttft_p50_s < b.ttft_p50_s) best = i;  // equal rent: the lower TTFT; equal TTFT: fewer slots (the earlier)
  }
  return best;
}

nlohmann::json max_loras_choice_json(const std::vector<MaxLorasSizing>& tried, std::size_t chosen) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tried) {
    list.push_back({{"max_loras", t.max_loras},
                    {"replica_chips", t.replica_chips},
                    {"replicas", t.replicas},
                    {"cost_usd_per_hour", t.usd_per_hour ? nlohmann::json(*t.usd_per_hour) : nlohmann::json(nullptr)},
                    {"keeps_up", t.keeps_up},
                    {"ttft_p50_ms", t.ttft_p50_s * 1e3}});
  }
  return {{"max_loras", tried[chosen].max_loras}, {"max_loras_tried", list}};
}

std::string max_loras_choice_text(const std::vector<MaxLorasSizing>& tried, std::size_t chosen) {
  std::string values, behind;
  for (const auto& t : tried) {
    values += (values.empty() ? "" : ", ") + std::to_string(t.max_loras);
    if (!t.keeps_up) behind += fmt::format("{}{}: {}", behind.empty() ? "" : "; ", t.max_loras, t.why);
  }
  const auto& c = tried[chosen];
  return fmt::format("{} of {}: {}{}; max-loras:M in --lora sets it", c.max_loras, values,
                     c.keeps_up ? "the least $/hour whose run keeps up, ties to the lower TTFT p50"
                                : "none kept up, so vLLM's default of one slot",
                     behind.empty() ? "" : " (falls behind at " + behind + ")");
}

}  // namespace chalk::cli
