// Per-layer patterns of HF configs as data (hf_internal.h; docs/models.md, "Layer kinds").
#include <algorithm>
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "hf_internal.h"

namespace chalk::hf {

using detail::Obj;

namespace {

/// The config's list under `key`, checked to hold one entry per layer.
const detail::json& per_layer_list(const Obj& c, const char* key, int64_t n) {
  const auto& list = c.raw(key);
  if (!list.is_array() || static_cast<int64_t>(list.size()) != n) {
    throw InputError(c.field(key), "expected a list of num_hidden_layers (" + std::to_string(n) + ") entries, got " +
                                       detail::describe(list));
  }
  return list;
}

/// Layer indices from `key`, each checked to lie in 0..n-1.
std::vector<int64_t> index_list(const Obj& c, const char* key, int64_t n) {
  const auto& list = c.raw(key);
  if (!list.is_array()) throw InputError(c.field(key), "expected a list of layer indices, got " + detail::describe(list));
  std::vector<int64_t> out;
  for (size_t k = 0; k < list.size(); ++k) {
    const auto& v = list[k];
    const std::string f = c.field(key) + "[" + std::to_string(k) + "]";
    if (!v.is_number_integer() || (v.is_number_unsigned() ? v.get<uint64_t>() >= static_cast<uint64_t>(n)
                                                          : (v.get<int64_t>() < 0 || v.get<int64_t>() >= n))) {
      throw InputError(f, "must be a layer index in 0.." + std::to_string(n - 1) + ", got " + detail::describe(v));
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

std::vector<std::string> attention_pattern(const Obj& c, int64_t n, const std::string& fallback) {
  std::vector<std::string> kinds(static_cast<size_t>(n), fallback);
  if (c.has("layer_types")) {
    const auto& list = per_layer_list(c, "layer_types", n);
    for (int64_t i = 0; i < n; ++i) {
      const auto& t = list[static_cast<size_t>(i)];
      const std::string f = c.field("layer_types") + "[" + std::to_string(i) + "]";
      if (!t.is_string()) throw InputError(f, "expected a layer type string, got " + detail::describe(t));
      const std::string s = t.get<std::string>();
      if (!is_one_of(s, {"full_attention", "sliding_attention", "chunked_attention", "linear_attention"})) {
        throw InputError(f, "unknown layer type '" + s +
                                "'; expected full_attention, sliding_attention, chunked_attention or linear_attention");
      }
      kinds[static_cast<size_t>(i)] = s;
    }
    return kinds;
  }
  if (c.has("attn_type_list")) {  // MiniMax-01/M1: 0 = lightning (linear), 1 = softmax
    const auto& list = per_layer_list(c, "attn_type_list", n);
    for (int64_t i = 0; i < n; ++i) {
      const auto& t = list[static_cast<size_t>(i)];
      if (t != 0 && t != 1) {
        throw InputError(c.field("attn_type_list") + "[" + std::to_string(i) + "]",
                         "expected 0 (linear) or 1 (softmax), got " + detail::describe(t));
      }
      kinds[static_cast<size_t>(i)] = t == 1 ? "full_attention" : "linear_attention";
    }
    return kinds;
  }
  auto every = [&](const char* key, const char* others) {
    const int64_t k = c.integer_in(key, 1, n);
    for (int64_t i = 0; i < n; ++i) kinds[static_cast<size_t>(i)] = (i + 1) % k == 0 ? "full_attention" : others;
  };
  if (c.has("full_attention_interval")) {  // Qwen3-Next: layers 3, 7, 11, ... full
    every("full_attention_interval", "linear_attention");
  } else if (c.has("sliding_window_pattern") && c.opt_integer("sliding_window_pattern")) {  // Gemma 3: 5 local, 1 global
    every("sliding_window_pattern", "sliding_attention");
  } else if (c.has("attention_chunk_size") && c.opt_integer("attention_chunk_size")) {
    // Llama 4 (HF Llama4TextConfig): RoPE layers attend within chunks, NoPE layers globally.
    if (c.has("no_rope_layers") && !c.raw("no_rope_layers").empty()) {
      const auto& list = per_layer_list(c, "no_rope_layers", n);
      for (int64_t i = 0; i < n; ++i) {
        const auto& t = list[static_cast<size_t>(i)];
        if (t != 0 && t != 1) {
          throw InputError(c.field("no_rope_layers") + "[" + std::to_string(i) + "]",
                           "expected 1 (RoPE, chunked) or 0 (NoPE, global), got " + detail::describe(t));
        }
        kinds[static_cast<size_t>(i)] = t == 1 ? "chunked_attention" : "full_attention";
      }
    } else {
      const int64_t k = c.opt_integer_in("no_rope_layer_interval", 1, n).value_or(4);
      for (int64_t i = 0; i < n; ++i) kinds[static_cast<size_t>(i)] = (i + 1) % k == 0 ? "full_attention" : "chunked_attention";
    }
  }
  return kinds;
}

std::vector<bool> moe_pattern(const Obj& c, int64_t n) {
  std::vector<bool> moe(static_cast<size_t>(n), true);
  if (c.has("moe_layers") && c.raw("moe_layers").is_array() && !c.raw("moe_layers").empty()) {
    std::fill(moe.begin(), moe.end(), false);
    for (int64_t i : index_list(c, "moe_layers", n)) moe[static_cast<size_t>(i)] = true;
    return moe;
  }
  const int64_t first_dense = c.opt_integer_in("first_k_dense_replace", 0, n).value_or(0);
  const int64_t freq = c.opt_integer_in("moe_layer_freq", 1, n).value_or(1);
  const int64_t step = c.has("interleave_moe_layer_step") ? c.integer_in("interleave_moe_layer_step", 1, n)
                                                          : c.opt_integer_in("decoder_sparse_step", 1, n).value_or(1);
  for (int64_t i = 0; i < n; ++i) {
    // DeepSeek/GLM: i >= first_k_dense_replace and i % moe_layer_freq == 0; Llama 4 and
    // Qwen: (i + 1) % step == 0.
    moe[static_cast<size_t>(i)] = i >= first_dense && i % freq == 0 && (i + 1) % step == 0;
  }
  if (c.has("mlp_only_layers")) {
    for (int64_t i : index_list(c, "mlp_only_layers", n)) moe[static_cast<size_t>(i)] = false;
  }
  return moe;
}

}  // namespace chalk::hf
