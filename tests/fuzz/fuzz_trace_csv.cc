// Fuzzes the simulator's trace readers (read_trace, src/sim/trace_formats.cc: chalk's CSV,
// parse_trace_csv in src/sim/traffic.cc, and the published formats: Azure, BurstGPT,
// Mooncake JSONL, detected from the first line) and, for small traces they accept, the
// simulator on them (issue 28; Mooncake's block hashes run the prefix cache). The one allowed failure is
// chalk::InputError, whose message must be one line of at most 1,024 bytes. An accepted
// trace holds arrivals that are finite, >= 0, within the clock's reach (max_clock_s) and in
// order, and token counts 1..10,000,000; simulated on llama-3.1-8b on one H100, every
// request finishes or is rejected, and each finished request's TTFT and latency are finite
// and positive (a trace once gave TTFT 0 at epoch-microsecond times).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/simulator.h"
#include "chalk/sim/trace_formats.h"
#include "chalk/sim/traffic.h"
#include "fuzz_common.h"

namespace {
const chalk::Deployment& deployment() {
  static const chalk::Deployment d = [] {
    chalk::DeploymentOptions o;
    o.n_chips = 1;
    o.mechanisms.enabled = true;
    return chalk::make_deployment(chalk::load_model("llama-3.1-8b"), chalk::load_system("h100-sxm"), o);
  }();
  return d;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<chalk::sim::Request> reqs;
  try {
    reqs = chalk::sim::read_trace(text, "fuzz.csv").requests;
  } catch (const chalk::InputError& e) {
    const std::string w = e.what();
    CHALK_FUZZ_CHECK(w.size() <= 1024 && w.find('\n') == std::string::npos);
    return 0;
  }
  CHALK_FUZZ_CHECK(!reqs.empty());
  double last = 0;
  int64_t tokens = 0;
  for (const auto& r : reqs) {
    CHALK_FUZZ_CHECK(chalk::fuzz::finite_nonneg(r.arrival_s) && r.arrival_s <= chalk::sim::max_clock_s && r.arrival_s >= last);
    CHALK_FUZZ_CHECK(r.input_tokens >= 1 && r.input_tokens <= 10'000'000 && r.output_tokens >= 1 && r.output_tokens <= 10'000'000);
    int64_t covered = 0;  // a prefix's segments are each >= 1 token
    for (const auto& seg : r.prefix) {
      CHALK_FUZZ_CHECK(seg.tokens >= 1);
      covered += seg.tokens;
    }
    CHALK_FUZZ_CHECK(covered <= r.input_tokens + r.output_tokens);
    last = r.arrival_s;
    tokens += r.input_tokens + r.output_tokens;
  }
  // Simulate small traces only: the reader is what is fuzzed; the simulator's cost grows
  // with the tokens, and a big trace would time the harness out without finding anything.
  if (reqs.size() > 32 || tokens > 20'000) return 0;
  chalk::sim::SimOptions o;
  const auto run = chalk::sim::simulate(deployment(), reqs, o);
  CHALK_FUZZ_CHECK(run.fits && run.kv_blocks_leaked == 0);
  for (const auto& r : run.requests) {
    if (r.rejected) continue;
    CHALK_FUZZ_CHECK(std::isfinite(r.first_token_s) && r.first_token_s > r.arrival_s);
    CHALK_FUZZ_CHECK(std::isfinite(r.finish_s) && r.finish_s >= r.first_token_s);
  }
  return 0;
}
