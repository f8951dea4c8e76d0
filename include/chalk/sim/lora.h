// LoRA adapters served beside one base model (docs/simulator.md 1.9): each request names an
// adapter (or none); the adapters' low-rank weights sit in HBM slots up to a cap and in host
// memory otherwise; a step whose batch holds adapter requests runs the batched multi-adapter
// GEMM (shrink then expand, S-LoRA's MBGMV, Punica's SGMV) beside the base model's GEMMs.
// The levers are vLLM's (vllm/config/lora.py, LoRAConfig, vLLM v0.10 and later; before, the
// same fields in vllm/engine/arg_utils.py): --max-loras (adapters in one batch, and the HBM
// slots; default 1), --max-lora-rank (the slots' rank; default 16, one of 1, 8, 16, 32, 64,
// 128, 256, 320, 512), --max-cpu-loras (host copies; default = max_loras).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/engine/roofline.h"
#include "chalk/sim/traffic.h"

namespace chalk::sim {

/// The projections an adapter adapts, by HF module name (PEFT target_modules).
enum LoraTarget : uint8_t { lora_q = 1, lora_k = 2, lora_v = 4, lora_o = 8, lora_gate = 16, lora_up = 32, lora_down = 64 };
/// All seven linear layers of a Llama-family block: the S-LoRA and Punica benchmarks' and
/// vLLM's supported set (LlamaForCausalLM.packed_modules_mapping: qkv_proj, gate_up_proj,
/// plus o_proj and down_proj), and PEFT's target_modules="all-linear".
inline constexpr uint8_t kLoraAllTargets = 127;

/// The adapters of a run: `--lora N:RANK[,zipf:S][,max-loras:M][,targets:q+k+v+o+gate+up+down]`.
struct LoraSpec {
  int64_t adapters = 0;   ///< N distinct adapters (0: no LoRA, the run is exactly the run without)
  int64_t rank = 16;      ///< r: every adapter's rank, served at --max-lora-rank r
  double zipf_s = 0;      ///< popularity: P(adapter a) ~ 1/(a+1)^S; 0 = uniform
  int64_t max_loras = 1;  ///< HBM slots = most distinct adapters in one batch (vLLM --max-loras)
  uint8_t targets = kLoraAllTargets;
  /// max-loras was written in the spec (parse_lora); `chalk plan` searches it when not
  /// (plan_lora.h), keeping a stated value.
  bool max_loras_stated = false;
  bool enabled() const { return adapters > 0; }
};

/// Parses the --lora spec (N 1..100,000; RANK one of vLLM's max_lora_rank values; S in
/// [0, 10]; M 1..N; targets '+'-separated from q, k, v, o, gate, up, down; each option once).
/// Throws InputError naming `field`, the text and the expected form.
LoraSpec parse_lora(std::string_view text, const std::string& field);
/// "8:16,zipf:1,max-loras:4,targets:q+k+v+o+gate+up+down" (the inverse of parse_lora).
std::string describe_lora(const LoraSpec& s);

/// One adapter's weights, whole and on the busiest chip, in bytes.
struct LoraBytes {
  double params = 0;         ///< sum over layers and targets of r x (d_in + d_out)
  double bytes = 0;          ///< params x 2 (bf16: vLLM's lora_dtype "auto" = the base model's
                             ///< activation dtype, also for quantized bases)
  double bytes_per_chip = 0; ///< what one of n TP chips holds (lora_chip_dims)
};

/// The adapter of spec `s` on deployment `d` (tensor parallel over d.n_chips). A matrix of
/// d_in x d_out gets A (d_in x r) and B (r x d_out): r (d_in + d_out) parameters (Hu et al.
/// 2021, LoRA, section 4.1). Per chip, vLLM's default sharding (fully_sharded_loras off:
/// "only half of the LoRA computation is sharded"; vllm/lora/layers): a column-parallel layer
/// (q, k, v, gate, up) keeps A whole and B's d_out / n; a row-parallel one (o, down) A's
/// d_in / n and B whole. Llama 3.1 8B, r 16, all seven, one chip: 41,943,040 parameters,
/// 83,886,080 bytes. Throws InputError("--lora") for a target the model's layers lack in the
/// supported form: attention targets on MLA or linear-attention layers, MLP targets on MoE
/// layers (vLLM's fused-MoE LoRA is not modelled), gate on a plain (ungated) MLP.
LoraBytes lora_adapter_bytes(const Deployment& d, const LoraSpec& s);

/// The batched multi-adapter GEMM of one step on the busiest chip (S-LoRA section 5.2, MBGMV;
/// Punica section 4, SGMV; vLLM's punica kernels lora_shrink then lora_expand): each active
/// adapter's weights read once (bytes_per_chip each), and per token of an adapter request and
/// per targeted matrix its input x read (d_in), the r-wide intermediate written and read (2r),
/// and the output y read and written (y += B A x: 2 d_out), 2 bytes each; FLOPs 2 r (d_in +
/// d_out) per token and matrix. Time: max(bytes / (HBM bandwidth x hbm_efficiency), FLOPs /
/// (bf16 peak x matmul efficiency)), memory-bound at decode (Punica section 4: "memory-bound
/// ... at small batch"). Added to the step: the kernels run after the base GEMM they adapt.
/// With `kernels` > 0 (lora_step_kernels) and d.mechanisms enabled, each of the step's LoRA
/// kernels also pays the kernel floor (Calibration::kernel_floor, the fixed time of one
/// dependent GPU kernel): seconds += kernels x floor (docs/simulator.md 1.9, "Kernels").
struct LoraStepWork {
  double bytes = 0, flops = 0;
  double seconds = 0;    ///< the bytes' or FLOPs' time, plus floor_s
  double floor_s = 0;    ///< kernels x kernel floor (0 without mechanisms or kernels)
};
LoraStepWork lora_step_work(const Deployment& d, const LoraBytes& adapter, const LoraSpec& s, int64_t active_adapters, int64_t tokens,
                            int64_t kernels = 0);

/// How an engine release runs the multi-adapter GEMM of one adapted linear layer: its
/// dependent kernels per adapted matrix (one slice of a packed projection: q, k and v of
/// qkv_proj, gate and up of gate_up_proj) and per adapted packed projection (qkv_proj,
/// o_proj, gate_up_proj, down_proj holding at least one target).
struct LoraKernelPlan {
  int64_t per_matrix = 0;  ///< kernels per adapted matrix
  int64_t per_packed = 0;  ///< kernels per adapted packed projection
  std::string source;      ///< the engine code it was read from
};

/// The kernel plan of an engine family ("vllm", "sglang", "trtllm"; EnginePolicy::name) at a
/// release (EnginePolicy::version, "" for the current one):
/// - vllm before 0.8 (V0's punica wrapper: vllm/lora/punica_wrapper/punica_gpu.py at v0.6.5,
///   add_lora_packed_nslice loops over the slices, "TODO fuse these kernels", and add_lora
///   per slice allocates a zeroed fp32 buffer (torch.zeros: a fill kernel), then runs
///   bgmv_shrink and bgmv_expand_slice (decode; sgmv_* in prefill)): 3 per matrix, 21 per
///   Llama layer with all seven targets.
/// - vllm 0.8 and later (lora_shrink and lora_expand take every slice of a packed layer in
///   one launch: PunicaWrapperGPU.add_lora_linear, vLLM PR #13096, the per-slice
///   bgmv/sgmv kernels retired by PR #14685, March 2025; lora_shrink zeroes its output
///   first, output_tensor.zero_()): 3 per packed projection, 12 per Llama layer.
/// - sglang (triton backend, python/sglang/srt/lora/backend/triton_backend.py: run_qkv_lora
///   is sgemm_lora_a_fwd over the stacked A then qkv_lora_b_fwd; gate_up likewise; o and
///   down sgemm_lora_a_fwd then sgemm_lora_b_fwd): 2 per packed projection, 8 per layer.
/// - trtllm: its LoRA plugin was not read; taken as the least any shrink-then-expand
///   implementation launches, 2 per packed projection.
LoraKernelPlan lora_kernel_plan(std::string_view engine, std::string_view version);

/// The LoRA kernels of one step of deployment `d` under plan `p`: over the layer groups,
/// layers x (per_matrix x adapted matrices + per_packed x adapted packed projections).
/// Llama 3.1 8B, all seven targets: vLLM 0.6 21 x 32 = 672, vLLM current 12 x 32 = 384.
/// Throws as lora_adapter_bytes.
int64_t lora_step_kernels(const Deployment& d, const LoraSpec& s, const LoraKernelPlan& p);

/// Seconds to load one adapter from host memory into an HBM slot: bytes_per_chip over each
/// chip's host link (`host_bytes_per_s`, kv_offload_rates: the system's host tier link, HGX
/// H100 64 GB/s PCIe Gen5 x16). vLLM copies the weights into the slot before the step's
/// forward pass (vllm/lora/worker_manager.py, LRUCacheWorkerLoRAManager: activate_adapter in
/// set_active_adapters), so the step waits for it.
double lora_load_seconds(const LoraBytes& adapter, double host_bytes_per_s);

/// Draws each request's adapter (Request::adapter) from `s` with the seed's own stream
/// (inverse CDF of P(a) ~ 1/(a+1)^S), then keys its prefix by it (lora_key_prefix).
void apply_lora_traffic(std::vector<Request>& requests, const LoraSpec& s, uint64_t seed);

/// Makes a request's prefix segments its adapter's own: the KV of the same tokens under two
/// adapters differs, so vLLM's prefix cache adds the LoRA to each block's hash (vllm/v1/core/
/// kv_cache_utils.py, the block hash's extra keys). No adapter: unchanged.
void lora_key_prefix(Request& q);

}  // namespace chalk::sim
