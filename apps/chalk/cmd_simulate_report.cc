// `chalk simulate`'s report (simulate_report.h): the JSON envelope (and the --plot page built
// from it), the CSV, or the text lines above the summary table. Split from cmd_simulate.cc.
#include <iostream>

#include <fmt/format.h>

#include "chalk/engine/layout_search.h"
#include "commands.h"
#include "envelope.h"
#include "pipeline_cli.h"
#include "serving_cli.h"
#include "simulate_report.h"

namespace chalk::cli {

void print_simulate(const SimulateReport& rep) {
  const SimulateArgs& a = rep.a;
  const Deployment& agg = rep.agg;
  const auto& pipe = rep.pipe;
  const int64_t stages = rep.stages;
  const auto& note = rep.note;
  const auto& layout_note = rep.layout_note;
  const auto& rate_choice = rep.rate_choice;
  const std::string& replicas_line = rep.replicas_line;
  const auto& reqs = rep.reqs;
  const sim::SimOptions& so = rep.so;
  const sim::Slo& slo = rep.slo;
  const double utilization = rep.utilization;
  const auto& power = rep.power;
  const Facility& facility = rep.facility;
  const bool mixed = rep.mixed;
  const auto& results = rep.results;
  const Table& t = rep.t;
  const auto& warnings = rep.warnings;
  const bool has_slo = slo.ttft_s || slo.tpot_s;
  if (!a.plot.empty() || a.output.json) {
    nlohmann::json j = pipe ? pipeline_json(agg, PipelineArgs{stages, std::nullopt, {}}, n_layers(load_model(a.deployment.model))) : describe_json(agg);
    // chips: every chip of the deployment, as the rows count them; replica_chips: the replica assumptions.sharding describes.
    j["assumptions"]["replica_chips"] = agg.n_chips * stages;
    j["assumptions"]["chips"] = results.front().summary.chips;
    j["replica_choice"] = replica_note_json(note);
    j["rate_choice"] = rate_choice ? rate_choice_json(*rate_choice) : nlohmann::json(nullptr);
    j["decode_rate_choice"] = rep.decode_rate_choice ? rate_choice_json(*rep.decode_rate_choice) : nlohmann::json(nullptr);
    j["max_loras_choice"] = rep.lora_tried.empty() ? nlohmann::json(nullptr) : max_loras_choice_json(rep.lora_tried, rep.lora_chosen);
    j["replicas_why"] = replicas_line.empty() ? nlohmann::json(nullptr) : nlohmann::json(replicas_line);  // the replica count simulate chose, or null
    j["layout_choice"] = layout_note_json(layout_note);
    j["traffic"] = describe_traffic(a.traffic, reqs);
    j["engine"] = {{"name", sim::release_name(so.policy)}, {"max_batched_tokens", so.policy.max_batched_tokens}, {"block_size_tokens", so.policy.block_size},
                   {"chunked_prefill", so.policy.chunked_prefill}, {"max_sequences", so.policy.max_sequences},
                   {"gpu_memory_utilization", utilization}, {"enforce_eager", agg.mechanisms.graphs.eager},
                   {"kv_admission", so.policy.reserve_to_completion ? "to_completion" : "on_demand"}, {"source", so.policy.source}, {"pp", stages}};
    j["engine_profile"] = engine_profile_json(a.policy.profile);
    j["slo"] = {{"ttft_slo_ms", slo.ttft_s ? nlohmann::json(*slo.ttft_s * 1e3) : nlohmann::json(nullptr)},
                {"tpot_slo_ms", slo.tpot_s ? nlohmann::json(*slo.tpot_s * 1e3) : nlohmann::json(nullptr)},
                {"percentile", slo.percentile}};
    j["energy"] = energy_assumptions_json(power, facility);
    j["levers"] = serving_cli::levers_json(so.speculation);
    j["rows"] = to_json(t);  // one per mode run
    nlohmann::json details = nlohmann::json::array();
    for (const auto& r : results) {
      details.push_back({{"mode", r.name},
                         {"prefill_hardware", r.prefill_hardware.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.prefill_hardware)},
                         {"decode_hardware", r.prefill_hardware.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.hardware)},
                         {"cost_usd_per_hour", r.usd_per_hour ? nlohmann::json(*r.usd_per_hour) : nlohmann::json(nullptr)},
                         {"little_l", r.summary.little_l},
                         {"little_lambda_per_s", r.summary.little_lambda_per_s},
                         {"little_w_s", r.summary.little_w_s},
                         {"kv_blocks_leaked", r.summary.kv_blocks_leaked},
                         {"engine_steps", r.summary.steps},
                         {"arrival_req_per_s", r.overload.arrival_req_per_s},
                         {"capacity_req_per_s", r.overload.capacity_req_per_s},
                         {"capacity_uncertainty_req_per_s", r.overload.capacity_uncertainty_req_per_s},
                         {"ttft_growth", r.overload.ttft_growth},
                         {"overloaded", r.overload.overloaded},
                         {"keeps_up", r.keep_up.keeps_up},
                         {"offered_output_tok_per_s", r.keep_up.offered_output_tok_per_s},
                         {"mean_chip_power_w", r.energy ? nlohmann::json(r.energy->mean_chip_power_w) : nlohmann::json(nullptr)},
                         {"routing", a.routing},
                         {"prefix_cache", r.prefix_cache},
                         {"kv_offload", r.kv_offload},
                         {"lora", r.lora},
                         {"occupancy", occupancy_json(r.run, a.plot.empty() ? 100 : 1000)},
                         {"latencies", a.plot.empty() ? nlohmann::json::array() : latencies_json(r.run, 4000)}});
    }
    j["details"] = details;
    j["warnings"] = warnings;
    if (!a.plot.empty()) {
      j["title"] = fmt::format("{} on {}: {}", agg.model.name, agg.system.name, describe_traffic(a.traffic, reqs));
      write_simulate_plot(a.plot, j);
      if (!a.output.json && !a.output.csv) std::cout << "wrote " << a.plot << " (open it in a browser; works offline)\n";
    }
    if (a.output.json) {
      for (auto& d : j["details"]) d.erase("latencies");
      print_json(std::cout, envelope("simulate", std::move(j), column_keys(t)));  // captured by `chalk web` (web_api.h)
      return;
    }
  }
  if (a.output.csv) {
    print_csv(std::cout, t, warnings);
    return;
  }
  std::cout << "chalk simulate: requests through a continuously batching engine, each step priced by the "
            << (agg.mechanisms.enabled ? "engine step" : "roofline") << " for its exact mix (docs/simulator.md)\n"
            << describe_text(agg) << (pipe ? pipe->text : "") << replica_note_text(note)
            << (!rate_choice                ? ""
                : rep.decode_rate_choice ? "prefill     " + rate_choice_text(*rate_choice, rep.asked, "--prefill-chips sets the size") + "\n" +
                                               "decode      " + rate_choice_text(*rep.decode_rate_choice, rep.asked, "--decode-chips sets the size") + "\n"
                                         : "replica     " + rate_choice_text(*rate_choice, rep.asked) + "\n") << (replicas_line.empty() ? "" : "replicas    " + replicas_line + "\n")
            << (rep.lora_tried.empty() ? "" : "max-loras   " + max_loras_choice_text(rep.lora_tried, rep.lora_chosen) + "\n")
            << layout_note_text(layout_note) << "traffic     " << describe_traffic(a.traffic, reqs) << '\n'
            << fmt::format("engine      {}: {} tokens per step, {}-token KV blocks, chunked prefill {}, at most {} running, KV {}, "
                           "{} of HBM for weights and KV{}\n",
                           sim::release_name(so.policy), so.policy.max_batched_tokens, so.policy.block_size, so.policy.chunked_prefill ? "on" : "off",
                           so.policy.max_sequences, so.policy.reserve_to_completion ? "reserved to completion at admission" : "taken on demand",
                           fmt::format("{:.3g}", utilization), agg.mechanisms.graphs.eager ? ", no CUDA graphs (--enforce-eager)" : "");
  std::cout << engine_profile_text(a.policy) << energy_assumptions_text(power, facility);
  if (so.speculation.draft_tokens > 0) {
    std::cout << "levers      " << serving_cli::describe_levers(so.speculation)
              << "; the tokens kept drawn per sequence per step (docs/simulator.md 1.7)\n";
  }
  if (has_slo) {
    std::cout << fmt::format("SLO         p{}:{}{}\n", format_number(slo.percentile, 3),
                             slo.ttft_s ? fmt::format(" TTFT <= {} ms", format_number(*slo.ttft_s * 1e3, 4)) : "",
                             slo.tpot_s ? fmt::format(" TPOT <= {} ms", format_number(*slo.tpot_s * 1e3, 4)) : "");
  }
  for (const auto& r : results) {
    if (!mixed || r.name != "disaggregated") continue;
    std::cout << fmt::format("pools       prefill on {}, decode on {}: KV over the scale-out network at the slower NIC; {}\n", r.prefill_hardware,
                             r.hardware, r.usd_per_hour ? fmt::format("${}/hour (each pool's chips at its own price)", format_number(*r.usd_per_hour, 4))
                                                        : std::string("no $/hour (a pool's chip has no price)"));
  }
  for (const auto& r : results) {
    if (const std::string line = prefix_cache_text(r.prefix_cache); !line.empty()) {
      std::cout << fmt::format("prefix      {}{}: {}\n", r.name, a.routing == "cache-aware" ? " (cache-aware routing)" : "", line);
    }
    if (const std::string line = kv_offload_text(r.kv_offload); !line.empty()) std::cout << fmt::format("offload     {}: {}\n", r.name, line);
    if (const std::string line = lora_text(r.lora); !line.empty()) std::cout << fmt::format("lora        {}: {}\n", r.name, line);
    if (so.speculation.draft_tokens > 0) {
      std::cout << fmt::format("kept/step   {}: {} tokens kept per verify step in the run (expected {})\n", r.name,
                               format_number(r.summary.accepted_tokens_per_step, 4), format_number(tokens_kept_per_step(so.speculation), 4));
    }
  }
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
  print_table(std::cout, t);
}

}  // namespace chalk::cli
