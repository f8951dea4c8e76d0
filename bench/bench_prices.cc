// Issue 34's goal: for every catalog model with a host sheet (data/prices/hosts/), every
// provider's offer beside chalk's cost on every built-in system in one command under
// 100 ms, each row naming its source. Two benchmarks per model:
//   compare/MODEL   compare_hosts in process, the work `chalk prices compare -m MODEL` does
//                   (every built-in system, the default 3,000:1,000 workload);
//   cli/MODEL       the command itself, its own process (posix_spawn, stdout to /dev/null).
// Each one asserts, not only reports: a mean CPU time over its iterations above 100 ms, an
// offer without price_source (or a stated speed without speed_source), or a system row
// with neither figures nor a reason is recorded, and the program exits 1 naming each after
// the run. CPU time (the process's own, the child's from wait4), not wall time: on a shared
// machine the wall clock counts the wait for a core (at a load of 15 on 2 cores it read 4x
// the CPU time); on an idle machine with the binary in page cache the two agree within the
// process start (~1 ms). Both are reported (mean_cpu_ms, mean_wall_ms). No ctest runs it;
// run build/release/bench_prices.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "chalk/io/io.h"
#include "chalk/prices/compare.h"
#include "chalk/prices/hosts.h"

namespace {

constexpr double kBudgetMs = 100;  // issue 34, "in one command under 100 ms"
std::vector<std::string> g_failures;

void fail(const std::string& what) { g_failures.push_back(what); }

/// Each offer names the page its price came from, and its speed's when it states one; each
/// system row has a cost or says why it has none (compare.h, SystemCost::unreachable).
void check_sources(const chalk::HostComparison& h) {
  for (const auto& oc : h.offers) {
    const std::string who = h.model + " " + oc.offer.provider;
    if (oc.offer.price_source.empty()) fail(who + ": no price_source");
    if (oc.offer.tok_per_s_per_user && oc.offer.speed_source.empty()) fail(who + ": a speed without speed_source");
    if (!oc.speed_assumed && !oc.offer.tok_per_s_per_user) fail(who + ": speed neither stated nor marked assumed");
    for (const auto& r : oc.systems) {
      if (r.unreachable.empty() && !(r.blended_cost.value() > 0)) fail(who + " on " + r.system + ": neither a cost nor a reason");
    }
  }
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

/// Records the means over the iterations; fails the run when the CPU time's is over budget.
void check_mean(benchmark::State& state, const std::string& name, double cpu_ms_total, std::chrono::steady_clock::duration wall) {
  if (state.iterations() == 0) return;
  const double n = static_cast<double>(state.iterations());
  const double ms = cpu_ms_total / n;
  state.counters["mean_cpu_ms"] = ms;
  state.counters["mean_wall_ms"] = std::chrono::duration<double, std::milli>(wall).count() / n;
  if (ms > kBudgetMs) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %.1f ms a run, over the %.0f ms budget", name.c_str(), ms, kBudgetMs);
    fail(buf);
    state.SkipWithError(buf);
  }
}

void compare_in_process(benchmark::State& state, const std::string& model) {
  const chalk::ModelSpec m = chalk::load_model(model);
  const chalk::HostSheet sheet = *chalk::builtin_host_sheet(model);
  std::vector<chalk::SystemSpec> systems;
  for (const auto& n : chalk::builtin_system_names()) systems.push_back(chalk::load_system(n));
  chalk::DeploymentOptions base;  // as run_compare (apps/chalk/cmd_prices_compare.cc)
  base.mechanisms.enabled = true;
  const chalk::CompareWorkload w;
  check_sources(chalk::compare_hosts(m, sheet, systems, base, w));
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = process_cpu_ms();
  for (auto _ : state) benchmark::DoNotOptimize(chalk::compare_hosts(m, sheet, systems, base, w));
  check_mean(state, "compare/" + model, process_cpu_ms() - c0, std::chrono::steady_clock::now() - t0);
  state.counters["offers"] = static_cast<double>(sheet.offers.size());
  state.counters["systems"] = static_cast<double>(systems.size());
}

/// Runs `chalk args...` as its own process, stdout to /dev/null, adding its user + system
/// CPU time to *cpu_ms; false unless it exits 0.
bool run_chalk(std::vector<std::string> args, double* cpu_ms) {
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
  rusage ru{};
  if (rc != 0 || wait4(pid, &status, 0, &ru) != pid) return false;
  *cpu_ms += (static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_stime.tv_sec)) * 1e3 +
             (static_cast<double>(ru.ru_utime.tv_usec) + static_cast<double>(ru.ru_stime.tv_usec)) * 1e-3;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void compare_cli(benchmark::State& state, const std::string& model) {
  const auto t0 = std::chrono::steady_clock::now();
  double cpu_ms = 0;
  for (auto _ : state) {
    if (!run_chalk({"prices", "compare", "-m", model}, &cpu_ms)) {
      fail("cli/" + model + ": chalk prices compare failed");
      state.SkipWithError("chalk prices compare failed");
      return;
    }
  }
  check_mean(state, "cli/" + model, cpu_ms, std::chrono::steady_clock::now() - t0);
}

}  // namespace

int main(int argc, char** argv) {
  const auto models = chalk::builtin_host_sheet_models();
  for (const auto& m : models) {
    benchmark::RegisterBenchmark(("compare/" + m).c_str(), compare_in_process, m)->Unit(benchmark::kMillisecond);
  }
  for (const auto& m : models) {
    benchmark::RegisterBenchmark(("cli/" + m).c_str(), compare_cli, m)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const auto& f : g_failures) std::fprintf(stderr, "FAILED %s\n", f.c_str());
  if (models.empty()) std::fprintf(stderr, "FAILED no built-in host sheets\n");
  return g_failures.empty() && !models.empty() ? 0 : 1;
}
