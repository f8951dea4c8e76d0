// Speed of a production day (issue 31 item 8): about a million requests in the Azure LLM
// inference trace layout (TIMESTAMP,ContextTokens,GeneratedTokens, 2024's timestamps with
// six fractional digits and +00:00), generated here, read by sim::read_trace and simulated
// whole on a deployment that serves it. Goal: within 5 s on one core.
//
// The day: 1,000,000 requests over 86,400 s (11.6 requests/s on average), the rate following
// a diurnal curve 1 + 0.5 sin(2 pi (t - 6 h) / 24 h) (peak 17.4/s at noon, trough 5.8/s at
// midnight: the shape, not the figures, of BurstGPT's and Azure's daily periodicity), gaps
// exponential at the hour's rate; lengths lognormal with the Azure 2023 conversation trace's
// means (1,155 in, 211 out: training-and-systems.md 9.2), sigma 0.8. Served by 2 replicas of
// Llama 3.1 70B on 8 H200 each (bench_sim's replica takes 15 requests/s), round robin.
// Where its time goes (perf, 4ccc8a1, CPU 16-18 s at load 12-17 on the shared 2-core
// machine; 11.25 M steps, 1 M requests): the event loop itself 32% (the per-running-request
// passes: cache misses on each request's state), the engine step (overhead.cc step_with and
// what it calls) about 45%, of which the dense GEMMs' tile efficiency 13%, page faults of the
// growing step list 10-12%, reading the trace 2%. The memo by whole rows (gemm_shape.cc)
// takes the GEMM part to about 7% of the samples; CPU time 16.3-18.0 s before, 14.7-17.6 s
// after (five and four runs at load 9-17): no gain shown beyond that machine's noise. Not yet
// within 5 s: the engine step's own arithmetic per step and the loop's misses are the costs.
// The engine step's parts that depend only on token counts kept between steps (StepMemo,
// step_mix.h: GEMMs, kernels, collectives priced once per count of decodes, chunks and
// chunk tokens; the attention core every step), then the running list compacted only after
// a finish: CPU, taskset -c 1, 75c578c's binary and after run back to back: 11.8 -> 8.3 s
// (memo alone, load 9), 10.8 -> 7.4 s (both, load 14-15; twice more at load 11-17:
// 11.3 -> 7.4 s and 11.1 -> 7.8 s). Outputs bit-identical (same
// steps and simulated_s here; sim_pin_test). Still above 5 s. perf after: the event loop
// 43% (its passes over each step's running requests), the kernel's page faults of the
// growing step list (StepSample, 64 B x 5.5 M steps a replica, with vector doubling) about
// 12%, what is left of the engine step about 17% (the core and the breakdown's copy 9%, the
// GEMM memo 2%, host time 2%). Next: fewer passes per step in the loop (a compact record of
// the running batch's fields), steps stored without the doubling's copies and faults.
// Then (issue 31; CPU, taskset -c 1, 9deb312's binary and after alternated, outputs identical:
// steps 11,040,524, simulated_s 86,454.83): the step samples reserved from the run's steps
// per request so far (reserve_steps) instead of doubled: page faults 587k -> 364k, sys
// 2.0-2.8 -> 1.3-1.5 s (a fault costs about 3.6 us of sys on this VM); the running requests'
// state in the running list itself (Running) and a step's two passes over it out of line, so
// their counters stay in registers (perf annotate: inlined, each iteration waited on its own
// spilled counter); one arrival sort, skipped on a trace already in order; no second gather
// of the records. 10.7-11.7 -> 6.6-8.8 s at load 11-16 (three rounds), 9.4 -> 8.1 s at load
// 11-12. Still above 5 s on this shared machine. perf after: the schedule pass 19% (the
// first read of each running entry), the tokens' pass 10%, the rest of the loop 10%, the
// engine step about 20% (with_attention_core 7.5%: the breakdown's copy with its string),
// page faults about 8% (the 704 MB of samples themselves: 172k of the 364k faults).
// h-speed (the event loop's per-request passes cut, bench_sim.cc: 40% fewer instructions on
// its 100,000 requests): CPU, taskset -c 1, 355be60's binary and after alternated twice at
// load 12-15: 9.84, 10.50 -> 9.16, 8.55 s (user + sys of the process 10.7, 11.5 -> 10.2,
// 9.6 s; sys 1.6-2.0 s both: the samples' page faults are untouched). Same steps
// (11.0405 M) and simulated_s. Still not within 5 s on this loaded machine; a cachegrind
// count of this benchmark takes too long here (about 40x its CPU time). Advising the
// samples' vector into transparent huge pages (madvise) showed no sys-time gain and was
// left out.
// h-speed3 (issue 31; bench_sim.cc: the event loop split into StepLoop's passes, 1% fewer
// instructions there): CPU, taskset -c 1, 3 repetitions each, 67d3f90's binary then after
// (load 18-22, then 14-18): 8.95, 8.14, 9.10 -> 8.17, 8.18, 8.23 s (user + sys of the
// process, with the three traces' generation: 29.2 -> 27.7 s). Same steps (11.0405 M) and
// simulated_s. Still not within 5 s. Where its time goes (perf, 67d3f90, 8.7 s CPU): the
// event loop's passes 30% (the running requests' 12%, the tokens' 8%, the loop body 10%, of
// which a fifth to a quarter the step samples' first-touch stores), the engine step of
// src/engine about 30% (with_attention_core 8%, step_with 6%, gemms_shape_efficiency 3%,
// counted_step_part 3%, add_host_time 3%, mixed_step_work 3%, step_shares 2%), the kernel's
// page faults and unmaps 15-20% (339k faults: 173k the 704 MB of step samples, 37k
// reserve_steps' copies, the rest the per-request records, Live states and split parts),
// reading the trace 2%. The passes run about 12 instructions per running request per step
// (211 M request-steps: 1 M requests x 211 tokens over 11.04 M steps, about 19 a step), so
// what is left there is their count, not their body. Huge pages and batched population
// (MADV_POPULATE_WRITE per 2 MiB) for 700 MB of 64 B stores, a stand-alone test on this VM:
// sys 0.59-0.63 s plain, 0.49-0.52 s populated, 0.58-1.36 s huge pages: no gain worth the
// code. Within 5 s needs the engine step cheaper per step (src/engine), fewer bytes per
// step sample (StepSample, a public type), and decodes advanced without a pass per step.
// h-speed4 (issue 31; bench_sim.cc: the tokens' pass over plain decodes folded into the
// running pass, the Live record's miss at each new block gone): instructions (cachegrind
// --cache-sim=no, whole process, the day's generation included) 37.82 -> 36.28 G, the two
// passes 13.3 -> 11.8 G. CPU, taskset -c 1, 8d1f8b4's binary and after alternated twice at
// load 15-19: 9.57, 9.31 -> 9.40, 8.86 s. Same steps (11.0405 M) and simulated_s. Not
// within 5 s: the running pass is still about 35 instructions a decode and 30% of the
// whole, the engine step about a third; docs/simulator.md 5 says what the goal needs.
// h-speed5 (issue 31; bench_sim.cc: bulk decodes): instructions (cachegrind --cache-sim=no,
// whole process) of the 10:00-12:00 slice (Args 1000000, 2: 123,040 requests, 714,377 steps,
// about 36 running a step), e0dbdfb's library -> after: 9.240 -> 8.501 G, of which the
// simulation about 2.48 -> 1.74 G (-30%; the rest generates and reads the whole day's CSV);
// the running pass 1.24 -> 0.38 G. CPU of the whole day (taskset -c 1, the binaries
// alternated at a load average near 10): 9.07, 10.15 -> 8.72, 9.03 s. Same steps (11.0405 M)
// and simulated_s. Not within 5 s: the engine step's work per step and the samples' page
// faults are most of what is left (docs/simulator.md 5).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chalk/io/io.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/trace_formats.h"

namespace {

/// The day in the Azure layout, deterministic (seed 1).
std::string azure_day(int64_t n) {
  chalk::sim::TrafficSpec lengths;
  lengths.requests = n;
  lengths.rate_per_s = 1;  // times replaced below
  lengths.input = chalk::sim::parse_length("lognormal:1155:0.8", "input");
  lengths.output = chalk::sim::parse_length("lognormal:211:0.8", "output");
  const auto reqs = chalk::sim::generate_traffic(lengths);
  std::mt19937_64 rng(7);
  const double mean_rate = static_cast<double>(n) / 86400.0;
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  text.reserve(static_cast<std::size_t>(n) * 48);
  double t = 0;
  for (const auto& r : reqs) {
    const double rate = mean_rate * (1 + 0.5 * std::sin(2 * M_PI * (t - 6 * 3600.0) / 86400.0));
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    t = std::min(t - std::log(u) / rate, 86399.999999);
    const auto whole = static_cast<int64_t>(t);
    const auto micros = static_cast<int64_t>((t - static_cast<double>(whole)) * 1e6);
    fmt::format_to(std::back_inserter(text), "2024-05-10 {:02}:{:02}:{:02}.{:06}+00:00,{},{}\n", whole / 3600, whole / 60 % 60, whole % 60, micros,
                   r.input_tokens, r.output_tokens);
  }
  return text;
}

// Arg 1: hours of the day simulated, from 10:00 (24: the whole day). A slice of the same
// day (2: its busiest hours but one, 10:00-12:00, about 1/10 of its requests) is short
// enough to count under valgrind on the shared machine.
void production_day(benchmark::State& state) {
  const std::string text = azure_day(state.range(0));
  const double hours = static_cast<double>(state.range(1));
  const double from_s = hours >= 24 ? 0 : 10 * 3600.0, to_s = hours >= 24 ? 86400.0 : from_s + hours * 3600.0;
  chalk::DeploymentOptions o;
  o.n_chips = 8;
  o.mechanisms.enabled = true;
  chalk::sim::Pool pool{chalk::make_deployment(chalk::load_model("llama-3.1-70b"), chalk::load_system("h200"), o), 2, {}};
  double read_s = 0, steps = 0, requests = 0, end = 0, finished = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    chalk::sim::Trace trace = chalk::sim::read_trace(text, "day.csv");
    read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (hours < 24) {
      std::erase_if(trace.requests, [&](const chalk::sim::Request& q) { return q.arrival_s < from_s || q.arrival_s >= to_s; });
    }
    const chalk::sim::ClusterRun run = chalk::sim::simulate_aggregated(pool, trace.requests);
    steps = 0;
    finished = 0;
    for (const auto& r : run.runs) {
      steps += static_cast<double>(r.n_steps);
      end = std::max(end, r.end_s);
      for (const auto& q : r.requests) finished += q.rejected ? 0 : 1;
    }
    requests = static_cast<double>(trace.requests.size());
    benchmark::DoNotOptimize(run.runs.data());
  }
  state.counters["requests"] = requests;
  state.counters["finished"] = finished;
  state.counters["steps"] = steps;
  state.counters["simulated_s"] = end;
  state.counters["read_s"] = read_s;
}

}  // namespace

BENCHMARK(production_day)->Args({1000000, 24})->Args({1000000, 2})->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
