// chalk's native model format (docs/file-formats.md, "chalk-model/1").
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/io/json_util.h"
#include "chalk/model/model.h"

namespace chalk {
namespace {

using detail::Obj;
using namespace model_limits;

AttentionSpec parse_attention(const Obj& a) {
  a.only({"kind", "n_heads", "n_kv_heads", "head_dim", "v_head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
          "qkv_bias", "o_bias", "qk_norm", "sinks", "sliding_window", "shares_kv_with_previous"});
  AttentionSpec s;
  const std::string kind = a.opt_string("kind").value_or("gqa");
  if (kind == "gqa" || kind == "mha" || kind == "mqa") {
    s.kind = AttentionKind::gqa;
    s.n_heads = a.integer_in("n_heads", 1, heads);
    s.n_kv_heads = kind == "mha" ? s.n_heads : kind == "mqa" ? 1 : a.integer_in("n_kv_heads", 1, heads);
    if (kind != "gqa" && a.has("n_kv_heads")) {
      throw InputError(a.field("n_kv_heads"), "not allowed with kind '" + kind + "' (it fixes the KV heads)");
    }
  } else if (kind == "mla") {
    s.kind = AttentionKind::mla;
    s.n_heads = a.integer_in("n_heads", 1, heads);
    s.q_lora_rank = a.opt_integer_in("q_lora_rank", 0, width).value_or(0);
    s.kv_lora_rank = a.integer_in("kv_lora_rank", 1, width);
    s.qk_rope_head_dim = a.integer_in("qk_rope_head_dim", 1, width);
  } else {
    throw InputError(a.field("kind"), "unknown attention kind '" + kind + "'; expected gqa, mha, mqa or mla");
  }
  s.head_dim = a.integer_in("head_dim", 1, width);
  s.v_head_dim = a.opt_integer_in("v_head_dim", 1, width).value_or(s.head_dim);
  if (s.kind == AttentionKind::mla && s.qk_rope_head_dim > s.head_dim) {
    throw InputError(a.field("qk_rope_head_dim"), "must be at most head_dim (" + std::to_string(s.head_dim) + "), got " +
                                                      std::to_string(s.qk_rope_head_dim));
  }
  s.qkv_bias = a.opt_boolean("qkv_bias").value_or(false);
  s.o_bias = a.opt_boolean("o_bias").value_or(false);
  s.qk_norm = a.opt_boolean("qk_norm").value_or(false);
  s.sinks = a.opt_boolean("sinks").value_or(false);
  s.sliding_window = a.opt_integer_in("sliding_window", 0, context).value_or(0);
  s.shares_kv_with_previous = a.opt_boolean("shares_kv_with_previous").value_or(false);
  return s;
}

FfnSpec parse_ffn(const Obj& f) {
  f.only({"kind", "d_ff", "gated", "bias", "n_experts", "top_k", "n_shared_experts", "d_shared_expert", "router_bias",
          "n_group", "topk_group"});
  FfnSpec s;
  const std::string kind = f.opt_string("kind").value_or("dense");
  s.d_ff = f.integer_in("d_ff", 1, width);
  s.gated = f.opt_boolean("gated").value_or(true);
  s.bias = f.opt_boolean("bias").value_or(false);
  if (kind == "dense") {
    s.kind = FfnKind::dense;
  } else if (kind == "moe") {
    s.kind = FfnKind::moe;
    s.n_experts = f.integer_in("n_experts", 1, heads);
    s.top_k = f.integer_in("top_k", 1, s.n_experts);
    s.n_shared_experts = f.opt_integer_in("n_shared_experts", 0, heads).value_or(0);
    s.d_shared_expert = f.opt_integer_in("d_shared_expert", 1, width).value_or(s.n_shared_experts > 0 ? s.d_ff : 0);
    s.router_bias = f.opt_boolean("router_bias").value_or(false);
    // Group-limited routing (DeepSeek-V2/V3 section 2.1.2; HF n_group, topk_group): a token's
    // top_k experts come from at most topk_group of n_group equal groups. Absent: no limit.
    // validate() checks that n_group divides n_experts and topk_group leaves room for top_k.
    s.n_group = f.opt_integer_in("n_group", 1, s.n_experts).value_or(1);
    s.topk_group = f.opt_integer_in("topk_group", 1, s.n_group).value_or(s.n_group);
  } else {
    throw InputError(f.field("kind"), "unknown ffn kind '" + kind + "'; expected dense or moe");
  }
  return s;
}

}  // namespace

ModelSpec model_from_native(std::string_view text, const std::string& where) {
  const auto j = detail::parse_json(text, where);
  const Obj c(j, where + ": ");
  c.only({"format", "name", "source", "d_model", "vocab_size", "max_context", "tie_embeddings", "norm_bias",
          "lm_head_bias", "position", "weights", "layers", "notes"});
  const std::string format = c.string("format");
  if (format != "chalk-model/1") throw InputError(c.field("format"), "unknown format '" + format + "'; expected chalk-model/1");
  ModelSpec m;
  m.name = c.string("name");
  m.source = c.string("source");
  m.architecture = "native";
  m.d_model = c.integer_in("d_model", 1, width);
  m.vocab_size = c.integer_in("vocab_size", 1, vocab);
  m.max_context = c.integer_in("max_context", 1, context);
  m.tie_embeddings = c.opt_boolean("tie_embeddings").value_or(false);
  m.norm_bias = c.opt_boolean("norm_bias").value_or(false);
  m.lm_head_bias = c.opt_boolean("lm_head_bias").value_or(false);
  // Positions: rotary (the default), or none rotated: learned absolute, ALiBi, relative.
  const std::string position = c.opt_string("position").value_or("rope");
  if (position == "rope") m.rotary_fraction = 1;
  else if (position == "learned" || position == "alibi" || position == "relative") m.rotary_fraction = 0;
  else throw InputError(c.field("position"), "expected rope, learned, alibi or relative, got '" + position + "'");
  const DType w = parse_dtype(c.opt_string("weights").value_or("bf16"), c.field("weights"));
  m.weights.embedding = m.weights.attention = m.weights.dense_ffn = m.weights.experts = m.weights.router = w;
  const auto& groups = c.raw("layers");
  if (!groups.is_array() || groups.empty()) throw InputError(c.field("layers"), "expected a non-empty list of layer groups");
  int64_t total = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const Obj g(groups[i], c.field("layers") + "[" + std::to_string(i) + "].");
    g.only({"count", "attention", "ffn"});
    LayerGroup lg;
    lg.count = g.integer_in("count", 1, layers);
    total += lg.count;  // each <= 100,000: no overflow
    if (total > layers) {
      throw InputError(g.field("count"), "layers of all groups together must be at most " + std::to_string(layers) + ", got " +
                                             std::to_string(total) + " by this group");
    }
    lg.attention = parse_attention(g.object("attention"));
    if (i == 0 && lg.attention.shares_kv_with_previous) {
      throw InputError(g.field("attention") + ".shares_kv_with_previous",
                       "the first layer has no previous layer to share KV with (some layer must store its own KV)");
    }
    lg.ffn = parse_ffn(g.object("ffn"));
    m.groups.push_back(lg);
  }
  validate(m, where);
  return m;
}

}  // namespace chalk
