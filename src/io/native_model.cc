// chalk's native model format (docs/file-formats.md, "chalk-model/1").
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/io/json_util.h"

namespace chalk {
namespace {

using detail::Obj;

AttentionSpec parse_attention(const Obj& a) {
  a.only({"kind", "n_heads", "n_kv_heads", "head_dim", "v_head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
          "qkv_bias", "o_bias", "qk_norm", "sinks", "sliding_window", "shares_kv_with_previous"});
  AttentionSpec s;
  const std::string kind = a.opt_string("kind").value_or("gqa");
  if (kind == "gqa" || kind == "mha" || kind == "mqa") {
    s.kind = AttentionKind::gqa;
    s.n_heads = a.integer("n_heads");
    s.n_kv_heads = kind == "mha" ? s.n_heads : kind == "mqa" ? 1 : a.integer("n_kv_heads");
    if (kind != "gqa" && a.has("n_kv_heads")) {
      throw InputError(a.field("n_kv_heads"), "not allowed with kind '" + kind + "' (it fixes the KV heads)");
    }
  } else if (kind == "mla") {
    s.kind = AttentionKind::mla;
    s.n_heads = a.integer("n_heads");
    s.q_lora_rank = a.opt_integer("q_lora_rank").value_or(0);
    s.kv_lora_rank = a.integer("kv_lora_rank");
    s.qk_rope_head_dim = a.integer("qk_rope_head_dim");
  } else {
    throw InputError(a.field("kind"), "unknown attention kind '" + kind + "'; expected gqa, mha, mqa or mla");
  }
  s.head_dim = a.integer("head_dim");
  s.v_head_dim = a.opt_integer("v_head_dim").value_or(s.head_dim);
  s.qkv_bias = a.opt_boolean("qkv_bias").value_or(false);
  s.o_bias = a.opt_boolean("o_bias").value_or(false);
  s.qk_norm = a.opt_boolean("qk_norm").value_or(false);
  s.sinks = a.opt_boolean("sinks").value_or(false);
  s.sliding_window = a.opt_integer("sliding_window").value_or(0);
  s.shares_kv_with_previous = a.opt_boolean("shares_kv_with_previous").value_or(false);
  return s;
}

FfnSpec parse_ffn(const Obj& f) {
  f.only({"kind", "d_ff", "gated", "bias", "n_experts", "top_k", "n_shared_experts", "d_shared_expert", "router_bias"});
  FfnSpec s;
  const std::string kind = f.opt_string("kind").value_or("dense");
  s.d_ff = f.integer("d_ff");
  s.gated = f.opt_boolean("gated").value_or(true);
  s.bias = f.opt_boolean("bias").value_or(false);
  if (kind == "dense") {
    s.kind = FfnKind::dense;
  } else if (kind == "moe") {
    s.kind = FfnKind::moe;
    s.n_experts = f.integer("n_experts");
    s.top_k = f.integer("top_k");
    s.n_shared_experts = f.opt_integer("n_shared_experts").value_or(0);
    s.d_shared_expert = f.opt_integer("d_shared_expert").value_or(s.n_shared_experts > 0 ? s.d_ff : 0);
    s.router_bias = f.opt_boolean("router_bias").value_or(false);
  } else {
    throw InputError(f.field("kind"), "unknown ffn kind '" + kind + "'; expected dense or moe");
  }
  return s;
}

}  // namespace

ModelSpec model_from_native(std::string_view text, const std::string& where) {
  const auto j = detail::parse_json(text, where);
  const Obj c(j, where + ": ");
  c.only({"format", "name", "source", "d_model", "vocab_size", "max_context", "tie_embeddings", "weights", "layers",
          "notes"});
  const std::string format = c.string("format");
  if (format != "chalk-model/1") throw InputError(c.field("format"), "unknown format '" + format + "'; expected chalk-model/1");
  ModelSpec m;
  m.name = c.string("name");
  m.source = c.string("source");
  m.architecture = "native";
  m.d_model = c.integer("d_model");
  m.vocab_size = c.integer("vocab_size");
  m.max_context = c.integer("max_context");
  m.tie_embeddings = c.opt_boolean("tie_embeddings").value_or(false);
  const DType w = parse_dtype(c.opt_string("weights").value_or("bf16"), c.field("weights"));
  m.weights = {w, w, w, w, w};
  const auto& layers = c.raw("layers");
  if (!layers.is_array() || layers.empty()) throw InputError(c.field("layers"), "expected a non-empty list of layer groups");
  for (size_t i = 0; i < layers.size(); ++i) {
    const Obj g(layers[i], c.field("layers") + "[" + std::to_string(i) + "].");
    g.only({"count", "attention", "ffn"});
    LayerGroup lg;
    lg.count = g.integer("count");
    if (lg.count < 1 || lg.count > 100000) throw InputError(g.field("count"), "must be in 1..100000, got " + std::to_string(lg.count));
    lg.attention = parse_attention(g.object("attention"));
    lg.ffn = parse_ffn(g.object("ffn"));
    m.groups.push_back(lg);
  }
  validate(m, where);
  return m;
}

}  // namespace chalk
