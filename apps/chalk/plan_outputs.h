// `chalk plan`'s parts beyond its table (cmd_plan.cc, cmd_plan_chips.cc): the launch files of
// the chosen deployment (one chip type or a mixed pair; src/sim/launch.h) and the `lora`
// object of a plan with LoRA adapters (src/sim/plan_lora.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/sim/launch.h"
#include "chalk/serving/serving.h"
#include "chalk/sim/plan_lora.h"
#include "deployment_options.h"

namespace chalk::cli {

/// What the launch files need beyond the chosen deployment, for system `s`: the model to
/// serve as the user named it (`model_arg`, -m: served_model, needs_remote_code), the formats,
/// memory reserve and scheduler simulated, and the longest request of `reqs` (the engines'
/// maximum model length), the LoRA adapters planned for (`lora`: their count and rank;
/// none when not enabled), and the speculative decoding simulated (`speculation`, levers_of's:
/// K drafts and the drafter, mtp, eagle, eagle3, a draft model with its repository, or none).
sim::LaunchTarget launch_target(const std::string& model_arg, const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                const sim::EnginePolicy& policy, const std::vector<sim::Request>& reqs, const sim::LoraSpec& lora = {},
                                const ServingLevers& speculation = {});

/// Whether speculative decoding pays (`plan --draft`; docs/output-schema.md
/// `speculation_verdict`): the best deployment of `with` (planned with the drafts) and of
/// `without` (the same search with plain decode), {cost_usd_per_hour, chips,
/// ttft_at_percentile_ms, tpot_at_percentile_ms} each (null: none meets the SLO), and
/// `speculation_pays`: only the plan with drafts meets the SLO, or its best costs less
/// (dollars when priced, else chips); `speculation_faster`: both cost the same and the drafts'
/// TPOT at the percentile is lower ("faster, not cheaper"; review 10 L8).
nlohmann::json speculation_verdict(const sim::PlanReport& with, const sim::PlanReport& without, const ServingLevers& l);

/// speculation_verdict's object as plan's text line ("drafting   3 drafts (eagle3): 4 chips, ...; without: ...: speculation pays\n").
std::string speculation_verdict_text(const nlohmann::json& v);

/// Writes every engine's launch files under `dir` (ENGINE/FILE, scripts executable); returns
/// how many. Throws InputError("--launch-dir") naming the path that cannot be made or written.
int64_t write_launch_files(const std::string& dir, const std::vector<sim::EngineLaunch>& launches);

/// The launch files in text: each engine's files (or why it has none), then the text of the
/// first engine with files (the simulated one when it can run the deployment).
void print_plan_launches(const std::vector<sim::EngineLaunch>& launches, const std::string& dir, int64_t written);

/// JSON `launch` (docs/output-schema.md "launch files"): per engine engine, simulated,
/// checked_at, problem, files [{path, text, executable}].
nlohmann::json launch_json(const std::vector<sim::EngineLaunch>& launches);

/// JSON `lora` of a plan (docs/output-schema.md "LoRA in a plan"): the adapters (`adapters`,
/// `lora_rank`, `lora_targets`, `zipf_s`), the --max-loras chosen (`max_loras`; `max_loras_searched`
/// false: the spec's own, stated or vLLM's default 1; with several chip types, the chosen pair's search) and every value tried (`max_loras_tried`: max_loras,
/// meets_slo, cost_usd_per_hour, chips, ttft_at_percentile_ms, tpot_at_percentile_ms, why_none),
/// and the best deployment's figures, `lora_figures` (PlanLora: `adapter_hbm_bytes_per_chip`,
/// `adapter_loads`, `adapter_misses_per_s`, `adapter_load_total_s`, `lora_gemm_s`; null when
/// none met the SLO).
/// `best` is the chosen deployment (nullptr: none). Null when `spec` is not enabled.
nlohmann::json plan_lora_json(const sim::LoraSpec& spec, const std::optional<sim::LoraPlan>& search, const sim::PlanCandidate* best);

/// Whether the offload tiers pay (`plan --kv-offload`; docs/output-schema.md
/// `kv_offload_verdict`): the best deployment of `with` (planned with the tiers) and of
/// `without` (the same search without them), {cost_usd_per_hour, chips,
/// ttft_at_percentile_ms} each (null: none meets the SLO). They pay when only the plan with
/// them meets the SLO, when its best costs less (dollars when priced, else chips), or at
/// equal cost when its TTFT at the percentile is lower. The tiers' memory is the host's,
/// rented with the chips: they add no cost.
nlohmann::json offload_verdict(const sim::PlanReport& with, const sim::PlanReport& without, const sim::KvOffload& o);

/// offload_verdict's object as plan's text line ("offload     with host 64 GB, ...: the tiers pay\n").
std::string offload_verdict_text(const nlohmann::json& v);

/// One text line for plan_lora_json's object ("" for null): "max-loras 4 chosen of 1, 2, 4, 8
/// (least $/hour meeting the SLO): 8 adapters of rank 16, ...".
std::string plan_lora_text(const nlohmann::json& j);

}  // namespace chalk::cli
