// One training step of a plan: compute, communication per collective on its link, the
// pipeline bubble of the schedule, and the throughput figures (MFU, HFU). Formulas and
// their sources: docs/training.md; docs/sources/training-and-systems.md sections 1, 4-6.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/base/units.h"
#include "chalk/engine/collective.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/plan.h"

namespace chalk {

struct TrainingMemory;  // memory.h

/// A model's training costs at one sequence length, precomputed once so a plan evaluates
/// in about 100 ns (bench/bench_training.cc). Per-layer figures are averages over the
/// layers (DeepSeek-V3's 3 dense and 58 MoE layers count as 61 average layers).
struct TrainingCosts {
  std::string model;
  int64_t layers = 0, d_model = 0, vocab = 0, seq_len = 0;
  int64_t padded_layers = 0;  ///< layers + 2 + MTP modules: pipeline slots when layers do not split evenly (check_plan)
  bool moe = false;
  /// Forward FLOPs per token: 2 x every matmul parameter a token multiplies (layers and
  /// LM head; lecture 2:21, Kaplan 2020 2.1); the LM head's share alone.
  double matmul_flops_per_token = 0, lm_head_flops_per_token = 0;
  /// Forward attention-core FLOPs per token, causal: (QK^T + softmax x V) averaged over
  /// the positions 1..s of a sequence (prefill_flops of model.h).
  double attention_flops_per_token = 0;
  /// The same without the causal halving (PaLM's 12 L H Q T, Megatron's s/6h term).
  double attention_flops_per_token_noncausal = 0;
  double dense_layer_params = 0;  ///< every layer's non-routed parameters (attention, dense FFN, shared experts, router, norms)
  double expert_params = 0;       ///< every routed expert of every layer
  double embedding_params = 0, lm_head_params = 0;
  double total_params = 0, active_params = 0;
  double routed_tokens_per_token = 0;  ///< top_k x MoE layers / L (per average layer)
  double moe_layer_fraction = 0;       ///< MoE layers / L
  int64_t top_k = 0;                   ///< routed experts per token (the first MoE group)
  /// Stored activation bytes per token per layer at 2-byte activations (Korthikanti et al.
  /// 2022 section 4.1 generalised to any head counts and MLP): the part tensor parallelism
  /// leaves replicated without sequence parallelism (LayerNorm inputs 4h, dropout masks
  /// 2h, dropout inputs 4h = 10h), the rest, and the attention scores per attended token
  /// (5a: softmax output 2, dropout mask 1, dropout output 2 bytes per head).
  double act_replicated_per_token = 0, act_sharded_per_token = 0, act_scores_per_token_per_ctx = 0;
  double kv_elements_per_token = 0;  ///< K and V elements per token per layer (context-parallel ring exchange)
  /// Query (heads x head_dim) and attention-output (heads x v_head_dim) elements per token
  /// per layer: what SDPA's ring sees of Q, and of K and V once repeated to every query
  /// head (ring_attention.h, CpRing::torch_eager).
  double q_elements_per_token = 0, o_elements_per_token = 0;
  /// Of act_replicated_per_token, the two dropout masks (2h bytes: after attention and
  /// after the MLP) and of act_scores_per_token_per_ctx the scores' dropout (3a: mask 1,
  /// output 2): stored only when the plan trains with dropout (TrainingPlan::dropout).
  double act_dropout_per_token = 0, act_scores_dropout_per_token_per_ctx = 0;
  // Widths, in elements per token per average layer, of the memory-bound kernels
  // (kernels.h): the norms' total width (norms_per_layer x h); the activation function's
  // elements moved forward (GeLU: in + out = 2f; SwiGLU: gate, up, out = 3f) and backward
  // (GeLU 3f; SwiGLU 5f), f summed over a token's experts (top_k routed + shared) on MoE layers.
  double norm_width = 0;
  double act_fn_forward_elements = 0, act_fn_backward_elements = 0;
  /// The gated activation functions' hidden width f per token per average layer (SwiGLU's f,
  /// summed over a token's experts as above; 0 for GeLU): eager mode's extra SwiGLU kernels
  /// (eager_kernels.h).
  double gated_act_width = 0;
  /// GEMM input widths K and output widths N summed over the layer's GEMMs (the router's
  /// apart: it stays in bf16), split into those on the full hidden of every TP rank
  /// (replicated: the QKV/MLA down-projection and first-MLP inputs, the row-parallel
  /// outputs) and those TP shards (sharded: the output-projection and second-MLP inputs, the
  /// column-parallel outputs); a token's routed experts count top_k times. quantize_bytes.
  double gemm_in_replicated = 0, gemm_in_sharded = 0, gemm_out_replicated = 0, gemm_out_sharded = 0;
  // Parts of the stored activations (bytes per token per average layer at 2-byte
  // activations) that recompute modules and low-precision storage change (memory.h):
  double act_norm_outputs = 0;        ///< the norms' outputs kept as the QKV and first-MLP inputs (4h, replicated)
  double act_linear_inputs_sharded = 0;  ///< the other GEMM inputs: output projection, experts' copies, down projections, MLA latents
  double act_moe_fc2_inputs = 0;      ///< of those, the experts' down-projection inputs (2 f per copy; MoE layers)
  double act_moe_fn_inputs = 0;       ///< the experts' activation-function inputs (GeLU 2f, SwiGLU 4f per copy; MoE layers)
  double act_mla_qkv = 0;             ///< MLA's per-head Q, K, V (2q + 2k + 2v; MLA layers)
  double moe_act_fn_forward_elements = 0;  ///< act_fn_forward_elements of the MoE layers' experts alone
  /// MoE layers' token copies: top_k x h per token (moe_routed_width) and the MoE layers' own
  /// h (moe_hidden_width), per average layer: the permute and unpermute kernels (kernels.h).
  double moe_routed_width = 0, moe_hidden_width = 0;
  /// MoE layers' router scores: n_experts per token (per average layer), and their top_k
  /// picks (routed_tokens_per_token): the router's memory-bound kernels (kernels.h).
  double moe_router_width = 0;
  /// Output widths of the GEMMs that carry a bias (qkv_bias, o_bias, the MLP's bias), whose
  /// gradient is a sum over the tokens reading the output gradient once: on the full hidden
  /// (replicated: the output projection's and second MLP's h) and TP-sharded (QKV, first MLP).
  double bias_width_replicated = 0, bias_width_sharded = 0;
  /// Query and key elements rotary embeddings rotate per token per average layer
  /// (ModelSpec::rotary_fraction of q + k; MLA: heads x qk_rope_head_dim of queries, sharded,
  /// and the one shared rope key, replicated): the rotary kernels (kernels.h, rotary_bytes).
  double rotary_width_sharded = 0, rotary_width_replicated = 0;
  double mla_up_proj_flops_per_token = 0;  ///< forward FLOPs of MLA's q_b and kv_b per token (per average layer)
  /// Forward FLOPs per token (all layers) of the linears torchtitan's op-level selective
  /// checkpointing reruns (attention_kernels.h, every_second_matmul_flops_per_token).
  double every_second_matmul_flops_per_token = 0;
  /// One of the average layer's GEMMs as its shape, for GEMM efficiency by shape
  /// (gemm_shape_factors): N (output width) and K (input width) in elements before any
  /// split; which side tensor parallelism splits (column-parallel: N; row-parallel: K;
  /// neither: MLA's down-projections); `count` per average layer (group layers / L); for a
  /// routed expert, `experts` routed experts in its layer and `top_k` copies per token
  /// (0 and 1 for the dense GEMMs: every token passes once).
  struct LayerGemm {
    double n = 0, k = 0, count = 0;
    bool split_n = false, split_k = false;
    double experts = 0, top_k = 1;
  };
  std::vector<LayerGemm> gemms;
  /// A sum over `gemms` of their fields, which tells two GEMM lists apart (the factors'
  /// per-thread cache, gemm_shapes.cc).
  double gemm_fingerprint = 0;
  /// Sums over `gemms` for the kernel counts (kernel_fixed_time.h): the dense GEMMs' counts,
  /// the routed experts' counts, and their counts x experts per layer.
  double dense_gemms = 0, expert_gemms = 0, expert_gemm_experts = 0;
};

/// Precomputes a model's training costs at `seq_len` tokens per sequence. Throws
/// InputError for seq_len < 1.
TrainingCosts make_training_costs(const ModelSpec& m, int64_t seq_len);

/// A system's figures that a training step uses, resolved once.
struct TrainingSystem {
  std::string name;
  int64_t domain = 1;
  FlopsPerSecond peak_bf16;     ///< MFU denominator (PaLM App. B, Llama 3, DeepSeek, MosaicML all use the bf16 dense peak)
  FlopsPerSecond matmul_rate;   ///< peak(plan.compute) x the system's matmul efficiency
  /// The output head's GEMMs, kept in bf16 under FP8 training (DeepSeek-V3 report 3.3.1:
  /// the embedding, the output head, gating, norms and attention stay BF16/FP32; Transformer
  /// Engine's FP8 covers the layers' Linear modules only): bf16 peak x bf16 efficiency.
  FlopsPerSecond head_matmul_rate;
  FlopsPerSecond attention_rate;///< bf16 peak x Calibration::attention_compute_fraction (FLASHMLA-1: 660 of 989 TFLOP/s)
  BytesPerSecond hbm_rate;      ///< HBM bandwidth x the system's HBM efficiency
  /// SMs lent to communication kernels while they overlap compute: 20 of 132
  /// (Calibration::communication_sm_fraction; DeepSeek-V3 report 3.2.2).
  double communication_sm_fraction = 0;
  Bytes hbm_capacity;
  LinkModel up, out;
  bool has_scale_out = false;
  MatmulPrecision compute = MatmulPrecision::bf16;
  /// The chip's SMs (ChipSpec::sm_count; 0 = not stated) and whether training prices each
  /// GEMM by its shape (gemm_shape_factors; `chalk train ... --gemm-shapes on|off`).
  int64_t sm_count = 0;
  bool gemm_shapes = true;
  /// Fixed time of each compute-bound kernel (GEMM, attention core), seconds: the chip's
  /// op_floor (engine/overhead.h: a GPU's kernel floor, 6.3 us from cuBLASLt's measured
  /// "t0 + work" curve, or a TPU's fused-op time), paid besides its work
  /// (kernel_fixed_time.h). 0 charges none.
  double gemm_kernel_fixed_s = 0;
  /// Fixed time of each memory-bound kernel, seconds: kKernelGapS on a GPU; 0 on a TPU,
  /// whose XLA fusions fold the elementwise chains into the GEMMs' ops (kernel_fixed_time.h).
  double kernel_gap_s = 0;
};

/// GEMM efficiency by shape on one rank (engine/gemm_shape.h): for the layer GEMMs and the
/// output head, the FLOP-weighted harmonic mean of gemm_shape_efficiency over the GEMMs, for
/// forward (M = the rank's b s / cp tokens, N, K; M x N x K), input gradient (M x K x N) and
/// weight gradient (N x K x M: the reduction runs over the tokens). Tensor parallelism
/// divides N of the column-parallel and K of the row-parallel GEMMs by tp; a routed expert
/// is a grouped GEMM of E / ep local experts of M = tokens x top_k x ep / E tokens each
/// (balanced routing) with its widths divided by etp. Each figure is in (0, 1]: the step
/// divides its MAMF-rate time by it. All 1 when s.gemm_shapes is off or s.sm_count is 0.
struct GemmShapeFactors {
  double forward = 1, dgrad = 1, wgrad = 1;
  double head_forward = 1, head_dgrad = 1, head_wgrad = 1;
  /// 1 / each figure, taken once per split and microbatch (the step multiplies by them).
  double inv_forward = 1, inv_dgrad = 1, inv_wgrad = 1;
  double inv_head_forward = 1, inv_head_dgrad = 1, inv_head_wgrad = 1;
};
GemmShapeFactors gemm_shape_factors(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p);

/// Resolves a system for training GEMMs in `compute`. Throws InputError when the chip
/// has no rate for `compute`.
TrainingSystem make_training_system(const SystemSpec& s, MatmulPrecision compute);

/// HBM bytes per attention-score element (one head, one query-key pair) at 2-byte
/// activations when the scores are materialised (no FlashAttention), in Megatron-LM's
/// kernel sequence (Dao et al. 2022, arXiv 2205.14135, section 2.2, Algorithm 0: S and P
/// are written to and read from HBM). Forward: QK^T writes S (2), the fused
/// scale-mask-softmax reads S and writes P (4), dropout reads P and writes P' and its
/// 1-byte mask (5), P'V reads P' (2) = 13. Backward: dP' written (2), dropout's backward
/// reads dP' and the mask and writes dP (5), softmax's backward reads P and dP and writes
/// dS (6), dQ = dS K and dK = dS^T Q read dS (4), dV = P'^T dO reads P' (2) = 19.
/// Korthikanti et al.'s 5as/h counts only the stored part (P, mask, P': 5 bytes).
inline constexpr double kScoreBytesForward = 13, kScoreBytesBackward = 19;
/// Of those, dropout's share: forward 5 (reads P, writes P' and the mask), backward 5
/// (reads dP' and the mask, writes dP). Without dropout, P'V reads P and dV = P^T dO reads P:
/// forward 8, backward 14.
inline constexpr double kScoreDropoutBytesForward = 5, kScoreDropoutBytesBackward = 5;
/// HBM bytes of `elements` materialised score elements in forward or backward at
/// `activation_bytes` per activation (scaled from the 2-byte counts above), with or without
/// the scores' dropout.
double scores_hbm_bytes(double elements, double activation_bytes, bool backward, bool dropout = true);

/// HBM bytes per logit element of the loss, at the least any implementation that saves the
/// softmax for backward moves (Megatron-LM's vocab_parallel_cross_entropy saves
/// exp_logits / sum as the softmax; its backward scales it in place): forward reads the
/// bf16 logits (2) and writes the fp32 softmax (4); backward reads the softmax (4) and writes
/// the bf16 logits gradient (2). Megatron's unfused path (fp32 cast, max, subtract, exp, sum,
/// divide: about 40 bytes forward) moves more; not modelled.
inline constexpr double kLossBytesForward = 6, kLossBytesBackward = 6;
/// HBM bytes of the loss over `logits` elements, forward or backward.
double loss_hbm_bytes(double logits, bool backward);

/// HBM bytes of one optimizer step over `owned_params` parameters (those whose optimizer
/// states the chip keeps: every parameter it holds under ZeRO-0, its 1/DP shard from ZeRO-1
/// on, ZeRO 5.1), per parameter: the gradient-norm pass of gradient clipping reads the
/// gradient (Megatron-LM clip_grads.py: multi_tensor_l2norm over the main grads), AdamW reads
/// it again, reads and writes the fp32 master weight and both moments (Loshchilov and Hutter
/// 2019 Algorithm 2; apex FusedAdam: p, m, v read and written in one pass) and writes the
/// working weight: 2 g + 2 optimizer + w bytes (adam18 2x4 + 2x12 + 2 = 34; adam16 30;
/// adam-bf16-moments 26). Not counted: the clipping's rescale pass (only when the norm
/// exceeds the threshold) and the norm's scalar all-reduce (microseconds).
double optimizer_hbm_bytes(const StateBytes& state, double owned_params);

/// Bytes per parameter of the fp32 master weight a mixed-precision optimizer keeps beside
/// the 16-bit working weights (part of StateBytes::optimizer in every preset).
inline constexpr double kMasterWeightBytes = 4;

/// HBM bytes of the passes a mixed-precision optimizer step makes besides the norm and
/// AdamW (optimizer_hbm_bytes), for a chip that keeps the optimizer states of
/// `owned_params` parameters and holds `held_params` (its stage's weights, before ZeRO).
/// Source: Megatron-LM's MixedPrecisionOptimizer.step and its DDP (NVIDIA/Megatron-LM
/// megatron/optimizer/optimizer.py and megatron/model/distributed.py @v3.0, the 2022
/// release; Megatron-Core's DistributedOptimizer and DistributedDataParallel the same):
/// - the working weights are written by their own copy kernel after AdamW
///   (_copy_main_params_to_model_params, multi_tensor_scale from the fp32 master to the
///   16-bit weight), which reads each owned master again: kMasterWeightBytes per owned
///   parameter (its write, w, is already in optimizer_hbm_bytes); ZeRO-3 (FSDP) keeps no
///   working copy apart (the fp32 shard is cast as it is gathered), so 0 there;
/// - the contiguous gradient buffer is zeroed before each step's first microbatch
///   (zero_grad_buffer: grad_data.zero_()), a write of state.gradients per held parameter
///   under ZeRO-0 and 1; ZeRO-2/3 free their gradients instead (set to None), so 0 there;
/// - under plan.loss_scaling the dynamic loss scaler's unscale and inf/NaN check
///   (_unscale_main_grads_and_check_for_nan: torch._amp_foreach_non_finite_check_and_unscale_
///   over the main gradients, in place) reads and writes each owned gradient: 2 x
///   state.gradients.
/// adam18 (g 4) at ZeRO-0, owned = held: 4 + 4 + (loss scaling) 8 = 16 B per parameter.
/// Never throws.
double optimizer_housekeeping_bytes(const TrainingPlan& p, double owned_params, double held_params);

/// Compute time lost while a collective of `hidden` seconds runs hidden behind compute: its
/// kernels hold `sm_fraction` of the SMs, so the compute progresses at 1 - sm_fraction
/// meanwhile and finishes hidden x sm_fraction later (DeepSeek-V3 report 3.2.2: 20 of 132
/// SMs for communication; NCCL likewise runs each channel as one thread block on one SM,
/// NCCL docs NCCL_MIN_NCHANNELS/NCCL_MAX_NCHANNELS). 0 when hidden <= 0.
double sm_contention(double hidden, double sm_fraction);

/// The layers and output layers of the stage that sets the pipeline's pace (per microbatch).
struct BusiestStage {
  double layers = 0;  ///< transformer layers (average layers; MTP modules' blocks count as layers)
  double heads = 0;   ///< output layers: LM head + loss, once per multi-token-prediction module too
};
/// The busiest pipeline rank, compared at `layer_cost` per layer and `head_cost` per output
/// layer (any consistent unit). The LM head and the loss sit on the last stage, the
/// embedding (a lookup, no FLOPs) on the first (Narayanan et al. 2021; the zero-bubble
/// README: "embedding/output layers make the first/last stage heavier"). Layers split
/// evenly: the last stage holds its L/pp layers, the MTP modules and 1 + MTP output layers.
/// Padded split (L + 2 + MTP slots, check_plan): the embedding, the head and each MTP
/// module take a layer's slot (Llama 3 3.3.2: one layer fewer on the first and the last
/// stage), so the last stage holds slots - 1 layers and 1 + MTP output layers. ZB-V and
/// DualPipe place the first and the last chunk on rank 0 (DeepSeek-V3 2.2). pp = 1: every
/// layer and output layer. The busiest candidate by cost wins.
BusiestStage busiest_stage(const TrainingCosts& c, const TrainingPlan& p, const Placement& pl, double layer_cost, double head_cost);

/// Bubble (idle time per rank per step) of a schedule with p stages, m microbatches,
/// v chunks, forward t_f, full backward t_b and weight-gradient part t_w per microbatch
/// and stage (training-and-systems.md 4.1): GPipe and 1F1B (p-1)(t_f+t_b) (Huang 2019
/// 2.2, Narayanan 2021 2.2.1); interleaved (p-1)(t_f+t_b)/v (Narayanan 2.2.2); ZB-H1
/// (p-1)(t_f + t_b - 2 t_w) (Qi et al. 2023: (p-1)(T_F + T_B - T_W) with T_B the input
/// gradient only); ZB-V 0; DualPipe (p/2 - 1)(t_f + t_b + t_b - 3 t_w) (DeepSeek-V3
/// Table 2, F&B taken as t_f + t_b; training_step passes dualpipe_bubble the lone chunk's
/// backward and weight GEMMs instead). The zero-bubble formulas hold for m >= p (ZB-H1) and
/// m >= 2p (ZB-V); below, few_microbatch_bubble is the floor. 0 when p = 1.
Seconds pipeline_bubble(PipelineSchedule s, int64_t p, int64_t m, int64_t v, Seconds t_f, Seconds t_b, Seconds t_w);

/// The least bubble any schedule leaves with only m microbatches (t_b the full backward,
/// t_w its weight-gradient part, t_bi = t_b - t_w), from the critical path of one
/// microbatch (docs/training.md, "Few microbatches"). One chunk per rank (GPipe, 1F1B,
/// ZB-H1): the last stage starts after (p-1) t_f, runs its m (t_f + t_bi), its last input
/// gradient returns through p-1 stages, and rank 0 ends on one t_w; only weight-gradient
/// work of other microbatches fills that wait: (p-1)(t_f + t_bi) - (m-1) t_w. V-shape (ZB-V,
/// rank 0 holds the first and the last chunk): rank 0 waits (2p-1) t_f/2 for its last
/// chunk's first forward, filled by at most m first-chunk forwards of t_f/2, then (p-1) t_bi
/// for the last input gradient to come back, filled by the other m-1 first-chunk input
/// gradients (t_bi/2) and the m weight gradients less the last chunk's half of the last
/// one (t_w/2), which runs only after the last input gradient. At m = 1: one chunk per
/// rank, (p-1)(t_f + t_bi); V-shape, (p-1)(t_f + t_bi) - t_w/2 (the serial pass less the
/// first chunk's weight gradient); at m >= 2p (V) or large m, 0. Never negative.
Seconds few_microbatch_bubble(bool v_shape, int64_t p, int64_t m, Seconds t_f, Seconds t_b, Seconds t_w);

/// DualPipe's bubble (p/2 - 1)(F&B + B - 3W) (DeepSeek-V3 report Table 2; deepseek-ai/DualPipe
/// README): t_fb a forward and a backward chunk overlapped, t_b a full backward chunk, t_w
/// its weight-gradient part, all per microbatch on one rank. 0 when p <= 1; never negative.
Seconds dualpipe_bubble(int64_t p, Seconds t_fb, Seconds t_b, Seconds t_w);

/// Forward chunks (and as many backward chunks) that run unpaired on DualPipe's rank 0 in a
/// step of m microbatches over p ranks: 3p/2 - 1 (deepseek-ai/DualPipe dualpipe.py,
/// DualPipe.step: forwards (p - 2) + 2 + (p/2 - 1) in steps 1-3, backwards (p/2 - 1) x 3
/// + 2 in steps 3, 5-7; rank r has 3p/2 - r - 1), at most m. 0 when p <= 1.
int64_t dualpipe_unpaired_chunks(int64_t p, int64_t m);

/// One training step on the busiest pipeline stage (busiest_stage).
struct TrainingStep {
  int64_t microbatches = 0;
  double busy_layers = 0, busy_output_layers = 0;  ///< what the busiest stage runs per microbatch (busiest_stage)
  // Per microbatch on one stage.
  Seconds t_forward, t_backward, t_weight_grad;  ///< t_w: the weight-gradient GEMMs within t_backward
  /// Compute parts (forward + backward). Elementwise: the memory-bound kernels
  /// (elementwise_bytes, quantize_bytes), the materialised scores' traffic and the loss.
  Seconds t_matmul, t_attention, t_recompute, t_elementwise;
  Seconds t_tp, t_cp, t_ep, t_pp;  ///< communication per microbatch, before overlap
  Seconds t_cp_exposed, t_ep_exposed, t_pp_exposed;
  // Per step.
  /// DualPipe and Megatron-Core's EP overlap (plan.ep_overlap) only: chunks that run
  /// unpaired in warm-up and cool-down (dualpipe_unpaired_chunks; under EP overlap the first
  /// forward and last backward at pp = 1, the interleaved warm-up chunks otherwise), one such
  /// forward and backward alone (all SMs, EP exposed; PP too under DualPipe), and what they
  /// add over pairing: unpaired x (alone_f + alone_b - t_f - t_b) per step (0 otherwise; in
  /// microbatches, chunks / v, under EP overlap).
  int64_t unpaired_chunks = 0;
  Seconds t_forward_alone, t_backward_alone, t_unpaired;
  Seconds t_pipeline;         ///< m (t_f + t_b) + t_unpaired + bubble
  Seconds t_bubble;
  double bubble_fraction = 0; ///< bubble / (m (t_f + t_b)), Narayanan's convention
  Seconds t_dp, t_dp_exposed; ///< gradient reduce (and ZeRO-3 gathers), all of it and the part not hidden
  Seconds t_optimizer;        ///< grad-norm pass + AdamW over the owned parameters and the mixed-precision housekeeping passes, at the HBM rate (optimizer_hbm_bytes, optimizer_housekeeping_bytes)
  /// Compute lost to the SMs that hidden collectives hold (sm_contention): the DP reduce or
  /// ZeRO gathers per step (added to the step), the CP ring per step (inside t_pipeline).
  Seconds t_dp_sm_contention, t_cp_sm_contention;
  Seconds t_step;
  double tokens_per_step = 0;
  TokensPerSecond tokens_per_s, tokens_per_s_per_chip;
  Flops model_flops;          ///< per step, all chips: 3 x forward (6 N per token + causal attention x 3)
  Flops hardware_flops;       ///< executed: model + recomputation (+ FlashAttention's backward recompute)
  double mfu = 0;             ///< model_flops / (t_step x chips x bf16 peak)
  double hfu = 0;             ///< hardware_flops / (t_step x chips x bf16 peak)
  FlopsPerSecond model_flops_per_s_per_chip;
};

/// The step (docs/training.md, "Step"). Per microbatch on the busiest stage (busiest_stage:
/// its layers and output layers; the output head in bf16 at head_matmul_rate, the loss at
/// loss_hbm_bytes), forward: GEMMs at the matmul rate, attention core at the attention rate, the memory-bound kernels
/// (kernels.h: norms, residual adds, dropout, the activation function, an FP8/FP4 recipe's casts) at the HBM rate, TP all-reduces (2 per layer, on the TP link), EP dispatch + combine
/// all-to-alls, the CP K/V ring, the PP send; backward: 2x the forward GEMMs and
/// attention (2.5x attention under FlashAttention, whose backward recomputes the scores),
/// 2 TP all-reduces per layer, EP and PP again; full recomputation and reversible layers
/// rerun the forward. Overlap: CP traffic hides behind attention; DualPipe hides EP and PP
/// traffic behind the paired chunk's compute, which then runs on the SMs the
/// communication kernels leave (compute / (1 - communication_sm_fraction)); DP gradient reduce hides behind the
/// step's last backward, ZeRO-1/2's gather of the updated parameters behind the next step's
/// first forward (each excess exposed); ZeRO-3's
/// gathers and reduce-scatters hide behind each microbatch's compute; TP is exposed.
/// `placement` must come from check_plan for this plan. Throws InputError when the plan
/// needs a scale-out network the system does not state.
TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& placement);
/// The same with the plan's memory already computed (training_memory(c, s, p, placement)),
/// which the step reads for the optimizer's bytes: the layout search evaluates both and
/// computes it once.
TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& placement,
                           const TrainingMemory& memory);

}  // namespace chalk
