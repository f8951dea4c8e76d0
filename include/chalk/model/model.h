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
/// n_kv_heads == n_heads and n_kv_heads == 1.
enum class AttentionKind { gqa, mla };

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
};

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
  std::vector<LayerGroup> groups;
  WeightFormats weights;     ///< the checkpoint's own formats
};

/// Total layers of a model.
int64_t n_layers(const ModelSpec& m);

/// Parameter counts by component (counts, not bytes). Conventions:
/// - `embedding` is the input table (vocab x d_model); `lm_head` the output matrix,
///   0 when tied (the table is then counted once).
/// - norms are RMSNorm/LayerNorm weights: 2 per layer x d_model, plus the final norm,
///   plus MLA's latent norms and Qwen3's QK-norms (counted in attention).
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

/// Bytes one routed expert of one layer of group `g` occupies in format `experts`.
Bytes expert_bytes(const ModelSpec& m, const LayerGroup& g, DType experts);

/// KV-cache bytes one sequence holds at `context` tokens, in format `kv`:
/// per layer and token 2 x n_kv_heads x head_dim (GQA/MHA/MQA) or
/// kv_lora_rank + qk_rope_head_dim (MLA) elements; a sliding-window layer holds at most
/// its window; a layer that shares the previous layer's KV holds none.
Bytes kv_bytes_per_sequence(const ModelSpec& m, int64_t context, DType kv);

/// kv_bytes_per_sequence / context: the average bytes per token at that context.
BytesPerToken kv_bytes_per_token(const ModelSpec& m, int64_t context, DType kv);

/// FLOPs of the attention scores and value mixing (QK^T and softmax x V) for one query
/// token that attends to `context` tokens, summed over layers; sliding-window layers
/// attend to at most their window. `absorbed_mla`: MLA with the up-projections absorbed
/// (decode; scores over kv_lora_rank + rope, values over kv_lora_rank) or not (prefill;
/// per-head qk and v widths). Causal masking is not halved here: a query at position
/// i attends to i tokens.
Flops attention_flops_per_token(const ModelSpec& m, int64_t context, bool absorbed_mla);

/// FLOPs to decode one token at `context`: 2 x active_matmul + attention (absorbed MLA).
FlopsPerToken decode_flops_per_token(const ModelSpec& m, int64_t context);

/// FLOPs to prefill `prompt` tokens after `prefix` cached tokens: 2 x active_matmul per
/// token plus causal attention, sum over i = 1..prompt of attention at context
/// prefix + i (so about prompt^2/2 x the per-context-token coefficient), plus MLA's work on
/// the cached latents (mla_prefix_flops).
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
