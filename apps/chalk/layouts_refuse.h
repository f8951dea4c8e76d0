// `chalk layouts`' refusal when no layout fits (issue 30 item 2: infeasible input is an error).
#pragma once

#include <cstdint>
#include <string>

#include "chalk/engine/layout_search.h"
#include "deployment_options.h"

namespace chalk::cli {

/// Throws the InputError of a layout search where no layout fits (exit 2), on `--chips`
/// (or `--batch` when these chips hold the weights and one sequence but not `most`, the
/// largest query batch; 0 = each replica fills its HBM): `reason` is the first-ranked
/// layout's "name: reason" (empty: no candidate), then the smallest replica that holds the
/// weights and one sequence at q.context (smallest_replica_chips, pipeline.h), with the
/// stages that keep it within the scale-up domain. Never returns.
[[noreturn]] void refuse_no_layout(const ModelSpec& model, const SystemSpec& system, const DeploymentOptions& base, const std::string& reason, int64_t most,
                                   const LayoutQuery& q);

}  // namespace chalk::cli
