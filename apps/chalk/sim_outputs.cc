// The simulator's outputs for people and programs (sim_cli.h): the summary table of a run per
// mode, the prefix cache's figures, the occupancy timeline and the latency samples of
// `simulate`'s JSON and plots. The inputs (traffic, policy, SLO options) are in sim_cli.cc.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim_cli.h"

namespace chalk::cli {

Table summary_table() {
  Table t;
  t.columns = {{"mode", "mode"},
               {"chips", "chips"},
               {"replica_chips", "replica"},
               {"replicas", "replicas"},
               {"decode_replica_chips", "decode replica"},
               {"decode_replicas", "decode replicas"},
               {"layout", "layout"},
               {"ttft_p50_ms", "TTFT p50 ms"},
               {"ttft_p90_ms", "TTFT p90"},
               {"ttft_p99_ms", "TTFT p99"},
               {"tpot_p50_ms", "TPOT p50 ms"},
               {"tpot_p90_ms", "TPOT p90"},
               {"tpot_p99_ms", "TPOT p99"},
               {"itl_p50_ms", "ITL p50 ms"},
               {"itl_p90_ms", "ITL p90"},
               {"itl_p99_ms", "ITL p99"},
               {"e2e_p50_ms", "E2E p50 ms"},
               {"e2e_p90_ms", "E2E p90"},
               {"e2e_p99_ms", "E2E p99"},
               {"queue_mean_ms", "queue mean ms"},
               {"queue_p99_ms", "queue p99"},
               {"output_tok_per_s", "out tok/s"},
               {"total_tok_per_s", "in+out tok/s"},
               {"tok_per_s_per_chip", "tok/s/chip"},
               {"total_tok_per_s_per_chip", "in+out /chip"},
               {"goodput_req_per_s", "goodput req/s"},
               {"slo_attainment", "SLO met"},
               {"mean_decode_batch", "batch"},
               {"mean_kv_occupancy", "KV use"},
               {"peak_kv_occupancy", "KV peak"},
               {"accepted_tokens_per_step", "kept/step"},
               {"preemptions", "preempt"},
               {"finished", "finished"},
               {"rejected", "rejected"},
               {"kv_transfer_ms", "KV xfer ms"},
               {"kv_transfer_bytes", "KV xfer B"},
               {"energy_j_per_output_token", "J/out tok"},
               {"energy_j_per_request", "J/req"},
               {"energy_kwh", "kWh"}};
  t.set_priority({"mode", "chips", "energy_j_per_output_token"}, 0);
  t.set_priority({"energy_j_per_request", "energy_kwh"}, 2);
  t.set_priority({"replica_chips", "replicas", "decode_replica_chips", "decode_replicas", "layout", "ttft_p90_ms", "tpot_p90_ms", "itl_p50_ms", "itl_p90_ms", "e2e_p50_ms", "e2e_p90_ms",
                  "queue_p99_ms", "total_tok_per_s", "total_tok_per_s_per_chip", "goodput_req_per_s", "peak_kv_occupancy",
                  "finished", "rejected", "kv_transfer_ms", "kv_transfer_bytes", "mean_kv_occupancy", "queue_mean_ms", "itl_p99_ms",
                  "output_tok_per_s"},
                 2);
  return t;
}

void add_summary_row(Table& t, const std::string& deployment, const std::string& layout, const SummaryPools& pools, const sim::SimSummary& s,
                     const sim::ClusterRun* run, const sim::ServingEnergy* energy) {
  // A percentile of no requests does not exist: null (JSON), empty (CSV), "-" (text), never 0.
  const auto ms = [](const sim::Percentiles& p, double x) { return p.count > 0 ? Cell(x * 1e3) : Cell{}; };
  Cell xfer_ms, xfer_b;
  if (run != nullptr && run->disaggregated && s.finished > 0) {
    xfer_ms = run->kv_transfer_s_mean * 1e3;
    xfer_b = run->kv_transfer_bytes_total / static_cast<double>(s.finished);
  }
  const bool decode_pool = pools.decode_replicas > 0;
  t.add({deployment, s.chips, pools.replica_chips, pools.replicas, decode_pool ? Cell(pools.decode_replica_chips) : Cell{},
         decode_pool ? Cell(pools.decode_replicas) : Cell{}, layout, ms(s.ttft, s.ttft.p50), ms(s.ttft, s.ttft.p90), ms(s.ttft, s.ttft.p99),
         ms(s.tpot, s.tpot.p50), ms(s.tpot, s.tpot.p90), ms(s.tpot, s.tpot.p99), ms(s.itl, s.itl.p50), ms(s.itl, s.itl.p90),
         ms(s.itl, s.itl.p99), ms(s.e2e, s.e2e.p50), ms(s.e2e, s.e2e.p90), ms(s.e2e, s.e2e.p99), ms(s.queue, s.queue.mean),
         ms(s.queue, s.queue.p99), s.output_tok_per_s, s.total_tok_per_s, s.output_tok_per_s_per_chip, s.total_tok_per_s_per_chip,
         s.goodput_req_per_s, s.slo_attainment, s.mean_decode_batch, s.mean_kv_occupancy, s.peak_kv_occupancy,
         s.accepted_tokens_per_step > 0 ? Cell(s.accepted_tokens_per_step) : Cell{}, s.preemptions,
         s.finished, s.rejected, xfer_ms, xfer_b,
         energy && energy->output_tokens > 0 ? Cell(energy->j_per_output_token) : Cell{},
         energy && energy->requests > 0 ? Cell(energy->j_per_request) : Cell{}, energy ? Cell(energy->energy_kwh) : Cell{}});
}

nlohmann::json prefix_cache_json(const sim::ClusterRun& run) {
  const auto& runs = run.disaggregated ? run.prefill_runs : run.runs;
  if (runs.empty() || !runs.front().prefix_caching) return nullptr;
  double cached = 0, prompt = 0;
  int64_t evicted = 0;
  nlohmann::json per = nlohmann::json::array();
  for (const auto& r : runs) {
    double c = 0, p = 0;
    for (const auto& q : r.requests) {
      if (q.rejected) continue;
      c += static_cast<double>(q.cached_tokens);
      p += static_cast<double>(q.input_tokens);
    }
    per.push_back(p > 0 ? nlohmann::json(c / p) : nlohmann::json(nullptr));
    cached += c;
    prompt += p;
    evicted += r.kv_blocks_evicted;
  }
  return {{"cached_token_fraction", prompt > 0 ? nlohmann::json(cached / prompt) : nlohmann::json(nullptr)},
          {"cached_token_fraction_per_replica", per},
          {"kv_blocks_evicted", evicted}};
}

std::string prefix_cache_text(const nlohmann::json& j) {
  if (j.is_null()) return "";
  const auto pct = [](const nlohmann::json& x) { return x.is_null() ? std::string("-") : format_number(100 * x.get<double>(), 3) + "%"; };
  std::string per;
  const auto& r = j["cached_token_fraction_per_replica"];
  if (r.size() > 1) {
    for (std::size_t k = 0; k < r.size() && k < 8; ++k) per += (k == 0 ? " (replicas: " : ", ") + pct(r[k]);
    per += r.size() > 8 ? ", ...)" : ")";
  }
  return fmt::format("{} of prompt tokens served from the prefix cache{}; {} cached KV blocks evicted (LRU)", pct(j["cached_token_fraction"]), per,
                     j["kv_blocks_evicted"].get<int64_t>());
}

nlohmann::json kv_offload_json(const sim::ClusterRun& run, const sim::KvOffload& o) {
  const auto& runs = run.disaggregated ? run.prefill_runs : run.runs;
  if (runs.empty() || !runs.front().kv_offload) return nullptr;
  double cached = 0, prompt = 0, host = 0, ssd = 0, bytes = 0, seconds = 0;
  int64_t offloaded = 0;
  for (const auto& r : runs) {
    for (const auto& q : r.requests) {
      if (q.rejected) continue;
      cached += static_cast<double>(q.cached_tokens);
      prompt += static_cast<double>(q.input_tokens);
    }
    host += static_cast<double>(r.offload_host_tokens);
    ssd += static_cast<double>(r.offload_ssd_tokens);
    bytes += r.kv_fetched_bytes;
    seconds += r.kv_fetch_s;
    offloaded += r.kv_blocks_offloaded;
  }
  const auto frac = [&](double x) { return prompt > 0 ? nlohmann::json(x / prompt) : nlohmann::json(nullptr); };
  const auto& rates = runs.front().offload_rates;
  return {{"host_gb", o.host_gb},
          {"ssd_gb", o.ssd_gb},
          {"host_fetch_gb_per_s_per_chip", rates.host_bytes_per_s / 1e9},
          {"ssd_fetch_gb_per_s_per_chip", rates.ssd_bytes_per_s / 1e9},
          {"host_fetch_source", rates.host_source},
          {"ssd_fetch_source", rates.ssd_source},
          {"hbm_hit_token_fraction", frac(cached - host - ssd)},
          {"host_hit_token_fraction", frac(host)},
          {"ssd_hit_token_fraction", frac(ssd)},
          {"kv_fetched_bytes", bytes},
          {"kv_fetch_s", seconds},
          {"kv_blocks_offloaded", offloaded}};
}

std::string kv_offload_text(const nlohmann::json& j) {
  if (j.is_null()) return "";
  const auto pct = [](const nlohmann::json& x) { return x.is_null() ? std::string("-") : format_number(100 * x.get<double>(), 3) + "%"; };
  return fmt::format("host {} GB at {} GB/s per chip, SSD {} GB at {} GB/s per chip: prompt tokens hit HBM {}, host {}, SSD {}; {} GB fetched in "
                     "{} s (layer by layer under the step); {} blocks offloaded",
                     format_number(j["host_gb"].get<double>(), 4), format_number(j["host_fetch_gb_per_s_per_chip"].get<double>(), 3),
                     format_number(j["ssd_gb"].get<double>(), 4), format_number(j["ssd_fetch_gb_per_s_per_chip"].get<double>(), 3),
                     pct(j["hbm_hit_token_fraction"]), pct(j["host_hit_token_fraction"]), pct(j["ssd_hit_token_fraction"]),
                     format_number(j["kv_fetched_bytes"].get<double>() / 1e9, 4), format_number(j["kv_fetch_s"].get<double>(), 4),
                     j["kv_blocks_offloaded"].get<int64_t>());
}

nlohmann::json occupancy_json(const sim::ClusterRun& run, int64_t points) {
  nlohmann::json j = nlohmann::json::array();
  if (run.runs.empty()) return j;
  for (const auto& p : sim::occupancy_timeline(run.runs.front(), points)) {
    j.push_back({{"t_s", p.t_s}, {"batch", p.batch}, {"waiting", p.waiting}, {"kv_occupancy", p.kv_occupancy}});
  }
  return j;
}

nlohmann::json latencies_json(const sim::ClusterRun& run, int64_t limit) {
  std::vector<const sim::RequestRecord*> all;
  if (run.disaggregated) {
    for (const auto& r : run.end_to_end.requests) all.push_back(&r);
  } else {
    for (const auto& x : run.runs) {
      for (const auto& r : x.requests) all.push_back(&r);
    }
  }
  nlohmann::json j = nlohmann::json::array();
  const std::size_t step = std::max<std::size_t>(1, all.size() / static_cast<std::size_t>(std::max<int64_t>(limit, 1)));
  for (std::size_t i = 0; i < all.size(); i += step) {
    const auto& r = *all[i];
    if (r.rejected) continue;
    nlohmann::json row = {{"ttft_ms", (r.first_token_s - r.arrival_s) * 1e3}, {"e2e_ms", (r.finish_s - r.arrival_s) * 1e3}};
    row["tpot_ms"] = r.output_tokens > 1 ? nlohmann::json((r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1) * 1e3)
                                         : nlohmann::json(nullptr);
    j.push_back(row);
  }
  return j;
}

nlohmann::json lora_json(const sim::ClusterRun& run, const sim::LoraSpec& s) {
  std::vector<const sim::SimRun*> runs;
  for (const auto& r : run.runs) runs.push_back(&r);
  for (const auto& r : run.prefill_runs) runs.push_back(&r);
  if (runs.empty() || !runs.front()->lora) return nullptr;
  int64_t loads = 0, evictions = 0, steps = 0;
  double load_s = 0, gemm_s = 0;
  for (const auto* r : runs) {
    loads += r->lora_loads;
    evictions += r->lora_evictions;
    steps += r->lora_steps;
    load_s += r->lora_load_s;
    gemm_s += r->lora_gemm_s;
  }
  const sim::SimRun& f = *runs.front();
  const std::string d = sim::describe_lora(s);
  return {{"adapters", s.adapters},
          {"lora_rank", s.rank},
          {"max_loras", s.max_loras},
          {"lora_targets", d.substr(d.find("targets:") + 8)},
          {"zipf_s", s.zipf_s},
          {"adapter_bytes", f.lora_adapter_bytes},
          {"adapter_hbm_bytes", f.lora_hbm_bytes},
          {"adapter_load_s", f.lora_load_s_each},
          {"host_fetch_gb_per_s_per_chip", f.lora_host_bytes_per_s / 1e9},
          {"host_fetch_source", f.lora_host_source},
          {"adapter_loads", loads},
          {"adapter_evictions", evictions},
          {"adapter_load_total_s", load_s},
          {"lora_gemm_s", gemm_s},
          {"lora_steps", steps}};
}

std::string lora_text(const nlohmann::json& j) {
  if (j.is_null()) return "";
  return fmt::format("{} adapters of rank {} ({}), {} MB each; {} in HBM slots ({} GB); {} loads at {} ms each over {} GB/s per chip, {} s of "
                     "loads and {} s of multi-adapter GEMM added to {} steps",
                     j["adapters"].get<int64_t>(), j["lora_rank"].get<int64_t>(), j["lora_targets"].get<std::string>(),
                     format_number(j["adapter_bytes"].get<double>() / 1e6, 4), j["max_loras"].get<int64_t>(),
                     format_number(j["adapter_hbm_bytes"].get<double>() / 1e9, 3), j["adapter_loads"].get<int64_t>(),
                     format_number(j["adapter_load_s"].get<double>() * 1e3, 3), format_number(j["host_fetch_gb_per_s_per_chip"].get<double>(), 3),
                     format_number(j["adapter_load_total_s"].get<double>(), 4), format_number(j["lora_gemm_s"].get<double>(), 4),
                     j["lora_steps"].get<int64_t>());
}

std::string overload_warning(const std::string& mode, const sim::Overload& o) {
  const std::string within = o.capacity_uncertainty_req_per_s > 0 ? " +- " + readable(o.capacity_uncertainty_req_per_s, 2) : std::string();
  // What flagged it (review 9 L2: "TTFT grows -1.00 s per second" when the capacity probe
  // had flagged it and the run's own TTFT did not grow): the growth where it passed
  // kOverloadGrowth, else the capacity measured with a full queue.
  const std::string why = o.ttft_growth > sim::kOverloadGrowth
                              ? fmt::format("TTFT grows {} s per second of arrivals", format_number(o.ttft_growth, 3))
                              : std::string("capacity measured with every replica's queue full");
  return fmt::format("{}: OVERLOADED: arrivals of {} req/s exceed the deployment's capacity of about {}{} req/s at these lengths "
                     "({}); queues grow for the whole run, so latency percentiles depend on its length: add chips or lower the rate",
                     mode, readable(o.arrival_req_per_s, 4), readable(o.capacity_req_per_s, 4), within, why);
}

RateReplicas replicas_serving_rate(const sim::Pool& one_replica, std::span<const sim::Request> requests, const std::string& asked,
                                   int64_t chips, sim::Phase phase, const std::string& sets) {
  RateReplicas r;
  r.one = sim::saturated_capacity(one_replica, requests, phase);
  if (!r.one.measured()) return r;
  const double arrivals = sim::arrival_rate(requests);
  r.replicas = sim::replicas_for_rate(arrivals, r.one.req_per_s);
  // The rate, not --replicas (review 10 L4: --rate 1e9 said "--replicas: replicas must be
  // 1..1000000, got 46234520", a flag not given): the pool's bound (sim/cluster.cc) named here.
  constexpr int64_t kMostReplicas = 1'000'000;
  if (r.replicas > kMostReplicas) {
    throw InputError("--rate", fmt::format("arrivals of {} req/s take {} replicas of {} (one serves {} req/s with its queue full, "
                                           "at most {} of it), beyond the {} a simulation runs; a lower --rate",
                                           readable(arrivals, 4), readable(static_cast<double>(r.replicas), 4), counted(chips, "chip"), format_number(r.one.req_per_s, 4),
                                           fmt::format("{:g}", sim::kReplicaUtilization), kMostReplicas));
  }
  r.line = fmt::format("{} of {}: the fewest that serve {} (arrivals {} req/s <= {} x {} x {} req/s, one replica's "
                       "capacity with its queue full); {}",
                       counted(r.replicas, "replica"), counted(chips, "chip"), asked, format_number(arrivals, 4),
                       fmt::format("{:g}", sim::kReplicaUtilization), r.replicas, format_number(r.one.req_per_s, 4), sets);
  return r;
}

}  // namespace chalk::cli
