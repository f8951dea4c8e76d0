// Speed of the request simulator (issue 16). Targets: 100,000 requests through one replica
// within 1 s on one core (Llama 3.1 70B on 8 H200, Poisson at 15 requests/s, a loaded but
// stable engine: TTFT p50 131 ms, decode batch 134; lognormal lengths with the Azure
// conversation trace's means, 1,155 in and 211 out: training-and-systems.md 9.2), and
// a `chalk plan` search over every layout and pool split for DeepSeek-V3 on 64 H200 within
// 10 s (AIConfigurator's question; it takes about 30 s). Issue 29/31's goals since: 100,000
// requests within 0.5 s, the DeepSeek-V3 plan within 1 s.
// Before/after the step without repeated work (the system's links built once per thread,
// the routing maxima memoized, rank loads and the scheduler's lists in reused storage, KV
// blocks by shift), CPU, the binaries of eae5262 and after alternated twice on the shared
// 2-core machine at load 17-23: simulate_requests 100k 581-589 -> 394-400 ms; with the
// prefix cache 7.8-8.4 -> 6.6-7.3 s (the cache walk, PrefixCache::find and evict_lru, is
// most of it: not yet under 0.5 s); plan_deepseek 1,541 -> 713-730 ms. Outputs unchanged
// (chalk validate --json byte-identical).
// The GEMM memo by whole rows (gemm_shape.cc; issue 31), CPU at load 11-12: simulate_requests
// 100k 688-800 -> 692 ms (no change beyond noise), plan_deepseek 1,434 -> 1,329 ms (above its
// 1 s goal on that machine; 713-730 ms were measured at load 17-23 before). Outputs pinned by
// src/sim/sim_pin_test.cc.
// The engine step's parts that depend only on token counts kept between steps (StepMemo,
// step_mix.h) and the running list compacted only after a finish, CPU, taskset -c 1, the
// binaries of 75c578c and after run back to back at load 14-15 (shared 2-core machine):
// simulate_requests 100k 452 -> 405 ms (within the 0.5 s goal; 439 -> 415 and 428 -> 400 ms
// in two more rounds at load 11-17; 461 -> 423 ms at load 9 for the memo alone), plan_deepseek
// 672 -> 661 ms (681-695 -> 659-660 ms in the two rounds; within 1 s at that load: its
// replicas use data-parallel attention, whose rank loads follow each context: the memo does not apply
// there; rank_loads is 18% of its profile). Outputs bit-identical (sim_pin_test; chalk
// validate and simulate --json byte-identical). Where simulate_requests' time goes now
// (perf): the event loop itself about 70% (its passes over the ~134 running requests: the
// first read of each request's Live record stalls), the engine step about 15%.
// The running list holding the running requests' state and its passes out of line (issue 31,
// bench_traces.cc), CPU, taskset -c 1, 9deb312's binary and after alternated, four rounds at
// load 12-14: simulate_requests 100k 623-714 -> 461-641 ms (both above the 0.5 s goal's
// 400-423 ms of a quieter machine); with the prefix cache 12.0-17.5 -> 13.4-15.2 s (two
// rounds); plan_deepseek 734-1198 -> 779-1168 ms (no change beyond that load's noise: its
// data-parallel replicas' steps are the engine's). Outputs identical.
// h-speed (issues 29/31): a tight loop for decodes within their blocks in the schedule pass,
// the tokens' pass with its invariants in registers, only the runs between finished places
// moved after a finish (the list was copied whole), StepMemo keyed by the busiest rank's
// shares so that data-parallel replicas use it, rank loads without per-step lists, a
// disaggregated prefill pool simulated once per plan candidate. Instructions (cachegrind
// --cache-sim=no, whole process, load-independent), 355be60's binary -> after:
// simulate_requests 100k 3.29 -> 1.98 G; plan_deepseek 5.70 -> 3.72 G. CPU (taskset -c 1,
// the two binaries alternated twice at load 12-15): simulate_requests 100k 610, 618 ->
// 444, 298 ms (goal 0.5 s: met in both rounds); plan_deepseek 1,065, 1,134 -> 796, 526 ms
// (goal 1 s: met in both). Outputs identical (steps, simulated_s, best_chips, replica_runs;
// sim_pin_test; chalk validate/plan/simulate --json byte-identical).
// h-speed3 (issue 31): run_at_scheduler split by concept, its state between steps a struct
// (StepLoop, src/sim/step_loop.h; the running requests' pass step_running.cc, the admission
// step_admit.cc, the tokens out step_tokens.cc; simulator.cc 458 -> 180 lines), the lambdas'
// captured references now members read through `this`, and the admission pass called only
// when a request waits. Instructions (cachegrind --cache-sim=no, whole process), 67d3f90's
// binary -> the split alone -> after: simulate_requests 100k 1.975 -> 1.951 -> 1.949 G;
// plan_deepseek 3.717 -> 3.683 -> 3.678 G; with the prefix cache 15.96 G before (not
// counted after: too long on the loaded machine). CPU (taskset -c 1, medians of 3
// repetitions, the two binaries alternated three times at load 14-22): simulate_requests
// 100k 340, 427, 405 -> 347, 407, 411 ms; plan_deepseek 681, 782, 742 -> 750, 748, 777 ms
// (no change beyond that load's noise). Outputs identical (steps, simulated_s,
// best_chips, replica_runs; sim_pin_test; chalk validate and simulate --json byte-identical).
// The prefix-cache case's time (perf, 7-20 s CPU by load): longest_cached_prefix 46% and
// PrefixCache::find 13%, nearly all on the hash table's cell loads (cache misses), then
// evict_lru 9% and unref 8%: each admission walks the prompt's blocks (about 160k
// instructions a request); that walk, not the event loop, is its cost.
// h-speed4 (issues 29/31): a plain decode's common token taken in the running pass (the
// tokens' pass then goes over the other decodes only), the pass's decode loop one copy per
// case, and a running request's blocks counted in the running list only without the prefix
// cache (the Live record's load at each new block missed the cache). Instructions
// (cachegrind --cache-sim=no, whole process), 8d1f8b4's binary -> after: simulate_requests
// 100k 1.956 -> 1.776 G; plan_deepseek 3.689 -> 3.597 G; with the prefix cache 16.024 ->
// 16.024 G (unchanged: the fold is off with the cache). CPU (taskset -c 1, the binaries
// alternated at load 9-19): simulate_requests 100k 397, 371, 338 -> 316, 311, 315 ms;
// plan_deepseek 507, 566, 829, 777, 821 -> 476, 738, 815, 876, 820 ms and with the prefix
// cache 16.7, 14.4 -> 12.8, 18.0 s (no change beyond that load's noise). Outputs identical
// (sim_pin_test; chalk validate, plan and simulate --json byte-identical).
// h-speed5 (issue 31): bulk decodes (src/sim/step_bulk.cc: a plain decode within its blocks
// counted in the loop's quiet count and context sum, visited only at a new block, its last
// token or a preemption; the step priced from the count and sum, StepMix::decode_count).
// Instructions (cachegrind --cache-sim=no, whole process), e0dbdfb's binary -> after:
// simulate_requests 100k 1.776 -> 1.235 G (-30%); plan_deepseek 3.595 -> 3.522 G (-2%: its
// data-parallel replicas keep the request-by-request pass); with the prefix cache (which bulk
// decodes leave out) not counted. CPU (taskset -c 1, the binaries alternated at a load
// average near 10): simulate_requests 100k 403, 438, 396, 415 -> 361, 357, 345, 332 ms; with
// the prefix cache 23.4 -> 20.7 s (one run each: that load's noise); plan_deepseek 809, 796,
// 820, 781 -> 851, 766, 813, 764 ms (no change beyond the noise). Outputs identical (sim_pin_test; StepBulk; chalk validate, plan and
// simulate --json byte-identical).
#include <benchmark/benchmark.h>

#include "chalk/io/io.h"
#include "chalk/sim/plan.h"
#include "chalk/sim/simulator.h"

namespace {

chalk::Deployment deployment(const char* model, const char* system, int64_t chips) {
  chalk::DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = true;
  return chalk::make_deployment(chalk::load_model(model), chalk::load_system(system), o);
}

void simulate_requests(benchmark::State& state) {
  const chalk::Deployment d = deployment("llama-3.1-70b", "h200", 8);
  chalk::sim::TrafficSpec t;
  t.rate_per_s = 15;
  t.requests = state.range(0);
  t.input = chalk::sim::parse_length("lognormal:1155:0.8", "input");
  t.output = chalk::sim::parse_length("lognormal:211:0.8", "output");
  auto reqs = chalk::sim::generate_traffic(t);
  // Arg 1 = 1: the prefix cache on, over 16 conversations open at once of 8 turns, each
  // after one of 8 system prompts of 1,000 tokens (docs/simulator.md 1.6).
  if (state.range(1) == 1) {
    chalk::sim::PrefixTraffic p = chalk::sim::parse_shared_prefix("1000:8", "bench");
    p = chalk::sim::parse_sessions("16:8", "bench", p);
    chalk::sim::apply_prefix_traffic(reqs, p, t.seed);
  }
  int64_t steps = 0;
  double end = 0, cached = 0, prompt = 0;
  for (auto _ : state) {
    const chalk::sim::SimRun r = chalk::sim::simulate(d, reqs, {});
    steps = r.n_steps;
    end = r.end_s;
    for (const auto& q : r.requests) cached += static_cast<double>(q.cached_tokens), prompt += static_cast<double>(q.input_tokens);
    benchmark::DoNotOptimize(r.requests.data());
  }
  state.counters["requests"] = static_cast<double>(reqs.size());
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["simulated_s"] = end;
  state.counters["cached_token_fraction"] = prompt > 0 ? cached / prompt : 0;
}

void plan_deepseek(benchmark::State& state) {
  const chalk::ModelSpec m = chalk::load_model("deepseek-v3");
  const chalk::SystemSpec s = chalk::load_system("h200");
  chalk::DeploymentOptions base;
  base.mechanisms.enabled = true;
  // 20,000 output tok/s: 100 requests/s of 2,000 in and 200 out.
  chalk::sim::TrafficSpec t;
  t.rate_per_s = 100;
  t.requests = 1000;
  t.input = chalk::sim::parse_length("lognormal:2000:0.6", "input");
  t.output = chalk::sim::parse_length("lognormal:200:0.6", "output");
  const auto reqs = chalk::sim::generate_traffic(t);
  chalk::sim::PlanOptions o;
  o.chip_budget = 64;
  o.slo.ttft_s = 1.0;
  o.slo.tpot_s = 0.05;
  int64_t evaluated = 0, sims = 0, best = 0;
  for (auto _ : state) {
    const chalk::sim::PlanReport r = chalk::sim::plan_deployment(m, s, base, reqs, o);
    evaluated = static_cast<int64_t>(r.evaluated.size());
    sims = r.simulations;
    best = r.best ? r.evaluated[*r.best].chips : 0;
  }
  state.counters["deployments"] = static_cast<double>(evaluated);
  state.counters["replica_runs"] = static_cast<double>(sims);
  state.counters["best_chips"] = static_cast<double>(best);
}

}  // namespace

BENCHMARK(simulate_requests)->Args({100000, 0})->Args({100000, 1})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(plan_deepseek)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
