// Host work per step of the serving engines (host_time.h).
#include "chalk/engine/host_time.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "chalk/engine/collective.h"
#include "chalk/engine/engine_name.h"
#include "host_step.h"

namespace chalk {

HostTime engine_host_time(std::string_view engine) {
  const std::string_view family = engine_family(engine);
  HostTime h;
  if (family == "vllm" || family == "sglang") {
    h.s_per_sequence = kVllmHostSPerSequence;
    h.source = "host 21.5 us per sequence per step (vLLM issue #10634: 5.5 ms at batch 256), overlapped with the GPU step";
  } else if (family == "trtllm") {
    h.s_per_sequence = kTrtllmHostSPerSequence;
    h.source = "host 29.4 us per sequence per step (TensorRT-LLM PR #10273: 45.11 ms at 1,536 sequences), overlapped with the GPU step";
  } else {
    h.source = "no host time per step";
  }
  return h;
}

namespace {
/// Sequences the busiest data-parallel rank's scheduler handles in the step: decodes and
/// prefill chunks, each on its rank (StepMix), else spread evenly (StepShape: the
/// steady-state mean, fractional).
double host_sequences(const Deployment& dep, const StepShape& s, const StepMix* mix) {
  const double ranks = static_cast<double>(std::max<int64_t>(1, dep.n_chips / std::max<int64_t>(1, dep.mechanisms.layout.tp_attention)));
  if (mix == nullptr) return (s.decode_sequences + s.prefill_sequences) / ranks;
  const double all = static_cast<double>(mix->decodes() + static_cast<int64_t>(mix->chunks.size()));
  if (mix->decode_ranks.empty() && mix->chunk_ranks.empty()) return std::ceil(all / ranks);
  thread_local std::vector<int64_t> on;  // reused: the simulator asks every step
  on.assign(static_cast<std::size_t>(ranks), 0);
  for (const int32_t r : mix->decode_ranks) ++on[static_cast<std::size_t>(r)];
  for (const int32_t r : mix->chunk_ranks) ++on[static_cast<std::size_t>(r)];
  return static_cast<double>(*std::max_element(on.begin(), on.end()));
}

}  // namespace

namespace detail {

void add_host_time(const Deployment& dep, const StepShape& s, const StepMix* mix, StepBreakdown& r) {
  const HostTime& h = dep.mechanisms.host;
  if (!(h.s_per_sequence > 0) || is_tpu(dep.system)) return;
  r.t_host = Seconds(h.s_per_sequence * host_sequences(dep, s, mix));
  const Seconds gpu = r.t_step;
  r.t_step = Seconds(step_with_host(gpu.value(), r.t_host.value(), h.overlap));
  if (r.t_host >= gpu) r.governs = "host";
}

}  // namespace detail
}  // namespace chalk
