// The pipeline columns every decode, prefill and sweep row carries (pipeline_cli.h,
// add_pipeline_columns), and a row written by key into a command's own columns.
#include "pipeline_cli.h"

#include <algorithm>

#include "chalk/engine/roofline.h"
#include "chalk/base/units.h"

namespace chalk::cli {

void add_pipeline_columns(Table& t, bool prefill) {
  t.columns.push_back({"pp", "pp"});
  t.columns.push_back({"microbatches", "microbatches"});
  t.columns.push_back({"microbatch", prefill ? "prompts/microbatch" : "seqs/microbatch"});
  t.columns.push_back({"t_stage_ms", "stage ms"});
  t.columns.push_back({"t_hop_ms", "hop ms"});
  if (!prefill) {
    t.columns.push_back({"t_pass_ms", "pass ms"});
    t.columns.push_back({"stage_busy", "stage busy"});
  }
  t.columns.push_back({"stage_weights_gb", "stage weights GB"});
  t.columns.push_back({"stage_kv_gb", "stage KV GB"});
  t.set_priority({"pp", "microbatches", "microbatch", "t_stage_ms", "t_hop_ms", "t_pass_ms", "stage_busy", "stage_weights_gb", "stage_kv_gb"}, 3);
}

std::vector<Cell> one_stage_cells(int64_t batch, double t_step_ms, const MemoryPlan& mem, bool prefill) {
  // One stage: the replica is the stage, its step the pass, no send between stages.
  std::vector<Cell> c{int64_t{1}, int64_t{1}, batch, t_step_ms, 0.0};
  if (!prefill) {
    c.emplace_back(t_step_ms);
    c.emplace_back(1.0);
  }
  c.emplace_back(to_gb(mem.weights));
  c.emplace_back(to_gb(mem.kv_cache));
  return c;
}

std::vector<Cell> cells_by_key(const std::vector<Column>& columns, const std::map<std::string, Cell, std::less<>>& row) {
  std::vector<Cell> out;
  out.reserve(columns.size());
  for (const auto& c : columns) {
    const auto it = row.find(c.key);
    out.push_back(it == row.end() ? Cell{} : it->second);
  }
  return out;
}

}  // namespace chalk::cli
