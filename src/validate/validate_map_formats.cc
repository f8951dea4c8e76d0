// Storage formats: a measurement row's `precision_weights` and
// `precision_kv_or_activations` fields read as weight, KV-cache and EP dispatch/combine
// formats (docs/accuracy.md, "Mapping rules").
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "chalk/base/dtype.h"
#include "validate_internal.h"
#include "validate_map_rules.h"

namespace chalk::detail {
namespace {

/// The earliest storage format named in `s` (lower case), if any.
std::optional<DType> find_dtype(std::string_view s) {
  static const std::pair<const char*, DType> names[] = {{"nvfp4", DType::nvfp4}, {"mxfp4", DType::mxfp4}, {"fp8", DType::fp8},
                                                        {"int8", DType::int8},   {"int4", DType::int4},   {"bf16", DType::bf16},
                                                        {"fp16", DType::fp16},   {"fp32", DType::fp32}};
  std::size_t best = std::string_view::npos;
  std::optional<DType> out;
  for (const auto& [name, t] : names) {
    const auto at = s.find(name);
    if (at != std::string_view::npos && at < best) {
      best = at;
      out = t;
    }
  }
  return out;
}

}  // namespace

/// Weight formats by component from `precision_weights`.
void read_weights(const std::string& text, RowPlan& p) {
  const std::string l = lower(text);
  bool any = false;
  for (const auto& c : clauses(l, ";")) {
    const auto t = find_dtype(c);
    if (!t || has(c, "router")) continue;
    const bool attn = has(c, "attention"), ffn = has(c, "ffn") || has(c, "moe") || has(c, "expert") || has(c, "dense");
    if (attn) p.w_attention = t;
    if (ffn) p.w_ffn = p.w_experts = t;
    if (!attn && !ffn && !any) p.w_attention = p.w_ffn = p.w_experts = t;
    any = true;
  }
  if (!any) {
    p.assumptions.push_back("weights format not stated ('" + text + "'): the checkpoint's own");
  } else if (has(l, "unverified") || has(l, "not read")) {
    p.assumptions.push_back("weights format as the row states but unverified ('" + text + "')");
  }
}

/// KV-cache format and EP dispatch/combine formats from `precision_kv_or_activations`.
void read_kv(const std::string& text, RowPlan& p) {
  const std::string l = lower(text);
  std::optional<DType> kv, plain, activations;
  for (const auto& c : clauses(l, ";,/")) {
    const auto t = find_dtype(c);
    if (has(c, "dispatch") && t) {
      p.layout.dispatch_bytes_per_element = p.prefill_layout.dispatch_bytes_per_element = bytes_per_element(*t);
    }
    if (has(c, "combine") && t) p.layout.combine_bytes_per_element = p.prefill_layout.combine_bytes_per_element = bytes_per_element(*t);
    if (!t) continue;
    if (has(c, "kv")) {
      kv = t;
    } else if (has(c, "activation")) {
      activations = t;
    } else if (!has(c, "dispatch") && !has(c, "combine") && !plain) {
      plain = t;
    }
  }
  if (kv) {
    p.kv = *kv;
    if (has(l, "unverified") || has(l, "typical")) p.assumptions.push_back("KV cache " + std::string(to_string(*kv)) + " as the row states but unverified");
  } else if (plain) {
    p.kv = *plain;
  } else if (activations) {
    p.kv = *activations;
    p.assumptions.push_back("KV-cache format not stated ('" + text + "'): assumed " + std::string(to_string(*activations)) +
                            ", the activations' format");
  } else {
    p.kv = DType::bf16;
    p.assumptions.push_back("KV-cache format not stated ('" + text + "'): assumed bf16, the engines' default");
  }
}

}  // namespace chalk::detail
