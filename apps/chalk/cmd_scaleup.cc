// `chalk scaleup`: the scale-up story across the hardware catalog (scaleup.h; docs/scaleup.md).
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/scaleup/scaleup.h"
#include "commands.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct ScaleupArgs {
  std::string model = "deepseek-v3";
  std::string hardware;  ///< comma list; empty = every built-in system
  std::string weights, kv = "bf16";
  int64_t batch = 1;
  int64_t context = 8192;
  double moe_sparsity = 16;
  double memory_reserve = 0.10;
  OutputArgs output;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw InputError("--hardware", "expected a comma list of systems or files, got '" + text + "'");
    out.push_back(item);
  }
  return out;
}

Cell ms(const std::optional<Seconds>& t) { return t ? Cell(to_ms(*t)) : Cell{}; }
nlohmann::json jms(const std::optional<Seconds>& t) { return t ? nlohmann::json(to_ms(*t)) : nlohmann::json(); }

/// The model's figure per output token: its fastest layout on one domain, else the pipeline's.
std::optional<Seconds> tpot(const ModelOnDomain& m) {
  if (m.fits) return m.fastest->step.t_step;
  return m.pipeline.tpot;
}

nlohmann::ordered_json row_json(const ScaleupRow& r) {
  const ModelOnDomain& m = r.model;
  const auto t = tpot(m);
  nlohmann::ordered_json j = {
      {"system", r.system.name},
      {"chip", r.system.chip.name},
      {"year", r.system.year ? nlohmann::json(*r.system.year) : nlohmann::json()},
      {"scale_up_domain_chips", r.system.scale_up_domain},
      {"hbm_total_gb", to_gb(r.largest.domain_hbm)},
      {"hbm_total_tb_per_s", to_tb_per_s(r.largest.domain_hbm_bandwidth)},
      {"largest_params_total_billion", r.largest.params_total / 1e9},
      {"largest_moe_params_active_billion", r.largest.moe_params_active / 1e9},
      {"largest_dense_tpot_floor_ms", to_ms(r.largest.dense_tpot_floor)},
      {"largest_moe_tpot_floor_ms", to_ms(r.largest.moe_tpot_floor)},
      {"weights_gb", to_gb(m.weights)},
      {"memory_fits", m.fits},
      {"max_batch_at_context", m.max_batch},
      {"tpot_floor_ms", to_ms(m.tpot_floor)},
      {"fastest_layout", m.fastest ? nlohmann::json(m.fastest->name) : nlohmann::json()},
      {"tpot_ms", jms(t)},
      {"tok_per_s_per_user", t ? nlohmann::json(1.0 / t->value()) : nlohmann::json()},
      {"pipeline_stages", m.pipeline.stages},
      {"pipeline_layers_per_stage", m.pipeline.layers_per_stage},
      {"pipeline_hop_ms", jms(m.pipeline.hop)},
      {"pipeline_hop_latency_ms", jms(m.pipeline.hop_latency)},
      {"cheapest_layout", m.cheapest ? nlohmann::json(m.cheapest->name) : nlohmann::json()},
      {"batch_per_replica", m.cheapest ? nlohmann::json(m.cheapest->batch) : nlohmann::json()},
      {"tok_per_s_per_chip", m.cheapest ? nlohmann::json(m.cheapest->tokens_per_s_per_chip) : nlohmann::json()},
      {"cost_usd_per_mtok", m.cheapest_cost_per_token ? nlohmann::json(to_usd_per_mtok(*m.cheapest_cost_per_token)) : nlohmann::json()},
      {"why_not", m.reason.empty() ? m.pipeline.reason : m.reason + (m.pipeline.reason.empty() ? "" : "; " + m.pipeline.reason)}};
  return j;
}

Table largest_table(const std::vector<ScaleupRow>& rows) {
  Table t;
  t.columns = {{"system", "system"},
               {"year", "year"},
               {"scale_up_domain_chips", "domain chips"},
               {"hbm_total_gb", "domain HBM GB", 4},
               {"hbm_total_tb_per_s", "domain TB/s", 4},
               {"largest_params_total_billion", "largest total B", 4},
               {"largest_moe_params_active_billion", "MoE active B", 4},
               {"largest_dense_tpot_floor_ms", "dense floor ms", 3},
               {"largest_moe_tpot_floor_ms", "MoE floor ms", 3}};
  for (const auto& r : rows) {
    t.add({r.system.name, r.system.year ? Cell(static_cast<int64_t>(*r.system.year)) : Cell{}, r.system.scale_up_domain,
           to_gb(r.largest.domain_hbm), to_tb_per_s(r.largest.domain_hbm_bandwidth), r.largest.params_total / 1e9,
           r.largest.moe_params_active / 1e9, to_ms(r.largest.dense_tpot_floor), to_ms(r.largest.moe_tpot_floor)});
  }
  return t;
}

Table model_table(const std::vector<ScaleupRow>& rows) {
  Table t;
  t.columns = {{"system", "system"},
               {"memory_fits", "fits"},
               {"max_batch_at_context", "max batch"},
               {"tpot_floor_ms", "floor ms", 3},
               {"tpot_ms", "TPOT ms", 3},
               {"fastest_layout", "fastest layout"},
               {"pipeline_stages", "domains"},
               {"pipeline_hop_latency_ms", "hops ms", 3},
               {"tok_per_s_per_chip", "cheapest tok/s/chip", 3},
               {"cost_usd_per_mtok", "$/Mtok", 3},
               {"why_not", "why not"}};
  for (const auto& r : rows) {
    const ModelOnDomain& m = r.model;
    const std::string layout = m.fits ? m.fastest->name : (m.pipeline.stage ? "stage: " + m.pipeline.stage->name : "");
    t.add({r.system.name, std::string(m.fits ? "yes" : "no"), m.max_batch, to_ms(m.tpot_floor), ms(tpot(m)), layout,
           m.pipeline.stages, ms(m.pipeline.hop_latency), m.cheapest ? Cell(m.cheapest->tokens_per_s_per_chip) : Cell{},
           m.cheapest_cost_per_token ? Cell(to_usd_per_mtok(*m.cheapest_cost_per_token)) : Cell{},
           m.reason.empty() ? m.pipeline.reason : m.reason});
  }
  return t;
}

void print_csv_rows(const std::vector<ScaleupRow>& rows) {
  // One row per system with every key of --json, in its order; booleans as true/false.
  std::vector<nlohmann::ordered_json> js;
  for (const auto& r : rows) js.push_back(row_json(r));
  Table t;
  for (const auto& [key, _] : js.front().items()) t.columns.push_back({key, key, 6});
  for (const auto& j : js) {
    std::vector<Cell> row;
    for (const auto& [key, v] : j.items()) {
      if (v.is_null()) row.emplace_back();
      else if (v.is_boolean()) row.emplace_back(std::string(v.get<bool>() ? "true" : "false"));
      else if (v.is_number_integer()) row.emplace_back(v.get<int64_t>());
      else if (v.is_number()) row.emplace_back(v.get<double>());
      else row.emplace_back(v.get<std::string>());
    }
    t.add(std::move(row));
  }
  print_csv(std::cout, t);
}

void run_scaleup(const ScaleupArgs& a) {
  ScaleupQuery q;
  if (!a.weights.empty()) q.weights = parse_dtype(a.weights, "--weights");
  q.kv = parse_dtype(a.kv, "--kv-dtype");
  q.batch = a.batch;
  q.context = a.context;
  q.moe_sparsity = a.moe_sparsity;
  q.memory_reserve_fraction = a.memory_reserve;
  const ModelSpec model = load_model(a.model);
  std::vector<SystemSpec> systems;
  for (const auto& n : a.hardware.empty() ? builtin_system_names() : split_list(a.hardware)) systems.push_back(load_system(n));
  const auto rows = scaleup_table(model, systems, q);
  const std::string largest_format(to_string(q.weights.value_or(DType::fp8)));
  const std::string model_format = q.weights ? std::string(to_string(*q.weights)) : "the checkpoint's formats";
  if (a.output.csv) {
    print_csv_rows(rows);
    return;
  }
  if (a.output.json) {
    nlohmann::ordered_json sys = nlohmann::ordered_json::array();
    for (const auto& r : rows) sys.push_back(row_json(r));
    const ParamCounts p = count_params(model);
    nlohmann::ordered_json j = {{"model", model.name},
                        {"params_total_billion", p.total() / 1e9},
                        {"params_active_billion", p.active() / 1e9},
                        {"weights_dtype", q.weights ? nlohmann::json(std::string(to_string(*q.weights))) : nlohmann::json()},
                        {"largest_weights_dtype", largest_format},
                        {"kv_dtype", std::string(to_string(q.kv))},
                        {"batch", q.batch},
                        {"context_tokens", q.context},
                        {"kv_bytes_per_sequence", kv_bytes_per_sequence(model, q.context, q.kv).value()},
                        {"moe_sparsity", q.moe_sparsity},
                        {"memory_reserve_fraction", q.memory_reserve_fraction},
                        {"systems", sys}};
    std::cout << j.dump(2) << '\n';
    return;
  }
  const Bytes kv_seq = kv_bytes_per_sequence(model, q.context, q.kv);
  std::cout << fmt::format(
      "chalk scaleup: what one scale-up domain holds and how fast it serves (lecture 36:27-47:12, 1:16-1:18; docs/scaleup.md)\n"
      "room        {} x {} tokens of {}'s KV ({}, {} per sequence) beside the weights; {:.0f}% of HBM reserved\n\n",
      q.batch, q.context, model.name, to_string(q.kv), human_bytes(kv_seq.value()), q.memory_reserve_fraction * 100);
  std::cout << fmt::format("Largest model one domain holds, weights in {} (dense and MoE alike; the MoE at {}x total/active).\n"
                           "floor: weights and one sequence's KV read once per token at the domain's HBM bandwidth (x efficiency)\n\n",
                           largest_format, q.moe_sparsity);
  print_table(std::cout, largest_table(rows));
  std::cout << fmt::format(
      "\n{} ({} total parameters) on one domain, weights in {}.\n"
      "floor: roofline at batch 1; TPOT: the fastest layout at batch 1 with collectives and kernel launches (a pipeline's\n"
      "stages x its busiest stage + scale-out hops when one domain cannot hold it); cheapest: the layout with most tok/s per chip\n\n",
      model.name, human_count(count_params(model).total()), model_format);
  print_table(std::cout, model_table(rows));
}

}  // namespace

void register_scaleup(CLI::App& app, Action& run) {
  static ScaleupArgs a;
  auto* cmd = app.add_subcommand("scaleup", "The scale-up story: the largest model each system's domain holds, and one model on every system");
  cmd->add_option("-m,--model", a.model, "Built-in model name or path to a HF config.json / chalk-model file")->capture_default_str();
  cmd->add_option("-H,--hardware", a.hardware, "Comma list of built-in systems or chalk-hardware files (default: every built-in system)");
  cmd->add_option("--weights", a.weights, "Weight format: bf16, fp16, fp8, int8, mxfp4, nvfp4, int4 (default: the checkpoint's; fp8 for the largest model)");
  cmd->add_option("--kv-dtype", a.kv, "KV-cache format")->capture_default_str();
  cmd->add_option("-b,--batch", a.batch, "Sequences whose KV must fit beside the weights")->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1000000000}));
  cmd->add_option("-s,--context", a.context, "Tokens in each sequence's KV cache")->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--moe-sparsity", a.moe_sparsity, "Total / active parameters of the MoE column (>= 1)")->capture_default_str()->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--memory-reserve", a.memory_reserve, "Fraction of HBM held back for activations and runtime [0, 1)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  add_output_options(*cmd, a.output);
  cmd->callback([&run] { run = [] { run_scaleup(a); }; });
}

}  // namespace chalk::cli
