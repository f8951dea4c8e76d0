// The HBM slots of a run's LoRA adapters, private to src/sim (simulator.cc; lora.h,
// docs/simulator.md 1.9): which adapters a step may batch, the loads its misses pay (LRU
// over max_loras slots) and the multi-adapter GEMM it adds.
#pragma once

#include <cstdint>
#include <vector>

#include "chalk/sim/lora.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim::detail {

class LoraSlots {
 public:
  /// Off (every call a no-op) when o.lora is not enabled. Throws InputError("request i") for a
  /// request naming an adapter outside 0..N-1, and as lora_adapter_bytes. Records the
  /// adapter's bytes, the load time and the slots' HBM in `run`.
  LoraSlots(const Deployment& d, std::span<const Request> requests, const SimOptions& o, SimRun& run);
  bool on() const { return on_; }
  /// KV blocks left when the slots take max_loras x bytes_per_chip on every chip, as vLLM
  /// allocates them before profiling the KV cache: blocks - ceil(slots' bytes / block bytes).
  int64_t kv_blocks_left(const Deployment& d, int64_t blocks, int64_t block_size) const;
  /// A new step: no adapters, no tokens.
  void begin_step();
  /// Whether a request of `adapter` may join the step: the base model (-1), an adapter the
  /// step already runs, or a free place among max_loras (vLLM's scheduler skips the request
  /// otherwise: vllm/v1/core/sched/scheduler.py, "Scheduling would exceed max_loras").
  bool admits(int32_t adapter) const;
  /// `tokens` of a request of `adapter` run in the step.
  void use(int32_t adapter, int64_t tokens);
  /// Ends the step's scheduling: loads each of its adapters not in a slot (evicting the least
  /// recently used slot not in the step), and returns the seconds added to the step (loads,
  /// then the multi-adapter GEMM with its kernels' floor) and the GEMM's HBM-busy seconds. Counts into `run`.
  struct Added {
    double seconds = 0, memory_s = 0;
  };
  Added end_step(const Deployment& d, SimRun& run);

 private:
  bool on_ = false;
  LoraSpec spec_;
  LoraBytes bytes_;
  double load_s_ = 0;
  int64_t kernels_ = 0;                ///< LoRA kernels per step (lora_step_kernels of the engine's plan)
  std::vector<int32_t> step_;          ///< distinct adapters of the step
  int64_t step_tokens_ = 0;            ///< tokens of adapter requests in the step
  std::vector<int32_t> slot_;          ///< adapter in each HBM slot (-1: empty)
  std::vector<int64_t> slot_used_;     ///< step number of its last use (LRU)
  int64_t steps_ = 0;
};

}  // namespace chalk::sim::detail
