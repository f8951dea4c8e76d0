// `chalk simulate`'s cheapest replica size x count for a rate (simulate_rate.h; review 10 M1:
// llama-3.1-8b on H100 at --rate 5 took the memory-full cost floor, 2 chips at $4.70/h, where
// one chip's capacity of 16 req/s serves the rate for $2.35/h).
#include "simulate_rate.h"

#include <algorithm>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "table.h"

namespace chalk::cli {
namespace {

/// The comparable rent of a candidate: $/hour, or its chips when the chip is unpriced.
double rate_rent(const RateCandidate& c) { return c.usd_per_hour ? *c.usd_per_hour : static_cast<double>(c.chips()); }

/// True when `a` is the better choice: less rent, then more capacity, then fewer chips a replica.
bool rate_better(const RateCandidate& a, const RateCandidate& b) {
  const double ra = rate_rent(a), rb = rate_rent(b);
  if (std::abs(ra - rb) > 1e-9 * std::max(ra, rb)) return ra < rb;
  const double ca = a.count.one.req_per_s * static_cast<double>(a.count.replicas), cb = b.count.one.req_per_s * static_cast<double>(b.count.replicas);
  if (ca != cb) return ca > cb;
  return a.deployment.n_chips < b.deployment.n_chips;
}

std::string rate_candidate_text(const RateCandidate& c) {
  return fmt::format("{} x {}{}", counted(static_cast<double>(c.deployment.n_chips), "chip"), counted(static_cast<double>(c.count.replicas), "replica"),
                     c.usd_per_hour ? fmt::format(", ${}/hour", format_number(*c.usd_per_hour, 4)) : std::string());
}

nlohmann::json rate_candidate_json(const RateCandidate& c) {
  return {{"chips", c.deployment.n_chips},
          {"replicas", c.count.replicas},
          {"cost_usd_per_hour", c.usd_per_hour ? nlohmann::json(*c.usd_per_hour) : nlohmann::json(nullptr)},
          {"capacity_req_per_s", c.count.one.req_per_s}};
}

}  // namespace

std::optional<RateChoice> cheapest_for_rate(const std::vector<int64_t>& sizes, const std::function<Deployment(int64_t)>& resolve_size,
                             const std::function<sim::Pool(const Deployment&)>& one_replica_pool, std::span<const sim::Request> requests,
                             const std::string& asked, std::optional<LayoutNote>* layout_note, sim::Phase phase,
                             const std::string& sets) {
  std::vector<RateCandidate> measured;
  std::vector<int64_t> priced_out;
  for (const int64_t s : sizes) {
    // One replica of s chips rents at least s / (best's chips) of the best's rent: past the
    // best and a runner-up, it cannot win (the price per chip is one chip type's).
    if (measured.size() >= 2) {
      const auto best = std::min_element(measured.begin(), measured.end(), rate_better);
      if (static_cast<double>(s) >= static_cast<double>(best->chips())) {
        priced_out.push_back(s);
        continue;
      }
    }
    if (layout_note) layout_note->reset();
    std::optional<Deployment> d;
    try {
      d = resolve_size(s);
    } catch (const InputError&) {
      continue;  // a size that cannot hold the model (the sizes are those an engine runs)
    }
    RateCandidate c{std::move(*d), {}, std::nullopt, std::nullopt};
    c.count = replicas_serving_rate(one_replica_pool(c.deployment), requests, asked, c.deployment.n_chips, phase, sets);
    if (!c.count.one.measured()) continue;
    c.usd_per_hour = pool_usd_per_hour(c.deployment, c.count.replicas);
    if (layout_note) c.layout_note = *layout_note;
    measured.push_back(std::move(c));
  }
  if (measured.empty()) return std::nullopt;
  std::sort(measured.begin(), measured.end(), rate_better);
  RateChoice r{measured.front(), std::nullopt, priced_out};
  if (measured.size() > 1) r.runner_up = measured[1];
  return r;
}

std::optional<PoolsForRate> pools_for_rate(const std::vector<int64_t>& sizes, const std::function<Deployment(int64_t)>& resolve_size,
                                           const std::function<sim::Pool(const Deployment&)>& one_replica_pool,
                                           std::span<const sim::Request> requests, const std::string& asked) {
  std::vector<int64_t> sorted = sizes;
  std::sort(sorted.begin(), sorted.end());
  auto pre = cheapest_for_rate(sorted, resolve_size, one_replica_pool, requests, asked, nullptr, sim::Phase::prefill, "--prefill-replicas sets them");
  auto dec = cheapest_for_rate(sorted, resolve_size, one_replica_pool, requests, asked, nullptr, sim::Phase::decode, "--decode-replicas sets them");
  if (!pre || !dec) return std::nullopt;
  // Round robin splits the arrivals evenly: a pool serves its replicas x one replica's.
  const auto pool_capacity = [](const RateCandidate& c) {
    sim::Capacity k = c.count.one;
    k.req_per_s *= static_cast<double>(c.count.replicas);
    k.uncertainty_req_per_s *= static_cast<double>(c.count.replicas);
    return k;
  };
  const sim::Capacity pc = pool_capacity(pre->choice), dc = pool_capacity(dec->choice);
  std::string line = "prefill pool " + pre->choice.count.line + "; decode pool " + dec->choice.count.line;
  return PoolsForRate{std::move(*pre), std::move(*dec), std::move(line), pc.req_per_s <= dc.req_per_s ? pc : dc};
}

std::string rate_choice_text(const RateChoice& r, const std::string& asked, const std::string& sets) {
  std::string s = rate_candidate_text(r.choice) + ": the cheapest replica size x count that serves " + asked + " (replicas line)";
  if (r.runner_up) s += "; runner-up " + rate_candidate_text(*r.runner_up);
  if (!r.sizes_priced_out.empty()) {
    std::string sizes;
    for (const int64_t c : r.sizes_priced_out) sizes += (sizes.empty() ? "" : ", ") + std::to_string(c);
    s += "; " + sizes + " chips cost as much or more at one replica";
  }
  return s + "; " + sets;
}

nlohmann::json rate_choice_json(const RateChoice& r) {
  return {{"rate_chosen", rate_candidate_json(r.choice)},
          {"rate_runner_up", r.runner_up ? rate_candidate_json(*r.runner_up) : nlohmann::json(nullptr)},
          {"sizes_priced_out", r.sizes_priced_out}};
}

}  // namespace chalk::cli
