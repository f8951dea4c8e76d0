// Replicas, pools and the KV transfer between them (cluster.h).
#include "chalk/sim/cluster.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/model/context_math.h"
#include "cluster_internal.h"
#include "scheduler.h"

namespace chalk::sim {
namespace {

void check_pool(const Pool& p, const char* field) {
  if (p.replicas < 1 || p.replicas > 1'000'000) {
    throw InputError(field, "replicas must be 1..1000000, got " + std::to_string(p.replicas));
  }
}

/// The requests of each replica under the pool's routing, in arrival order; `index[k][j]`
/// the input index of replica k's j-th.
void split(const Pool& pool, std::span<const Request> requests, std::vector<std::vector<Request>>& out,
           std::vector<std::vector<int32_t>>& index) {
  out.assign(static_cast<std::size_t>(pool.replicas), {});
  index.assign(static_cast<std::size_t>(pool.replicas), {});
  const auto order = detail::arrival_order(requests);
  const std::vector<int64_t> to = route(pool, requests);
  std::vector<std::size_t> sizes(out.size(), 0);  // each part allocated once
  for (const int64_t k : to) ++sizes[static_cast<std::size_t>(k)];
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].reserve(sizes[k]);
    index[k].reserve(sizes[k]);
  }
  for (const int32_t i : order) {
    const auto k = static_cast<std::size_t>(to[static_cast<std::size_t>(i)]);
    out[k].push_back(requests[i]);
    index[k].push_back(i);
  }
}

}  // namespace

detail::PoolRun detail::run_pool(const Pool& pool, std::span<const Request> requests, Phase phase, bool gather) {
  std::vector<std::vector<Request>> parts;
  std::vector<std::vector<int32_t>> index;
  split(pool, requests, parts, index);
  PoolRun out;
  if (gather) out.records.assign(requests.size(), {});
  for (std::size_t k = 0; k < parts.size(); ++k) {
    out.runs.push_back(simulate(pool.replica, parts[k], pool.options, phase));
    if (!out.runs.back().fits) {
      out.fits = false;
      out.reason = out.runs.back().reason;
      return out;
    }
    if (!gather) continue;
    for (std::size_t j = 0; j < index[k].size(); ++j) out.records[index[k][j]] = out.runs.back().requests[j];
  }
  return out;
}

double kv_bytes(const Deployment& d, int64_t prompt_tokens) {
  double bytes = 0;
  for (const auto& g : d.attention) bytes += g.layers * g.kv_bytes_per_token * chalk::detail::attended(prompt_tokens, g.window);
  return bytes;
}

KvTransfer kv_transfer(const Deployment& prefill, const Deployment& decode, int64_t prompt_tokens, int64_t total_chips) {
  KvTransfer t;
  t.bytes = kv_bytes(prefill, prompt_tokens);
  if (prefill.system.name != decode.system.name) {
    // Mixed chips: two systems share no scale-up domain, so the KV crosses the scale-out
    // network both sit on, at the per-chip NIC rate (and hop latency) of the slower side.
    const LinkModel a = scale_out_link(prefill.system), b = scale_out_link(decode.system);
    const LinkModel& link = b.bandwidth.value() < a.bandwidth.value() ? b : a;
    t.link = "scale-out";
    t.bandwidth_bytes_per_s = link.bandwidth.value() * static_cast<double>(std::min(prefill.n_chips, decode.n_chips));
    const auto hop = [](const LinkModel& l) { return l.protocols.empty() ? 0 : (l.protocols.front().base_latency + l.protocols.front().step_latency).value(); };
    t.latency_s = std::max(hop(a), hop(b));
    t.seconds = t.latency_s + t.bytes / t.bandwidth_bytes_per_s;
    return t;
  }
  const SystemSpec& s = prefill.system;
  const bool scale_out = total_chips > s.scale_up_domain && s.scale_out_bandwidth_per_direction.value() > 0;
  const LinkModel link = scale_out ? scale_out_link(s) : scale_up_link(s);
  t.link = scale_out ? "scale-out" : "scale-up";
  t.bandwidth_bytes_per_s = link.bandwidth.value() * static_cast<double>(std::min(prefill.n_chips, decode.n_chips));
  // One point-to-point hop of the link's lowest-latency protocol (NCCL LL: base + one step).
  t.latency_s = link.protocols.empty() ? 0 : (link.protocols.front().base_latency + link.protocols.front().step_latency).value();
  t.seconds = t.latency_s + t.bytes / t.bandwidth_bytes_per_s;
  return t;
}

ClusterRun simulate_aggregated(const Pool& pool, std::span<const Request> requests, Phase phase) {
  check_pool(pool, "replicas");
  ClusterRun c;
  c.chips = pool.replicas * pool.replica.n_chips * std::max<int64_t>(1, pool.options.pipeline_stages);  // every stage's chips
  detail::PoolRun p = detail::run_pool(pool, requests, phase, false);
  c.runs = std::move(p.runs);
  c.fits = p.fits;
  c.reason = std::move(p.reason);
  return c;
}

ClusterRun simulate_disaggregated(const Pool& prefill, const Pool& decode, std::span<const Request> requests) {
  check_pool(prefill, "prefill_replicas");
  check_pool(decode, "decode_replicas");
  if (prefill.replica.model.name != decode.replica.model.name) {
    throw InputError("decode", "the decode pool must serve the prefill pool's model");
  }
  return detail::disaggregated_after(prefill, detail::run_pool(prefill, requests, Phase::prefill, true), decode, requests);
}

ClusterRun detail::disaggregated_after(const Pool& prefill, PoolRun pre_pool, const Pool& decode, std::span<const Request> requests) {
  check_pool(prefill, "prefill_replicas");
  check_pool(decode, "decode_replicas");
  if (prefill.replica.model.name != decode.replica.model.name) {
    throw InputError("decode", "the decode pool must serve the prefill pool's model");
  }
  ClusterRun c;
  c.disaggregated = true;
  c.chips = prefill.replicas * prefill.replica.n_chips * std::max<int64_t>(1, prefill.options.pipeline_stages) +
            decode.replicas * decode.replica.n_chips * std::max<int64_t>(1, decode.options.pipeline_stages);
  c.prefill_runs = std::move(pre_pool.runs);
  c.fits = pre_pool.fits;
  c.reason = std::move(pre_pool.reason);
  if (!c.fits) {
    c.reason = "prefill pool: " + c.reason;
    return c;
  }
  const std::vector<RequestRecord>& pre = pre_pool.records;
  // Each request leaves the prefill pool with its first token; its KV reaches the decode pool.
  std::vector<Request> handed(requests.size());
  double transfer_s = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (pre[i].rejected) {
      handed[i] = requests[i];
      continue;
    }
    const KvTransfer t = kv_transfer(prefill.replica, decode.replica, requests[i].input_tokens, c.chips);
    c.kv_transfer_bytes_total += t.bytes;
    transfer_s += t.seconds;
    handed[i] = requests[i];
    handed[i].arrival_s = pre[i].first_token_s + t.seconds;
  }
  Pool decode_rr = decode;  // the decode pool holds no prefix cache to aim at (its requests bring their KV)
  decode_rr.routing = Routing::round_robin;
  detail::PoolRun dec_pool = detail::run_pool(decode_rr, handed, Phase::decode, true);
  c.runs = std::move(dec_pool.runs);
  c.fits = dec_pool.fits;
  c.reason = std::move(dec_pool.reason);
  const std::vector<RequestRecord>& dec = dec_pool.records;
  if (!c.fits) {
    c.reason = "decode pool: " + c.reason;
    return c;
  }
  // End to end: arrival and first token from the prefill pool, the last token from the decode pool.
  SimRun& e = c.end_to_end;
  e.requests.resize(requests.size());
  int64_t finished = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    RequestRecord r = pre[i];
    r.output_tokens = requests[i].output_tokens;
    r.rejected = pre[i].rejected || dec[i].rejected;
    // The first token the user sees comes from the decode pool, after the KV transfer and
    // that pool's queue (inference-sim #930, #1510 name this fault when it is left out).
    if (!r.rejected) r.first_token_s = dec[i].first_token_s;
    r.finish_s = dec[i].finish_s;
    r.preemptions += dec[i].preemptions;
    e.requests[i] = r;
    if (r.rejected) {
      ++e.rejected;
      continue;
    }
    ++finished;
    e.requests_in_system_s += r.finish_s - r.arrival_s;
    e.end_s = std::max(e.end_s, r.finish_s);
  }
  if (finished > 0) c.kv_transfer_s_mean = transfer_s / static_cast<double>(finished);
  for (const auto* pool_runs : {&c.prefill_runs, &c.runs}) {
    for (const auto& r : *pool_runs) {
      e.preemptions += r.preemptions;
      e.n_steps += r.n_steps;
      e.kv_blocks_leaked += r.kv_blocks_leaked;
    }
  }
  // Token gaps, batch and KV use: the decode pool's (the prefill pool emits first tokens only).
  for (const auto& r : c.runs) {
    e.steps.insert(e.steps.end(), r.steps.begin(), r.steps.end());
    e.long_token_gaps_s.insert(e.long_token_gaps_s.end(), r.long_token_gaps_s.begin(), r.long_token_gaps_s.end());
    e.decode_sequences_s += r.decode_sequences_s;
    e.kv_blocks_s += r.kv_blocks_s;
    e.busy_s += r.busy_s;
    e.verify_steps += r.verify_steps;
    e.verify_tokens_kept += r.verify_tokens_kept;
    e.kv_blocks_total += r.kv_blocks_total;
    e.kv_blocks_peak = std::max(e.kv_blocks_peak, r.kv_blocks_peak);
  }
  e.kv_blocks_total /= std::max<int64_t>(1, static_cast<int64_t>(c.runs.size()));
  return c;
}

SimSummary summarize(const ClusterRun& run, const Slo& slo) {
  std::vector<const SimRun*> runs;
  if (run.disaggregated) {
    runs.push_back(&run.end_to_end);
  } else {
    for (const auto& r : run.runs) runs.push_back(&r);
  }
  return summarize(runs, run.chips, slo);
}

namespace {

/// Least-squares slope of the time to first token (first_token_s - arrival_s) against the
/// arrival time over the later half of a pool's finished requests, in seconds per second
/// (overload_of; the first half is the pool filling from empty). 0 with fewer than 4.
double ttft_growth(const std::vector<const RequestRecord*>& done) {
  if (done.size() < 4) return 0;
  const std::size_t from = done.size() / 2;
  const double n = static_cast<double>(done.size() - from);
  double mx = 0, my = 0;
  for (std::size_t i = from; i < done.size(); ++i) {
    mx += done[i]->arrival_s;
    my += done[i]->first_token_s - done[i]->arrival_s;
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = from; i < done.size(); ++i) {
    const double dx = done[i]->arrival_s - mx;
    sxy += dx * (done[i]->first_token_s - done[i]->arrival_s - my);
    sxx += dx * dx;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

}  // namespace

double arrival_rate(std::span<const Request> requests) {
  if (requests.size() < 2) return 0;
  double first = requests[0].arrival_s, last = first;
  for (const auto& q : requests) {
    first = std::min(first, q.arrival_s);
    last = std::max(last, q.arrival_s);
  }
  return last > first ? static_cast<double>(requests.size() - 1) / (last - first) : 0;
}

Capacity saturated_capacity(const Pool& pool, std::span<const Request> requests, Phase phase) {
  check_pool(pool, "replicas");
  Capacity c;
  if (requests.empty()) return c;
  const auto order = detail::arrival_order(requests);
  // Enough to fill the batch four times over, whatever the traffic's own count: its
  // requests again in order when it has fewer. The batch: max_sequences, or what the KV
  // blocks hold at the traffic's mean prompt + output, whichever is less.
  double tokens = 0;
  for (const auto& q : requests) tokens += static_cast<double>(q.input_tokens + q.output_tokens);
  const int64_t block = std::max<int64_t>(1, pool.options.policy.block_size);
  const double kv_tokens = static_cast<double>(pool.options.kv_blocks > 0 ? pool.options.kv_blocks : kv_blocks_available(pool.replica, block)) *
                           static_cast<double>(block);
  const double held = std::max(1.0, std::min(static_cast<double>(pool.options.policy.max_sequences),
                                              std::floor(kv_tokens / std::max(1.0, tokens / static_cast<double>(requests.size())))));
  const auto want = std::max(kCapacityProbeRequests,
                             static_cast<std::size_t>(4 * held * static_cast<double>(std::max<int64_t>(1, pool.options.pipeline_stages))));
  std::vector<Request> burst;
  burst.reserve(want);
  for (std::size_t i = 0; burst.size() < want; ++i) {
    burst.push_back(requests[static_cast<std::size_t>(order[i % order.size()])]);
    burst.back().arrival_s = 0;  // all at once: a queue until the last is admitted
  }
  const SimRun r = simulate(pool.replica, burst, pool.options, phase);
  if (!r.fits) return c;
  double queue_end = 0;  // end of the last step that left a request waiting
  for (const auto& st : r.steps) {
    if (st.waiting > 0) queue_end = st.start_s + st.duration_s;
  }
  std::vector<double> done;
  for (const auto& q : r.requests) {
    if (!q.rejected) done.push_back(q.finish_s);
  }
  if (done.empty()) return c;
  std::sort(done.begin(), done.end());
  const double from = done.front();  // the steady state starts as requests finish and are replaced
  if (queue_end <= from) return c;
  const double width = (queue_end - from) / kCapacityBatches;
  std::vector<double> batch(static_cast<std::size_t>(kCapacityBatches), 0.0);
  for (const double f : done) {
    if (f <= from || f > queue_end) continue;
    ++c.requests_measured;
    const auto k = std::min(static_cast<std::size_t>(kCapacityBatches - 1), static_cast<std::size_t>((f - from) / width));
    batch[k] += 1;
  }
  const double one = static_cast<double>(c.requests_measured) / (queue_end - from);
  double ss = 0;
  for (const double b : batch) ss += (b / width - one) * (b / width - one);
  const double se = std::sqrt(ss / (kCapacityBatches - 1) / kCapacityBatches);
  if (!c.measured()) return c;
  const auto replicas = static_cast<double>(pool.replicas);
  c.req_per_s = replicas * one;
  c.uncertainty_req_per_s = replicas * 2 * se;
  return c;
}

int64_t replicas_for_rate(double arrival_req_per_s, double one_req_per_s) {
  if (!(one_req_per_s > 0) || !(arrival_req_per_s > 0)) return 1;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(arrival_req_per_s / (kReplicaUtilization * one_req_per_s))));
}

Overload overload_of(const ClusterRun& run, std::span<const Request> requests, const Capacity* capacity) {
  Overload o;
  o.arrival_req_per_s = arrival_rate(requests);
  bool have = false;
  for (const auto* pool : {&run.prefill_runs, &run.runs}) {
    if (pool->empty()) continue;
    double served = 0, least_busy = 1;
    bool ran = false;
    std::vector<const RequestRecord*> done;
    for (const auto& r : *pool) {
      int64_t finished = 0;
      double start = r.end_s;
      for (const auto& q : r.requests) {
        start = std::min(start, q.arrival_s);
        if (!q.rejected) {
          ++finished;
          done.push_back(&q);
        }
      }
      if (r.busy_s <= 0 || r.end_s <= start) continue;
      ran = true;
      served += static_cast<double>(finished) / r.busy_s;
      least_busy = std::min(least_busy, r.busy_s / (r.end_s - start));
    }
    if (!ran) continue;
    std::sort(done.begin(), done.end(), [](const RequestRecord* a, const RequestRecord* b) { return a->arrival_s < b->arrival_s; });
    const double growth = ttft_growth(done);
    const bool over = least_busy >= 0.95 && growth > kOverloadGrowth;
    // Overloaded: a FIFO queue fed at lambda and drained at mu < lambda makes the n-th
    // arrival (t_n = n / lambda) wait n / mu - n / lambda = t_n (lambda / mu - 1), so the
    // growth g = lambda / mu - 1 gives mu = lambda / (1 + g).
    const double capacity = over ? o.arrival_req_per_s / (1 + growth) : served;
    // The pool reported: an overloaded one before one that is not, then the lower capacity.
    if (!have || (over && !o.overloaded) || (over == o.overloaded && capacity < o.capacity_req_per_s)) {
      o.capacity_req_per_s = capacity;
      o.busy_fraction = least_busy;
      o.ttft_growth = growth;
      o.overloaded = over;
      have = true;
    }
  }
  if (capacity != nullptr && capacity->measured()) {
    // Arrivals above what the pool serves saturated, by more than the estimate's own
    // uncertainty: the queue grows however slowly (review 7 M10).
    o.capacity_req_per_s = capacity->req_per_s;
    o.capacity_uncertainty_req_per_s = capacity->uncertainty_req_per_s;
    if (o.arrival_req_per_s > capacity->req_per_s + capacity->uncertainty_req_per_s) o.overloaded = true;
  }
  return o;
}

}  // namespace chalk::sim
