// Replicas, pools and the KV transfer between them (cluster.h).
#include "chalk/sim/cluster.h"

#include <algorithm>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/model/context_math.h"
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

/// Runs a pool; the records of every request land in `records` at their input index (null:
/// not gathered, as an aggregated run keeps them in each replica's run).
std::vector<SimRun> run_pool(const Pool& pool, std::span<const Request> requests, Phase phase, std::vector<RequestRecord>* records,
                             bool& fits, std::string& reason) {
  std::vector<std::vector<Request>> parts;
  std::vector<std::vector<int32_t>> index;
  split(pool, requests, parts, index);
  std::vector<SimRun> runs;
  if (records != nullptr) records->assign(requests.size(), {});
  for (std::size_t k = 0; k < parts.size(); ++k) {
    runs.push_back(simulate(pool.replica, parts[k], pool.options, phase));
    if (!runs.back().fits) {
      fits = false;
      reason = runs.back().reason;
      return runs;
    }
    if (records == nullptr) continue;
    for (std::size_t j = 0; j < index[k].size(); ++j) (*records)[index[k][j]] = runs.back().requests[j];
  }
  return runs;
}

}  // namespace

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
  c.runs = run_pool(pool, requests, phase, nullptr, c.fits, c.reason);
  return c;
}

ClusterRun simulate_disaggregated(const Pool& prefill, const Pool& decode, std::span<const Request> requests) {
  check_pool(prefill, "prefill_replicas");
  check_pool(decode, "decode_replicas");
  if (prefill.replica.model.name != decode.replica.model.name) {
    throw InputError("decode", "the decode pool must serve the prefill pool's model");
  }
  ClusterRun c;
  c.disaggregated = true;
  c.chips = prefill.replicas * prefill.replica.n_chips * std::max<int64_t>(1, prefill.options.pipeline_stages) +
            decode.replicas * decode.replica.n_chips * std::max<int64_t>(1, decode.options.pipeline_stages);
  std::vector<RequestRecord> pre;
  c.prefill_runs = run_pool(prefill, requests, Phase::prefill, &pre, c.fits, c.reason);
  if (!c.fits) {
    c.reason = "prefill pool: " + c.reason;
    return c;
  }
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
  std::vector<RequestRecord> dec;
  Pool decode_rr = decode;  // the decode pool holds no prefix cache to aim at (its requests bring their KV)
  decode_rr.routing = Routing::round_robin;
  c.runs = run_pool(decode_rr, handed, Phase::decode, &dec, c.fits, c.reason);
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

Overload overload_of(const ClusterRun& run, std::span<const Request> requests) {
  Overload o;
  if (requests.size() >= 2) {
    double first = requests[0].arrival_s, last = first;
    for (const auto& q : requests) {
      first = std::min(first, q.arrival_s);
      last = std::max(last, q.arrival_s);
    }
    if (last > first) o.arrival_req_per_s = static_cast<double>(requests.size() - 1) / (last - first);
  }
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
  return o;
}

}  // namespace chalk::sim
