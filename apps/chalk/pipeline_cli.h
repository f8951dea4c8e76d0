// `--pp` and `--microbatches` of `chalk decode` and `chalk prefill`: the layers split into
// pipeline stages across scale-up domains (engine/pipeline.h, docs/formulas.md
// "Pipelines in inference").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "deployment_options.h"

namespace chalk::cli {

struct PipelineArgs {
  int64_t pp = 1;                       ///< stages (1 = no pipeline)
  std::optional<int64_t> microbatches;  ///< in flight (unset = pp: every stage busy)
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
/// chips). Throws InputError("--pp") for N < 1.
std::optional<PipelineArgs> chosen_pipeline(const DeploymentArgs& a, const std::optional<int64_t>& pp, const std::optional<ReplicaNote>& note);

/// The busiest stage's deployment of pipeline `p` over `a`'s chips (every chip of the
/// replica, split evenly into the stages; 0: each stage on the smallest replica that holds
/// it), resolved at `context`. Throws InputError naming --pp, --microbatches or --chips.
Deployment resolve_pipeline_stage(const DeploymentArgs& a, const PipelineArgs& p, int64_t context);

/// The deployment object of a pipeline (describe_json of the busiest stage `st`, with
/// `assumptions.chips` every stage's chips) and its "pipeline" object: pp, microbatches,
/// chips_per_stage, layers_per_stage, stage_to_stage (docs/output-schema.md).
nlohmann::json pipeline_json(const Deployment& st, const PipelineArgs& p);

/// The "pipeline    2 stages x 8 chips = 16 chips; ..." line for people, the microbatches in
/// flight read from `batches` (a microbatch holds at least one sequence).
std::string pipeline_text(const Deployment& st, const PipelineArgs& p, const std::vector<int64_t>& batches);

/// How a command other than `decode` prints its pipelined decode table (run_pipeline_decode):
/// its name in the envelope, its title line and the replica it chose for the user.
struct PipelineCommand {
  const char* name = "decode";
  std::string title;  ///< the text output's first line(s); empty: decode's
  std::optional<ReplicaNote> note;
  /// The batches were not stated: drop those past the batch the busiest stage's HBM holds
  /// at the longest context and end the list with it (as `serving sweep` does without stages).
  bool cap_batches_at_memory_full = false;
};

/// `chalk decode --pp N` (N > 1): the pipeline's decode table, text, CSV or JSON. --chips
/// counts every chip of the replica and must split into N stages (default: each stage on
/// the smallest replica that holds it). Throws InputError naming --pp, --microbatches,
/// --chips or --batch.
void run_pipeline_decode(const DeploymentArgs& d, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                         const std::vector<int64_t>& contexts, const PipelineCommand& command = {});

/// `chalk prefill --pp N` (N > 1): the same for prompts.
void run_pipeline_prefill(const DeploymentArgs& d, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                          const std::vector<int64_t>& prompts, int64_t prefix);

}  // namespace chalk::cli
