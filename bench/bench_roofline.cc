// Speed targets of issue 2: one decode-step evaluation under 1 us; a sweep over batch
// 1..65,536 under 5 ms. Issue 11: `chalk decode` end to end within 10 ms (the defaults:
// DeepSeek-V3 on GB200 NVL72, whose smallest replica and layout are searched, and whose
// busiest-chip expert table is built once per run), beside a dense model and `chalk
// --version` (the process alone: loading, static initialisation, every command's options).
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "chalk/io/io.h"
#include "chalk/engine/roofline.h"

namespace {

chalk::Deployment deepseek_on_nvl72() {
  chalk::DeploymentOptions o;
  o.n_chips = 72;
  return chalk::make_deployment(chalk::load_model("deepseek-v3"), chalk::load_system("gb200-nvl72"), o);
}

void BM_DecodeStep(benchmark::State& state) {
  const chalk::Deployment d = deepseek_on_nvl72();
  int64_t b = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(chalk::decode_step(d, b, 4096));
    b = b % 4096 + 1;
  }
}
BENCHMARK(BM_DecodeStep);

void BM_BatchSweep1To65536(benchmark::State& state) {
  const chalk::Deployment d = deepseek_on_nvl72();
  for (auto _ : state) {
    double sum = 0;
    for (int64_t b = 1; b <= 65536; ++b) sum += chalk::decode_step(d, b, 4096).t_step.value();
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_BatchSweep1To65536)->Unit(benchmark::kMillisecond);

/// Runs `chalk args...` as its own process, stdout to /dev/null, and waits: the process a
/// user's shell starts, without a second shell in between (std::system would add /bin/sh's
/// own start-up, 1-2 ms, to every figure). Returns false when it did not exit 0.
bool run_chalk(std::vector<std::string> args) {
  args.insert(args.begin(), CHALK_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, CHALK_BINARY, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  return rc == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void BM_ChalkDecodeEndToEnd(benchmark::State& state) {
  for (auto _ : state) {
    if (!run_chalk({"decode"})) state.SkipWithError("chalk decode failed");
  }
}
BENCHMARK(BM_ChalkDecodeEndToEnd)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ChalkDecodeDenseEndToEnd(benchmark::State& state) {
  for (auto _ : state) {
    if (!run_chalk({"decode", "-m", "llama-3.1-8b", "-H", "h100-sxm"})) state.SkipWithError("chalk decode failed");
  }
}
BENCHMARK(BM_ChalkDecodeDenseEndToEnd)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Issue 34's aim: one model's hosts beside every built-in system in under 100 ms. DeepSeek-V3
/// is the largest search (GB200 NVL72: every replica size of the domain, three offers).
void BM_ChalkPricesCompareEndToEnd(benchmark::State& state) {
  for (auto _ : state) {
    if (!run_chalk({"prices", "compare", "-m", "deepseek-v3"})) state.SkipWithError("chalk prices compare failed");
  }
}
BENCHMARK(BM_ChalkPricesCompareEndToEnd)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ChalkVersionEndToEnd(benchmark::State& state) {
  for (auto _ : state) {
    if (!run_chalk({"--version"})) state.SkipWithError("chalk --version failed");
  }
}
BENCHMARK(BM_ChalkVersionEndToEnd)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
