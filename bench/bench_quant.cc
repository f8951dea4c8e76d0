// Reading a config.json whose quantization exclusion list is at the model limits (issue 28;
// src/io/hf_module_matcher.cc): the speed targets that src/io/hf_module_matcher_test.cc once
// held as timed assertions, here instead (a timed test fails under load and proves nothing on
// an idle machine). Targets, release build, one core (each input once took over 20 s):
//   hostile_patterns         DeepSeek-V3 with (.*)*(.*)*(.*)*(.*)*X and *?*?*?*?*?*?*?*?X in
//                            its ignore list: every module name tried against both, < 1 s
//   experts_65536            DeepSeek-V3 grown to 65,536 routed experts, one kept in bf16: < 0.5 s
//   layers_100000            Llama-3.1-8B grown to 100,000 layers, 20,000 exclusion entries: < 10 s
// No ctest runs it; run build/release/bench_quant.
#include <benchmark/benchmark.h>

#include <string>

#include <nlohmann/json.hpp>

#include "chalk/io/io.h"
#include "chalk/model/model.h"

namespace {

nlohmann::json config(const char* name) {
  return nlohmann::json::parse(chalk::read_file(std::string(CHALK_SOURCE_DIR) + "/data/models/hf/" + name + ".json"));
}

void read_config(benchmark::State& state, const std::string& text) {
  for (auto _ : state) benchmark::DoNotOptimize(chalk::model_from_hf_config(text, "x", "x.json"));
}

void BM_HostilePatterns(benchmark::State& state) {
  auto j = config("deepseek-v3");
  j["quantization_config"] = nlohmann::json::parse(R"({"quant_method": "compressed-tensors", "config_groups": {"g":
      {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
      "ignore": ["lm_head", "re:(.*)*(.*)*(.*)*(.*)*X", "*?*?*?*?*?*?*?*?X"]})");
  read_config(state, j.dump());
}
BENCHMARK(BM_HostilePatterns)->Name("hostile_patterns")->Unit(benchmark::kMillisecond);

void BM_Experts65536(benchmark::State& state) {
  auto j = config("deepseek-v3");
  j["n_routed_experts"] = 65536;
  j["quantization_config"] = nlohmann::json::parse(R"({"quant_method": "compressed-tensors", "config_groups": {"g":
      {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
      "ignore": ["lm_head", "re:.*mlp.gate$", "model.layers.5.mlp.experts.3"]})");
  read_config(state, j.dump());
}
BENCHMARK(BM_Experts65536)->Name("experts_65536")->Unit(benchmark::kMillisecond);

void BM_Layers100000(benchmark::State& state) {
  auto j = config("llama-3.1-8b");
  j["num_hidden_layers"] = 100000;
  nlohmann::json ex = nlohmann::json::array({"lm_head"});
  for (int i = 0; i < 10000; ++i) ex.push_back("model.layers." + std::to_string(5 * i) + ".self_attn*");
  for (int i = 0; i < 10000; ++i) ex.push_back("model.layers." + std::to_string(5 * i + 1) + ".mlp.down_proj");
  j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"exclude_modules", ex}};
  read_config(state, j.dump());
}
BENCHMARK(BM_Layers100000)->Name("layers_100000")->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
