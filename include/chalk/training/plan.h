// A training plan: how one training step of a model is split over chips (data, tensor,
// pipeline, context and expert parallelism), with its batch, recomputation and optimizer
// precision, placed on scale-up domains. Formulas and sources: docs/training.md and
// docs/sources/training-and-systems.md sections 1-6.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "chalk/base/dtype.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/attention_kernels.h"
#include "chalk/training/ring_attention.h"

namespace chalk {

/// Pipeline schedules (training-and-systems.md 4.1).
enum class PipelineSchedule {
  gpipe,        ///< all forwards, then all backwards (Huang et al. 2019)
  one_f_one_b,  ///< PipeDream-Flush 1F1B (Narayanan et al. 2021 2.2.1)
  interleaved,  ///< interleaved 1F1B with v chunks per rank (Narayanan 2.2.2)
  zb_h1,        ///< zero-bubble ZB-H1 (Qi et al. 2023, arXiv 2401.10241)
  zb_v,         ///< zero-bubble ZB-V, two chunks per rank in a V shape (same)
  dualpipe,     ///< DeepSeek's bidirectional DualPipe (DeepSeek-V3 report 3.2.1)
};
std::string_view to_string(PipelineSchedule s);
/// "gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe". Throws InputError naming `field`.
PipelineSchedule parse_schedule(std::string_view text, const std::string& field);

/// Activation recomputation (Korthikanti et al. 2022, arXiv 2205.05198 section 5).
enum class Recompute {
  none,       ///< store every activation
  selective,  ///< recompute the attention scores/softmax/dropout (drops the 5as/h term)
  full,       ///< store each layer's input only; rerun the whole forward in backward
};
std::string_view to_string(Recompute r);
/// "none", "selective", "full". Throws InputError naming `field`.
Recompute parse_recompute(std::string_view text, const std::string& field);

/// Modules whose outputs are recomputed in backward instead of stored, beyond `Recompute`
/// (Megatron-Core's --recompute-modules names; DeepSeek-V3 report 3.3.2, "Recomputation of
/// RMSNorm and MLA Up-Projection" and its SwiGLU whose inputs are cached and output
/// recomputed). Bit flags.
enum RecomputeModule : unsigned {
  kRecomputeLayernorm = 1,   ///< "layernorm": the norms' outputs (the QKV and first-MLP inputs); the norm reruns
  kRecomputeMlaUpProj = 2,   ///< "mla_up_proj": MLA's per-head Q, K, V; the q_b and kv_b GEMMs rerun from the latents
  kRecomputeMoeAct = 4,      ///< "moe_act": the experts' activation-function outputs (the down-projections' inputs)
};
/// "layernorm,mla_up_proj,moe_act" (any subset, comma-separated; "" = none) to flags.
/// Throws InputError naming `field` and the unknown module.
unsigned parse_recompute_modules(std::string_view text, const std::string& field);
/// The flags as Megatron-Core names them, comma-separated ("" when none).
std::string recompute_modules_string(unsigned modules);

/// How a training engine moves expert-parallel tokens between ranks (Megatron-Core's token
/// dispatchers, megatron/core/transformer/moe/token_dispatcher.py).
enum class EpDispatcher {
  /// DeepEP or HybridEP (Megatron-Core's `flex` dispatcher; DeepSeek's own engine): a token
  /// bound for several experts on one remote scale-up domain crosses the NIC once and fans
  /// out over the scale-up links (DeepSeek-V3 report 3.2.2; DeepEP's normal kernels).
  deepep,
  /// NCCL all-to-all over the EP group (Megatron-Core's `alltoall` dispatcher; torchtitan):
  /// every (token, expert) copy is sent on its own, so the NIC carries each copy bound for
  /// an expert on another domain: k (G - 1) / G copies per token over G domains.
  all_to_all,
};
std::string_view to_string(EpDispatcher d);
/// "deepep" (also "flex", "hybridep"), "alltoall". Throws InputError naming `field`.
EpDispatcher parse_ep_dispatcher(std::string_view text, const std::string& field);

/// How an FP8 GEMM recipe scales its tensors (Megatron-LM's --fp8-recipe choices,
/// megatron/training/arguments.py; Transformer Engine's recipes,
/// transformer_engine/common/recipe/). Each sets which quantization kernels run around the
/// GEMMs (kernels.h, quantize_bytes).
enum class Fp8Recipe {
  /// Per-tensor scales from the amax history of earlier steps (TE's DelayedScaling, the
  /// default of Megatron-LM and TE): the cast computes the new amax as it writes.
  delayed,
  /// Per-tensor current scaling (TE's Float8CurrentScaling, Megatron-Bridge's "FP8-CS",
  /// torchao's float8 "tensorwise" in torchtitan): an amax kernel reads the tensor before the
  /// cast (TE transformer_engine/common/recipe/current_scaling.cu @e9a0581, amax_kernel).
  tensorwise,
  /// MXFP8: one E8M0 scale per 32 elements, computed inside the cast (TE's MXFP8BlockScaling;
  /// Megatron-Bridge's "FP8-MX"; Blackwell).
  mxfp8,
  /// Block scaling: 1 x 128 tiles for activations and 128 x 128 for weights, an fp32 scale
  /// each, computed inside the cast (DeepSeek-V3 report 3.3.2; TE's Float8BlockScaling).
  blockwise,
};
std::string_view to_string(Fp8Recipe r);
/// "delayed", "tensorwise", "mxfp8", "blockwise". Throws InputError naming `field`.
Fp8Recipe parse_fp8_recipe(std::string_view text, const std::string& field);

/// Bytes per parameter of the model states (training-and-systems.md 3.1).
struct StateBytes {
  double weights = 2;    ///< working (bf16) weights
  double gradients = 2;  ///< gradients as reduced and accumulated
  double optimizer = 12; ///< fp32 master weights + Adam m + v
  std::string name = "adam16";
  double total() const { return weights + gradients + optimizer; }
};
/// Named presets: "adam16" 2+2+12 (ZeRO 3.1: fp16 weights and grads, fp32 master, m, v);
/// "adam18" 2+4+12 (Megatron-LM: fp32 main grads); "adam-bf16-moments" 2+4+8 = 14
/// (DeepSeek-V3 report 3.3.3: fp32 master and grads, bf16 Adam moments, bf16 working
/// copy; also the FP8 recipe, whose FP8 weight copies are transient). Throws InputError.
StateBytes parse_state_bytes(std::string_view text, const std::string& field);

/// One training step's parallel plan. Chips = dp x tp x pp x cp; experts are split
/// ep x etp ways inside the tp x cp x dp ranks of a stage (Megatron-Core's MoE layout,
/// where the expert group reuses the data-parallel ranks).
struct TrainingPlan {
  int64_t dp = 1;  ///< data-parallel degree (replicas of a stage)
  int64_t tp = 1;  ///< tensor-parallel degree
  int64_t pp = 1;  ///< pipeline stages
  int64_t cp = 1;  ///< context-parallel degree (sequence split for attention, ring exchange of K/V)
  int64_t ep = 1;  ///< expert-parallel degree (routed experts spread over ep ranks)
  int64_t etp = 1; ///< expert tensor parallel (each routed expert split over etp ranks)
  bool sequence_parallel = false;  ///< TP's activations outside the matmuls sharded by sequence (Korthikanti 4.2.2)
  /// ZeRO stage over the data-parallel group: 0 none, 1 optimizer, 2 + gradients,
  /// 3 + parameters (= FSDP FULL_SHARD).
  int zero_stage = 0;
  /// The data-parallel gradient reduce (ZeRO-0 all-reduce, ZeRO-1/2 reduce-scatter) runs
  /// bucket by bucket during the last backward (PyTorch DDP, Megatron-Core
  /// --overlap-grad-reduce). false: after the whole backward, exposed, as Megatron-LM 2021's
  /// train_step did (model.allreduce_gradients() after forward_backward_func, timed as
  /// "backward-params-all-reduce").
  bool overlap_grad_reduce = true;
  /// Sequence parallelism keeps only its sequence shard of each column-parallel GEMM's
  /// input (the QKV and first-MLP inputs, the two norm outputs of a layer: Korthikanti et
  /// al. 2022 4.2.2) and all-gathers it again in backward for the weight gradient, 2
  /// all-gathers of b s h / cp elements per layer (Megatron-LM
  /// LinearWithGradAccumulationAndAsyncCommunication.backward saves the shard input). true:
  /// that gather costs its whole time. Megatron-LM launches it beside the input-gradient GEMM,
  /// but Korthikanti Table 4 measures no gain from that on A100: sequence parallelism's
  /// backward is 0.1 ms faster per 22B layer (11.9 -> 11.8 ms) where its norms and dropout on
  /// 1/t of the tokens save 0.94 ms, the two gathers' 0.95 ms missing (docs/training.md).
  /// false: hidden (Transformer Engine's tp-comm-overlap, or engines that keep the gathered
  /// input). Only with sequence_parallel and tp > 1.
  bool sp_regather_exposed = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int64_t virtual_stages = 1;  ///< chunks per rank for interleaved (v); zb-v and dualpipe always hold 2 (Placement)
  int64_t global_batch = 0;    ///< sequences per step, all replicas
  int64_t microbatch = 1;      ///< sequences per microbatch
  int64_t seq_len = 0;         ///< tokens per sequence
  Recompute recompute = Recompute::none;
  bool reversible = false;     ///< reversible layers (RevNet/Reformer): inputs rebuilt in backward, none stored
  /// Attention scores never stored (FlashAttention): the 5as/h activation term is absent.
  bool flash_attention = true;
  /// The fused attention kernel (flash_attention only): its forward and backward rates
  /// (attention_kernels.h). Engines differ: torchtitan's SDPA runs FlashAttention-2.
  AttentionKernel attention_kernel = AttentionKernel::cudnn;
  /// How context parallelism's ring runs around the attention kernel (cp > 1 only): fused
  /// (Transformer Engine) or PyTorch's context_parallel with its eager fp32 merges
  /// (ring_attention.h). Engines differ: torchtitan runs PyTorch's.
  CpRing cp_ring = CpRing::fused;
  /// What Recompute::selective reruns: Korthikanti's attention core, or torchtitan's
  /// op-level policy (attention_kernels.h).
  SelectiveRecompute selective_recompute = SelectiveRecompute::attention_core;
  /// The run trains with dropout (Megatron-LM's defaults: hidden and attention dropout 0.1,
  /// as in Narayanan et al. 2021 and Korthikanti et al. 2022); modern pretraining runs
  /// without (PaLM section 5, Llama 3, DeepSeek-V3). With dropout the masks are stored
  /// (Korthikanti's 2sbh and the scores' 3as) and the bias-dropout-add kernels move them.
  bool dropout = false;
  unsigned recompute_modules = 0;  ///< RecomputeModule flags
  /// Linear layers keep their inputs for the weight gradient in the GEMMs' low-precision
  /// format under an FP8/FP4 recipe (Transformer Engine saves the quantized copy it already
  /// made; DeepSeek-V3 report 3.3.2 "Low-Precision Storage"), and with kRecomputeMoeAct the
  /// experts' activation-function inputs too (DeepSeek-V3 3.3.2: SwiGLU inputs cached in
  /// FP8). No effect under bf16 compute.
  bool low_precision_activations = true;
  MatmulPrecision compute = MatmulPrecision::bf16;  ///< matmul rate class of the GEMMs
  /// How the FP8 GEMMs are scaled (compute fp8 only; check_plan refuses another recipe than
  /// the default with other compute).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  double activation_bytes = 2;   ///< bytes per stored activation element
  StateBytes state;
  double dispatch_bytes = 2;     ///< EP dispatch format, bytes per element (FP8 dispatch: 1)
  double combine_bytes = 2;      ///< EP combine format
  /// Node-limited routing: a token's experts lie on at most this many scale-up domains
  /// (DeepSeek-V3 2.1.2: 4); 0 = no limit.
  int64_t route_domain_limit = 0;
  /// How expert-parallel tokens cross domains; only a group spanning scale-up domains differs.
  EpDispatcher ep_dispatcher = EpDispatcher::deepep;
  /// Megatron-Core's EP overlap (overlap_moe_expert_parallel_comm; Megatron-Bridge's
  /// moe_a2a_overlap): within a stage the forward of one microbatch runs beside the backward
  /// of an earlier one, each one's all-to-alls hidden behind the other's compute, as DualPipe
  /// pairs them across stages. Needs pp = 1 or the interleaved schedule, and no full
  /// recomputation (Megatron-Bridge docs/training/communication-overlap.md).
  bool ep_overlap = false;
  /// The routed experts run as Megatron-Core's TEGroupedMLP: Transformer Engine 2.x's
  /// GroupedLinear launches one cuBLAS GEMM and one set of quantize kernels per local expert
  /// (NeMo/Megatron-Bridge), and the MoE layer's router, preprocess and dispatch run as
  /// Megatron-Core's kernels (kernel_fixed_time.h). false: one grouped GEMM kernel over the
  /// local experts (DeepGEMM, torch._grouped_mm).
  bool per_expert_gemms = false;
  /// The memory-bound kernels run fused: Megatron-Core's and Transformer Engine's fused
  /// kernels, or torch.compile's Inductor fusing each block's elementwise chains (torchtitan's
  /// training.compile, per TransformerBlock). false: PyTorch eager, torchtitan's model code
  /// op by op, each op a kernel of its own (eager_kernels.h, eager_extra_bytes).
  bool compile = true;
  /// The loss and the optimizer step run as PyTorch eager ops (torchtitan @9dec370: the
  /// cross-entropy over an fp32 copy of the logits, never compiled; torch.optim.AdamW with
  /// foreach and clip_grad_norm_ with foreach over the fp32 FSDP2 shards; eager_kernels.h,
  /// torch_loss_bytes and torch_optimizer_bytes). false: the fused loss and optimizer kernels
  /// of Megatron-LM, apex and Transformer Engine (step.h loss_hbm_bytes, optimizer_hbm_bytes).
  bool torch_loss_optimizer = false;
  /// ZeRO-3 runs as PyTorch's FSDP2 (torchtitan's fully_shard): after each all-gather the
  /// compute stream copies the gathered flat buffer out into the per-parameter unsharded
  /// tensors (eager_kernels.h, fsdp2_copy_out_bytes). false: the engine's FSDP keeps the
  /// parameters as views of the gathered buffer (FSDP1's FlatParameter, Megatron-FSDP).
  bool fsdp2_copy_out = false;
  /// fp16 mixed precision's dynamic loss scaling (Micikevicius et al. 2018, section 3.2;
  /// Megatron-LM --fp16): every step unscales the main gradients and checks them for inf
  /// and NaN before the optimizer (optimizer_housekeeping_bytes). bf16 runs without.
  bool loss_scaling = false;
};

/// Chips of a plan: dp x tp x pp x cp.
int64_t plan_chips(const TrainingPlan& p);

/// Where the plan's groups sit: a group whose ranks fit in one scale-up domain talks over
/// scale-up links, else its traffic crosses the scale-out network. Ranks are ordered tp
/// (innermost), cp, dp, pp (outermost), Megatron-Core's order; the expert group (etp x
/// ep) is carved from consecutive tp x cp x dp ranks.
struct Placement {
  int64_t domain = 1;          ///< chips per scale-up domain
  bool tp_in_domain = true, cp_in_domain = true, ep_in_domain = true, dp_in_domain = true, pp_in_domain = true;
  int64_t dp_ranks_per_domain = 1;  ///< data-parallel ranks inside one domain (the hierarchical inner group)
  int64_t ep_ranks_per_domain = 1;  ///< expert-parallel ranks inside one domain
  int64_t layers_per_stage = 0;     ///< layers (or slots, when padded or uneven) on the busiest rank
  /// Neither the layers nor the slots split into pp x chunks equal parts: the busiest rank
  /// holds ceil(slots / pp) slots, the others fewer.
  bool uneven = false;
  int64_t microbatches = 0;         ///< m = global_batch / (dp x microbatch)
  int64_t chunks = 1;               ///< model chunks per rank: v (interleaved), 2 (zb-v, dualpipe), else 1
  std::string description;          ///< "TP8, CP1 in domain; PP16, DP64 over scale-out"
};

/// Checks a plan against a model and a system and places it. Throws InputError naming the
/// plan field, its value and what was expected, when: a degree is < 1; dp x tp x pp x cp
/// differs from `chips`; tp does not divide the query heads or the KV heads (nor the KV heads
/// tp); cp does not divide seq_len; pp x chunks exceeds the slots L + 2 + MTP modules (the
/// embedding, the LM head and each multi-token-prediction module taking one layer's place;
/// every chunk needs one); the routed experts do not split over ep; ep x etp does not
/// divide tp x cp x dp; ep > 1 on a dense model; global_batch is not a multiple of dp x
/// microbatch; the schedule's own conditions fail (interleaved: m a multiple of pp;
/// dualpipe: pp and m even, m >= 2 pp as deepseek-ai/DualPipe's step asserts); zero_stage
/// outside 0-3; an fp8_recipe other than delayed with compute other than fp8. The layers split evenly when L or the slots divide into pp x chunks parts
/// (Llama 3's 126 layers on 16 stages, DeepSeek-V3's 61 + 1 MTP on 16 x 2), else unevenly
/// (place_plan, Placement::uneven).
Placement check_plan(const ModelSpec& m, const SystemSpec& s, int64_t chips, const TrainingPlan& plan);

/// The placement of a plan already checked (check_plan calls it): `layers` transformer
/// layers, `padded` = layers + 2 + MTP modules (used when layers do not split evenly),
/// `domain` chips per scale-up domain. Never throws; the layout search calls it for plans
/// it built to be valid.
Placement place_plan(int64_t layers, int64_t padded, int64_t domain, const TrainingPlan& plan);

/// "DP64 TP8 PP16 (1f1b) CP1, ZeRO-1, mb 1, recompute none": a plan for people.
std::string describe_plan(const TrainingPlan& p);

}  // namespace chalk
