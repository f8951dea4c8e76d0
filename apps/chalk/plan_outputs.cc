// `chalk plan`'s launch files and LoRA object (plan_outputs.h).
#include "plan_outputs.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/engine_deepep.h"
#include "chalk/io/io.h"
#include "chalk/io/model_repo.h"
#include "table.h"

namespace chalk::cli {

sim::LaunchTarget launch_target(const std::string& model_arg, const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                const sim::EnginePolicy& policy, const std::vector<sim::Request>& reqs, const sim::LoraSpec& lora,
                                const ServingLevers& speculation) {
  sim::LaunchTarget t;
  if (speculation.draft_tokens > 0) {
    t.draft_tokens = speculation.draft_tokens;
    t.drafter = !speculation.eagle_head.empty()             ? speculation.eagle_head
                : speculation.drafter == Drafter::mtp       ? "mtp"
                : speculation.drafter == Drafter::model     ? "draft_model"
                                                            : "none";
    if (speculation.drafter == Drafter::model) {
      t.draft_model_name = speculation.draft_model_name;
      t.draft_model = served_model(speculation.draft_model_name);
    }
  }
  t.model_type = m.architecture;
  for (const char* engine : {"vllm", "sglang"}) {  // review 11 H2: DeepEP only where the engine runs it for this model
    if (std::string why = engine_deepep_problem(engine, m.architecture, m.d_model); !why.empty()) t.no_deepep[engine] = std::move(why);
  }
  if (lora.enabled()) {
    t.lora_adapters = lora.adapters;
    t.lora_rank = lora.rank;
  }
  t.model_name = m.name;
  t.model = served_model(model_arg);
  t.fp8_checkpoint = served_fp8_checkpoint(model_arg);
  t.trust_remote_code = needs_remote_code(model_arg);
  t.system_name = s.name;
  t.accelerator = sim::launch_accelerator(s.name);
  t.chip_has_fp8 = s.chip.supports(MatmulPrecision::fp8);
  for (const auto& g : m.groups) t.moe = t.moe || g.ffn.kind == FfnKind::moe;
  t.checkpoint_weights = t.moe ? m.weights.experts : m.weights.dense_ffn;
  t.weights = base.weights;
  t.kv = base.kv;
  t.memory_reserve_fraction = base.memory_reserve_fraction;
  t.hbm_bytes_per_chip = s.chip.hbm_capacity.value();
  t.policy = policy;
  t.enforce_eager = base.mechanisms.graphs.eager;
  t.eplb = base.mechanisms.expert_balance == ExpertBalance::eplb;
  t.chips_per_host = chips_per_host(s);  // GB200 NVL72: 4 GPUs a host (issue 30 item 7)
  for (const auto& r : reqs) t.max_model_len = std::max(t.max_model_len, r.input_tokens + r.output_tokens);
  return t;
}

int64_t write_launch_files(const std::string& dir, const std::vector<sim::EngineLaunch>& launches) {
  namespace fs = std::filesystem;
  int64_t n = 0;
  for (const auto& e : launches) {
    for (const auto& f : e.files) {
      const fs::path path = fs::path(dir) / f.path;
      std::error_code ec;
      fs::create_directories(path.parent_path(), ec);
      if (ec) throw InputError("--launch-dir", "cannot create directory '" + path.parent_path().string() + "': " + ec.message());
      write_file(path.string(), f.text, "--launch-dir");
      if (f.executable) {
        fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add, ec);
        if (ec) throw InputError("--launch-dir", "cannot make '" + path.string() + "' executable: " + ec.message());
      }
      ++n;
    }
  }
  return n;
}

void print_plan_launches(const std::vector<sim::EngineLaunch>& launches, const std::string& dir, int64_t written) {
  std::cout << "\nlaunch files" << (dir.empty() ? " (--launch-dir DIR writes them; --json holds their text)" : "") << '\n';
  const sim::EngineLaunch* shown = nullptr;
  for (const auto& e : launches) {
    std::string names;
    for (const auto& f : e.files) names += (names.empty() ? "" : ", ") + f.path;
    std::cout << "  " << e.engine << (e.simulated ? " (simulated)" : "") << ": " << (e.problem.empty() ? names : e.problem) << '\n';
    // Review 11 H2: files that run another path than the one priced say so here, not only inside.
    if (!e.differs.empty()) std::cout << "    not as simulated: " << e.differs << '\n';
    if (shown == nullptr && !e.files.empty()) shown = &e;
  }
  if (!dir.empty()) std::cout << "  wrote " << written << " files under " << dir << '\n';
  if (shown == nullptr) return;
  for (const auto& f : shown->files) std::cout << "\n--- " << f.path << '\n' << f.text;
  std::cout << '\n';
}

nlohmann::json launch_json(const std::vector<sim::EngineLaunch>& launches) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : launches) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : e.files) files.push_back({{"path", f.path}, {"text", f.text}, {"executable", f.executable}});
    out.push_back({{"engine", e.engine}, {"simulated", e.simulated}, {"checked_at", e.checked_at}, {"problem", e.problem}, {"differs_from_simulated", e.differs}, {"files", files}});
  }
  return out;
}

nlohmann::json plan_lora_json(const sim::LoraSpec& spec, const std::optional<sim::LoraPlan>& search, const sim::PlanCandidate* best) {
  if (!spec.enabled()) return nullptr;
  const std::string d = sim::describe_lora(spec);
  const auto ms = [](double s) { return nlohmann::json(s * 1e3); };
  nlohmann::json tried = nlohmann::json::array();
  if (search) {
    for (const auto& t : search->tried) {
      tried.push_back({{"max_loras", t.max_loras},
                       {"meets_slo", t.met},
                       {"cost_usd_per_hour", t.usd_per_hour ? nlohmann::json(*t.usd_per_hour) : nlohmann::json(nullptr)},
                       {"chips", t.met ? nlohmann::json(t.chips) : nlohmann::json(nullptr)},
                       {"ttft_at_percentile_ms", t.met ? ms(t.ttft_at_percentile_s) : nlohmann::json(nullptr)},
                       {"tpot_at_percentile_ms", t.met ? ms(t.tpot_at_percentile_s) : nlohmann::json(nullptr)},
                       {"why_none", t.met ? std::string() : t.refused.empty() ? std::string("no deployment within the budget meets the SLO") : t.refused}});
    }
  }
  nlohmann::json figures = nullptr;
  if (best != nullptr && best->lora) {
    const sim::PlanLora& f = *best->lora;
    figures = {{"adapter_hbm_bytes_per_chip", f.adapter_hbm_bytes_per_chip},
               {"adapter_loads", f.adapter_loads},
               {"adapter_misses_per_s", f.misses_per_s},
               {"adapter_load_total_s", f.load_s},
               {"lora_gemm_s", f.gemm_s}};
  }
  return {{"adapters", spec.adapters},
          {"lora_rank", spec.rank},
          {"lora_targets", d.substr(d.find("targets:") + 8)},
          {"zipf_s", spec.zipf_s},
          {"max_loras", search ? search->max_loras : spec.max_loras},
          {"max_loras_searched", search && search->searched},
          {"max_loras_tried", tried},
          {"lora_figures", figures}};
}

nlohmann::json offload_verdict(const sim::PlanReport& with, const sim::PlanReport& without, const sim::KvOffload& o) {
  const auto best = [](const sim::PlanReport& r) -> nlohmann::json {
    if (!r.best) return nullptr;
    const auto& c = r.evaluated[*r.best];
    return {{"cost_usd_per_hour", c.usd_per_hour ? nlohmann::json(*c.usd_per_hour) : nlohmann::json(nullptr)},
            {"chips", c.chips},
            {"ttft_at_percentile_ms", c.summary.ttft_at_slo_percentile_s * 1e3}};
  };
  const nlohmann::json w = best(with), wo = best(without);
  bool pays = !w.is_null() && wo.is_null();
  if (!w.is_null() && !wo.is_null()) {
    const auto cost = [](const nlohmann::json& x) { return x["cost_usd_per_hour"].is_null() ? x["chips"].get<double>() : x["cost_usd_per_hour"].get<double>(); };
    pays = cost(w) < cost(wo) || (cost(w) == cost(wo) && w["ttft_at_percentile_ms"].get<double>() < wo["ttft_at_percentile_ms"].get<double>());
  }
  return {{"host_gb", o.host_gb}, {"ssd_gb", o.ssd_gb}, {"with_tiers", w}, {"without_tiers", wo}, {"tier_pays", pays}};
}

std::string offload_verdict_text(const nlohmann::json& v) {
  const auto side = [](const nlohmann::json& x) {
    if (x.is_null()) return std::string("no deployment meets the SLO");
    return fmt::format("{}{}, TTFT@p {} ms", counted(x["chips"].get<double>(), "chip"),
                       x["cost_usd_per_hour"].is_null() ? "" : ", $" + format_number(x["cost_usd_per_hour"].get<double>(), 4) + "/hour",
                       format_number(x["ttft_at_percentile_ms"].get<double>(), 4));
  };
  return fmt::format("offload     with host {} GB, SSD {} GB per replica: {}; without: {}: the tiers {}\n", format_number(v["host_gb"].get<double>(), 4),
                     format_number(v["ssd_gb"].get<double>(), 4), side(v["with_tiers"]), side(v["without_tiers"]),
                     v["tier_pays"].get<bool>() ? "pay" : "do not pay");
}

nlohmann::json speculation_verdict(const sim::PlanReport& with, const sim::PlanReport& without, const ServingLevers& l) {
  const auto best = [](const sim::PlanReport& r) -> nlohmann::json {
    if (!r.best) return nullptr;
    const auto& c = r.evaluated[*r.best];
    return {{"cost_usd_per_hour", c.usd_per_hour ? nlohmann::json(*c.usd_per_hour) : nlohmann::json(nullptr)},
            {"chips", c.chips},
            {"ttft_at_percentile_ms", c.summary.ttft_at_slo_percentile_s * 1e3},
            {"tpot_at_percentile_ms", c.summary.tpot_at_slo_percentile_s * 1e3}};
  };
  const nlohmann::json w = best(with), wo = best(without);
  bool pays = !w.is_null() && wo.is_null(), faster = false;
  if (!w.is_null() && !wo.is_null()) {
    const auto cost = [](const nlohmann::json& x) { return x["cost_usd_per_hour"].is_null() ? x["chips"].get<double>() : x["cost_usd_per_hour"].get<double>(); };
    // Like for like (review 10 L8: DeepSeek-V3 on 8 H200 at $36.32/h met a 40 ms TPOT with
    // and without drafts, and the line said "speculation pays"): it pays only when it costs
    // less; at the same cost a lower TPOT is "faster, not cheaper" (speculation_faster).
    pays = cost(w) < cost(wo);
    faster = !pays && cost(w) == cost(wo) && w["tpot_at_percentile_ms"].get<double>() < wo["tpot_at_percentile_ms"].get<double>();
  }
  return {{"draft_tokens", l.draft_tokens}, {"tokens_kept_per_step", tokens_kept_per_step(l)}, {"with_drafts", w}, {"without_drafts", wo},
          {"speculation_pays", pays}, {"speculation_faster", faster}};
}

std::string speculation_verdict_text(const nlohmann::json& v) {
  const auto side = [](const nlohmann::json& x) {
    if (x.is_null()) return std::string("no deployment meets the SLO");
    return fmt::format("{}{}, TPOT@p {} ms", counted(x["chips"].get<double>(), "chip"),
                       x["cost_usd_per_hour"].is_null() ? "" : ", $" + format_number(x["cost_usd_per_hour"].get<double>(), 4) + "/hour",
                       format_number(x["tpot_at_percentile_ms"].get<double>(), 4));
  };
  return fmt::format("drafting    {} drafts, {} tokens kept per step: {}; without drafts: {}: speculation {}\n", v["draft_tokens"].get<int64_t>(),
                     format_number(v["tokens_kept_per_step"].get<double>(), 4), side(v["with_drafts"]), side(v["without_drafts"]),
                     v["speculation_pays"].get<bool>()    ? "pays at this SLO and rate"
                     : v["speculation_faster"].get<bool>() ? "is faster, not cheaper: both meet the SLO at the same cost"
                                                            : "does not pay at this SLO and rate");
}

std::string plan_lora_text(const nlohmann::json& j) {
  if (j.is_null()) return "";
  std::string values;
  for (const auto& t : j["max_loras_tried"]) values += (values.empty() ? "" : ", ") + std::to_string(t["max_loras"].get<int64_t>());
  const int64_t chosen = j["max_loras"].get<int64_t>();
  std::string head = !j["max_loras_searched"].get<bool>() ? fmt::format("max-loras {} (stated, or vLLM's default 1)", chosen)
                                                          : fmt::format("max-loras {} chosen of {} (the least $/hour meeting the SLO)", chosen, values);
  head += fmt::format(": {} adapters of rank {} ({})", j["adapters"].get<int64_t>(), j["lora_rank"].get<int64_t>(), j["lora_targets"].get<std::string>());
  const nlohmann::json& f = j["lora_figures"];
  if (f.is_null()) return head;
  return head + fmt::format("; {} MB of adapter slots per chip, {} misses ({} per s), {} s of loads and {} s of multi-adapter GEMM in the steps",
                            format_number(f["adapter_hbm_bytes_per_chip"].get<double>() / 1e6, 4), f["adapter_loads"].get<int64_t>(),
                            format_number(f["adapter_misses_per_s"].get<double>(), 3), format_number(f["adapter_load_total_s"].get<double>(), 4),
                            format_number(f["lora_gemm_s"].get<double>(), 4));
}

}  // namespace chalk::cli
