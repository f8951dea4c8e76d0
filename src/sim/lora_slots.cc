// The HBM slots of LoRA adapters in the simulator (lora_slots.h).
#include "lora_slots.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "chalk/base/error.h"
#include "chalk/sim/kv_offload.h"

namespace chalk::sim::detail {

LoraSlots::LoraSlots(const Deployment& d, std::span<const Request> requests, const SimOptions& o, SimRun& run) {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const int32_t a = requests[i].adapter;
    if (a >= 0 && a >= o.lora.adapters) {
      const std::string ids = o.lora.enabled() ? " or 0.." + std::to_string(o.lora.adapters - 1) : " (no LoRA adapters are stated)";
      throw InputError("request " + std::to_string(i), "names adapter " + std::to_string(a) + "; expected -1 (the base model)" + ids);
    }
  }
  if (!o.lora.enabled()) return;
  on_ = true;
  spec_ = o.lora;
  bytes_ = lora_adapter_bytes(d, spec_);
  const KvOffloadRates rates = kv_offload_rates(d.system, o.kv_offload);
  load_s_ = lora_load_seconds(bytes_, rates.host_bytes_per_s);
  kernels_ = lora_step_kernels(d, spec_, lora_kernel_plan(o.policy.name, o.policy.version));
  slot_.assign(static_cast<std::size_t>(spec_.max_loras), -1);
  slot_used_.assign(slot_.size(), -1);
  run.lora = true;
  run.lora_adapter_bytes = bytes_.bytes;
  run.lora_load_s_each = load_s_;
  run.lora_host_source = rates.host_source;
  run.lora_host_bytes_per_s = rates.host_bytes_per_s;
  run.lora_hbm_bytes = static_cast<double>(spec_.max_loras) * bytes_.bytes_per_chip * static_cast<double>(std::max<int64_t>(1, d.n_chips));
}

int64_t LoraSlots::kv_blocks_left(const Deployment& d, int64_t blocks, int64_t block_size) const {
  if (!on_) return blocks;
  const double per_block = memory_plan(d, 1, block_size).kv_cache.value();
  if (per_block <= 0) return blocks;
  const double slots = static_cast<double>(spec_.max_loras) * bytes_.bytes_per_chip * static_cast<double>(std::max<int64_t>(1, d.n_chips));
  return std::max<int64_t>(0, blocks - static_cast<int64_t>(std::ceil(slots / per_block)));
}

void LoraSlots::begin_step() {
  step_.clear();
  step_tokens_ = 0;
}

bool LoraSlots::admits(int32_t adapter) const {
  if (!on_ || adapter < 0) return true;
  return static_cast<int64_t>(step_.size()) < spec_.max_loras || std::find(step_.begin(), step_.end(), adapter) != step_.end();
}

void LoraSlots::use(int32_t adapter, int64_t tokens) {
  if (!on_ || adapter < 0) return;
  if (std::find(step_.begin(), step_.end(), adapter) == step_.end()) step_.push_back(adapter);
  step_tokens_ += tokens;
}

LoraSlots::Added LoraSlots::end_step(const Deployment& d, SimRun& run) {
  Added out;
  if (!on_) return out;
  ++steps_;
  for (const int32_t a : step_) {
    auto at = std::find(slot_.begin(), slot_.end(), a);
    if (at == slot_.end()) {
      // A miss: the least recently used slot that the step does not use (one exists: the step
      // holds at most max_loras adapters, this one not yet in a slot).
      std::size_t victim = slot_.size();
      for (std::size_t k = 0; k < slot_.size(); ++k) {
        const bool in_step = slot_[k] >= 0 && std::find(step_.begin(), step_.end(), slot_[k]) != step_.end();
        if (!in_step && (victim == slot_.size() || slot_used_[k] < slot_used_[victim])) victim = k;
      }
      if (slot_[victim] >= 0) ++run.lora_evictions;
      slot_[victim] = a;
      at = slot_.begin() + static_cast<std::ptrdiff_t>(victim);
      ++run.lora_loads;
      run.lora_load_s += load_s_;
      out.seconds += load_s_;
    }
    slot_used_[static_cast<std::size_t>(at - slot_.begin())] = steps_;
  }
  const LoraStepWork w = lora_step_work(d, bytes_, spec_, static_cast<int64_t>(step_.size()), step_tokens_, kernels_);
  out.seconds += w.seconds;
  out.memory_s = w.bytes / (d.system.chip.hbm_bandwidth.value() * d.hbm_efficiency);
  run.lora_gemm_s += w.seconds;
  if (!step_.empty()) ++run.lora_steps;
  return out;
}

}  // namespace chalk::sim::detail
