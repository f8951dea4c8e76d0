// Internal: how validate reads a measurement row's fields into chalk's inputs
// (validate_plan.cc) and predicts it (validate_predict.cc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chalk/engine/engine_name.h"
#include "chalk/model/expert_skew.h"
#include "chalk/base/dtype.h"
#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"
#include "chalk/model/model.h"
#include "chalk/training/layouts.h"
#include "chalk/training/memory.h"
#include "chalk/training/step.h"
#include "chalk/sim/policy.h"
#include "chalk/validate/validate.h"

namespace chalk::detail {

/// A number in a row's text (assumptions, notes, inputs): whole values as integers, others
/// to `digits` significant digits ("977", "0.4886").
inline std::string row_num(double v, int digits = 4) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  }
  return buf;
}

/// A count in a row's text as people read it (issue 30 item 2): three significant digits
/// and a K, M, B or T suffix ("780B", "14.8T"; below 1,000 as row_num), as the CLI's
/// tables write counts (apps/chalk/table.h, format_count).
inline std::string row_count(double v) {
  static constexpr std::pair<double, const char*> kSuffixes[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& [scale, suffix] : kSuffixes) {
    if (std::fabs(v) >= scale) return row_num(v / scale, 3) + suffix;
  }
  return row_num(v);
}

/// What the row's metric is, and so what validate predicts.
enum class Target {
  decode_step_s,            ///< seconds per decode step (per token of a sequence without drafts)
  decode_total_s,           ///< seconds for `output` decode steps
  per_user_tokens_per_s,    ///< tokens/s of one sequence
  decode_tokens_per_s,      ///< decode tokens/s over `per_chips` chips
  prefill_s,                ///< seconds for the prefill
  prefill_tokens_per_s,     ///< input tokens/s over `per_chips` chips
  serving_latency_s,        ///< prefill + `output` decode steps
  serving_tokens_per_s,     ///< steady-state output tokens/s over `per_chips` chips
  serving_mfu,              ///< model FLOPs / (time x chips x bf16 peak)
  /// Requests through the simulator (src/sim) at a stated request rate (Poisson) or
  /// concurrency (every request waiting at 0, `batch` running at most): the mean over the
  /// requests of TTFT, TPOT, ITL or E2E, or the throughput.
  serving_simulated,
};

/// A row read into chalk's inputs.
struct RowPlan {
  std::string model, hardware;
  /// An engine profile's constants for this row's engine (chalk calibrate), else none.
  sim::EngineConstants profile;
  /// Attention heads padded to this count for partitioning, as the row's model_shape
  /// states ("48 heads padded to 64": Pope et al. 2022); 0 = as published.
  int64_t heads_padded_to = 0;
  int64_t chips = 1;
  std::optional<DType> w_attention, w_ffn, w_experts, w_embedding;  ///< unset: the checkpoint's
  DType kv = DType::bf16;
  ParallelLayout layout;          ///< decode (and default) layout
  /// The row states no layout: throughput rows take the best of search_layouts
  /// (layout_search.h); other rows keep the derived default.
  bool layout_stated = true;
  ExpertBalance expert_balance = ExpertBalance::uniform;  ///< the row's eplb column (expert_skew.h)
  bool two_batch_overlap_stated = false;  ///< the row states two_batch_overlap (yes or no): a layout search keeps to it
  /// kv_split = heads stated: a single KV head or MLA latent stays replicated over the
  /// tensor-parallel chips even where it does not fit (no switch to a split by sequence).
  bool kv_split_heads = false;
  /// tpot_ms: the step divided by the tokens a sequence keeps per step.
  bool per_kept_token = false;
  /// total_tok_per_s_per_chip: output tokens/s x (input + output) / output.
  bool count_input_tokens = false;
  ParallelLayout prefill_layout;  ///< prefill layout of a serving row
  Target target = Target::decode_step_s;
  double batch = 1;          ///< sequences of a step (decode or prefill)
  double decode_batch = 0;   ///< serving rows: decode batch if it differs (0 = batch)
  bool batch_from_capacity = false;  ///< largest batch the KV cache holds (offline throughput)
  /// A decode or prefill throughput row left `batch` empty: predicted at the batch its engine
  /// admits (engine_admitted_batch), named among the assumptions with its value.
  bool batch_unstated = false;
  double requests_cap = 0;           ///< at most this many sequences (0 = none)
  /// A loaded engine reserves each admitted request's KV for all its tokens (prompt +
  /// output), so its batch is capacity / (prompt + output), not capacity / mean context
  /// (kv_admission to_completion; TensorRT-LLM's GUARANTEED_NO_EVICT)
  bool kv_reserved = false;
  /// A loaded engine runs each prompt whole in one step (chunked_prefill no; TensorRT-LLM's
  /// default): steady_state_step (step_mix.h)
  bool whole_prompts = false;
  /// The row's scheduler knobs (Measurement; 0 = the engine's default): the token budget
  /// and running-sequence cap of the simulator's policy, and the HBM fraction the engine
  /// fills (the deployments' memory reserve is 1 minus it).
  int64_t max_batched_tokens = 0, max_sequences = 0;
  double gpu_memory_utilization = 0;
  int64_t context = 0, prompt = 0, prefix = 0, output = 0;
  /// Offline throughput: mean KV tokens of a running sequence in the steady state, from the
  /// row's mean lengths and its dataset's shape (running_context_mean; 0 = prompt + output / 2)
  double running_context = 0;
  /// ... and the KV tokens a running sequence reserves when admitted for all its tokens,
  /// E[(P + L) L] / E[L] = 2 running_context - w P (0 = prompt + output)
  double running_reserved = 0;
  double cache_hit_fraction = 0;     ///< input tokens served from a prefix cache
  double mtp_tokens = 1;             ///< tokens per sequence per step (1 + drafts)
  double mtp_accepted = 1;           ///< kept per step
  double attention_tokens = 0;       ///< attention-only query tokens per sequence (0 = mtp_tokens)
  double per_chips = 0;              ///< throughput is per this many chips (0 = the replica's)
  double to_unit = 1;                ///< predicted SI value x to_unit = the row's unit
  double request_rate_per_s = 0;     ///< serving_simulated: arrivals per second (0 = all at once, `batch` concurrent)
  bool constant_arrivals = false;    ///< serving_simulated: one arrival every 1 / rate s (else Poisson)
  int64_t requests = 0;              ///< serving_simulated: requests sent (0 = 1,000)
  std::string engine;                ///< the row's engine: the simulator's policy (vllm when not one of chalk's), the layouts it can launch
  std::string metric;                ///< serving_simulated: the metric
  std::vector<std::string> assumptions, notes;
};

/// The outcome of reading a row: a plan, or the reason there is none.
struct Mapped {
  std::optional<RowPlan> plan;
  RowStatus status = RowStatus::predicted;
  std::string reason;
};

/// Reads one row's fields into a plan. Throws InputError naming "<id>: <column>" for a
/// field chalk cannot use; a kind or metric it does not predict yet is status not_modelled.
/// plan_row's last step: the engine's scheduling policy where it decides the prediction
/// (KV admission, chunked prefill, the caps and budgets, the HBM fraction, prefix caching,
/// KV offload), read from the row's columns into p, with a note for each column it does not
/// read (validate_engine_policy.cc).
void plan_engine_policy(const Measurement& r, RowPlan& p);
Mapped plan_row(const Measurement& row);

/// The model a row names: a built-in name, a path, or "builtin:measurements/<path>" for a
/// built-in row's model file. Throws InputError "<id>: model" when none is found.
std::string resolve_model(const Measurement& row);
/// Loads what resolve_model returned.
ModelSpec load_row_model(const std::string& resolved);

/// The system a row names: a built-in name, a path, or "builtin:measurements/<path>" for a
/// built-in row's hardware file. Throws InputError "<id>: hardware" when none is found.
std::string resolve_system(const Measurement& row);
/// Loads what resolve_system returned.
SystemSpec load_row_system(const std::string& resolved);

/// A training or whole-run row read into a training plan (validate_training.cc).
struct TrainRowPlan {
  std::string model_name, hardware, metric, engine;
  ModelSpec model;
  SystemSpec system;
  TrainingPlan plan;
  bool zero_fsdp = false;   ///< zero = fsdp (ZeRO-3; ZeRO-2 with a pipeline)
  double train_tokens = 0;  ///< run rows: the run's total tokens
  bool fits = true;         ///< the plan fits in HBM by chalk's memory model
  std::vector<std::string> assumptions, notes;
};

/// Reads a training or run row into a plan: stated degrees, schedule, microbatch,
/// recomputation and ZeRO as written; the defaults of docs/accuracy.md "Training rows" for
/// the rest, each recorded among the assumptions. Throws InputError "<id>: <column>" for a
/// field chalk cannot use or a stated plan check_plan rejects.
TrainRowPlan plan_training_row(const Measurement& row);
/// plan_training_row for a row whose `chips` is set (validate_training.cc); plan_training_row
/// (validate_run_cluster.cc) calls it once per candidate cluster of a row without chips.
TrainRowPlan plan_training_row_on_chips(const Measurement& row);

/// Predicts a training plan's metric through training_step (and the plain roofline: the
/// executed FLOPs at datasheet peak). Throws InputError when the training module rejects it.
void predict_training(const TrainRowPlan& plan, Prediction& out);

/// A storage format's DType ("bf16", "fp8", ...; the measurement reader has checked the
/// vocabulary). Throws InputError("format") on any other text.
DType storage_format(const std::string& format);

/// The defaults of validate_defaults.cc for what a serving, decode or prefill row leaves
/// unstated (docs/file-formats.md, "Defaults"). Each fills `r` and returns the assumption
/// it prints, with the value used and why.
/// A named dataset's published mean input and output tokens (data/datasets/datasets.csv)
/// where the row leaves them empty; a serving throughput row's empty batch as `max`.
std::vector<std::string> fill_unstated_lengths_and_batch(Measurement& r);
/// The smallest replica (times dp) that holds the model and one sequence, for a row
/// without chips. Throws InputError "<id>: chips" when no replica holds it.
std::string fill_unstated_chips(Measurement& r, const ModelSpec& model, const SystemSpec& sys);
/// Tokens kept per step of a row that states draft_tokens but not accepted_tokens: the
/// drafter's published acceptance (DeepSeek-V3's MTP module), with `assumption` set.
/// Throws InputError "<id>: accepted_tokens" for a drafter with no published figure.
double default_accepted_tokens(const Measurement& r, const ModelSpec& model, std::string& assumption);

/// The batch a decode or prefill row's engine admits under its KV budget, as simulate()
/// admits requests (validate_defaults.cc): the replica's KV blocks (sim::kv_blocks_available
/// at the engine's block size) over the blocks one sequence holds (its context; a prefill's
/// prompt), at most the engine's max_sequences; a prefill step also at most the engine's
/// token budget, max_batched_tokens / prompt (at least 1: a longer prompt runs alone, in
/// chunks). The engine's policy is sim::engine_policy's (vLLM's for an engine chalk has no
/// policy for). Sets `why` to the derivation. Throws InputError("memory") when the KV of
/// one sequence does not fit beside the weights.
double engine_admitted_batch(const RowPlan& p, const Deployment& d, std::string& why);

/// The unit of a metric as printed ("ms", "tok/s/chip", ...).
std::string metric_unit(const std::string& metric);

/// Predicts a plan: fills predicted, predicted_plain, governs, bound_plain, inputs, layout.
/// Throws InputError when chalk rejects the inputs (the caller records it as rejected).
void predict(const RowPlan& plan, Prediction& out);

/// The host work per step (chalk/engine/host_time.h) of a row's engine: a serving engine's
/// policy, its release included ("vllm-0.10" runs host and GPU one after the other); an
/// empty engine, vLLM's (the commands' default); any other engine none.
HostTime row_engine_host(const std::string& engine);

/// The CUDA graphs (chalk/engine/cuda_graphs.h) of a row's engine and release under its
/// max_sequences and max_batched_tokens (0: the engine's defaults); an empty engine,
/// vLLM's; any other engine none.
CudaGraphs row_engine_graphs(const RowPlan& p);

/// A row's deployments: the plain roofline, and the engine step for decode and prefill.
struct Engines {
  Deployment plain, mech, mech_prefill;
};

/// What `chalk decode` warns about, carried into the row (docs/accuracy.md, "Questionable
/// rows"; validate_questionable.cc): the weights and KV not fitting in HBM at a stated
/// batch, a tensor-parallel degree the heads do not divide, a context beyond the model's
/// max_position_embeddings. Appends to out.notes; the row is predicted as stated.
void questionable_row_notes(const RowPlan& p, const ModelSpec& m, const Engines& e, Prediction& out);

/// serving_simulated (validate_simulate.cc): the metric of `plan` from simulate() on the
/// plain roofline (`plain`) and the engine step (`mech`), in SI units (seconds, tokens/s
/// over `per_chips` chips). Appends what it ran to `inputs` and `notes`.
void simulated_values(const RowPlan& plan, const Deployment& plain, const Deployment& mech, double per_chips, double& plain_v,
                      double& mech_v, std::string& inputs, std::vector<std::string>& notes);

}  // namespace chalk::detail
