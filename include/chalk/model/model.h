// A transformer's architecture as plain data, and what follows from it alone:
// parameter counts, weight bytes, KV-cache bytes and FLOPs per token.
// No hardware here (DESIGN.md section 2): the analyses combine this with a system.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/base/dtype.h"
#include "chalk/base/units.h"

namespace chalk {

/// How a layer stores and reads its context. MHA and MQA are GQA with
/// n_kv_heads == n_heads and n_kv_heads == 1. `linear`: a recurrent (linear-attention)
/// layer that keeps a fixed-size state per sequence instead of per-token KV.
enum class AttentionKind { gqa, mla, linear };

/// The recurrence of a linear-attention layer (AttentionKind::linear); docs/models.md.
/// - gated_deltanet: Gated DeltaNet (Yang et al. 2024, arXiv:2412.06464; Qwen3-Next):
///   q, k (n_kv_heads x head_dim), v and an output gate z (n_heads x v_head_dim) from one
///   projection, a short causal conv over q, k, v, per-head decay a and step size b.
/// - lightning: lightning attention (MiniMax-01, arXiv:2501.08313 section 2.2): linear
///   attention with per-head exponential decay, q, k, v of n_heads x head_dim, output gate.
enum class LinearKind { gated_deltanet, lightning };

/// One layer's attention. Shapes follow HuggingFace config names.
struct AttentionSpec {
  AttentionKind kind = AttentionKind::gqa;
  int64_t n_heads = 0;     ///< query heads
  int64_t n_kv_heads = 0;  ///< GQA: K/V heads stored in the KV cache (MLA: unused)
  int64_t head_dim = 0;    ///< q/k width per head (MLA: qk_nope_head_dim + qk_rope_head_dim)
  int64_t v_head_dim = 0;  ///< v width per head (GQA: = head_dim)
  // MLA only (DeepSeek-V2/V3 section 2.1): the KV cache holds one latent of
  // kv_lora_rank plus one shared RoPE key of qk_rope_head_dim per token and layer.
  int64_t q_lora_rank = 0;  ///< 0 = queries projected directly from d_model
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  bool qkv_bias = false;  ///< biases on q, k, v projections
  bool o_bias = false;    ///< bias on the output projection
  bool qk_norm = false;   ///< RMSNorm on q and k per head (Qwen3): 2 x head_dim weights
  bool sinks = false;     ///< one learned attention-sink logit per head (gpt-oss)
  /// Tokens a query attends to (sliding-window attention); 0 = the whole context.
  int64_t sliding_window = 0;
  /// The layer reuses the previous layer's K/V (cross-layer KV sharing, lecture 1:39:51,
  /// Character.AI): it has no K/V projections and stores no KV of its own.
  bool shares_kv_with_previous = false;
  /// `sliding_window` is a chunk (Llama 4 chunked local attention, HF attention_chunk_size):
  /// a query attends only within its own chunk. Counted as a window of that size (the most
  /// the layer holds and attends: an upper bound, reached at the end of each chunk).
  bool chunked = false;
  /// A sigmoid gate on the attention output: one more d_model x (n_heads x v_head_dim)
  /// projection (Qwen3-Next attn_output_gate, its q_proj doubled; MiniMax lightning
  /// output_gate; Gated DeltaNet's z).
  bool output_gate = false;
  // Sparse attention (DeepSeek Sparse Attention, DeepSeek-V3.2-Exp report section 2.1): a
  // lightning indexer of index_n_heads x index_head_dim scores every previous token (its
  // keys, index_head_dim per token and layer, are cached beside the MLA latent), then the
  // main attention reads only the top sparse_top_k tokens. 0 = dense attention.
  int64_t sparse_top_k = 0;
  int64_t index_n_heads = 0;
  int64_t index_head_dim = 0;
  // Linear attention only (kind == linear): n_heads = value heads, n_kv_heads = query/key
  // heads, head_dim = key width, v_head_dim = value width. The state per sequence and layer
  // is n_heads x head_dim x v_head_dim elements in state_dtype, plus (conv_kernel - 1)
  // columns of the causal conv over q, k and v (2 n_kv_heads head_dim + n_heads v_head_dim
  // channels, bf16).
  LinearKind linear_kind = LinearKind::gated_deltanet;
  int64_t conv_kernel = 0;  ///< 0 = no conv (lightning)
  DType state_dtype = DType::fp32;

  bool operator==(const AttentionSpec&) const = default;
};

enum class FfnKind { dense, moe };

/// One layer's feed-forward block: a dense MLP or a mixture of experts.
struct FfnSpec {
  FfnKind kind = FfnKind::dense;
  int64_t d_ff = 0;     ///< dense: hidden width; MoE: width of one routed expert
  bool gated = true;    ///< SwiGLU/GeGLU (3 matrices) or plain GELU MLP (2 matrices)
  bool bias = false;    ///< biases on the MLP / expert matrices (gpt-oss)
  int64_t n_experts = 0;          ///< routed experts (MoE)
  int64_t top_k = 0;              ///< routed experts per token (MoE)
  int64_t n_shared_experts = 0;   ///< always-on experts (DeepSeek, Kimi)
  int64_t d_shared_expert = 0;    ///< width of one shared expert
  bool router_bias = false;       ///< per-expert router bias (gpt-oss; DeepSeek's correction bias)
  /// Group-limited routing (HF `n_group`, `topk_group`; DeepSeek-V2/V3 section 2.1.2): the
  /// experts form n_group equal groups and a token's top_k come from at most topk_group of
  /// them. 1 and 1 = no limit.
  int64_t n_group = 1;
  int64_t topk_group = 1;
  /// A sigmoid gate (d_model weights) on the shared expert's output (Qwen2-MoE, Qwen3-Next
  /// shared_expert_gate).
  bool shared_expert_gate = false;

  bool operator==(const FfnSpec&) const = default;
};

/// `count` consecutive-or-not layers that share one shape.
struct LayerGroup {
  AttentionSpec attention;
  FfnSpec ffn;
  int64_t count = 0;
};

/// Storage formats of a model's weights, by component.
struct WeightFormats {
  DType embedding = DType::bf16;  ///< input embedding and LM head
  DType attention = DType::bf16;  ///< attention projections
  DType dense_ffn = DType::bf16;  ///< dense MLPs and shared experts
  DType experts = DType::bf16;    ///< routed experts
  DType router = DType::bf16;     ///< MoE routers, norms
  /// Bits stored per weight of each group, block scales and zero points included, when a
  /// checkpoint's quantization_config fixes them (group size, scale format; docs/models.md,
  /// "Quantized checkpoints"); 0 = bits_per_element of the group's format.
  double embedding_bits = 0, attention_bits = 0, dense_ffn_bits = 0, experts_bits = 0, router_bits = 0;
  /// The checkpoint's quantization_config in words ("" when none): method, formats, group
  /// size and what stayed unquantized.
  std::string quantization;
};

/// Bytes per weight of one group: bits / 8 when `bits` > 0, else bytes_per_element(format).
inline double weight_bytes_per_element(DType format, double bits) { return bits > 0 ? bits / 8 : bytes_per_element(format); }

/// A decoder-only transformer.
struct ModelSpec {
  std::string name;
  std::string source;        ///< where the architecture came from (file, paper)
  std::string architecture;  ///< HF model_type or "native"
  int64_t d_model = 0;
  int64_t vocab_size = 0;
  int64_t max_context = 0;   ///< max_position_embeddings, tokens
  bool tie_embeddings = false;
  int64_t n_mtp_layers = 0;  ///< multi-token-prediction modules; excluded from every count
  /// Norm weight vectors of d_model per layer: 2 (pre-attention, pre-FFN) for most; 4 for
  /// Gemma 2/3 (also post-attention and post-FFN norms).
  int64_t norms_per_layer = 2;
  /// LayerNorm with a bias (GPT-2/3, PhiMoE's nn.LayerNorm): every norm, the final one
  /// included, stores 2 x d_model (weight and bias); false = RMSNorm or a bias-free
  /// LayerNorm (PaLM), d_model each. A per-layer count that doubled instead missed the
  /// final norm's bias (llm-analysis issue #19 counted norms too few; docs/models.md).
  bool norm_bias = false;
  /// The LM head adds a vocab_size bias (PhiMoE's config `lm_head_bias`; HF PhimoeForCausalLM
  /// builds nn.Linear(hidden, vocab, bias=lm_head_bias)). Counted in `lm_head` when untied,
  /// in `embedding` (beside the shared table) when tied.
  bool lm_head_bias = false;
  /// Share of each query and key head's width that rotary position embeddings rotate (Su et
  /// al. 2021, RoFormer): 1 for RoPE models, HF configs' partial_rotary_factor where it is
  /// less (GLM-4.5 0.5); 0 for learned absolute positions (GPT-2/3), ALiBi (MPT) and relative
  /// encodings (Transformer-XL, Chinchilla): native files' "position". MLA rotates its own
  /// qk_rope_head_dim per head and one shared key of that width, whatever this says.
  double rotary_fraction = 1;
  std::vector<LayerGroup> groups;
  /// The index into `groups` of each layer, in depth order, when the reader knew the order
  /// (HF configs); empty otherwise (layers are then taken group by group). Used to place
  /// layer-specific quantization exclusions (io hf_quant.cc).
  std::vector<int32_t> layer_group;
  WeightFormats weights;     ///< the checkpoint's own formats
};

/// Total layers of a model.
int64_t n_layers(const ModelSpec& m);

/// Parameter counts by component (counts, not bytes). Conventions:
/// - `embedding` is the input table (vocab x d_model); `lm_head` the output matrix,
///   0 when tied (the table is then counted once).
/// - norms are RMSNorm/LayerNorm weights: norms_per_layer per layer x d_model, plus the
///   final norm, all doubled when the LayerNorms carry a bias (ModelSpec::norm_bias); MLA's
///   latent norms and Qwen3's QK-norms are counted in attention.
/// - an LM-head bias (ModelSpec::lm_head_bias) adds vocab_size to `lm_head` (untied) or
///   to `embedding` (tied).
/// - MTP modules are excluded (DeepSeek-V3 states 671B main + 14B MTP).
struct ParamCounts {
  double embedding = 0;
  double lm_head = 0;
  double attention = 0;
  double dense_ffn = 0;
  double router = 0;
  double shared_experts = 0;
  double routed_experts_total = 0;
  double routed_experts_active = 0;  ///< top_k experts per MoE layer
  double norms = 0;

  /// Every parameter stored.
  double total() const;
  /// Parameters one token touches, input embedding included.
  double active() const;
  /// `active()` less the input embedding (a lookup, no FLOPs); gpt-oss's and
  /// Kaplan's convention.
  double active_excluding_embedding() const;
  /// Parameters one token multiplies by: attention, dense FFN, router, shared and
  /// top-k experts, and the LM head (the tied table when tied). 2 FLOPs each per
  /// token (lecture 2:21; Kaplan et al. 2020 section 2.1).
  double active_matmul() const;
};

/// Counts the parameters of `m` (see ParamCounts for the conventions).
ParamCounts count_params(const ModelSpec& m);

/// Bytes of all weights stored in formats `f`.
Bytes weight_bytes(const ModelSpec& m, const WeightFormats& f);

/// Bytes one routed expert of one layer of group `g` occupies in format `experts` (at
/// `bits` per weight when > 0: a checkpoint's own quantization, WeightFormats::experts_bits).
Bytes expert_bytes(const ModelSpec& m, const LayerGroup& g, DType experts, double bits = 0);

/// KV-cache bytes one sequence holds at `context` tokens, in format `kv`:
/// per layer and token 2 x n_kv_heads x head_dim (GQA/MHA/MQA) or
/// kv_lora_rank + qk_rope_head_dim (MLA) elements, plus a sparse-attention indexer's keys;
/// a sliding-window (or chunked) layer holds at most its window; a layer that shares the
/// previous layer's KV holds none; a linear layer holds none (its fixed state is
/// state_bytes_per_sequence, not included here).
Bytes kv_bytes_per_sequence(const ModelSpec& m, int64_t context, DType kv);

/// kv_bytes_per_sequence / context: the average bytes per token at that context.
BytesPerToken kv_bytes_per_token(const ModelSpec& m, int64_t context, DType kv);

/// FLOPs of the attention scores and value mixing (QK^T and softmax x V) for one query
/// token that attends to `context` tokens, summed over layers; sliding-window layers
/// attend to at most their window, sparse layers' main attention to at most sparse_top_k,
/// and their indexer scores the whole (windowed) context (indexer_flops_per_attended); linear
/// layers add nothing here (see recurrent_flops_per_token). `absorbed_mla`: MLA with the up-projections absorbed
/// (decode; scores over kv_lora_rank + rope, values over kv_lora_rank) or not (prefill;
/// per-head qk and v widths). Causal masking is not halved here: a query at position
/// i attends to i tokens.
Flops attention_flops_per_token(const ModelSpec& m, int64_t context, bool absorbed_mla);

/// FLOPs to decode one token at `context`: 2 x active_matmul + attention (absorbed MLA) +
/// the recurrences of linear layers.
FlopsPerToken decode_flops_per_token(const ModelSpec& m, int64_t context);

/// FLOPs to prefill `prompt` tokens after `prefix` cached tokens: 2 x active_matmul per
/// token plus causal attention, sum over i = 1..prompt of attention at context
/// prefix + i (so about prompt^2/2 x the per-context-token coefficient), plus MLA's work on
/// the cached latents (mla_prefix_flops), plus each linear layer's recurrence per token.
Flops prefill_flops(const ModelSpec& m, int64_t prompt, int64_t prefix);

/// KV-cache elements one layer stores per token: 2 x n_kv_heads x head_dim (GQA; K and V),
/// kv_lora_rank + qk_rope_head_dim (MLA), 0 when it shares the previous layer's KV.
double kv_elements_per_token(const AttentionSpec& a);

/// Fraction of one layer's attention parameters used after the attention core: the
/// output projection (and its bias) and, for MLA, the value half of kv_b_proj, which an
/// absorbed decode applies to the core's latent output (DeepSeek-V2 section 2.1.2). The
/// rest (q, k, v or the latent projections, norms) runs before the core. In [0, 1];
/// 0 for a layer without attention parameters.
double attention_output_fraction(const AttentionSpec& a, int64_t d_model);

/// Attention FLOPs one query spends per attended token in one layer: 2 h d_qk (scores)
/// + 2 h d_v (value mixing); absorbed MLA: 2 h (kv_lora + rope) + 2 h kv_lora
/// (DeepSeek-V2 section 2.1.2; FlashMLA's 576/512 head dims).
double attention_flops_per_attended(const AttentionSpec& a, bool absorbed_mla);

/// Extra FLOPs one prefill sequence spends in one layer to attend `prompt` new tokens to
/// `cached` tokens of a cached prefix. GQA: 0 (the cache holds K and V). MLA caches latents,
/// so prefill attention over per-head K and V (the non-absorbed form of
/// attention_flops_per_attended) first up-projects every cached latent through kv_b_proj:
/// 2 kv_lora_rank h (d_nope + d_v) FLOPs per cached token (vLLM's MLA prefill with context,
/// "compute the context's K and V from the latent cache"; DeepSeek-V2 section 2.1.2). The
/// alternative is the absorbed form for the cached part, which costs
/// attention_flops_per_attended(absorbed) - (non-absorbed) more per query and cached token.
/// An engine takes the cheaper: cached x min(up-projection, prompt x absorbed extra).
/// DeepSeek-V3: up-projection 2 x 512 x 128 x 256 = 33.55 MFLOP, absorbed extra
/// 2 x 128 x (576 + 512 - 192 - 128) = 196,608 per query, so the up-projection wins from
/// 171 new tokens on.
double mla_prefix_flops(const AttentionSpec& a, int64_t prompt, double cached);

/// Tokens the main attention of layer `a` reads for one query at `context`: the context,
/// capped by the sliding window (or chunk) and by the sparse top-k (0 for a linear layer).
double attended_main(const AttentionSpec& a, int64_t context);

/// The cap on the main attention's reach: the smaller nonzero of sliding_window and
/// sparse_top_k, 0 when neither caps it.
int64_t attention_reach(const AttentionSpec& a);

/// KV-cache elements of the sparse-attention indexer per token and layer: index_head_dim
/// (DeepSeek-V3.2: 128) when sparse_top_k > 0, else 0. Included in kv_elements_per_token.
double indexer_elements_per_token(const AttentionSpec& a);

/// FLOPs of the lightning indexer per query and scored token in one layer: 2 x
/// index_n_heads x index_head_dim (q.k scores) + 2 x index_n_heads (ReLU-weighted head sum)
/// (DeepSeek-V3.2-Exp report eq. 1). It scores every previous token: linear in the context
/// per query, quadratic over a prefill. 0 for dense layers.
double indexer_flops_per_attended(const AttentionSpec& a);

/// Elements of the fixed per-sequence state of one linear layer: the recurrent state
/// n_heads x head_dim x v_head_dim (in state_dtype) and the conv state (conv_kernel - 1) x
/// conv channels (bf16); both 0 for attention layers.
double recurrent_state_elements(const AttentionSpec& a);
double conv_state_elements(const AttentionSpec& a);

/// Bytes of the fixed per-sequence state of one layer (recurrent state in state_dtype, conv
/// state in bf16): held for every sequence whatever its length, read and written each step.
Bytes state_bytes_per_layer(const AttentionSpec& a);

/// state_bytes_per_layer summed over the layers of `m`.
Bytes state_bytes_per_sequence(const ModelSpec& m);

/// Everything one sequence holds at `context` tokens: kv_bytes_per_sequence (in `kv`) plus
/// state_bytes_per_sequence, layer by layer as engine memory_plan counts it (KV for the
/// attention layers only, the fixed state for linear-attention/SSM layers). The figure any
/// "what fits" question uses (scaleup, validate), so none counts KV for linear layers or
/// drops their state.
Bytes sequence_bytes(const ModelSpec& m, int64_t context, DType kv);

/// FLOPs of one linear layer's recurrence per token, beyond its projections (counted as
/// parameters): per value head, Gated DeltaNet 7 x head_dim x v_head_dim (decay, S k
/// readout, rank-1 delta update, S q output; Yang et al. 2024 eq. 4), lightning
/// 5 x head_dim x v_head_dim (decay, k v^T update, S q output), plus the causal conv,
/// 2 x conv_kernel per channel. Independent of the context. 0 for attention layers.
double recurrent_flops_per_token(const AttentionSpec& a);

/// recurrent_flops_per_token summed over the layers of `m`.
double model_recurrent_flops_per_token(const ModelSpec& m);

/// The range every model dimension must lie in, checked by each reader at parse time
/// (naming the file's own key) and again by validate(). Each is wider than any published
/// model by more than 10x (largest known: d_ff 73,728 in PaLM 540B, 128 query heads,
/// 384 routed experts in Kimi K2, a 262,144-token vocabulary in Gemma 3, 10M tokens of
/// context in Llama 4 Scout, 126 layers in Llama 3.1 405B), and narrow enough that no
/// count chalk forms from them overflows int64 or loses an exact integer in a double:
/// a widest product, width^2 x experts x layers = 2^40 x 2^16 x 2^17 = 2^73 parameters,
/// is a double (about 9.4e21), never an integer.
namespace model_limits {
inline constexpr int64_t width = int64_t{1} << 20;    ///< d_model, d_ff, head and latent dims: 1..1,048,576
inline constexpr int64_t heads = int64_t{1} << 16;    ///< query or KV heads, routed or shared experts: 1..65,536
inline constexpr int64_t vocab = int64_t{1} << 24;    ///< vocabulary: 1..16,777,216 tokens
inline constexpr int64_t context = int64_t{1} << 30;  ///< max context, sliding window: 1..1,073,741,824 tokens
inline constexpr int64_t layers = 100000;             ///< layers, all groups together
}  // namespace model_limits

/// Checks the invariants a spec must satisfy: every dimension within model_limits,
/// top_k <= n_experts, KV heads dividing query heads, a first layer that holds its own KV
/// (shares_kv_with_previous on it would leave no layer storing any). Throws InputError
/// naming `where` and the field (HF config names).
void validate(const ModelSpec& m, const std::string& where);

}  // namespace chalk
