// The roofline of one decode step and one prefill for a model on n chips of a system
// (lecture 2:21-15:30; Pope et al. 2022 section 2; DESIGN.md section 1). Weights and
// KV cache are sharded evenly over the chips; the detailed parallel layout and its
// communication are not modelled here. Every time is a lower bound scaled by the
// achievable fractions of peak that the Deployment states.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/model/moe.h"
#include "chalk/engine/overhead.h"
#include "chalk/base/units.h"

namespace chalk {

/// The largest batch (sequences in one step) and context (tokens) chalk accepts from a
/// user: the CLI's --batch 1..2^24 and --context 1..2^30. validate's rows and the Python
/// module's step functions take the same ranges, so every front end refuses the same input.
inline constexpr int64_t kMaxStepBatch = int64_t{1} << 24;
inline constexpr int64_t kMaxContextTokens = int64_t{1} << 30;

/// What a user chooses for a run. Unset fields take the defaults documented here.
struct DeploymentOptions {
  int64_t n_chips = 1;                       ///< chips holding one replica (>= 1)
  std::optional<DType> weights;              ///< override attention/FFN/expert formats (default: the checkpoint's)
  DType kv = DType::bf16;                    ///< KV-cache format
  std::optional<MatmulPrecision> compute;    ///< matmul rate class (default: see make_deployment)
  std::optional<double> matmul_efficiency;   ///< override the system's matmul fraction of peak
  std::optional<double> hbm_efficiency;      ///< override the system's HBM fraction of peak
  std::optional<UsdPerSecond> price_per_chip;  ///< override the system's price
  /// Fraction of HBM held back for activations, runtime and fragmentation. Default 0.10:
  /// vLLM's default gpu_memory_utilization of 0.9.
  double memory_reserve_fraction = 0.10;
  /// Mechanisms beyond the plain roofline (overhead.h): the parallel layout's collectives
  /// and replication, the kernel floor, kernel efficiencies. Off by default.
  Mechanisms mechanisms;
};

/// A model placed on a system, with every input of the roofline resolved and the
/// model's costs precomputed (so a step evaluates in well under a microsecond).
struct Deployment {
  ModelSpec model;
  SystemSpec system;
  int64_t n_chips = 1;
  WeightFormats weights;
  DType kv = DType::bf16;
  MatmulPrecision compute = MatmulPrecision::bf16;
  double matmul_efficiency = 1;
  double hbm_efficiency = 1;
  std::string matmul_efficiency_source;
  std::string hbm_efficiency_source;
  std::optional<UsdPerSecond> price_per_chip;
  std::string price_source;
  double memory_reserve_fraction = 0.10;

  // Precomputed from the model and formats.
  ParamCounts params;
  double matmul_flops_per_token = 0;  ///< 2 x active_matmul parameters
  Bytes weight_bytes_total;           ///< every weight, all experts
  Bytes weight_bytes_always;          ///< weights every step reads: all but routed experts and an untied input embedding
  struct MoeGroup {
    double layers, n_experts, top_k;
    Bytes bytes_per_expert;
    ExpertRouting routing;  ///< whole experts, groups (busiest_chip_experts)
    /// The expert's shape, for its grouped GEMMs' reductions (engine_step): the model width
    /// (the gate/up GEMM's K), one expert's hidden width (the down GEMM's K, before any
    /// expert tensor parallelism) and whether it is gated (2 input matrices, else 1).
    double d_model = 0, d_ff = 0;
    bool gated = true;
  };
  std::vector<MoeGroup> moe;
  struct AttentionGroup {
    double layers;
    int64_t window;  ///< 0 = full context: the most tokens the layer holds
    double decode_flops_per_attended, prefill_flops_per_attended;
    double kv_bytes_per_token;  ///< per layer, in format kv (the main attention's K/V or latent)
    /// The main attention's reach (attention_reach: the window or the sparse top-k,
    /// 0 = the context): the tokens whose KV it reads and attends per query.
    int64_t reach = 0;
    /// DeepSeek Sparse Attention's indexer: FLOPs per scored token and its key bytes per
    /// token (format kv); it scores every held token (model.h indexer_flops_per_attended).
    double index_flops_per_attended = 0, index_bytes_per_token = 0;
    /// A linear layer's fixed state per sequence (state_bytes_per_layer): held in HBM, read
    /// and written back once per step.
    double state_bytes = 0;
  };
  std::vector<AttentionGroup> attention;
  /// One multi-token-prediction module as a drafter (DeepSeek-V3 report section 2.2: a
  /// projection M of 2d x d, one transformer block, the output head shared with the main
  /// model), priced as one more block like the model's last layer. Precomputed for every
  /// model so that MTP drafting can be priced on any (the checkpoint ships n_mtp_layers).
  struct MtpModule {
    double matmul_flops_per_token = 0;  ///< 2 x (block's active matmul params + 2 d^2 + LM head)
    Bytes weight_bytes_always;          ///< block without its routed experts, + projection + LM head
    /// Parts of weight_bytes_always a layout shards differently (as the main model's step):
    /// attention with the projection and the LM head over the attention TP group, router
    /// and norms on every chip, the rest (dense FFN or shared experts) over the FFN TP group.
    Bytes weight_bytes_attention, weight_bytes_head, weight_bytes_replicated;
    int moe_group = -1;                 ///< index into moe of its routed experts (-1: a dense block)
    int attention_group = 0;            ///< index into attention of its attention
    double params_total = 0;            ///< every parameter of the module, its routed experts and own embedding included
    int64_t kernels = 0;                ///< dependent kernels of one pass: the block's + projection, LM head, sampling
  } mtp;
  FlopsPerSecond flops_effective;   ///< n_chips x peak(compute) x matmul_efficiency
  BytesPerSecond hbm_effective;     ///< n_chips x HBM bandwidth x hbm_efficiency (weights and KV cache)
  Mechanisms mechanisms;            ///< as requested, with the layout resolved (resolve_layout)
};

/// Resolves options against a model and a system. The compute class defaults to the
/// precision of the routed-expert (MoE) or dense-FFN weights when the chip has a rate for
/// it, else bf16 (weight-only quantization computes in the activation format). Throws
/// InputError for n_chips < 1, a compute class the chip lacks, an efficiency outside
/// (0, 1], a reserve outside [0, 1), an expert placement other than uniform on a model
/// without routed experts ("--eplb"), or (mechanisms enabled) a layout whose degrees do
/// not divide n_chips.
Deployment make_deployment(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& o);

/// Which resource sets a step's time.
enum class Bound { compute, weights, kv_cache };
std::string_view to_string(Bound b);

/// Who drafts the tokens a speculative step verifies.
enum class Drafter {
  none,   ///< free drafts (an upper bound; the drafts' source is not priced)
  mtp,    ///< the model's own multi-token-prediction module (Deployment::mtp)
  model,  ///< a separate draft model (DraftModelCost)
};

/// One forward pass of a separate draft model over one token of one sequence (Leviathan et
/// al. 2023 section 3; EAGLE and Medusa heads are small such models), on the same chips as
/// the target. Its collectives are not modelled; its KV is read at the step's context.
struct DraftModelCost {
  double matmul_flops_per_token = 0;      ///< 2 x its active matmul params
  double attention_flops_per_context = 0; ///< attention FLOPs per query per attended token, all layers
  Bytes weight_bytes;                     ///< every weight, read once per pass
  double kv_bytes_per_context = 0;        ///< KV bytes per sequence per attended token, all layers
  int64_t kernels = 0;                    ///< dependent kernels of one pass
};

/// A draft model's pass cost: matmuls 2 x active_matmul, absorbed-MLA attention FLOPs and KV
/// bytes per attended token summed over layers (sliding windows not applied: a draft model
/// is small and sees the step's context), weights in `weights`, KV in `kv`, kernels as
/// kernels_per_layer over its layers + 4. Throws as validate().
DraftModelCost draft_model_cost(const ModelSpec& draft, DType weights, DType kv);

/// Knobs that change what one decode step does (lecture 0:00 and 12:25).
struct DecodeLevers {
  /// Tokens each sequence pushes through the model per step: 1 for plain decode, 1 + the
  /// draft length when speculative decoding or multi-token prediction verifies drafts.
  int64_t tokens_per_sequence = 1;
  /// Expected tokens each sequence keeps per step, in [1, tokens_per_sequence]; see
  /// expected_accepted_tokens().
  double accepted_tokens_per_step = 1;
  /// 0 = dense attention; else each query reads at most this many KV tokens (DeepSeek
  /// Sparse Attention selects top-k = 2048). The indexer's own small key read is ignored.
  int64_t sparse_attention_top_k = 0;
  /// Who drafts the tokens_per_sequence - 1 drafted tokens: each is one sequential pass of
  /// the drafter over every sequence of the batch, part of the step (issue 12). none leaves
  /// drafting free.
  Drafter drafter = Drafter::none;
  DraftModelCost draft_model;  ///< the draft model's pass when drafter = model
};

/// Expected tokens kept per step when `draft` drafted tokens are verified and each is
/// accepted with probability `acceptance` independently: (1 - a^(draft+1)) / (1 - a)
/// (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding",
/// eq. 1). Throws InputError unless draft >= 0 and 0 <= acceptance <= 1.
double expected_accepted_tokens(int64_t draft, double acceptance);

/// One decode step: `batch` sequences each add one token at `context` tokens of KV.
struct DecodeStep {
  int64_t batch = 0, context = 0;
  Flops flops;                 ///< B (2 N_active + attention(S))
  Bytes weight_bytes_read;     ///< all but routed experts, plus the experts touched
  Bytes kv_bytes_read;         ///< B x KV bytes of a sequence at S
  double experts_touched = 0;  ///< distinct experts per MoE layer (first MoE group), 0 for dense
  double experts_on_busiest_chip = 0;  ///< of those, on the busiest chip (sets t_weights)
  Seconds t_compute, t_weights, t_kv;
  Seconds t_memory;            ///< t_weights + t_kv
  /// The operations: max(t_compute, t_memory) for the roofline; with mechanisms the sum
  /// over operations of max(compute, memory), so t_step = t_operations + t_comm + t_overhead.
  Seconds t_operations;
  Seconds t_comm;              ///< communication not hidden behind compute (0 unless mechanisms are enabled)
  Seconds t_overhead;          ///< per-step latency floor: kernel launches (0 unless mechanisms are enabled)
  /// The engine's host work for the step (StepBreakdown::t_host; 0 unless mechanisms are
  /// enabled): within t_step only where it outlasts the GPU step or the engine does not
  /// overlap it (HostTime).
  Seconds t_host;
  /// The CUDA graph the step replays and an eager step's host launches (StepBreakdown::
  /// graph_batch, t_launch; 0 unless mechanisms are enabled): t_step is at least t_launch.
  int64_t graph_batch = 0;
  Seconds t_launch;
  /// The drafter's passes (levers.drafter), within t_step: with mechanisms, per pass
  /// max(compute, memory) + its kernels x the kernel floor, added to the step; in the plain
  /// roofline its FLOPs and bytes join t_compute and t_memory, and t_draft is their max.
  Seconds t_draft;
  /// Plain roofline: max(t_compute, t_memory). With mechanisms (overhead.h): the sum over
  /// operations of max(compute, memory) on the busiest chip, + t_draft + t_comm + t_overhead.
  Seconds t_step;
  /// The plain roofline of the same step (drafts included): the lower bound shown beside
  /// the engine figure; equal to t_step when mechanisms are off.
  Seconds t_step_roofline;
  double tokens_per_sequence = 1;  ///< kept per sequence per step (levers)
  Bound bound = Bound::compute;  ///< of the roofline terms (compute, weights, KV)
  /// The largest share of t_step: to_string(bound), or with mechanisms the engine step's
  /// (StepBreakdown::governs: also "communication", "overhead", "launch" or "host").
  std::string governs = "compute";
  TokensPerSecond tokens_per_s;           ///< B x kept / t_step
  TokensPerSecond tokens_per_s_per_user;  ///< kept / t_step
  TokensPerSecond tokens_per_s_per_chip;  ///< B x kept / t_step / n
  std::optional<UsdPerToken> cost_per_token;  ///< n x price x t_step / (B x kept)
};

/// The decode roofline (lecture 2:21-15:30):
/// T_compute = B (2 N_active + attn(S)) / (n F eff);
/// T_weights = (non-expert bytes / n + expert bytes on the busiest chip) / (W eff), the
/// routed experts being spread evenly over the chips (expert parallelism) so that at small
/// B a few chips read all the touched experts while the rest wait (moe.h);
/// T_kv = B S kv_bytes_per_token / (n W eff); T_step = max(T_compute, T_weights + T_kv).
/// With levers: compute and expert touches scale with B x tokens_per_sequence; the KV of
/// a sequence is read once per step, over at most sparse_attention_top_k tokens.
/// With d.mechanisms.enabled the times are engine_step's (overhead.h) on the busiest chip.
/// Throws InputError for batch < 1, context < 0 or inconsistent levers.
DecodeStep decode_step(const Deployment& d, int64_t batch, int64_t context, const DecodeLevers& levers = {});

/// The per-sequence terms of a decode step: decode_step at B = n_chips x 65536 sequences
/// with t_compute, t_kv and t_step divided by B, the slopes of those terms in B. With
/// mechanisms a small batch is no proxy for them: at B = 1 one data-parallel rank holds the
/// whole sequence (72x the mean on 72 ranks) while the expert work stays one token's.
/// Throws as decode_step.
DecodeStep per_sequence_terms(const Deployment& d, int64_t context, const DecodeLevers& levers = {});

/// A prefill of `batch` prompts of `prompt` tokens after `prefix` cached tokens each.
struct PrefillStep {
  int64_t batch = 0, prompt = 0, prefix = 0;
  Flops flops;
  Bytes weight_bytes_read;
  Bytes kv_bytes_read;     ///< the cached prefix
  Bytes kv_bytes_written;  ///< the new tokens' KV
  Seconds t_compute, t_weights, t_kv, t_memory;
  Seconds t_operations;  ///< as DecodeStep::t_operations
  Seconds t_comm;      ///< communication not hidden (0 unless mechanisms are enabled)
  Seconds t_overhead;  ///< kernel floor (0 unless mechanisms are enabled)
  Seconds t_host;      ///< as DecodeStep::t_host
  int64_t graph_batch = 0;  ///< as DecodeStep::graph_batch
  Seconds t_launch;         ///< as DecodeStep::t_launch
  Seconds t_step;      ///< as DecodeStep::t_step
  Seconds t_step_roofline;  ///< the plain roofline of the same prefill (= t_step without mechanisms)
  Bound bound = Bound::compute;  ///< of the roofline terms (compute, weights, KV)
  /// The largest share of t_step: to_string(bound), or with mechanisms the engine step's
  /// (StepBreakdown::governs: also "communication" or "overhead").
  std::string governs = "compute";
  Seconds ttft;  ///< time to first token of a lone request: t_step (no queueing)
  TokensPerSecond tokens_per_s;  ///< B x prompt / t_step
  std::optional<UsdPerToken> cost_per_token;  ///< per input token
};

/// The prefill roofline (lecture 1:41-1:51): compute 2 N_active per token plus causal
/// attention (quadratic in prompt length), the LM head on each prompt's last token only
/// (the one whose logits pick the first output token: 2 N_head B (P - 1) FLOPs fewer); weights read once (experts touched by all
/// B x prompt tokens); prefix KV read and new KV written once; attention within the
/// chunk stays on chip (FlashAttention, lecture 1:43:17). With d.mechanisms.enabled the
/// times are engine_step's (overhead.h).
/// Throws InputError for batch < 1, prompt < 1 or prefix < 0.
PrefillStep prefill_step(const Deployment& d, int64_t batch, int64_t prompt, int64_t prefix = 0);

/// HBM use of a deployment serving `batch` sequences at `context` tokens. Bytes are as
/// stored over all chips: under even sharding every weight and KV byte once; with
/// mechanisms, the copies the layout keeps (data-parallel attention weights, an MLA
/// latent or single KV head on every tensor-parallel rank) are counted too, and sequences
/// are whole: each data-parallel group (KV split by batch: each chip) holds its own, so
/// the busiest holds ceil(B / groups) in its share of the room and max_batch is a multiple
/// of the groups.
struct MemoryPlan {
  Bytes hbm_total;     ///< n x capacity
  Bytes weights;       ///< every weight (with mechanisms: replicas included)
  Bytes kv_cache;      ///< B x KV of a sequence at S (with mechanisms: replicas included)
  Bytes reserve;       ///< memory_reserve_fraction x hbm_total (activations, runtime)
  Bytes free;          ///< hbm_total - weights - reserve - KV as stored on the busiest group x groups (negative: does not fit)
  bool fits = false;
  bool weights_fit = false;  ///< weights + reserve <= hbm_total
  int64_t max_batch = 0;     ///< largest B that fits at this context
};
MemoryPlan memory_plan(const Deployment& d, int64_t batch, int64_t context);

/// The lecture's balance batch (15:53-19:52): decode stops being weight-fetch bound when
/// B 2 N_active / F = N_total b_w / W, so B* = N_total b_w F / (2 N_active W).
/// Dense bf16 on H100: 2 x 989.4 / (2 x 3.35) = 295.
double lecture_balance_batch(double n_total, double n_active, double bytes_per_weight, FlopsPerSecond peak,
                             BytesPerSecond hbm_bandwidth);

}  // namespace chalk
