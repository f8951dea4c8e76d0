// Options and output shared by `chalk simulate` and `chalk plan` (src/sim): traffic,
// engine policy, SLOs, the summary row, and the mapping of library fields to flags.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "chalk/sim/cluster.h"
#include "chalk/sim/energy.h"
#include "chalk/sim/lora.h"
#include "chalk/sim/metrics.h"
#include "chalk/sim/policy.h"
#include "chalk/sim/trace_formats.h"
#include "chalk/sim/traffic.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {

/// --rate, --rate-per-min, --arrivals, --cv, --requests, --seed, --input, --output,
/// --trace, --prefix-hit-rate, --shared-prefix, --sessions.
struct TrafficArgs {
  std::optional<double> rate, rate_per_min;
  std::string arrivals = "poisson";
  std::optional<double> cv;
  int64_t requests = 2000;
  uint64_t seed = 1;
  std::string input = "2048", output = "200";
  std::string trace;
  double prefix_hit_rate = 0;
  std::string shared_prefix, sessions;  ///< "" = none (traffic.h, PrefixTraffic)
  /// Set by traffic_from when it read --trace: the format detected and the rows it left
  /// out or reordered (sim/trace_formats.h), for describe_traffic and trace_warnings.
  mutable std::optional<sim::Trace> read;
  /// --kv-offload host:GB[,ssd:GB][,host-bw:GB/s][,ssd-bw:GB/s] (sim/kv_offload.h); "" = none.
  std::string kv_offload;
  /// --lora N:RANK[,zipf:S][,max-loras:M][,targets:...] (sim/lora.h); "" = none.
  std::string lora;
};

/// --kv-offload read (parse_kv_offload; InputError("--kv-offload")); none when not given.
/// Needs traffic with token structure (--shared-prefix, --sessions or a trace's prefix
/// columns): else InputError("--kv-offload").
sim::KvOffload kv_offload_from(const TrafficArgs& a, const std::vector<sim::Request>& r);
/// --lora read (parse_lora; InputError("--lora")); none when not given. A --trace whose
/// adapter column names adapters needs --lora (InputError("--trace")), and N above its
/// highest adapter id (InputError("--lora")).
sim::LoraSpec lora_from(const TrafficArgs& a, const std::vector<sim::Request>& r);
/// The LoRA outcome (SimRun::lora) summed over the replicas (both pools when disaggregated):
/// {adapters, lora_rank, max_loras, lora_targets, zipf_s, adapter_bytes, adapter_hbm_bytes,
/// adapter_load_s, host_fetch_gb_per_s_per_chip, host_fetch_source, adapter_loads,
/// adapter_evictions, adapter_load_total_s, lora_gemm_s, lora_steps}; null without LoRA.
nlohmann::json lora_json(const sim::ClusterRun& run, const sim::LoraSpec& s);
/// One line for people from lora_json ("" when null).
std::string lora_text(const nlohmann::json& j);

/// --engine and its overrides (the scheduler's knobs, issue 29: each engine's own name in
/// --help, the value used echoed in --json and written into the launch files).
struct PolicyArgs {
  std::string engine = "vllm";
  std::optional<int64_t> max_batched_tokens, block_size, max_seqs;
  std::string chunked_prefill;  ///< "", "on" or "off"
  std::string kv_admission;     ///< "", "to_completion" or "on_demand"
  /// --gpu-memory-utilization: the fraction of each chip's HBM for weights and KV cache
  /// (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static), in (0, 1]; unset: 1 -
  /// --memory-reserve (0.9 by default). Sets the deployment's memory_reserve_fraction.
  std::optional<double> gpu_memory_utilization;
  /// --engine-profile FILE: constants fitted by `chalk calibrate` (docs/file-formats.md,
  /// "Engine profiles"), replacing the engine's defaults; read by load_engine_profile.
  std::string engine_profile;
  std::optional<sim::EngineProfile> profile;
};

/// --ttft-slo-ms, --tpot-slo-ms, --slo-percentile.
struct SloArgs {
  std::optional<double> ttft_ms, tpot_ms;
  double percentile = 90;
};

void add_traffic_options(CLI::App& app, TrafficArgs& a, int64_t default_requests);
/// Adds --engine and the scheduler's knobs; call after add_deployment_options (its
/// --memory-reserve and --gpu-memory-utilization exclude each other).
void add_policy_options(CLI::App& app, PolicyArgs& a);
void add_slo_options(CLI::App& app, SloArgs& a);

/// The requests: the trace file's, or drawn from the stated process. Throws InputError
/// naming the flag (or the trace file and line).
std::vector<sim::Request> traffic_from(const TrafficArgs& a);
/// The synthetic traffic's shape without its rate: --arrivals and --cv, --requests, --seed,
/// --input, --output (checked, naming the flag); `plan --rate-curve` draws it at each rate.
sim::TrafficSpec traffic_shape_from(const TrafficArgs& a);
/// What reading --trace left out or reordered, one warning each ("trace t.csv (BurstGPT):
/// 2 rows with 0 prompt or 0 generated tokens skipped (failed requests)"); empty otherwise.
std::vector<std::string> trace_warnings(const TrafficArgs& a);
/// One line for people: "2,000 requests, Poisson at 16.7/s, input 2048, output 200 tokens".
std::string describe_traffic(const TrafficArgs& a, const std::vector<sim::Request>& r);
/// The prefix cache's outcome of a run with token structure (SimRun::prefix_caching):
/// {cached_token_fraction, cached_token_fraction_per_replica, kv_blocks_evicted} over the
/// replicas that prefill (the prefill pool's when disaggregated); null when no cache ran.
nlohmann::json prefix_cache_json(const sim::ClusterRun& run);
/// The offload tiers' outcome (SimRun::kv_offload) over the replicas that prefill:
/// {host_gb, ssd_gb, host_fetch_gb_per_s_per_chip, ssd_fetch_gb_per_s_per_chip,
/// hbm_hit_token_fraction, host_hit_token_fraction, ssd_hit_token_fraction,
/// kv_fetched_bytes, kv_fetch_s, kv_blocks_offloaded}; null without tiers.
nlohmann::json kv_offload_json(const sim::ClusterRun& run, const sim::KvOffload& o);
/// One line for people from kv_offload_json ("" when null).
std::string kv_offload_text(const nlohmann::json& j);
/// One line for people from prefix_cache_json ("" when no cache ran).
std::string prefix_cache_text(const nlohmann::json& j);

/// The warning for requests whose prompt + output tokens exceed the model's
/// max_position_embeddings, which the simulator rejects, in decode's words for the longest
/// ("context 200016 exceeds llama-3.1-8b's max_position_embeddings 131072: 3 of 3 requests
/// rejected, ..."); nullopt when every request fits. simulate and plan put it in "warnings".
std::optional<std::string> context_warning(const ModelSpec& m, const std::vector<sim::Request>& r);
/// Throws InputError("--input") when every request of `r` passes the model's
/// max_position_embeddings (an engine refuses each: nothing would be served), naming the
/// shortest request's prompt + output, the limit and the longest prompt that fits beside
/// that output; some requests beyond it leave context_warning's warning. Nothing for an
/// empty list or a model with no stated limit. simulate skips it under --allow-infeasible.
void refuse_all_beyond_context(const ModelSpec& m, const std::vector<sim::Request>& r);
/// With --engine-profile: reads the file into a.profile (its engine must be --engine's family,
/// else InputError("--engine-profile")) and sets the deployment's kernel floor and host time
/// from it. Without: nothing.
void load_engine_profile(PolicyArgs& a, DeploymentArgs& d);
/// The policy of --engine and its knobs, with the profile's constants when one was loaded.
sim::EnginePolicy policy_from(const PolicyArgs& a);
/// One line for people naming the profile and its constants ("" without one).
std::string engine_profile_text(const PolicyArgs& a);
/// {"file", "engine", constants...} for --json; null without a profile.
nlohmann::json engine_profile_json(const std::optional<sim::EngineProfile>& p);
/// The HBM fraction for weights and KV: --gpu-memory-utilization, checked in (0, 1], or else
/// 1 - `memory_reserve` (--memory-reserve). Throws InputError("--gpu-memory-utilization").
double memory_utilization_from(const PolicyArgs& a, double memory_reserve);
sim::Slo slo_from(const SloArgs& a);
/// --modes of `plan` and `fleet`: "both" keeps both, "aggregated" or "disaggregated" only
/// that one. Throws InputError("--modes") naming anything else.
void apply_modes(const std::string& modes, bool& aggregated, bool& disaggregated);

/// Runs `body`, renaming the library's field names in InputError to this command's flags.
void with_flag_names(const std::function<void()>& body);

/// The summary table: one row per deployment (add_summary_row). Keys of
/// docs/output-schema.md.
Table summary_table();
/// A row's replicas, keyed as `plan`'s rows: aggregated, `replicas` of `replica_chips` chips
/// each (every pipeline stage's); disaggregated, the prefill pool there and the decode pool in
/// `decode_replicas` of `decode_replica_chips` (0: aggregated, the decode columns empty).
struct SummaryPools {
  int64_t replica_chips = 0, replicas = 0;
  int64_t decode_replica_chips = 0, decode_replicas = 0;
};
/// `energy` (null: none, the energy columns empty) adds J per output token, J per request
/// and the run's kWh (sim/energy.h). The row's `chips` is every chip of the run (s.chips).
void add_summary_row(Table& t, const std::string& deployment, const std::string& layout, const SummaryPools& pools,
                     const sim::SimSummary& s, const sim::ClusterRun* run, const sim::ServingEnergy* energy = nullptr);

/// Occupancy over time (at most `points`) of the first replica (the decode pool's when
/// disaggregated): [{t_s, batch, waiting, kv_occupancy}].
nlohmann::json occupancy_json(const sim::ClusterRun& run, int64_t points);

/// Per-request latencies for charts (at most `limit` requests, evenly picked):
/// [{ttft_ms, tpot_ms, e2e_ms}].
nlohmann::json latencies_json(const sim::ClusterRun& run, int64_t limit);

/// What a pool of `replicas` replicas of `d` rents per hour: replicas x chips x the chip's
/// price, USD per hour; nullopt when the chip has no price.
std::optional<double> pool_usd_per_hour(const Deployment& d, int64_t replicas);

/// `d` resolved (resolve(), deployment_options.h) on `chips` chips (0: the replica rule's) of
/// `hardware` (empty: d.hardware): `chalk simulate`'s pools.
Deployment deployment_with_chips(const DeploymentArgs& d, int64_t chips, int64_t context, std::optional<ReplicaNote>* note = nullptr,
                                 const std::string& hardware = "");
/// One pool of mixed chips on its own system (--prefill-hardware, --decode-hardware): the
/// smallest replica of that system unless --prefill-chips / --decode-chips say otherwise. A
/// model that fits no replica there is an error naming the flag.
Deployment pool_deployment(const DeploymentArgs& d, const char* flag, const std::string& hardware, std::optional<int64_t> chips,
                           int64_t context, std::optional<ReplicaNote>* note = nullptr);

/// `chalk simulate`'s pipeline stages (docs/simulator.md 1.10): the busiest stage of `pp`
/// stages over `a`'s chips (resolve_pipeline_stage: -n counts every stage's chips; without
/// -n each stage on the smallest replica that holds it), without the layout chooser.
/// `layout` is "PP2 x (TP8)"; `text` the "pipeline    ..." line for people.
struct SimPipeline {
  Deployment stage;
  int64_t pp = 1;
  std::string layout, text;
};
SimPipeline simulate_pipeline(const DeploymentArgs& a, int64_t pp, int64_t context);

/// simulate's warning for an overloaded `mode` ("aggregated: OVERLOADED: arrivals of A req/s
/// exceed the deployment's capacity of about C +- u req/s ..."; docs/simulator.md, Overload).
std::string overload_warning(const std::string& mode, const sim::Overload& o);

/// `chalk simulate`'s replica count for a stated rate (review 7 M6; docs/simulator.md,
/// "Replicas for a rate"): `one_replica`'s saturated capacity mu_1 (sim::saturated_capacity)
/// and N = sim::replicas_for_rate(arrivals, mu_1); `line` the replica line's text ("10
/// replicas of 2 chips: the fewest that serve --rate 5 req/s (...)"), empty and `replicas`
/// 1 when mu_1 was not measured. `chips` counts one replica's chips, every stage's; `asked`
/// names the rate ("--rate 5 req/s", "the trace's mean rate"). Throws InputError("--rate")
/// when N exceeds the 1,000,000 replicas a simulated pool takes (sim/cluster.cc).
struct RateReplicas {
  int64_t replicas = 1;
  sim::Capacity one;  ///< one replica's capacity
  std::string line;
};
/// `phase`: the pool's part of each request (a disaggregated pool: prefill or decode);
/// `sets`: the flags that set the count, ending the line.
RateReplicas replicas_serving_rate(const sim::Pool& one_replica, std::span<const sim::Request> requests, const std::string& asked,
                                   int64_t chips, sim::Phase phase = sim::Phase::both, const std::string& sets = "--replicas or -n sets them");

}  // namespace chalk::cli
