// `--pp` and `--microbatches` of `chalk decode` and `chalk prefill`: the layers split into
// pipeline stages across scale-up domains (engine/pipeline.h, docs/formulas.md
// "Pipelines in inference").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {

struct PipelineArgs {
  int64_t pp = 1;                       ///< stages (1 = no pipeline)
  std::optional<int64_t> microbatches;  ///< in flight (unset = pp: every stage busy)
  /// Why these stages, when the command chose them for stated chips (chosen_pipeline): printed
  /// on the pipeline line (review 4 L5: "2 stages x 2 chips" with no word on the 4 chips).
  std::string why;
};

/// resolve() (deployment_options.h) for an already loaded or cut model (a pipeline stage);
/// a.model is not read. Defined in deployment_options.cc beside resolve().
Deployment resolve_model(const ModelSpec& model, const DeploymentArgs& a, int64_t context, std::optional<ReplicaNote>* note = nullptr);

/// Adds --pp and --microbatches.
void add_pipeline_options(CLI::App& app, PipelineArgs& p);

/// Adds --pp alone, unset by default, for the commands that price a pipeline when no replica
/// within the scale-up domain holds the model (`prices forward`, `serving sweep`): `pp`
/// unset means the layout `chalk layouts` ranks first (ReplicaNote::pp), 1 one replica
/// without stages.
void add_auto_pp_option(CLI::App& app, std::optional<int64_t>& pp);

/// The pipeline a command with add_auto_pp_option prices, or nullopt for one replica
/// without stages: --pp N > 1 as stated (with -n, or each stage on the smallest replica that
/// holds it), else with no --pp and no -n the stages resolve() chose (`note`'s pp > 1, on its
/// chips), else with -n wider than one scale-up domain and no --pp (and a.prices_pipeline) the
/// pipeline `chalk layouts` ranks first on those chips at `context` tokens, if it ranks one
/// above every layout without stages (review 4: Llama 3.1 405B on -n 16 H100 is PP2 x (TP8),
/// not TP16 across two hosts). Throws InputError("--pp") for N < 1.
std::optional<PipelineArgs> chosen_pipeline(const DeploymentArgs& a, const std::optional<int64_t>& pp, const std::optional<ReplicaNote>& note,
                                            int64_t context = 4096);

/// The busiest stage's deployment of pipeline `p` over `a`'s chips (every chip of the
/// replica, split evenly into the stages; 0: each stage on the smallest replica that holds
/// it), resolved at `context`. Throws InputError naming --pp, --microbatches or --chips.
Deployment resolve_pipeline_stage(const DeploymentArgs& a, const PipelineArgs& p, int64_t context);

/// The deployment object of a pipeline (describe_json of the busiest stage `st`, with
/// `assumptions.chips` every stage's chips and `model.layers` the whole model's
/// `model_layers`, not the stage's: review 6 M2) and its "pipeline" object: pp, microbatches,
/// chips_per_stage, layers_per_stage (the busiest stage's), stage_to_stage
/// (docs/output-schema.md).
nlohmann::json pipeline_json(const Deployment& st, const PipelineArgs& p, int64_t model_layers);

/// The "pipeline    2 stages x 8 chips = 16 chips; 126 layers in stages of 32, 32, 31, 31;
/// ..." line for people: the whole model's `model_layers` as they fall into the stages (the
/// first stages take the remainder), the busiest stage's layers (`st`, what every stage is
/// priced at), and the microbatches in flight read from `batches` (a microbatch holds at
/// least one sequence; empty: the microbatches asked, for commands whose rows each have
/// their own batch). It printed stage layers x pp as the total, "32 of 128" for 126 layers.
std::string pipeline_text(const Deployment& st, const PipelineArgs& p, const std::vector<int64_t>& batches, int64_t model_layers);

/// Appends the pipeline columns (pp, microbatches, microbatch, t_stage_ms, t_hop_ms,
/// t_pass_ms, stage_busy, stage_weights_gb, stage_kv_gb) at priority 3 (shown with --wide):
/// every row of `decode`, `prefill` and `serving sweep` carries them, with or without stages,
/// so one command has one set of columns whatever layout it chose (review 4 M6: a notebook
/// over 8B, 70B and 405B got NaN columns once 405B defaulted to stages). For prefill the
/// pass and busy columns are left out (`prefill`: no t_pass_ms, stage_busy).
void add_pipeline_columns(Table& t, bool prefill = false);

/// Their cells for a replica without stages, in add_pipeline_columns' order: one stage, one
/// microbatch of `batch`, no hop; the pass is the step, the stage always busy; `mem` is the
/// replica's memory at this row (memory_plan at its batch and context).
std::vector<Cell> one_stage_cells(int64_t batch, double t_step_ms, const MemoryPlan& mem, bool prefill = false);

/// A row in `columns`' order from cells named by column key; a key the row lacks is empty.
std::vector<Cell> cells_by_key(const std::vector<Column>& columns, const std::map<std::string, Cell, std::less<>>& row);

/// How a command other than `decode` prints its pipelined decode table (run_pipeline_decode):
/// its name in the envelope, its title line and the replica it chose for the user.
struct PipelineCommand {
  const char* name = "decode";
  std::string title;  ///< the text output's first line(s); empty: decode's
  std::optional<ReplicaNote> note;
  /// The batches were not stated: drop those past the batch the busiest stage's HBM holds
  /// at the longest context and end the list with it (as `serving sweep` does without stages).
  bool cap_batches_at_memory_full = false;
  /// The command's columns without stages, add_pipeline_columns included (decode_columns,
  /// sweep_table's): pipeline rows fill each by key, the per-term times from the busiest
  /// stage's step on one microbatch, each term's cost its share of that step times the row's
  /// cost; empty: the pipeline's own columns.
  std::vector<Column> columns;
};

/// `chalk decode --pp N` (N > 1): the pipeline's decode table, text, CSV or JSON. --chips
/// counts every chip of the replica and must split into N stages (default: each stage on
/// the smallest replica that holds it). Throws InputError naming --pp, --microbatches,
/// --chips or --batch.
void run_pipeline_decode(const DeploymentArgs& d, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                         const std::vector<int64_t>& contexts, const PipelineCommand& command = {});

/// `chalk prefill --pp N` (N > 1): the same for prompts.
void run_pipeline_prefill(const DeploymentArgs& d, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                          const std::vector<int64_t>& prompts, int64_t prefix, const std::optional<ReplicaNote>& note = std::nullopt,
                          const std::vector<Column>& columns = {});

}  // namespace chalk::cli
