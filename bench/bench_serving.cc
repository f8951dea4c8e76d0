// Speed of the serving analyses (issue 3): the whole latency-cost frontier for one model
// and system, batch 1..65,536 (powers of two, plus each replica's memory-full batch) times
// every replica size of the scale-up domain; target under 50 ms. Also the every-integer
// frontier on an 8-chip domain and the fast/slow-mode answers.
#include <benchmark/benchmark.h>

#include "chalk/io/io.h"
#include "chalk/serving/serving.h"

namespace {

void frontier(benchmark::State& state, const char* model, const char* system, bool every_integer) {
  const chalk::ModelSpec m = chalk::load_model(model);
  const chalk::SystemSpec s = chalk::load_system(system);
  chalk::FrontierOptions o;
  o.batches = every_integer ? chalk::every_integer(1, 65536) : chalk::powers_of_two(1, 65536);
  size_t points = 0;
  for (auto _ : state) {
    const chalk::Frontier f = chalk::latency_cost_frontier(m, s, {}, o);
    points = f.points.size() + static_cast<size_t>(f.points_beyond_memory);
    benchmark::DoNotOptimize(f.frontier.data());
  }
  state.counters["candidate_points"] = static_cast<double>(points);
  state.counters["replica_sizes"] = static_cast<double>(s.scale_up_domain);
}

void modes(benchmark::State& state, const char* model, const char* system) {
  const chalk::ModelSpec m = chalk::load_model(model);
  const chalk::SystemSpec s = chalk::load_system(system);
  for (auto _ : state) {
    const chalk::ModesReport r = chalk::fast_and_slow_modes(m, s, {}, {});
    benchmark::DoNotOptimize(r.max_speed_multiple);
  }
}

}  // namespace

BENCHMARK_CAPTURE(frontier, deepseek_v3_gb200_nvl72, "deepseek-v3", "gb200-nvl72", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frontier, llama_3_1_70b_gb200_nvl72, "llama-3.1-70b", "gb200-nvl72", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frontier, deepseek_v3_h200, "deepseek-v3", "h200", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frontier, every_integer_deepseek_v3_h200, "deepseek-v3", "h200", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(frontier, every_integer_llama_3_1_70b_h200, "llama-3.1-70b", "h200", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(modes, deepseek_v3_gb200_nvl72, "deepseek-v3", "gb200-nvl72")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(modes, llama_3_1_70b_h200, "llama-3.1-70b", "h200")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
BENCHMARK_CAPTURE(frontier, every_integer_deepseek_v3_gb200_nvl72, "deepseek-v3", "gb200-nvl72", true)->Unit(benchmark::kMillisecond);
