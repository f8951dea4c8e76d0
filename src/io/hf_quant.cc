// quantization_config -> the storage of each weight group (hf_internal.h; docs/models.md,
// "Quantized checkpoints"). Bits per weight include the format's scales and zero points:
//   fp8 block [bn, bk]   8 + 32 / (bn bk)    one fp32 scale per block (DeepSeek weight_scale_inv)
//   fp8 per tensor        8                   one fp32 scale per matrix (negligible)
//   fp8/int8 per channel  8 + 16 / d_model    one bf16 scale per output row of d_model inputs
//   int4 group g          4 + 16 / g (+ 4 / g with zero points) fp16/bf16 scale (AWQ, GPTQ,
//                         compressed-tensors pack-quantized); zero points packed 4-bit
//   NVFP4                 4 + 8 / 16 = 4.5    E4M3 scale per 16 (one fp32 per tensor, negligible)
//   MXFP4                 4 + 8 / 32 = 4.25   E8M0 scale per 32 (OCP MX v1.0)
// Exclusion lists are matched against every weight matrix by name (hf_module_matcher.cc): a
// group excluded in part is stored at the parameter-weighted mean of the two formats' bits.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
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

/// Applies `st` to the groups `targets`, less the matrices an entry of `ignore` names
/// (ModuleMatcher's rules), counted matrix by matrix and layer by layer: a group excluded
/// in part is stored at the parameter-weighted mean of the quantized bits and its base
/// format's bits (`base`, the checkpoint's dtype), so its bytes are exact; its rate class
/// stays the quantized format. The input embedding table is never quantized (it is a
/// lookup, not a Linear) unless tied to the LM head. docs/models.md, "Quantized checkpoints".
void apply(ModelSpec& m, const Storage& st, Groups targets, const ModuleMatcher& ignore, const WeightFormats& base) {
  const bool on[q_groups] = {targets.head, targets.attention, targets.dense_ffn, targets.experts, targets.router};
  double excluded[q_groups] = {0, 0, 0, 0, 0}, matrices[q_groups] = {0, 0, 0, 0, 0};
  int64_t names_tried = 0;  // expert names formed to match entries that name expert digits
  for (const auto& q : quant_matrices(m)) {
    matrices[q.group] += static_cast<double>(q.copies) * q.params;
    if (!on[q.group]) continue;
    double copies = 0;
    if (q.name == "model.embed_tokens") {
      copies = m.tie_embeddings && !ignore.matches("lm_head") && !ignore.matches(q.name) ? 0 : 1;
    } else if (q.last.empty()) {
      copies = ignore.matches(q.name) ? 1 : 0;
    } else {  // the layer's routed experts, counted without naming each where no entry tells them apart
      const size_t at = q.name.find("experts.0.") + 8;
      const std::string_view name(q.name);
      copies = static_cast<double>(ignore.count_experts(name.substr(0, at), name.substr(at + 1), q.copies, &names_tried));
      if (names_tried > ModuleMatcher::max_expert_names_tried) {
        throw InputError("quantization_config", "its exclusion entries name expert indices digit by digit, so each of the " +
                                                    std::to_string(q.copies) + " experts of every MoE layer must be matched by name: over " +
                                                    std::to_string(ModuleMatcher::max_expert_names_tried) +
                                                    " names by the time it reaches " + q.name.substr(0, at) + "; expected fewer experts, MoE layers or such entries");
      }
    }
    excluded[q.group] += copies * q.params;
  }
  const ParamCounts p = count_params(m);
  const double total[q_groups] = {p.embedding + p.lm_head, p.attention, p.dense_ffn + p.shared_experts, p.routed_experts_total,
                                  p.router + p.norms};
  auto& w = m.weights;
  DType* fmt[q_groups] = {&w.embedding, &w.attention, &w.dense_ffn, &w.experts, &w.router};
  double* bits[q_groups] = {&w.embedding_bits, &w.attention_bits, &w.dense_ffn_bits, &w.experts_bits, &w.router_bits};
  const DType base_fmt[q_groups] = {base.embedding, base.attention, base.dense_ffn, base.experts, base.router};
  const double base_bits[q_groups] = {base.embedding_bits, base.attention_bits, base.dense_ffn_bits, base.experts_bits, base.router_bits};
  const char* names[q_groups] = {"embedding/LM head", "attention", "dense FFN/shared experts", "routed experts", "routers/norms"};
  std::string kept;
  for (int k = 0; k < q_groups; ++k) {
    // The share left in the base format. Every matrix excluded: the whole group, its norms
    // and other small weights too, stays in the base format.
    const double f = total[k] > 0 ? std::min(1.0, excluded[k] / total[k]) : 0;
    if (!on[k] || (matrices[k] > 0 && excluded[k] >= matrices[k])) {
      if (total[k] > 0) kept += std::string(kept.empty() ? "" : ", ") + names[k];
      continue;
    }
    const double b0 = base_bits[k] > 0 ? base_bits[k] : bits_per_element(base_fmt[k]);
    *fmt[k] = st.format;
    *bits[k] = (1 - f) * st.bits + f * b0;
    if (f > 0) {
      char part[96];
      std::snprintf(part, sizeof part, "%s %.3g%% (%.4g bits/weight overall)", names[k], 100 * f, *bits[k]);
      kept += std::string(kept.empty() ? "" : ", ") + part;
    }
  }
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", st.bits);
  w.quantization = st.words + " (" + b + " bits/weight)" + (kept.empty() ? "" : "; unquantized: " + kept);
}

/// The default groups of a weight-only or weight-and-activation method: every linear layer
/// of the blocks; routers and the LM head stay in the base format unless the config names them.
Groups block_linears() {
  Groups g;
  g.attention = g.dense_ffn = g.experts = true;
  return g;
}

void compressed_tensors(const Obj& q, ModelSpec& m, const WeightFormats& base) {
  const ModuleMatcher ignore(strings(q, "ignore"), q.field("ignore"));
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
    apply(m, st, targets, ignore, base);
    any = true;
  }
  if (!any) throw InputError(q.field("config_groups"), "no group quantizes weights");
}

void modelopt(const Obj& q, ModelSpec& m, const WeightFormats& base) {
  const std::string algo = q.string("quant_algo");
  Storage st;
  if (algo == "FP8" || algo == "FP8_PER_CHANNEL_PER_TOKEN") st = {DType::fp8, 8, "ModelOpt " + algo};
  else if (algo == "NVFP4") st = {DType::nvfp4, 4 + 8.0 / static_cast<double>(q.opt_integer_in("group_size", 1, 1 << 20).value_or(16)), "ModelOpt NVFP4"};
  else if (algo == "W4A8_AWQ" || algo == "W4A16_AWQ") st = int_storage(4, q.opt_integer_in("group_size", 1, 1 << 20).value_or(128), false, m.d_model, "ModelOpt " + algo);
  else throw InputError(q.field("quant_algo"), "unsupported ModelOpt algorithm '" + algo + "'; expected FP8, NVFP4, W4A8_AWQ or W4A16_AWQ");
  Groups targets = block_linears();
  targets.head = true;  // ModelOpt quantizes every linear not excluded (routers: see groups_of)
  auto names = strings(q, "exclude_modules");
  for (auto& s : strings(q, "ignore")) names.push_back(s);
  apply(m, st, targets, ModuleMatcher(names, q.field("exclude_modules")), base);
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
  const WeightFormats base = m.weights;  // the checkpoint's dtype, before any group is quantized
  const ModuleMatcher not_convert = [&] {
    auto v = strings(q, "modules_to_not_convert");
    for (auto& s : strings(q, "ignored_layers")) v.push_back(s);
    return ModuleMatcher(v, q.field("modules_to_not_convert"));
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
    apply(m, st, block_linears(), not_convert, base);
  } else if (method == "mxfp4") {
    Groups experts;
    experts.experts = true;  // gpt-oss: routed experts only
    apply(m, {DType::mxfp4, 4.25, "mxfp4 (E8M0 scale per 32)"}, experts, not_convert, base);
  } else if (method == "compressed-tensors") {
    compressed_tensors(q, m, base);
  } else if (method == "modelopt") {
    modelopt(q, m, base);
  } else if (method == "awq" || method == "gptq") {
    const int64_t bits = q.opt_integer_in(method == "awq" ? "bits" : "bits", 2, 8).value_or(4);
    if (bits != 4 && bits != 8) throw InputError(q.field("bits"), "expected 4 or 8, got " + std::to_string(bits));
    const int64_t group = q.opt_integer_in("group_size", -1, 1 << 20).value_or(128);
    // AWQ stores zero points when zero_point is true (its default); GPTQ always stores
    // qzeros, also for sym (AutoGPTQ packs them), plus g_idx (one int32 per input row,
    // under 0.3 bit per weight at d_model >= 128, not counted).
    const bool zero = method == "awq" ? q.opt_boolean("zero_point").value_or(true) : true;
    apply(m, int_storage(bits, group, zero, m.d_model, method == "awq" ? "AWQ" : "GPTQ"), block_linears(), not_convert, base);
  } else {
    throw InputError(q.field("quant_method"), "unsupported quantization '" + method +
                                                  "'; expected fp8, mxfp4, compressed-tensors, modelopt, awq or gptq "
                                                  "(use --weights to set a format)");
  }
}

std::string apply_name_quantization(const std::string& tag, ModelSpec& m) {
  // What each marker stands for in the repos that carry it (the checkpoint's own
  // quantization_config, which is not read here, fixes the groups exactly):
  //   -FP8, -FP8-dynamic: RedHatAI/neuralmagic, nvidia and Qwen FP8 checkpoints (e4m3
  //     weights on every linear of the blocks; scales under 0.01 bit per weight);
  //   -FP4, -NVFP4: nvidia ModelOpt NVFP4 checkpoints (group 16, fp8 scales);
  //   -MXFP4: OCP MXFP4 (E8M0 scale per 32);
  //   -AWQ, -INT4, -GPTQ, -W4A16: 4-bit weights in groups of 128 (AutoAWQ's, GPTQ's and
  //     compressed-tensors' W4A16 default), with zero points;
  //   -INT8, -W8A8, -W8A16: 8-bit weights per output channel.
  const WeightFormats base = m.weights;
  const ModuleMatcher none({}, "quantization_config.ignore");
  Storage st;
  if (tag == "fp8") st = {DType::fp8, 8, "fp8"};
  else if (tag == "fp4" || tag == "nvfp4") st = {DType::nvfp4, 4 + 8.0 / 16, "NVFP4 group 16"};
  else if (tag == "mxfp4") st = {DType::mxfp4, 4.25, "mxfp4 (E8M0 scale per 32)"};
  else if (tag == "int4" || tag == "awq" || tag == "gptq" || tag == "w4a16") st = int_storage(4, 128, true, m.d_model, "4-bit");
  else if (tag == "int8" || tag == "w8a8" || tag == "w8a16") st = int_storage(8, -1, false, m.d_model, "8-bit");
  else return "";
  apply(m, st, block_linears(), none, base);
  return m.weights.quantization;
}

}  // namespace chalk::hf
