// `--pp` and `--microbatches` of `chalk decode` and `chalk prefill`: the layers split into
// pipeline stages across scale-up domains (engine/pipeline.h, docs/formulas.md
// "Pipelines in inference").
#pragma once

#include <cstdint>
#include <optional>
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

/// `chalk decode --pp N` (N > 1): the pipeline's decode table, text, CSV or JSON. --chips
/// counts every chip of the replica and must split into N stages (default: each stage on
/// the smallest replica that holds it). Throws InputError naming --pp, --microbatches,
/// --chips or --batch.
void run_pipeline_decode(const DeploymentArgs& d, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                         const std::vector<int64_t>& contexts);

/// `chalk prefill --pp N` (N > 1): the same for prompts.
void run_pipeline_prefill(const DeploymentArgs& d, const PipelineArgs& p, const OutputArgs& o, const std::vector<int64_t>& batches,
                          const std::vector<int64_t>& prompts, int64_t prefix);

}  // namespace chalk::cli
