// Speed of the layout search (layout_search.h): every layout of DeepSeek-V3 on a GB200
// NVL72 rack (12 divisors of 72 x 3 layouts) and of Llama 2 70B on 8 H100. Target: well
// under the 50 ms of an interactive command.
#include <benchmark/benchmark.h>

#include "chalk/io/io.h"
#include "chalk/engine/layout_search.h"

namespace {

void search(benchmark::State& state, const char* model, const char* system, int64_t chips) {
  const chalk::ModelSpec m = chalk::load_model(model);
  const chalk::SystemSpec s = chalk::load_system(system);
  chalk::LayoutQuery q;
  q.n_chips = chips;
  q.context = 4096;
  q.prompt = 1024;
  q.output = 512;
  for (auto _ : state) benchmark::DoNotOptimize(chalk::search_layouts(m, s, chalk::DeploymentOptions{}, q));
}
BENCHMARK_CAPTURE(search, deepseek_v3_gb200_nvl72, "deepseek-v3", "gb200-nvl72", 72)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search, llama_2_70b_h100x8, "llama-2-70b", "h100-sxm", 8)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
