// Serving rows at a request rate or concurrency, predicted through the request simulator
// (validate_internal.h, Target::serving_simulated; docs/simulator.md).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/metrics.h"
#include "chalk/sim/policy.h"
#include "validate_internal.h"

namespace chalk::detail {

HostTime row_engine_host(const std::string& engine) {
  if (is_serving_engine(engine)) return sim::engine_policy(engine).host;
  return engine_host_time(engine.empty() ? "vllm" : engine);
}

CudaGraphs row_engine_graphs(const RowPlan& p) {
  return engine_cuda_graphs(p.engine.empty() ? "vllm" : p.engine, p.max_sequences, p.max_batched_tokens);
}

void simulated_values(const RowPlan& p, const Deployment& plain, const Deployment& mech, double per_chips, double& plain_v,
                      double& mech_v, std::string& inputs, std::vector<std::string>& notes) {
  const int64_t n = p.requests > 0 ? p.requests : 1000;
  const int64_t input = p.prompt + p.prefix;
  std::vector<sim::Request> reqs;
  if (p.request_rate_per_s > 0 && p.constant_arrivals) {
    // One request every 1 / rate seconds, the first after one gap (as generate_traffic).
    const int64_t len = std::max<int64_t>(p.output, 1);
    reqs.reserve(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) reqs.push_back(sim::Request{static_cast<double>(i + 1) / p.request_rate_per_s, input, len, {}});
  } else if (p.request_rate_per_s > 0) {
    sim::TrafficSpec t;
    t.rate_per_s = p.request_rate_per_s;
    t.requests = n;
    t.input = {sim::LengthDist::Kind::fixed, input};
    t.output = {sim::LengthDist::Kind::fixed, std::max<int64_t>(p.output, 1)};
    reqs = sim::generate_traffic(t);
  } else {
    reqs.assign(static_cast<std::size_t>(n), sim::Request{0, input, std::max<int64_t>(p.output, 1), {}});
  }
  // A serving engine, with its release where the row names one ("vllm-0.10").
  const bool known = is_serving_engine(p.engine);
  sim::SimOptions o;
  o.policy = sim::engine_policy(known ? p.engine : "vllm");
  o.policy.reserve_to_completion = p.kv_reserved;  // the row's kv_admission, else the engine's
  o.policy.chunked_prefill = !p.whole_prompts;     // the row's chunked_prefill, else the engine's
  sim::apply(p.profile, o.policy);                 // an engine profile's request overhead and host time
  if (p.max_batched_tokens > 0) o.policy.max_batched_tokens = p.max_batched_tokens;  // the row's knobs, else the engine's
  if (p.max_sequences > 0) o.policy.max_sequences = p.max_sequences;
  if (p.request_rate_per_s <= 0 && !p.batch_from_capacity) {
    // `batch` requests in flight at once (the client's concurrency): no more run, and no
    // more than the row's stated cap.
    const int64_t in_flight = std::max<int64_t>(1, std::llround(p.batch));
    o.policy.max_sequences = p.max_sequences > 0 ? std::min(p.max_sequences, in_flight) : in_flight;
  }
  o.prefix_hit_rate = input > 0 ? static_cast<double>(p.prefix) / static_cast<double>(input) : 0;
  // The metrics of one measured run (a load stage's TTFT, TPOT and E2E) are rows of one
  // simulation: the last run's summaries are kept, keyed by every input of it, so adjacent
  // rows of the same run simulate once (a third of the time for the vLLM load suite).
  static thread_local std::string last_key;
  static thread_local sim::SimSummary last_plain, last_mech;
  std::string key = inputs + "|" + p.model + "|" + p.hardware + "|" + p.engine + "|" + o.policy.name;
  for (const double v : {static_cast<double>(p.chips), static_cast<double>(p.heads_padded_to), p.gpu_memory_utilization, p.mtp_tokens,
                         p.mtp_accepted, p.attention_tokens, p.cache_hit_fraction, o.prefix_hit_rate, p.request_rate_per_s,
                         static_cast<double>(p.constant_arrivals), static_cast<double>(n), static_cast<double>(input),
                         static_cast<double>(p.output), static_cast<double>(o.policy.max_batched_tokens),
                         static_cast<double>(o.policy.max_sequences), static_cast<double>(o.policy.chunked_prefill),
                         static_cast<double>(o.policy.reserve_to_completion), static_cast<double>(p.kv_split_heads)}) {
    key += '|';
    key += std::to_string(v);
  }
  // The engine's constants, which an engine profile (chalk calibrate) may change.
  key += fmt::format("|{:.17g},{:.17g},{},{}", o.policy.request_overhead_s, o.policy.host.s_per_sequence, o.policy.host.overlap,
                     o.policy.schedule_ahead);
  for (const Deployment* d : {&plain, &mech}) {
    key += fmt::format("|{:.17g}", d->mechanisms.calibration.kernel_floor.value());
    const ParallelLayout& l = d->mechanisms.layout;
    key += "|" + std::to_string(d->n_chips) + "," + std::to_string(l.tp_attention) + "," + std::to_string(l.tp_ffn) + "," +
           std::to_string(l.ep) + "," + std::to_string(l.tp_expert) + "," + std::to_string(l.kv_sharded_by_batch) + "," +
           std::to_string(l.weight_gathered) + "," + std::to_string(l.overlap_micro_batches) + "," +
           std::to_string(l.dispatch_bytes_per_element) + "," + std::to_string(l.combine_bytes_per_element) + "," + l.description +
           "," + std::to_string(d->mechanisms.enabled) + "," + std::to_string(d->memory_reserve_fraction) + "," +
           std::to_string(d->matmul_efficiency) + "," + std::to_string(d->hbm_efficiency) + "," + std::to_string(d->weight_bytes_total.value()) +
           "," + std::to_string(static_cast<int>(d->kv)) + "," + std::to_string(static_cast<int>(d->compute));
  }
  auto summary = [&](const Deployment& d) {
    const sim::ClusterRun run = sim::simulate_aggregated(sim::Pool{d, 1, o, sim::Routing::round_robin, {}}, reqs);
    if (!run.fits) throw InputError("memory", run.reason);
    return sim::summarize(run, {});
  };
  if (key != last_key) {
    last_key.clear();  // a throw below leaves no stale entry
    last_plain = summary(plain);
    last_mech = summary(mech);
    last_key = key;
  }
  auto value = [&](const Deployment& d) {
    const sim::SimSummary& s = &d == &plain ? last_plain : last_mech;
    const double chips = static_cast<double>(d.n_chips);
    if (p.metric == "ttft_ms") return s.ttft.mean;
    if (p.metric == "tpot_ms") return s.tpot.mean;
    if (p.metric == "itl_ms") return s.itl.mean;
    if (p.metric == "tok_per_s_per_user") return s.tpot.mean > 0 ? 1.0 / s.tpot.mean : 0.0;
    if (p.metric == "e2e_s") return s.e2e.mean;
    return s.output_tok_per_s * per_chips / chips;  // output tokens/s (x (in + out) / out by the caller)
  };
  plain_v = value(plain);
  mech_v = value(mech);
  inputs += ", " + std::to_string(n) + " requests of " + std::to_string(input) + " in, " + std::to_string(p.output) + " out, " +
            (p.request_rate_per_s > 0 ? std::string(p.constant_arrivals ? "constant" : "Poisson") + fmt::format(" at {:g}/s", p.request_rate_per_s)
                                      : "all at once, " + std::to_string(o.policy.max_sequences) + " running at most") +
            ", " + o.policy.name + " scheduler";
  notes.push_back("simulated (docs/simulator.md): continuous batching, " + std::to_string(o.policy.max_batched_tokens) +
                  "-token steps, chunked prefill " + (o.policy.chunked_prefill ? "on" : "off") +
                  (o.policy.reserve_to_completion ? ", KV reserved to completion at admission" : "") + (known ? "" : " (vLLM's defaults for engine '" + p.engine + "')"));
}

}  // namespace chalk::detail
