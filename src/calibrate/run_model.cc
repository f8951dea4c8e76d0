// A benchmark run as the simulator runs it, and its residuals (fit.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/calibrate/fit.h"
#include "chalk/sim/metrics.h"
#include "chalk/sim/traffic.h"

namespace chalk::calibrate {

const ConstantInfo& info(Constant c) {
  // Bounds: a request's fixed work up to 2 s (a slow tokenizer on a long prompt), host time up
  // to 1 ms per sequence (50x vLLM's 21.5 us), a kernel floor up to 100 us (16x the 6.3 us of
  // overhead.h), an all-reduce stage up to 100 us (15x the 6.45 us of collective.h; NCCL's
  // ring over 8 NVLink ranks takes 15 us). Scales: the defaults' order of magnitude
  // (policy.h, host_time.h, overhead.h, collective.h).
  static const ConstantInfo table[kConstants] = {
      {Constant::request_overhead, "request_overhead_s", 0, 2, 10e-3},
      {Constant::host_per_sequence, "host_s_per_sequence", 0, 1e-3, 20e-6},
      {Constant::kernel_floor, "kernel_floor_s", 0, 100e-6, 5e-6},
      {Constant::allreduce_latency, "allreduce_latency_s", 0, 100e-6, 5e-6},
  };
  return table[static_cast<int>(c)];
}

std::optional<Constant> constant_named(const std::string& name) {
  for (int k = 0; k < kConstants; ++k) {
    if (name == info(static_cast<Constant>(k)).name) return static_cast<Constant>(k);
  }
  return std::nullopt;
}

RunModel make_run_model(const BenchRun& run, const Deployment& d, const sim::SimOptions& o, int64_t max_requests) {
  if (max_requests < 1) throw InputError("--max-requests", "must be >= 1, got " + std::to_string(max_requests));
  RunModel m{run, d, o, {}};
  const int64_t n = std::min(run.completed, max_requests);
  const int64_t mean_in = std::max<int64_t>(1, run.total_input_tokens / run.completed);
  const int64_t mean_out = std::max<int64_t>(1, run.total_output_tokens / run.completed);
  if (run.request_rate_per_s > 0 && run.constant_arrivals) {
    // One request every 1 / rate seconds, as validate runs a constant-rate row.
    for (int64_t i = 0; i < n; ++i) m.requests.push_back(sim::Request{static_cast<double>(i + 1) / run.request_rate_per_s, mean_in, mean_out, {}});
  } else if (run.request_rate_per_s > 0) {
    sim::TrafficSpec t;
    t.rate_per_s = run.request_rate_per_s;
    if (run.burstiness != 1) t.arrivals = sim::Arrivals::gamma, t.cv = 1 / std::sqrt(run.burstiness);
    t.requests = n;
    t.input = {sim::LengthDist::Kind::fixed, mean_in};
    t.output = {sim::LengthDist::Kind::fixed, mean_out};
    m.requests = sim::generate_traffic(t);
  } else {
    m.requests.assign(static_cast<std::size_t>(n), sim::Request{0, mean_in, mean_out, {}});
  }
  for (std::size_t i = 0; i < m.requests.size(); ++i) {
    if (i < run.input_lens.size()) m.requests[i].input_tokens = std::max<int64_t>(1, run.input_lens[i]);
    if (i < run.output_lens.size()) m.requests[i].output_tokens = std::max<int64_t>(1, run.output_lens[i]);
  }
  // Prompt tokens the prefix cache serves, as a fraction of the mean prompt (validate's).
  if (run.cached_tokens > 0) m.o.prefix_hit_rate = std::min(static_cast<double>(run.cached_tokens) / static_cast<double>(mean_in), 0.999);
  if (run.max_concurrency > 0) m.o.policy.max_sequences = std::min(m.o.policy.max_sequences, run.max_concurrency);
  return m;
}

Values defaults_of(const RunModel& m) {
  return {m.o.policy.request_overhead_s, m.o.policy.host.s_per_sequence, m.d.mechanisms.calibration.kernel_floor.value(),
          m.d.mechanisms.calibration.allreduce_latency.value()};
}

int64_t tp_of(const RunModel& m) {
  if (!m.d.mechanisms.enabled) return 1;
  const ParallelLayout& l = m.d.mechanisms.layout;
  return std::max<int64_t>({1, l.tp_attention, l.tp_ffn, l.tp_expert});
}

Predicted predict(const RunModel& m, const Values& v) {
  Deployment d = m.d;
  sim::SimOptions o = m.o;
  o.policy.request_overhead_s = v[0];
  o.policy.host.s_per_sequence = v[1];
  d.mechanisms.host.s_per_sequence = v[1];
  d.mechanisms.calibration.kernel_floor = seconds(v[2]);
  d.mechanisms.calibration.allreduce_latency = seconds(v[3]);
  const sim::SimRun run = sim::simulate(d, m.requests, o);
  if (!run.fits) throw InputError("memory", m.run.source + ": " + run.reason);
  const sim::SimRun* runs[] = {&run};
  const sim::SimSummary s = sim::summarize(runs, d.n_chips, sim::Slo{});
  Predicted p;
  if (m.run.ttft_ms) p.ttft_ms = s.ttft.mean * 1e3;
  if (m.run.tpot_ms) p.tpot_ms = s.tpot.mean * 1e3;
  if (m.run.itl_ms) p.itl_ms = s.itl.mean * 1e3;
  if (m.run.e2el_ms) p.e2el_ms = s.e2e.mean * 1e3;
  return p;
}

std::vector<double> residuals(const RunModel& m, const Values& v) {
  const Predicted p = predict(m, v);
  std::vector<double> r;
  const auto add = [&](const std::optional<double>& measured, const std::optional<double>& predicted) {
    if (!measured || *measured <= 0 || !predicted) return;
    r.push_back(std::log(std::max(*predicted, 1e-9) / *measured));
  };
  add(m.run.ttft_ms, p.ttft_ms);
  add(m.run.tpot_ms, p.tpot_ms);
  add(m.run.itl_ms, p.itl_ms);
  add(m.run.e2el_ms, p.e2el_ms);
  return r;
}

}  // namespace chalk::calibrate
