// `chalk layouts`' table and replica line, split from cmd_layouts.cc by concept: the rows
// each ranking gives (fitting and not), the memory a layout needs, the routed experts'
// placement, and the replica line brought to the ranked batch (review 9 L3, review 10 L1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/engine/layout_search.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {

/// One ranking per query batch; `batch` is that ranking's query batch (0: each replica
/// fills its HBM), a column only when several batches are ranked (JSON rows always carry it).
struct Ranking {
  int64_t batch = 0;
  std::vector<LayoutCandidate> ranked;
};

/// What the memory column needs: the model, the system, the search's base options and the
/// context its rows are priced at (tokens).
struct MemoryContext {
  const ModelSpec& model;
  const SystemSpec& system;
  const DeploymentOptions& base;
  int64_t context;
};

/// The rows of every ranking, split by one rule (docs/output-schema.md, "One row set"):
/// `fitting` holds the layouts that fit, ranked 1.. within each batch, every figure present:
/// the text table's, the CSV's and the JSON `rows`. `rejected` holds the layouts that do not
/// fit (name, chips, memory, why_not; no step): JSON's `rejected_layouts` and, with --all,
/// the text's second table. `batch_column`: keep the batch column (several batches, or a
/// program's JSON/CSV); `price` (USD/s per chip) gives the $/Mtok column.
struct LayoutTables {
  Table fitting, rejected;
};
LayoutTables layouts_tables(const std::vector<Ranking>& rankings, const std::optional<UsdPerSecond>& price, bool batch_column,
                            const MemoryContext& mc);

/// The routed experts' placement every row is priced under (--eplb), as describe_json's
/// "moe_routing" says it, at the EP degree of the first-ranked layout that fits; the
/// search's own deployment on `n_chips` when none fits; "" when neither can be placed.
std::string layouts_moe_routing(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const std::vector<Ranking>& rankings,
                                int64_t n_chips);

/// Brings the replica line's chosen (and runner-up) point to the one ranking printed, so the
/// line and the rank-1 row describe the same deployment and batch (review 9 L3 at HBM's
/// batch; review 10 L1 at a stated --batch, where the line said 8 chips at batch 320, $0.6745
/// per Mtok, and rank 1 TP8 at batch 64, $1.44). No --batch: each point takes the figures of
/// the best-ranked fitting single-replica row of its size. A stated batch: the chosen point
/// takes rank 1's (its layout, its batch over all the chips, its tok/s per chip and cost),
/// and a runner-up chosen at another batch the best-ranked row of its size, or none. Several
/// batches, a pipeline choice (pp > 1) or no fitting row: the note is left as it is.
void note_at_ranked_batch(ReplicaNote& note, const std::vector<Ranking>& rankings, const std::optional<UsdPerSecond>& price);

}  // namespace chalk::cli
