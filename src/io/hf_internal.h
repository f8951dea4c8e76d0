// Internal to io: the pieces the HuggingFace config readers share (hf_config.cc, the
// hybrid and sparse families in hf_hybrid.cc, the layer patterns in hf_layers.cc and
// quantization_config in hf_quant.cc). docs/file-formats.md, "HF configs"; docs/models.md.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/io/json_util.h"
#include "chalk/model/model.h"

namespace chalk::hf {

bool is_one_of(const std::string& s, std::initializer_list<const char*> list);

/// Throws unless hidden_act (or Gemma's hidden_activation) names a gated-MLP activation.
void require_gated(const detail::Obj& c);

/// torch_dtype (or the newer "dtype"), bf16 when absent.
DType base_dtype(const detail::Obj& c);

/// GQA attention from num_attention_heads, num_key_value_heads (default: MHA) and head_dim
/// (default hidden_size / heads).
AttentionSpec gqa_attention(const detail::Obj& c);

/// MLA from the DeepSeek keys; `heads_key` names the head count.
AttentionSpec mla_attention(const detail::Obj& c, const char* heads_key);

/// A dense gated MLP of width c[key]; biased when mlp_bias is true.
FfnSpec dense_ffn(const detail::Obj& c, const char* key = "intermediate_size");

/// Appends one layer, merging it into an equal group.
void push_layer(ModelSpec& m, const AttentionSpec& a, const FfnSpec& f);

/// name, source, architecture, hidden_size, vocab_size, max_position_embeddings,
/// tie_word_embeddings and the base dtype.
ModelSpec common(const detail::Obj& c, const std::string& name, const std::string& where, const std::string& type);

/// num_hidden_layers in 1..model_limits::layers.
int64_t layer_count(const detail::Obj& c);

/// The per-layer attention kinds of a hybrid, as data (hf_layers.cc): "full_attention",
/// "sliding_attention", "chunked_attention" or "linear_attention" for each of `n` layers,
/// read from, in order: layer_types; attn_type_list (MiniMax: 0 linear, 1 softmax);
/// full_attention_interval (every k-th layer full, the rest linear: Qwen3-Next);
/// sliding_window_pattern (every k-th layer global, the rest sliding: Gemma 3);
/// no_rope_layers / no_rope_layer_interval with attention_chunk_size (Llama 4: NoPE layers
/// global, RoPE layers chunked); else `fallback` for every layer. Unknown entries are errors
/// naming the key and index.
std::vector<std::string> attention_pattern(const detail::Obj& c, int64_t n, const std::string& fallback);

/// Which of `n` layers carry a mixture of experts (hf_layers.cc), from moe_layers (Llama 4:
/// indices), mlp_only_layers (indices of dense layers), first_k_dense_replace with
/// moe_layer_freq (DeepSeek, GLM: dense first, then every freq-th), interleave_moe_layer_step
/// or decoder_sparse_step (every k-th layer, 1-based). All MoE when none is given.
std::vector<bool> moe_pattern(const detail::Obj& c, int64_t n);

/// The hybrid, sliding-window and sparse families (hf_hybrid.cc): qwen3_next, gemma2,
/// gemma3 / gemma3_text, llama4 / llama4_text, glm4_moe, minimax / minimax_m1 /
/// minimax_text_01, minimax_m2, phi3, phimoe. Returns false when `type` is none of them.
bool hybrid_model(const detail::Obj& c, const std::string& name, const std::string& where, const std::string& type,
                  ModelSpec& out);

/// The DeepSeek Sparse Attention fields (index_topk, index_n_heads, index_head_dim) onto
/// an MLA spec, when the config has index_topk.
void apply_sparse_attention(const detail::Obj& c, AttentionSpec& a);

/// Applies quantization_config (hf_quant.cc): the storage format of each weight group and
/// which modules stay unquantized. docs/models.md, "Quantized checkpoints".
void apply_quantization(const detail::Obj& c, ModelSpec& m);

/// Applies the quantization a repo id's name marks (`tag`, lower-case: fp8, fp4, nvfp4,
/// mxfp4, int4, awq, gptq, w4a16, int8, w8a8, w8a16) to every linear of the blocks, as
/// those repos' configs do by default (hf_quant.cc names the groups and bits of each).
/// Returns the format in words, "" when `tag` marks none.
std::string apply_name_quantization(const std::string& tag, ModelSpec& m);

}  // namespace chalk::hf

namespace chalk {

/// The snapshot directory of repo id ORG/NAME in the local HuggingFace cache, if it is
/// there: <hub>/models--ORG--NAME/snapshots/<refs/main, or the only snapshot>, where <hub>
/// is $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
/// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (huggingface_hub's
/// order). Reads the file system only, never the network. load_model tries it first for a
/// repo id (catalog.cc). Throws InputError when the folder exists but holds no usable
/// snapshot.
std::optional<std::string> hf_cache_snapshot(const std::string& repo_id);

}  // namespace chalk

namespace chalk::hf {

/// The weight groups of WeightFormats, as indices (hf_quant_modules.cc).
enum QuantGroup { q_head = 0, q_attention, q_dense_ffn, q_experts, q_router, q_groups };

/// One weight matrix of a model under its HuggingFace module name ("lm_head",
/// "model.layers.3.self_attn.q_proj", "model.layers.5.mlp.experts.E.down_proj"), with its
/// parameters and group. A routed-expert matrix stands for all `copies` experts of its
/// layer: `name` carries "experts.0." and `last` the same name for the last expert (empty
/// for other matrices); an entry naming one expert excludes one copy.
struct QuantMatrix {
  std::string name, last;
  double params = 0;  ///< parameters of one copy
  int64_t copies = 1;
  QuantGroup group = q_attention;
};

/// Every weight matrix of `m` in depth order (layers in m.layer_group order when known),
/// named as the HF modelling code of m.architecture names them; docs/models.md,
/// "Quantized checkpoints".
std::vector<QuantMatrix> quant_matrices(const ModelSpec& m);

/// An exclusion list (ignore, modules_to_not_convert, exclude_modules), compiled
/// (hf_module_matcher.cc): "re:X" entries are regular expressions matched from the start of
/// a name (compressed-tensors' re.match) in RE2's syntax, which is Python's less
/// backreferences and lookaround; entries with * or ? are globs over the whole name or the
/// name of a module it lies inside (ModelOpt's fnmatch; transformers' patterns); other
/// entries name a module or any module inside it, at a dot boundary anywhere in the name
/// ("self_attn", "lm_head", "model.layers.3.mlp": transformers' substring test, kept to whole
/// components). Matching a name takes time linear in its length for each candidate entry and
/// is bounded on any pattern (no backtracking); literal entries are one hash lookup per run
/// of components, globs are tried only where their literal prefix begins the name. Throws
/// InputError naming `field`[i] for a regular expression that RE2 refuses or that compiles
/// to over 1 MiB, and for a regular expression or glob longer than max_pattern_bytes.
class ModuleMatcher {
 public:
  /// The longest "re:" or glob entry accepted, in bytes ("re:" included).
  static constexpr size_t max_pattern_bytes = 1024;

  ModuleMatcher(const std::vector<std::string>& entries, const std::string& field);

  /// Some entry names `name` (a module path such as "model.layers.3.self_attn.q_proj").
  bool matches(std::string_view name) const;

  /// How many of the `copies` routed experts E = 0..copies-1 named prefix + E + suffix
  /// ("model.layers.5.mlp.experts." and ".down_proj") some entry names: the same count as
  /// matches() on each expert's name, found without forming each name where the entries
  /// cannot tell experts apart (literal names by lookup; globs and regular expressions once
  /// per sequence of the digit classes they distinguish, or per expert where those
  /// sequences outnumber the experts). `prefix` ends with a dot and `suffix` starts with one.
  /// When `names_tried` is given, the names formed and matched (one per expert or per
  /// sequence; none when no entry tells experts apart) are added to it.
  int64_t count_experts(std::string_view prefix, std::string_view suffix, int64_t copies, int64_t* names_tried = nullptr) const;

  /// The most expert names one config's exclusion lists may have to form and match across all
  /// its layers: 2^24 (about 2 s; DeepSeek-V3's 58 MoE layers x 256 experts form at most 14,848,
  /// and 65,536 experts in 58 layers 3.8 million). Past it the config is refused (issue 28:
  /// 1,000 MoE layers of 65,536 experts under patterns naming expert digits took 31 s).
  static constexpr int64_t max_expert_names_tried = int64_t{1} << 24;

  bool empty() const { return empty_; }

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  bool empty_ = true;
};

}  // namespace chalk::hf
