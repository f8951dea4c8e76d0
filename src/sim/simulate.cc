// simulate(): the engine's own mechanisms on the deployment, then the event loop with each
// request reaching the scheduler after its fixed work outside the GPU (simulator.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/engine_name.h"
#include "chalk/sim/simulator.h"
#include "scheduler.h"

namespace chalk::sim {

/// Checks a run's options against its traffic (prefix_hit_rate in [0, 1), kv_blocks >= 0, not
/// both a fixed hit rate and traffic with prefix structure) and says whether the run caches
/// prefixes by the traffic's token structure (not in a decode pool). Throws InputError.
bool detail::check_sim_options(std::span<const Request> requests, const SimOptions& o, Phase phase) {
  if (!(o.prefix_hit_rate >= 0 && o.prefix_hit_rate < 1)) {
    throw InputError("prefix_hit_rate", "must be a fraction in [0, 1), got " + fmt::format("{:.6g}", o.prefix_hit_rate));
  }
  if (o.kv_blocks < 0) throw InputError("kv_blocks", "must be >= 0, got " + std::to_string(o.kv_blocks));
  // Prefix caching follows the traffic's token structure; a decode pool's requests arrive
  // with their KV (the prefill pool's cache served them).
  const bool caching = phase != Phase::decode && std::any_of(requests.begin(), requests.end(), [](const Request& q) { return !q.prefix.empty(); });
  if (caching && o.prefix_hit_rate > 0) {
    throw InputError("prefix_hit_rate", "is the simple mode (a fixed fraction of each prompt cached), got " + fmt::format("{:.6g}", o.prefix_hit_rate) +
                                            " with traffic that carries prefix structure (shared prompts, sessions); expected one of the two");
  }
  return caching;
}

/// Each request's record in `run` and its state in the scheduler before the first step,
/// after check_request: a fixed prefix hit rate's cached tokens, and a decode pool's requests
/// arriving with their first token (from the prefill pool).
std::vector<detail::Live> detail::start_requests(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase, SimRun& run) {
  std::vector<Live> live(requests.size());
  const int64_t n = static_cast<int64_t>(requests.size());
  for (int64_t i = 0; i < n; ++i) {
    const Request& q = requests[i];
    check_request(d, q, i, o, phase);
    auto& rec = run.requests[i];
    rec.arrival_s = q.arrival_s;
    rec.input_tokens = q.input_tokens;
    rec.output_tokens = q.output_tokens;
    auto& L = live[i];
    L.output = phase == Phase::prefill ? 1 : q.output_tokens;
    // At least one prompt token is computed: it yields the first token's logits.
    rec.cached_tokens = std::min<int64_t>(static_cast<int64_t>(std::floor(o.prefix_hit_rate * static_cast<double>(q.input_tokens))),
                                          q.input_tokens - 1);
    if (phase == Phase::decode) {
      L.upstream_prefilled = true;
      L.generated = 1;
      // Its first token is out of the prefill pool; the user sees it at admission here.
      L.last_token_s = q.arrival_s;
      rec.first_token_s = q.arrival_s;
    } else {
      L.prefill_target = q.input_tokens;
    }
  }
  return live;
}

void detail::check_request(const Deployment& d, const Request& q, int64_t i, const SimOptions& o, Phase phase) {
  if (q.input_tokens < 1 || q.output_tokens < 1 || !(q.arrival_s >= 0) || !std::isfinite(q.arrival_s)) {
    throw InputError("request " + std::to_string(i), "needs arrival_s >= 0 and input and output tokens >= 1");
  }
  if (!(q.arrival_s <= max_clock_s)) {  // for callers that build requests themselves (Python, the API)
    throw InputError("request " + std::to_string(i), "arrival_s " + fmt::format("{:.6g}", q.arrival_s) + " is beyond the " + clock_limit_text());
  }
  // vLLM refuses to start when a whole prompt cannot fit one step (SchedulerConfig:
  // max_num_batched_tokens < max_model_len without chunked prefill); here the longest
  // prompt the traffic sends stands for max_model_len. Requests rejected for their
  // context are not counted.
  const bool served = d.model.max_context <= 0 || q.input_tokens + q.output_tokens <= d.model.max_context;
  if (!o.policy.chunked_prefill && phase != Phase::decode && served && q.input_tokens > o.policy.max_batched_tokens) {
    throw whole_prompt_over_budget(o.policy, q.input_tokens);
  }
  for (const auto& seg : q.prefix) {
    if (seg.tokens < 1) throw InputError("request " + std::to_string(i), "a prefix segment needs tokens >= 1, got " + std::to_string(seg.tokens));
  }
}

InputError detail::whole_prompt_over_budget(const EnginePolicy& p, int64_t prompt_tokens) {
  // Name the engine simulated, not always vLLM: TensorRT-LLM's defaults run with chunked
  // prefill off, so it meets this check most often.
  const std::string why = p.name == "vllm"     ? "vLLM refuses to start so"
                          : p.name == "sglang" ? "SGLang cannot schedule a whole prompt over its step budget"
                          : p.name == "trtllm" ? "TensorRT-LLM cannot schedule a whole prompt over max_num_tokens"
                                               : "the engine '" + p.name + "' cannot schedule a whole prompt over its step budget";
  return InputError("max_batched_tokens", "is " + std::to_string(p.max_batched_tokens) + ", below a " + std::to_string(prompt_tokens) +
                                              "-token prompt with chunked prefill off (" + why + "); expected >= the longest prompt or chunked prefill on");
}

std::vector<int32_t> detail::arrival_order(std::span<const Request> requests) {
  std::vector<int32_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  const auto earlier = [&](int32_t a, int32_t b) { return requests[a].arrival_s < requests[b].arrival_s; };
  if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
  return order;
}

void detail::reserve_steps(std::vector<StepSample>& steps, int64_t arrived, int64_t n) {
  const double have = static_cast<double>(std::max<std::size_t>(16, steps.capacity()));
  const double projected = 1.25 * static_cast<double>(steps.size()) * static_cast<double>(n) / static_cast<double>(std::max<int64_t>(1, arrived));
  steps.reserve(static_cast<std::size_t>(std::clamp(projected, 2 * have, 8 * have)));
}

Deployment engine_deployment(const Deployment& d, const EnginePolicy& policy) {
  Deployment local = d;
  if (!d.mechanisms.enabled) return local;
  // The engine's own tensor-parallel all-reduce kernels (engine_tp_all_reduce) price its steps.
  if (is_serving_engine(policy.name)) local.mechanisms.tp_all_reduce = engine_tp_all_reduce(policy.name);
  // Its host work per step (the policy's: time per sequence, overlapped or not) too.
  local.mechanisms.host = policy.host;
  // And its CUDA graphs: the sizes its release captures under the policy's caps, eager where
  // the deployment says so (--enforce-eager).
  CudaGraphs graphs = engine_cuda_graphs(sim::release_name(policy), policy.max_sequences, policy.max_batched_tokens);
  graphs.eager = d.mechanisms.graphs.eager;
  local.mechanisms.graphs = std::move(graphs);
  return local;
}

SimRun simulate(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase) {
  validate(o.policy);
  // The deployment as the engine runs it (engine_deployment); a copy only where it differs.
  const std::string& engine = o.policy.name;
  const bool known = is_serving_engine(engine);
  Deployment local;
  const Deployment* dep = &d;
  const HostTime& host = o.policy.host;
  const bool same_host = d.mechanisms.host.s_per_sequence == host.s_per_sequence && d.mechanisms.host.overlap == host.overlap;
  const CudaGraphs graphs = engine_cuda_graphs(sim::release_name(o.policy), o.policy.max_sequences, o.policy.max_batched_tokens);
  const CudaGraphs& had = d.mechanisms.graphs;
  const bool same_graphs = had.sizes == graphs.sizes && had.per_token == graphs.per_token && had.decode_only == graphs.decode_only &&
                           had.padding == graphs.padding && had.max_below_tp4 == graphs.max_below_tp4;
  if (d.mechanisms.enabled && ((known && d.mechanisms.tp_all_reduce.name != engine) || !same_host || !same_graphs)) {
    local = engine_deployment(d, o.policy);
    dep = &local;
  }
  // A request reaches the scheduler after its fixed work outside the GPU (API server,
  // tokenization, first-token streaming: request_overhead_s); a disaggregated decode pool's
  // request paid it in the prefill pool.
  const double overhead = phase == Phase::decode ? 0.0 : o.policy.request_overhead_s;
  if (!(overhead > 0)) return detail::run_at_scheduler(*dep, requests, o, phase);
  for (std::size_t i = 0; i < requests.size(); ++i) {  // the loop's own check, on the arrivals as given
    if (!(requests[i].arrival_s >= 0) || !std::isfinite(requests[i].arrival_s)) {
      throw InputError("request " + std::to_string(i), "needs arrival_s >= 0 and input and output tokens >= 1");
    }
  }
  std::vector<Request> shifted(requests.begin(), requests.end());
  for (auto& q : shifted) q.arrival_s += overhead;
  SimRun run = detail::run_at_scheduler(*dep, shifted, o, phase);
  int64_t served = 0;
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    run.requests[i].arrival_s = requests[i].arrival_s;
    if (!run.requests[i].rejected) ++served;
  }
  // Little's law counts each served request from its arrival at the server.
  run.requests_in_system_s += overhead * static_cast<double>(served);
  return run;
}

}  // namespace chalk::sim
