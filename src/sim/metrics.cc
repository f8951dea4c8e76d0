// Latency percentiles, throughput, goodput and Little's law of simulated runs (metrics.h).
#include "chalk/sim/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "chalk/base/error.h"

namespace chalk::sim {

double percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  const auto n = static_cast<double>(values.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1), values.end());
  return values[rank - 1];
}

namespace {

Percentiles summarise(std::vector<double>& v) {
  Percentiles p;
  p.count = static_cast<int64_t>(v.size());
  if (v.empty()) return p;
  double sum = 0;
  for (const double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  p.p50 = percentile(v, 50);
  p.p90 = percentile(v, 90);
  p.p99 = percentile(v, 99);
  return p;
}

/// Percentiles of a sample where value v_i occurs w_i times (sorted by value).
Percentiles weighted(std::vector<std::pair<double, double>>& vw) {
  Percentiles p;
  double total = 0, sum = 0;
  for (const auto& [v, w] : vw) {
    total += w;
    sum += v * w;
  }
  p.count = static_cast<int64_t>(std::llround(total));
  if (total <= 0) return p;
  p.mean = sum / total;
  std::sort(vw.begin(), vw.end());
  auto at = [&](double q) {
    const double rank = std::max(1.0, std::ceil(q / 100.0 * total - 1e-9));
    double seen = 0;
    for (const auto& [v, w] : vw) {
      seen += w;
      if (seen >= rank - 1e-9) return v;
    }
    return vw.back().first;
  };
  p.p50 = at(50);
  p.p90 = at(90);
  p.p99 = at(99);
  return p;
}

}  // namespace

void validate(const Slo& slo) {
  if (slo.ttft_s && !(*slo.ttft_s > 0 && std::isfinite(*slo.ttft_s))) {
    throw InputError("ttft_slo", "must be a positive time, got " + fmt::format("{:.6g}", *slo.ttft_s) + " s");
  }
  if (slo.tpot_s && !(*slo.tpot_s > 0 && std::isfinite(*slo.tpot_s))) {
    throw InputError("tpot_slo", "must be a positive time, got " + fmt::format("{:.6g}", *slo.tpot_s) + " s");
  }
  if (!(slo.percentile >= 50 && slo.percentile <= 99.9)) {
    throw InputError("slo_percentile", "must be in [50, 99.9], got " + fmt::format("{:.6g}", slo.percentile));
  }
}

SimSummary summarize(std::span<const SimRun* const> runs, int64_t chips, const Slo& slo) {
  SimSummary s;
  s.chips = chips;
  std::vector<double> ttft, tpot, e2e, queue;
  std::vector<std::pair<double, double>> itl;
  double first = INFINITY, last = 0, out_tokens = 0, in_tokens = 0, area = 0, end = 0;
  int64_t good = 0, kv_total = 0, verifies = 0, kept = 0;
  double kv_s = 0, dec_s = 0, busy = 0, peak = 0;
  for (const SimRun* r : runs) {
    s.preemptions += r->preemptions;
    s.rejected += r->rejected;
    s.steps += r->n_steps;
    s.kv_blocks_leaked += r->kv_blocks_leaked;
    area += r->requests_in_system_s;
    end = std::max(end, r->end_s);
    kv_s += r->kv_blocks_s;
    dec_s += r->decode_sequences_s;
    busy += r->busy_s;
    verifies += r->verify_steps;
    kept += r->verify_tokens_kept;
    kv_total += r->kv_blocks_total;
    if (r->kv_blocks_total > 0) peak = std::max(peak, static_cast<double>(r->kv_blocks_peak) / static_cast<double>(r->kv_blocks_total));
    for (const auto& q : r->requests) {
      ++s.requests;
      if (q.over_context) ++s.rejected_over_context;
      if (q.rejected) continue;
      ++s.finished;
      first = std::min(first, q.arrival_s);
      last = std::max(last, q.finish_s);
      out_tokens += static_cast<double>(q.output_tokens);
      in_tokens += static_cast<double>(q.input_tokens);
      const double t1 = q.first_token_s - q.arrival_s;
      ttft.push_back(t1);
      e2e.push_back(q.finish_s - q.arrival_s);
      queue.push_back(q.scheduled_s - q.arrival_s);
      double per_token = 0;
      if (q.output_tokens > 1) {
        per_token = (q.finish_s - q.first_token_s) / static_cast<double>(q.output_tokens - 1);
        tpot.push_back(per_token);
      }
      const bool ok = (!slo.ttft_s || t1 <= *slo.ttft_s) && (!slo.tpot_s || per_token <= *slo.tpot_s);
      if (ok) ++good;
    }
    for (const auto& st : r->steps) {
      if (st.steady_tokens > 0) itl.emplace_back(st.duration_s, static_cast<double>(st.steady_tokens));
    }
    for (const double g : r->long_token_gaps_s) itl.emplace_back(g, 1.0);
  }
  s.ttft = summarise(ttft);
  s.ttft_at_slo_percentile_s = percentile(ttft, slo.percentile);
  s.tpot_at_slo_percentile_s = percentile(tpot, slo.percentile);
  s.tpot = summarise(tpot);
  s.e2e = summarise(e2e);
  s.queue = summarise(queue);
  s.itl = weighted(itl);
  if (s.finished > 0) {
    s.duration_s = std::max(last - first, 1e-12);
    s.output_tok_per_s = out_tokens / s.duration_s;
    s.total_tok_per_s = (out_tokens + in_tokens) / s.duration_s;
    if (chips > 0) {
      s.output_tok_per_s_per_chip = s.output_tok_per_s / static_cast<double>(chips);
      s.total_tok_per_s_per_chip = s.total_tok_per_s / static_cast<double>(chips);
    }
    s.goodput_req_per_s = static_cast<double>(good) / s.duration_s;
  }
  // A share of every request that arrived: a rejected one never gets a first token, so it
  // misses every target (as plan's and aiperf's attainment count it).
  if (s.requests > 0) s.slo_attainment = static_cast<double>(good) / static_cast<double>(s.requests);
  if (end > 0) {
    // Little's law over [0, end] for all replicas together: the system is empty at both ends.
    s.little_l = area / end;
    s.little_lambda_per_s = static_cast<double>(s.finished) / end;
    s.little_w_s = s.e2e.mean;
  }
  if (busy > 0) {
    s.mean_decode_batch = dec_s / busy;
    s.mean_kv_occupancy = kv_total > 0 ? kv_s / busy / (static_cast<double>(kv_total) / static_cast<double>(runs.size())) : 0;
    s.busy_fraction = runs.empty() || runs.front()->end_s <= 0 ? 0 : runs.front()->busy_s / runs.front()->end_s;
  }
  s.peak_kv_occupancy = peak;
  if (verifies > 0) s.accepted_tokens_per_step = static_cast<double>(kept) / static_cast<double>(verifies);
  s.meets_slo = s.finished > 0 && s.rejected == 0 && (!slo.ttft_s || s.ttft_at_slo_percentile_s <= *slo.ttft_s) &&
                (!slo.tpot_s || s.tpot_at_slo_percentile_s <= *slo.tpot_s);
  return s;
}

std::vector<OccupancyPoint> occupancy_timeline(const SimRun& run, int64_t max_points) {
  std::vector<OccupancyPoint> out;
  if (run.steps.empty() || max_points < 1) return out;
  const double total = static_cast<double>(std::max<int64_t>(run.kv_blocks_total, 1));
  auto point = [&](const StepSample& st) {
    return OccupancyPoint{st.start_s, st.decodes, st.waiting, static_cast<double>(st.kv_blocks_used) / total};
  };
  if (static_cast<int64_t>(run.steps.size()) <= max_points) {
    for (const auto& st : run.steps) out.push_back(point(st));
    return out;
  }
  const double t0 = run.steps.front().start_s, t1 = run.steps.back().start_s;
  std::size_t k = 0;
  for (int64_t j = 0; j < max_points; ++j) {
    const double at = t0 + (t1 - t0) * static_cast<double>(j) / static_cast<double>(max_points - 1);
    while (k + 1 < run.steps.size() && run.steps[k + 1].start_s <= at) ++k;
    out.push_back(point(run.steps[k]));
  }
  return out;
}

}  // namespace chalk::sim
