// Every JSON reader (HF config, DeepSeek inference config, chalk-model/1, chalk-hardware/1)
// at its boundaries: numbers out of range, deep nesting, dimensions near 2^63, casts out
// of range, values infinite after unit conversion. Each must be one InputError naming the
// file and the field the user wrote (issue 12, "Parser faults").
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/hardware/hardware.h"
#include "chalk/io/io.h"
#include "chalk/io/json_util.h"
#include "chalk/model/model.h"

namespace chalk {
namespace {

using nlohmann::json;

json data(const std::string& rel) { return json::parse(read_file(std::string(CHALK_SOURCE_DIR) + "/data/" + rel)); }

/// what() of the InputError `f` throws, or "no error".
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string hf_error(const std::string& text) {
  return error_of([&] { model_from_hf_config(text, "x", "cfg.json"); });
}
std::string native_error(const std::string& text) {
  return error_of([&] { model_from_native(text, "m.json"); });
}
std::string hw_error(const std::string& text) {
  return error_of([&] { system_from_json(text, "h.json"); });
}

/// `text` with the first occurrence of `from` replaced by `to` (raw text: nlohmann cannot
/// hold 1e400 to write it).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// 1e400 overflows a double: nlohmann throws out_of_range (406), which used to escape as an
// internal error (exit 3) naming no field. Now: the file and the path of the field.
TEST(ParserBounds, NumberOutOfRangeNamesFileAndField) {
  const std::string llama = data("models/hf/llama-3.1-8b.json").dump();
  EXPECT_EQ(hf_error(replaced(llama, "\"hidden_size\":4096", "\"hidden_size\":1e400")),
            "cfg.json: hidden_size: number out of range of a double (|x| > 1.8e308)");
  const std::string h100 = data("hardware/h100-sxm.json").dump();
  EXPECT_EQ(hw_error(replaced(h100, "\"bf16\":989.4", "\"bf16\":-1e400")),
            "h.json: chip.peak_tflop_per_s.bf16: number out of range of a double (|x| > 1.8e308)");
  const std::string palm = data("models/native/palm-540b.json").dump();
  EXPECT_EQ(native_error(replaced(palm, "\"count\":118", "\"count\":1e400")),
            "m.json: layers[0].count: number out of range of a double (|x| > 1.8e308)");
}

// 140 KB of '[' used to overflow the stack in the message's dump(). The parser now stops at
// max_json_depth (64) levels, naming where; a value of another type is described by kind.
TEST(ParserBounds, DeepNestingIsOneBoundedError) {
  std::string deep = "{\"hidden_size\": " + std::string(140000, '[') + std::string(140000, ']') + "}";
  const std::string e = hf_error(deep);
  EXPECT_EQ(e.rfind("cfg.json: hidden_size", 0), 0u) << e;
  EXPECT_NE(e.find("nested deeper than 64 levels"), std::string::npos) << e;
  // Nesting within the bound reaches the reader, which names the type, never the value.
  std::string shallow = data("models/hf/llama-3.1-8b.json").dump();
  shallow = replaced(shallow, "\"hidden_size\":4096", "\"hidden_size\":" + std::string(60, '[') + std::string(60, ']'));
  EXPECT_EQ(hf_error(shallow), "cfg.json: hidden_size: expected an integer, got a list");
  // A long string is cut at 60 characters in the message.
  std::string longstr = replaced(data("models/hf/llama-3.1-8b.json").dump(), "\"hidden_size\":4096",
                                 "\"hidden_size\":\"" + std::string(100000, 'x') + "\"");
  EXPECT_LT(hf_error(longstr).size(), 200u);
}

// 2^63-1 in head_dim made kv bytes negative (signed overflow; exit 0). Every dimension is
// now bounded at parse time by model_limits, naming the file's key.
TEST(ParserBounds, DimensionsAreBoundedAtParseTime) {
  json c = data("models/hf/llama-3.1-8b.json");
  c["head_dim"] = INT64_MAX;
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: head_dim: must be in 1..1048576, got 9223372036854775807");
  c = data("models/hf/llama-3.1-8b.json");
  c["vocab_size"] = 18446744073709551615ULL;  // unsigned in nlohmann; get<int64_t> wrapped to -1
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: vocab_size: integer out of range, got 18446744073709551615");
  c = data("models/hf/llama-3.1-8b.json");
  c["num_attention_heads"] = 65537;
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: num_attention_heads: must be in 1..65536, got 65537");
  // The native format names its own keys (d_model, not hidden_size).
  json n = data("models/native/palm-540b.json");
  n["d_model"] = INT64_MAX;
  EXPECT_EQ(native_error(n.dump()), "m.json: d_model: must be in 1..1048576, got 9223372036854775807");
  n = data("models/native/palm-540b.json");
  n["layers"][0]["attention"]["head_dim"] = int64_t{1} << 40;
  EXPECT_EQ(native_error(n.dump()), "m.json: layers[0].attention.head_dim: must be in 1..1048576, got 1099511627776");
  // Groups together at most 100,000 layers: 2 x 60,000 is refused at the second.
  n = data("models/native/palm-540b.json");
  n["layers"][0]["count"] = 60000;
  n["layers"].push_back(n["layers"][0]);
  EXPECT_EQ(native_error(n.dump()), "m.json: layers[1].count: layers of all groups together must be at most 100000, got 120000 by this group");
  // At the bounds the counts stay finite: d_model = head_dim = d_ff = 2^20, 2^16 heads,
  // 100,000 layers: attention alone 100,000 x 4 x 2^20 x 2^16 x 2^20 = 2.9e22 parameters.
  json big = {{"format", "chalk-model/1"}, {"name", "big"}, {"source", "test"}, {"d_model", 1 << 20}, {"vocab_size", 1 << 24},
              {"max_context", 1 << 30},
              {"layers", {{{"count", 100000},
                           {"attention", {{"kind", "mha"}, {"n_heads", 1 << 16}, {"head_dim", 1 << 20}}},
                           {"ffn", {{"d_ff", 1 << 20}}}}}}};
  const ModelSpec m = model_from_native(big.dump(), "big.json");
  const double attention = 1e5 * 4.0 * std::pow(2.0, 20 + 16 + 20);
  EXPECT_NEAR(count_params(m).attention, attention, attention * 1e-12);
  EXPECT_GT(kv_bytes_per_sequence(m, m.max_context, DType::bf16).value(), 0);  // 2^30 x 1e5 x 2 x 2^36 x 2 B, finite
}

// rope_factor 1e300: original_seq_len x rope_factor was cast to int64 (undefined), printed
// "got -9223372036854775808" and blamed max_position_embeddings, a key this format lacks.
TEST(ParserBounds, FloatToIntegerCastNamesTheKeyWritten) {
  const json ds = {{"vocab_size", 129280}, {"dim", 7168}, {"inter_dim", 18432}, {"moe_inter_dim", 2048}, {"n_layers", 61},
                   {"n_dense_layers", 3}, {"n_heads", 128}, {"n_routed_experts", 256}, {"n_shared_experts", 1},
                   {"n_activated_experts", 8}, {"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
                   {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"dtype", "fp8"}};
  EXPECT_EQ(model_from_hf_config(ds.dump(), "x", "ds.json").max_context, 163840);  // 4096 x 40 (YaRN default)
  json bad = ds;
  bad["rope_factor"] = 1e300;
  EXPECT_EQ(hf_error(bad.dump()), "cfg.json: rope_factor: original_seq_len x rope_factor must be a context of 1..1073741824 tokens, got 4096 x 1e+300");
  bad["rope_factor"] = -1;
  EXPECT_NE(hf_error(bad.dump()).find("cfg.json: rope_factor:"), std::string::npos);
  bad = ds;
  bad["n_dense_layers"] = -3;
  EXPECT_EQ(hf_error(bad.dump()), "cfg.json: n_dense_layers: must be in 0..61, got -3");
}

// Negative sliding_window and first_k_dense_replace were read as 0 (no window; no dense
// layers): silently a different model.
TEST(ParserBounds, NegativeCountsAreErrors) {
  json c = data("models/hf/mixtral-8x7b.json");
  c["sliding_window"] = -4096;
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: sliding_window: must be in 0..1073741824, got -4096");
  c = data("models/hf/deepseek-v3.json");
  c["first_k_dense_replace"] = -3;
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: first_k_dense_replace: must be in 0..61, got -3");
  c["first_k_dense_replace"] = 3;
  c["num_nextn_predict_layers"] = -1;
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: num_nextn_predict_layers: must be in 0..61, got -1");
}

// mlp_only_layers was matched with std::count per layer: quadratic, 6 s for 1 MB. Now one
// pass; each index must name a layer.
TEST(ParserBounds, MlpOnlyLayersIsLinearAndChecked) {
  json c = data("models/hf/qwen3-30b-a3b.json");
  const int64_t layers = c["num_hidden_layers"].get<int64_t>();  // 48
  c["mlp_only_layers"] = json::array({0, 47});
  const ModelSpec m = model_from_hf_config(c.dump(), "x", "cfg.json");
  int64_t dense = 0;
  for (const auto& g : m.groups) dense += g.ffn.kind == FfnKind::dense ? g.count : 0;
  EXPECT_EQ(dense, 2);
  c["mlp_only_layers"] = json::array({0, layers});
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: mlp_only_layers[1]: must be a layer index in 0..47, got 48");
  c["mlp_only_layers"] = json::array({-1});
  EXPECT_EQ(hf_error(c.dump()), "cfg.json: mlp_only_layers[0]: must be a layer index in 0..47, got -1");
  // 200,000 indices (1.2 MB of JSON) parse: each is checked once.
  json many = json::array();
  for (int i = 0; i < 200000; ++i) many.push_back(i % layers);
  c["mlp_only_layers"] = many;
  const ModelSpec all_dense = model_from_hf_config(c.dump(), "x", "cfg.json");
  EXPECT_EQ(all_dense.groups.size(), 1u);
  EXPECT_EQ(all_dense.groups[0].ffn.kind, FfnKind::dense);
}

// A model whose every layer shares the previous layer's KV stores no KV at all: the first
// layer has no previous layer.
TEST(ParserBounds, FirstLayerCannotShareKv) {
  json n = data("models/native/palm-540b.json");
  n["layers"][0]["attention"]["shares_kv_with_previous"] = true;
  EXPECT_EQ(native_error(n.dump()),
            "m.json: layers[0].attention.shares_kv_with_previous: the first layer has no previous layer to share KV with "
            "(some layer must store its own KV)");
}

// Hardware values that overflow after unit conversion (1e300 TB/s -> 1e312 B/s = inf)
// were accepted and every column showed inf. validate() checks each number after
// conversion against hardware_limits.
TEST(ParserBounds, HardwareChecksEveryNumberAfterConversion) {
  json h = data("hardware/h100-sxm.json");
  h["chip"]["hbm_tb_per_s"] = 1e300;
  EXPECT_EQ(hw_error(h.dump()), "h.json: chip.hbm_tb_per_s: must be in [1e-06, 10000], got inf");
  h = data("hardware/h100-sxm.json");
  h["chip"]["hbm_gb"] = 1e308;
  EXPECT_EQ(hw_error(h.dump()), "h.json: chip.hbm_gb: must be in [1e-06, 1e+06], got inf");
  h = data("hardware/h100-sxm.json");
  h["chip"]["peak_tflop_per_s"]["fp8"] = 1e-300;  // > 0, yet 1e-288 FLOP/s: any step would take 1e+290 s
  EXPECT_EQ(hw_error(h.dump()), "h.json: chip.peak_tflop_per_s.fp8: must be 0 or in [1e-06, 1e+07], got 1e-300");
  h = data("hardware/h100-sxm.json");
  h["price"]["usd_per_chip_hour"] = 1e307;
  EXPECT_EQ(hw_error(h.dump()), "h.json: price.usd_per_chip_hour: must be in [1e-06, 1e+06], got 1e+307");
  h = data("hardware/h100-sxm.json");
  h["scale_up"]["domain_chips"] = (int64_t{1} << 20) + 1;
  EXPECT_EQ(hw_error(h.dump()), "h.json: scale_up.domain_chips: must be in 1..1048576, got 1048577");
  h = data("hardware/gb200-nvl72.json");
  ASSERT_TRUE(h.contains("host_tiers"));
  h["host_tiers"][0]["gb_per_s_per_chip"] = 1e300;
  EXPECT_EQ(hw_error(h.dump()), "h.json: host_tiers[0].gb_per_s_per_chip: must be in [1e-06, 1e+06], got inf");
  // The tier's link to the chip (the KV offload tiers' fetch bound): bounded as every link,
  // and its source stated beside it.
  h = data("hardware/gb200-nvl72.json");
  h["host_tiers"][0]["link_gb_per_s_per_chip"] = -1;
  EXPECT_EQ(hw_error(h.dump()), "h.json: host_tiers[0].link_gb_per_s_per_chip: must be in [1e-06, 1e+06], got -1");
  h = data("hardware/gb200-nvl72.json");
  h["host_tiers"][0].erase("link_source");
  EXPECT_NE(hw_error(h.dump()).find("link_source"), std::string::npos) << hw_error(h.dump());
  // Every built-in system is within the bounds.
  for (const auto& name : builtin_system_names()) EXPECT_NO_THROW(load_system(name)) << name;
}

// The memory type (chip.memory_type): GDDR6 on the L4 (issue 30: it was labelled HBM); HBM when
// a file says nothing; a type outside the list is named with the list.
TEST(ParserBounds, MemoryTypeIsReadAndChecked) {
  EXPECT_EQ(load_system("l4").chip.memory_type, "GDDR6");
  EXPECT_EQ(load_system("h100-sxm").chip.memory_type, "HBM");
  json h = data("hardware/h100-sxm.json");
  h["chip"]["memory_type"] = "SRAM";
  EXPECT_EQ(hw_error(h.dump()), "h.json: chip.memory_type: expected HBM, GDDR6, GDDR7 or LPDDR5X, got 'SRAM'");
}

TEST(ParserBounds, PositionEncodingsAndRotaryShare) {
  // Native files: rope (the default) rotates every query and key dimension; learned, alibi
  // and relative none; anything else names the field.
  nlohmann::json n = data("models/native/palm-540b.json");
  EXPECT_DOUBLE_EQ(model_from_native(n.dump(), "m.json").rotary_fraction, 1.0);
  n["position"] = "alibi";
  EXPECT_DOUBLE_EQ(model_from_native(n.dump(), "m.json").rotary_fraction, 0.0);
  n["position"] = "sinusoidal";
  EXPECT_EQ(native_error(n.dump()), "m.json: position: expected rope, learned, alibi or relative, got 'sinusoidal'");
  EXPECT_DOUBLE_EQ(load_model("gpt-3-175b").rotary_fraction, 0.0);
  // HF configs: partial_rotary_factor, in [0, 1].
  nlohmann::json h = data("models/hf/llama-3.1-8b.json");
  EXPECT_DOUBLE_EQ(model_from_hf_config(h.dump(), "x", "cfg.json").rotary_fraction, 1.0);
  h["partial_rotary_factor"] = 0.25;
  EXPECT_DOUBLE_EQ(model_from_hf_config(h.dump(), "x", "cfg.json").rotary_fraction, 0.25);
  h["partial_rotary_factor"] = 2;
  EXPECT_EQ(hf_error(h.dump()), "cfg.json: partial_rotary_factor: expected a share of the head width in [0, 1], got 2");
}

}  // namespace
}  // namespace chalk
