// quantization_config -> the storage of each weight group (hf_internal.h; docs/models.md,
// "Quantized checkpoints"). Bits per weight include the format's scales and zero points:
//   fp8 block [bn, bk]   8 + 32 / (bn bk)    one fp32 scale per block (DeepSeek weight_scale_inv)
//   fp8 per tensor        8                   one fp32 scale per matrix (negligible)
//   fp8/int8 per channel  8 + 16 / d_model    one bf16 scale per output row of d_model inputs
//   int4 group g          4 + 16 / g (+ 4 / g with zero points) fp16/bf16 scale (AWQ, GPTQ,
//                         compressed-tensors pack-quantized); zero points packed 4-bit
//   NVFP4                 4 + 8 / 16 = 4.5    E4M3 scale per 16 (one fp32 per tensor, negligible)
//   MXFP4                 4 + 8 / 32 = 4.25   E8M0 scale per 32 (OCP MX v1.0)
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chalk/base/error.h"
#include "hf_internal.h"

namespace chalk::hf {

using detail::Obj;

namespace {

/// The weight groups of WeightFormats a module name or pattern falls in.
struct Groups {
  bool head = false, attention = false, dense_ffn = false, experts = false, router = false;
  bool any() const { return head || attention || dense_ffn || experts || router; }
};

bool has(const std::string& s, const char* x) { return s.find(x) != std::string::npos; }

/// Which groups a module name, glob or "re:" pattern names (HF module paths: lm_head,
/// model.layers.N.self_attn.q_proj, mlp.experts.E.down_proj, mlp.shared_experts,
/// mlp.gate / mlp.router, ...). "Linear" (compressed-tensors targets) names every group
/// of linear layers.
Groups groups_of(const std::string& s) {
  Groups g;
  if (s == "Linear" || s == "re:.*" || s == "*") {
    // Every linear layer. Routers stay in their format: chalk keeps them with the norms,
    // which no method quantizes (their few parameters change no total visibly).
    g.head = g.attention = g.dense_ffn = g.experts = true;
    return g;
  }
  if (has(s, "lm_head") || has(s, "embed")) g.head = true;
  if (has(s, "attn") || has(s, "attention") || has(s, "q_proj") || has(s, "k_proj") || has(s, "v_proj") || has(s, "o_proj") ||
      has(s, "qkv") || has(s, "indexer") || has(s, "kv_a_proj") || has(s, "kv_b_proj") || has(s, "q_a_proj") || has(s, "q_b_proj")) {
    g.attention = true;
  }
  if (has(s, "shared_expert")) g.dense_ffn = true;
  else if (has(s, "experts")) g.experts = true;
  else if (has(s, "router") || has(s, "e_score_correction") || has(s, "mlp.gate$") || s == "gate" || has(s, "mlp.gate") ||
           has(s, "block_sparse_moe.gate")) {
    g.router = true;
  } else if (has(s, "mlp") || has(s, "gate_proj") || has(s, "up_proj") || has(s, "down_proj") || has(s, "feed_forward")) {
    g.dense_ffn = true;
  }
  return g;
}

/// The layer index `s` names ("model.layers.3.self_attn" -> 3), or -1 for a pattern over
/// every layer.
int64_t layer_of(const std::string& s) {
  const auto at = s.find("layers.");
  if (at == std::string::npos) return -1;
  int64_t i = 0;
  size_t k = at + 7;
  if (k >= s.size() || s[k] < '0' || s[k] > '9') return -1;
  for (; k < s.size() && s[k] >= '0' && s[k] <= '9' && i < (int64_t{1} << 40); ++k) i = i * 10 + (s[k] - '0');
  return i;
}

/// The strings of an optional list (null or absent -> empty).
std::vector<std::string> strings(const Obj& q, const char* key) {
  std::vector<std::string> out;
  if (!q.has(key) || q.raw(key).is_null()) return out;
  const auto& list = q.raw(key);
  if (!list.is_array()) throw InputError(q.field(key), "expected a list of module names, got " + detail::describe(list));
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      throw InputError(q.field(key) + "[" + std::to_string(i) + "]", "expected a module name, got " + detail::describe(list[i]));
    }
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

/// One storage: the format's rate class and its bits per weight.
struct Storage {
  DType format;
  double bits;
  std::string words;
};

Storage int_storage(int64_t bits, int64_t group, bool zero_point, int64_t d_model, const std::string& method) {
  const double g = static_cast<double>(group > 0 ? group : d_model);  // -1/0: one scale per output row
  const double b = static_cast<double>(bits) + 16 / g + (zero_point ? static_cast<double>(bits) / g : 0);
  return {bits <= 4 ? DType::int4 : DType::int8, b,
          method + " int" + std::to_string(bits) + (group > 0 ? " group " + std::to_string(group) : " per channel") +
              (zero_point ? " with zero points" : "")};
}

/// Applies `st` to the groups `targets` less `ignored`, recording what stayed unquantized.
void apply(ModelSpec& m, const Storage& st, Groups targets, const std::vector<std::string>& ignore) {
  // Entries naming one layer ("model.layers.7.self_attn.q_a_proj", ModelOpt's lists) drop a
  // group only when they cover it in every layer: chalk keeps one format per group, so a
  // group excluded in some layers only stays quantized and the message says how many.
  std::set<int64_t> layers_of[4];  // attention, dense_ffn, experts, router
  int64_t partial = 0;
  std::string kept;
  auto drop = [&](const Groups& g) {
    if (g.head) targets.head = false;
    if (g.attention) targets.attention = false;
    if (g.dense_ffn) targets.dense_ffn = false;
    if (g.experts) targets.experts = false;
    if (g.router) targets.router = false;
  };
  for (const auto& s : ignore) {
    const Groups g = groups_of(s);
    const int64_t layer = layer_of(s);
    if (layer < 0) {
      drop(g);
      continue;
    }
    if (g.attention) layers_of[0].insert(layer);
    if (g.dense_ffn) layers_of[1].insert(layer);
    if (g.experts) layers_of[2].insert(layer);
    if (g.router) layers_of[3].insert(layer);
  }
  int64_t with_ffn = 0, with_moe = 0;
  for (const auto& grp : m.groups) (grp.ffn.kind == FfnKind::moe ? with_moe : with_ffn) += grp.count;
  const int64_t all = n_layers(m);
  const int64_t need[4] = {all, with_ffn > 0 ? with_ffn : all, with_moe, with_moe};
  for (int k = 0; k < 4; ++k) {
    if (layers_of[k].empty()) continue;
    if (static_cast<int64_t>(layers_of[k].size()) >= need[k]) {
      Groups g;
      (k == 0 ? g.attention : k == 1 ? g.dense_ffn : k == 2 ? g.experts : g.router) = true;
      drop(g);
    } else {
      partial += static_cast<int64_t>(layers_of[k].size());
    }
  }
  auto& w = m.weights;
  if (targets.head) w.embedding = st.format, w.embedding_bits = st.bits;  // the LM head; see docs/models.md
  if (targets.attention) w.attention = st.format, w.attention_bits = st.bits;
  if (targets.dense_ffn) w.dense_ffn = st.format, w.dense_ffn_bits = st.bits;
  if (targets.experts) w.experts = st.format, w.experts_bits = st.bits;
  if (targets.router) w.router = st.format, w.router_bits = st.bits;
  for (auto [on, name] : {std::pair{targets.head, "embedding/LM head"}, {targets.attention, "attention"},
                          {targets.dense_ffn, "dense FFN/shared experts"}, {targets.experts, "routed experts"},
                          {targets.router, "routers/norms"}}) {
    if (!on) kept += std::string(kept.empty() ? "" : ", ") + name;
  }
  char bits[32];
  std::snprintf(bits, sizeof bits, "%.4g", st.bits);
  w.quantization = st.words + " (" + bits + " bits/weight)" + (kept.empty() ? "" : "; unquantized: " + kept) +
                   (partial > 0 ? "; " + std::to_string(partial) + " layer-specific exclusions counted as quantized (one format per group)" : "");
}

/// The default groups of a weight-only or weight-and-activation method: every linear layer
/// of the blocks; routers and the LM head stay in the base format unless the config names them.
Groups block_linears() {
  Groups g;
  g.attention = g.dense_ffn = g.experts = true;
  return g;
}

void compressed_tensors(const Obj& q, ModelSpec& m) {
  const auto groups = q.object("config_groups");
  const auto& raw = q.raw("config_groups");
  bool any = false;
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const Obj grp = groups.object(it.key().c_str());
    const auto wq = grp.opt_object("weights");
    if (!wq) continue;
    const int64_t bits = wq->integer_in("num_bits", 1, 32);
    const std::string type = wq->opt_string("type").value_or("int");
    const std::string strategy = wq->opt_string("strategy").value_or("tensor");
    const int64_t group = wq->opt_integer_in("group_size", -1, 1 << 20).value_or(0);
    const bool zero = !wq->opt_boolean("symmetric").value_or(true);
    Storage st;
    if (type == "float" && bits == 8) {
      const double extra = strategy == "channel" ? 16.0 / static_cast<double>(m.d_model) : 0.0;
      st = {DType::fp8, 8 + extra, "compressed-tensors fp8 " + strategy};
      if (strategy == "block" && wq->has("block_structure")) {
        const auto& b = wq->raw("block_structure");
        if (b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[1].is_number_integer() && b[0].get<int64_t>() > 0 &&
            b[1].get<int64_t>() > 0) {
          st.bits = 8 + 32.0 / static_cast<double>(b[0].get<int64_t>() * b[1].get<int64_t>());
        }
      }
    } else if (type == "float" && bits == 4) {
      st = {DType::nvfp4, 4.5, "compressed-tensors nvfp4 group 16"};
    } else if (type == "int" && (bits == 4 || bits == 8)) {
      st = int_storage(bits, strategy == "group" ? group : 0, zero, m.d_model, "compressed-tensors");
    } else {
      throw InputError(wq->field("num_bits"), "unsupported compressed-tensors weights: " + type + " " + std::to_string(bits) +
                                                  " bits; expected float 8, float 4 (NVFP4), int 4 or int 8");
    }
    Groups targets;
    for (const auto& t : strings(grp, "targets")) {
      const Groups g = groups_of(t);
      targets.head |= g.head, targets.attention |= g.attention, targets.dense_ffn |= g.dense_ffn;
      targets.experts |= g.experts, targets.router |= g.router;
    }
    if (!targets.any()) targets = block_linears();
    apply(m, st, targets, strings(q, "ignore"));
    any = true;
  }
  if (!any) throw InputError(q.field("config_groups"), "no group quantizes weights");
}

void modelopt(const Obj& q, ModelSpec& m) {
  const std::string algo = q.string("quant_algo");
  Storage st;
  if (algo == "FP8" || algo == "FP8_PER_CHANNEL_PER_TOKEN") st = {DType::fp8, 8, "ModelOpt " + algo};
  else if (algo == "NVFP4") st = {DType::nvfp4, 4 + 8.0 / static_cast<double>(q.opt_integer_in("group_size", 1, 1 << 20).value_or(16)), "ModelOpt NVFP4"};
  else if (algo == "W4A8_AWQ" || algo == "W4A16_AWQ") st = int_storage(4, q.opt_integer_in("group_size", 1, 1 << 20).value_or(128), false, m.d_model, "ModelOpt " + algo);
  else throw InputError(q.field("quant_algo"), "unsupported ModelOpt algorithm '" + algo + "'; expected FP8, NVFP4, W4A8_AWQ or W4A16_AWQ");
  Groups targets = block_linears();
  targets.head = true;  // ModelOpt quantizes every linear not excluded (routers: see groups_of)
  auto ignore = strings(q, "exclude_modules");
  for (auto& s : strings(q, "ignore")) ignore.push_back(s);
  apply(m, st, targets, ignore);
}

}  // namespace

void apply_quantization(const Obj& c, ModelSpec& m) {
  const auto q0 = c.opt_object("quantization_config");
  if (!q0) return;
  // ModelOpt's hf_quant_config.json nests its fields under "quantization".
  const auto nested = q0->opt_object("quantization");
  const Obj& q = nested ? *nested : *q0;
  const std::string method = q.has("quant_method") ? q.string("quant_method") : (q.has("quant_algo") ? "modelopt" : "");
  if (method.empty()) throw InputError(q.field("quant_method"), "missing; expected fp8, mxfp4, compressed-tensors, modelopt, awq or gptq");
  const std::vector<std::string> not_convert = [&] {
    auto v = strings(q, "modules_to_not_convert");
    for (auto& s : strings(q, "ignored_layers")) v.push_back(s);
    return v;
  }();
  if (method == "fp8") {
    // DeepSeek / Qwen FP8: block-scaled (weight_block_size) or per-tensor e4m3.
    Storage st{DType::fp8, 8, "fp8 per-tensor"};
    if (q.has("weight_block_size") && !q.raw("weight_block_size").is_null()) {
      const auto& b = q.raw("weight_block_size");
      if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer() || b[0].get<int64_t>() < 1 ||
          b[1].get<int64_t>() < 1 || b[0].get<int64_t>() > (1 << 20) || b[1].get<int64_t>() > (1 << 20)) {
        throw InputError(q.field("weight_block_size"), "expected two positive block sides, got " + detail::describe(b));
      }
      const int64_t bn = b[0].get<int64_t>(), bk = b[1].get<int64_t>();
      st = {DType::fp8, 8 + 32.0 / static_cast<double>(bn * bk),
            "fp8 block " + std::to_string(bn) + "x" + std::to_string(bk) + " (fp32 scales)"};
    }
    apply(m, st, block_linears(), not_convert);
  } else if (method == "mxfp4") {
    Groups experts;
    experts.experts = true;  // gpt-oss: routed experts only
    apply(m, {DType::mxfp4, 4.25, "mxfp4 (E8M0 scale per 32)"}, experts, not_convert);
  } else if (method == "compressed-tensors") {
    compressed_tensors(q, m);
  } else if (method == "modelopt") {
    modelopt(q, m);
  } else if (method == "awq" || method == "gptq") {
    const int64_t bits = q.opt_integer_in(method == "awq" ? "bits" : "bits", 2, 8).value_or(4);
    if (bits != 4 && bits != 8) throw InputError(q.field("bits"), "expected 4 or 8, got " + std::to_string(bits));
    const int64_t group = q.opt_integer_in("group_size", -1, 1 << 20).value_or(128);
    // AWQ stores zero points when zero_point is true (its default); GPTQ always stores
    // qzeros, also for sym (AutoGPTQ packs them), plus g_idx (one int32 per input row,
    // under 0.3 bit per weight at d_model >= 128, not counted).
    const bool zero = method == "awq" ? q.opt_boolean("zero_point").value_or(true) : true;
    apply(m, int_storage(bits, group, zero, m.d_model, method == "awq" ? "AWQ" : "GPTQ"), block_linears(), not_convert);
  } else {
    throw InputError(q.field("quant_method"), "unsupported quantization '" + method +
                                                  "'; expected fp8, mxfp4, compressed-tensors, modelopt, awq or gptq "
                                                  "(use --weights to set a format)");
  }
}

}  // namespace chalk::hf
