// Options shared by every command that places a model on hardware, and how a
// deployment is described to people and programs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "arg_parse.h"
#include "layout_choice.h"
#include "chalk/engine/roofline.h"
#include "chalk/serving/cheapest_prefill.h"
#include "chalk/serving/serving.h"

namespace chalk::cli {

/// How a command picks the chips of one replica when --chips is not given (issue 30).
enum class ReplicaRule {
  /// The cheapest replica size and its layout within the scale-up domain, at the batch that
  /// fills its HBM (cheapest_replica, serving.h: the cost floor `serving modes` names): what
  /// an operator runs. Every command that states a cost or a throughput.
  cheapest,
  /// The smallest replica that holds the weights and one sequence (smallest_replica_chips):
  /// the fastest step at small batch, for latency questions (`decode`, `simulate`).
  smallest,
  /// The cheapest replica per prompt token at the command's longest prompt that holds its
  /// largest batch of it (cheapest_prefill_replica, cheapest_prefill.h): `prefill` (review 5
  /// M1: the decode cost floor at a 32,768-token context put Llama 3.1 8B's 1,024-token
  /// prefill on a communication-bound TP8 at $0.0502/Mtok, where one H100 costs $0.0135).
  /// Where no replica within the scale-up domain holds them, as `cheapest`.
  cheapest_prefill,
};

/// --model, --hardware, --chips and the format/efficiency/price overrides.
struct DeploymentArgs {
  std::string model = "deepseek-v3";
  std::string hardware = "gb200-nvl72";
  int64_t chips = 0;  ///< 0 = chosen by `replica_rule`
  ReplicaRule replica_rule = ReplicaRule::cheapest;  ///< set by the command, not a flag
  /// ReplicaRule::cheapest_prefill's question, set by the command: the batch priced, the
  /// largest batch the replica must hold, and the cached prefix (the prompt is resolve's
  /// context less the prefix).
  int64_t prefill_batch = 1, prefill_hold_batch = 1, prefill_prefix = 0;
  std::string weights, kv = "bf16", compute;
  std::optional<double> matmul_efficiency, hbm_efficiency, price_usd_per_chip_hour;
  double memory_reserve = 0.10;
  /// --roofline: the lecture's roofline at the achievable rates (the matmul and HBM
  /// efficiencies, not the datasheet peaks; no collectives, kernel floor or kernel
  /// efficiencies). Off by default: the engine step (overhead.h) gives the headline figures.
  bool roofline = false;
  bool mechanisms = false;  ///< --mechanisms: accepted for compatibility; the engine step is the default
  std::optional<int64_t> tp, ep;   ///< layout degrees (unset = the layout search's best for the chips)
  bool two_batch_overlap = false;  ///< two micro-batches hide EP traffic
  bool enforce_eager = false;      ///< --enforce-eager: no CUDA graphs, the host launches every kernel
  std::optional<std::string> eplb;  ///< yes, no; unset = uniform routing (ExpertBalance)
  std::optional<std::string> dispatch_dtype;  ///< EP dispatch format (unset = bf16)
  /// --allow-infeasible: print the figures of stated chips that cannot hold the weights, or
  /// of a sequence past the model's maximum context (refuse_beyond_max_context), for study,
  /// instead of refusing them (issue 30: such a table once came with exit 0).
  bool allow_infeasible = false;
  /// An engine profile's constants (--engine-profile, chalk calibrate): the kernel floor and
  /// the host time per sequence of the engine step, seconds; unset: the defaults (overhead.h,
  /// host_time.h). Set by load_engine_profile (sim_cli.h), not flags of their own.
  std::optional<double> kernel_floor_s, host_s_per_sequence;
  /// The profile's all-reduce stage latency, seconds (Calibration::allreduce_latency).
  std::optional<double> allreduce_latency_s;
  /// Set by a command that answers a latency question (prefill, simulate), not a flag: with
  /// no layout stated, resolve() picks among the fitting layouts of the replica by this
  /// question (layout_choice.h) instead of taking the layout search's decode-throughput best,
  /// and writes what it chose and the runner-up to *layout_note when that is set.
  std::shared_ptr<const LayoutChooser> layout_chooser;
  std::optional<LayoutNote>* layout_note = nullptr;
  /// Set by a command that prices a pipeline (`decode`, `prefill`, `prices forward`, `serving
  /// sweep`, `layouts`: they take --pp), not a flag: when no replica within the scale-up domain
  /// holds the model (or, under the smallest rule, the chosen replica is wider than one domain:
  /// review 4 H1/M2) and the layout search ranks a pipeline first on the smallest replica that does (Llama
  /// 3.1 405B bf16 on 16 H100: PP2 x (TP8) at $3.88/Mtok against TP16 across two hosts at
  /// $13.27), resolve() chooses that pipeline (ReplicaNote::pp) instead of the single
  /// replica (review 2 H1). The Deployment it returns stays the single replica; the command
  /// prices the pipeline's stages (pipeline_cli.h, resolve_pipeline_stage).
  bool prices_pipeline = false;
};

/// Adds --eplb (DeploymentArgs::eplb): where the routed experts sit against a learned router's
/// skew. Part of the layout flags of add_deployment_options; `chalk layouts`, which searches the
/// layout, adds it alone (review 5 L7: plan and simulate took it, layouts did not).
void add_eplb_option(CLI::App& app, DeploymentArgs& a);

/// Adds --allow-infeasible, for the commands whose figures are one stated deployment (decode,
/// prefill, prices, serving): without it, chips that cannot hold the weights are an error.
void add_infeasible_option(CLI::App& app, DeploymentArgs& a);

/// Refuses a sequence longer than the model's maximum context (`max_position_embeddings` of
/// its config: an engine refuses such a prompt) unless --allow-infeasible is given.
/// `tokens` is the longest sequence the command prices (context, or prompt + prefix);
/// `field` the flag that set it. Throws InputError naming the field, the value and the
/// limit; a model with no stated maximum (0) passes.
void refuse_beyond_max_context(const DeploymentArgs& a, const ModelSpec& model, int64_t tokens, const std::string& field);

/// Output format flags.
struct OutputArgs {
  bool json = false;
  bool csv = false;
};

/// Adds the deployment options; `layout_flags` adds --roofline, --mechanisms (a no-op alias
/// kept for scripts), --tp, --ep, --two-batch-overlap and --dispatch-dtype too (`chalk
/// layouts` searches the layout instead).
void add_deployment_options(CLI::App& app, DeploymentArgs& a, bool layout_flags = true);
void add_output_options(CLI::App& app, OutputArgs& o);

/// The systems a comma list names (catalog names or hardware files), in order. Throws
/// InputError naming --hardware for an empty list or item and for a name given twice.
std::vector<std::string> hardware_list(const std::string& text);

/// The options every placement shares (formats, efficiencies, price, reserve, mechanisms
/// on unless --roofline, the stated layout degrees), without the chip count. Throws InputError.
DeploymentOptions options_from(const DeploymentArgs& a);

/// Which replica a command chose when the user stated no chips, and what it beat: printed
/// by every command that prices a deployment (text: replica_note_text; JSON:
/// "replica_choice", replica_note_json).
struct ReplicaNote {
  ReplicaRule rule = ReplicaRule::cheapest;
  int64_t context = 0;                 ///< tokens of context the replicas were compared at
  ModePoint choice;                    ///< the chosen replica at the batch that fills its HBM
  /// cheapest: the cheapest replica of another size; smallest: the cheapest replica, when it
  /// is not the smallest (what a throughput question would run).
  std::optional<ModePoint> runner_up;
  std::vector<int64_t> replica_sizes;  ///< the sizes compared (cheapest)
  /// Non-empty when no size within the scale-up domain holds the model and the smallest
  /// replica beyond it was taken instead: why.
  std::string fallback;
  /// Non-empty when the layout search ranks a pipeline above the single-replica layout this
  /// command runs on the chosen chips (the pipeline is then `runner_up`): that this command
  /// runs one replica without stages, and the commands that price the pipeline (review 2 H1:
  /// 405B on 16 H100, PP2 x (TP8) at $3.88/Mtok beside TP16's $13.27).
  std::string pipeline;
  /// Pipeline stages of the chosen replica: 1 without a pipeline; > 1 when the command prices
  /// pipelines (DeploymentArgs::prices_pipeline) and the layout search ranks this pipeline
  /// first on the chosen chips, one scale-up domain per stage (`choice` is then the pipeline
  /// at the batch its busiest stage's HBM holds, as `chalk layouts` ranks it, and `runner_up`
  /// the same chips as one replica without stages).
  int64_t pp = 1;
  /// The per-user decode speed floor the choice meets, tok/s per user (`prices forward
  /// --min-tok-per-s-per-user`, review 3 M4); 0 = none. When > 0, `choice` is the cheapest
  /// replica and batch that streams at least this fast (cheapest_replica_at_speed, as
  /// `prices compare` prices a host) and `runner_up` the memory-full cost floor without it.
  double min_tok_per_s_per_user = 0;
  /// The batch the choice was made at (`prices forward -b` with no chips: the cheapest size
  /// that holds it, cheapest_serving_replica; issue 30 item 1); 0 = none. When > 0, `choice`
  /// and `runner_up` are both at this batch.
  int64_t at_batch = 0;
  /// The layout flags that set the smallest replica ("--tp 2"; review 7 M7: `decode --tp 2`
  /// said 2 chips were "the smallest replica that holds the weights", where 1 chip does).
  std::string stated_layout;
  /// ReplicaRule::cheapest_prefill: the chosen replica's prefill (its layout as the command
  /// runs it) and the cheapest other size's, at the batch and longest prompt compared. Set,
  /// they replace `choice` and `runner_up` in the note's text and JSON.
  std::optional<PrefillReplicaPoint> prefill, prefill_runner_up;
};

/// Loads the model and system and resolves the deployment: --chips, or else the replica
/// `a.replica_rule` picks at `context` tokens (counted under the engine step even with
/// --roofline so both views price the same chips): the cheapest replica size within the
/// scale-up domain (cheapest_replica, serving.h) or the smallest replica an engine can run
/// (smallest_replica_chips); the stated layout, or else the layout search's best for one
/// replica on those chips at `context` (best_single_replica_layout), named "searched: ...".
/// With no chips stated and `note` given, *note says which replica and why. Throws
/// InputError.
Deployment resolve(const DeploymentArgs& a, int64_t context = 4096, std::optional<ReplicaNote>* note = nullptr);

/// The deployment `d` at the batch that fills its HBM at `context` (capped at 2^24
/// sequences, as the frontier caps it): the point the replica rule compares and
/// ReplicaNote::choice holds.
ModePoint replica_memory_full_point(const Deployment& d, int64_t context);

/// The "replica_choice" object (docs/output-schema.md): null when the chips were stated.
nlohmann::json replica_note_json(const std::optional<ReplicaNote>& note);

/// One line for people, "replica     ...\n"; empty when the chips were stated.
std::string replica_note_text(const std::optional<ReplicaNote>& note);

/// One warning for rows of a table (batch, context) that the replica `d` cannot hold (their
/// KV cache beyond HBM: memory_plan's `fits` false), naming them and the smallest
/// power-of-two multiple of d's chips within the scale-up domain that, resolved as `a` with -n, holds
/// them all; nullopt when `unfit` is empty. Commands leave those rows' $/Mtok empty (issue
/// 30: a row that does not fit is never priced as if it ran).
std::optional<std::string> unfit_rows_warning(const DeploymentArgs& a, const Deployment& d, const std::vector<std::pair<int64_t, int64_t>>& unfit);

/// The advice that ends unfit_rows_warning: "; -n 16 holds it" (the smallest power-of-two
/// multiple of d's chips within the scale-up domain that holds every row of `unfit`), or
/// "; no replica within the 8-chip scale-up domain holds it: split the batch over replicas";
/// empty when `unfit` is empty.
std::string replica_that_holds(const DeploymentArgs& a, const Deployment& d, const std::vector<std::pair<int64_t, int64_t>>& unfit);

/// The same deployment under the plain roofline (the lower bound shown beside the engine
/// step): mechanisms off, everything else equal.
Deployment roofline_of(const Deployment& d);

/// "engine step" or "roofline": which model a command's headline figures come from.
std::string_view view_name(const Deployment& d);

/// Warnings about a deployment that hold at any batch: a replica wider than the scale-up
/// domain without --mechanisms (no scale-out term), a --tp that splits heads no engine
/// can split (attention_split_problem), two micro-batches with no EP traffic to hide.
std::vector<std::string> deployment_warnings(const Deployment& d);

/// How the deployment's routed experts sit against the router (--eplb; model/expert_skew.h),
/// one sentence: "assumptions.moe_routing" of describe_json and the "experts" line of
/// describe_text, so rows that differ only in --eplb can be told apart. The busiest EP rank's
/// factor is read at d's EP degree (1 without mechanisms).
std::string moe_routing_text(const Deployment& d);

/// The model, hardware and every assumption, for --json.
nlohmann::json describe_json(const Deployment& d);

/// The "model" object every command prints (docs/output-schema.md, "model"): name, source,
/// parameter counts and the weights' bytes in the deployment's formats.
nlohmann::json model_json(const Deployment& d);

/// The same object for commands without a deployment of their own (training, scale-up):
/// the weights' bytes in the checkpoint's formats. Throws InputError as make_deployment does.
nlohmann::json model_json(const ModelSpec& m, const SystemSpec& s);

/// The "hardware" object every command prints (docs/output-schema.md, "hardware"): the
/// system's datasheet figures per chip and its scale-up domain.
nlohmann::json hardware_json(const SystemSpec& s);

/// Whether this command line gave -H/--hardware (add_deployment_options resets it, its -H
/// option sets it; per thread: the web API parses each request's command line on its own).
/// Where not, the hardware line says the system is the default (review 11a item 8:
/// `decode` without -H used GB200 NVL72 unsaid): default_hardware_note() is
/// " (the default; -H sets it)", else "".
bool hardware_stated();
void set_hardware_stated(bool stated);
std::string default_hardware_note();

/// The warning a dense model's layout earns when its attention runs in data-parallel groups
/// under one FFN split (attention TP t x r/t, FFN TP r, t < r: what chalk prices where TP r
/// does not divide the heads, as Pope et al. 2022 ran PaLM on TPU v4), which no GPU serving
/// engine runs (review 11 L1); it names the nearest -n whose tensor parallelism splits the
/// heads. "" for an MoE model (data-parallel attention over expert parallelism is what the
/// engines run) or a layout without such groups. `chips`: one replica's.
std::string dense_attention_groups_warning(const ModelSpec& m, const ParallelLayout& l, int64_t chips);

/// A source note cut to one or two printed lines (review 11a item 2): where `source` gives one
/// segment per matmul format ("BF16: ... FP8: ..."), the segment for `precision` ("bf16",
/// "fp8"; "" keeps all), less its parts that give only another format's figure ("FP8
/// 1402.6/1979 = 70.9%" on a bf16 run); then its whole clauses (split at "; " and ". ", else
/// ", ", outside parentheses) while they fit `budget` characters, the first always, then the
/// doc section the source names ("docs/formulas.md \"...\"") and "in full: --json" when a
/// clause was dropped.
std::string short_source_note(const std::string& source, std::string_view precision, std::size_t budget = 150);
std::string describe_text(const Deployment& d);  ///< describe_json for people: a few labelled lines

/// describe_text followed by a "warning" line for each of deployment_warnings(d), for a
/// `max_context` beyond the model's max_position_embeddings, and for weights that do not
/// fit in the replica's HBM (the figures then assume they did).
std::string describe_text_with_warnings(const Deployment& d, int64_t max_context = 0);

/// 1e9 -> "1.00e+09"-free human form: "671.0B", "37.5B", "70.3 KB".
std::string human_count(double n);
std::string human_bytes(double bytes);

}  // namespace chalk::cli
