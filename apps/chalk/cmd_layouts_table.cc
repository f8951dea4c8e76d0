// `chalk layouts`' rows (fitting and not), their memory, the experts' placement and the
// replica line at the ranked batch (cmd_layouts.h); split from cmd_layouts.cc by concept.
#include <algorithm>
#include <cmath>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "cmd_layouts.h"

namespace chalk::cli {
namespace {

/// `t` keeping only the columns keyed in `keys`, in t's order.
Table layouts_keep_columns(const Table& t, const std::vector<std::string>& keys) {
  Table out;
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (std::find(keys.begin(), keys.end(), t.columns[i].key) == keys.end()) continue;
    at.push_back(i);
    out.columns.push_back(t.columns[i]);
  }
  for (const auto& row : t.rows) {
    std::vector<Cell> r;
    for (std::size_t i : at) r.push_back(row[i]);
    out.add(std::move(r));
  }
  return out;
}

/// HBM one chip of a candidate's replica holds (GB): weights, reserve and the KV of its
/// batch (one sequence when it holds none) as the layout stores them, i.e. (n x capacity -
/// free) / n with free taken on the busiest group (memory_plan: KV replicated where the
/// layout replicates it). Beside hardware.hbm_gb_per_chip it says how far a layout that
/// does not fit is over. Empty for a pipeline (its stages differ) and for a layout the
/// deployment refuses (heads it cannot split: why_not says so).
Cell layout_memory_gb(const MemoryContext& mc, const LayoutCandidate& c) {
  if (c.pp > 1 || c.replica_chips < 1) return Cell{};
  DeploymentOptions o = mc.base;
  o.n_chips = c.replica_chips;
  o.mechanisms.enabled = true;
  o.mechanisms.layout = c.layout;
  o.mechanisms.layout.dispatch_bytes_per_element = mc.base.mechanisms.layout.dispatch_bytes_per_element;
  try {
    const Deployment d = make_deployment(mc.model, mc.system, o);
    const MemoryPlan mem = memory_plan(d, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(c.batch))), mc.context);
    return to_gb(mem.hbm_total - mem.free) / static_cast<double>(c.replica_chips);
  } catch (const InputError&) {
    return Cell{};
  }
}

}  // namespace

LayoutTables layouts_tables(const std::vector<Ranking>& rankings, const std::optional<UsdPerSecond>& price, bool batch_column,
                            const MemoryContext& mc) {
  Table t;
  t.columns = {{"batch", "batch"},
               {"rank", "#"},
               {"layout", "layout"},
               {"chips", "chips"},
               {"replica_chips", "chips/replica"},
               {"replicas", "replicas"},
               {"fits", "fits"},
               {"batch_per_replica", "batch/replica"},
               {"t_step_ms", "step ms"},
               {"t_operations_ms", "ops ms"},
               {"t_overhead_ms", "overhead ms"},
               {"t_comm_ms", "comm ms"},
               {"t_host_ms", "host ms"},
               {"governs", "governs"},
               {"tok_per_s_per_chip", "tok/s/chip"},
               {"tok_per_s_per_user", "tok/s/user"},
               {"cost_usd_per_mtok", "$/Mtok"},
               {"memory_gb", "GB/chip", 4},
               {"why_not", "why not"}};
  t.set_priority({"batch", "rank", "layout"}, 0);
  // Narrow tables keep the rank, the layout, the step and what it is ranked by.
  t.set_priority({"t_operations_ms", "t_overhead_ms", "t_comm_ms", "t_host_ms", "chips", "replicas", "replica_chips", "fits", "batch_per_replica", "governs",
                  "memory_gb", "why_not"},
                 2);
  Table unfit = t;
  for (const auto& [batch_asked, ranked] : rankings) {
    // Batch 0 asks for each replica's HBM-filling batch: no batch of its own, so null in JSON and
    // empty in CSV (review 6 M11: a program read "batch": 0 beside batch_per_replica 30656).
    const Cell batch = batch_asked > 0 ? Cell(batch_asked) : Cell{};
    int64_t rank = 0;
    for (const auto& c : ranked) {
      if (!c.fits) {
        unfit.add({batch, Cell{}, c.name, c.replica_chips * c.replicas, c.replica_chips, c.replicas, std::string("no"), Cell{}, Cell{}, Cell{}, Cell{},
                   Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, layout_memory_gb(mc, c), c.reason});
        continue;
      }
      // The cost cell is built in place: a named variant copied into the row trips GCC 12's
      // -Wmaybe-uninitialized false positive.
      t.add({batch, ++rank, c.name, c.replica_chips * c.replicas, c.replica_chips, c.replicas, std::string("yes"), static_cast<int64_t>(c.batch),
             to_ms(c.step.t_step), to_ms(c.step.t_operations), to_ms(c.step.t_overhead), to_ms(c.step.t_comm), to_ms(c.step.t_host), c.step.governs,
             c.tokens_per_s_per_chip, c.tokens_per_s_per_user, price ? Cell(price->value() / c.tokens_per_s_per_chip * 1e6) : Cell{},
             layout_memory_gb(mc, c), std::string()});
    }
  }
  std::vector<std::string> keys;
  for (const auto& col : t.columns) {
    if (col.key != "batch" || batch_column) keys.push_back(col.key);
  }
  std::vector<std::string> unfit_keys;
  for (const char* k : {"batch", "layout", "chips", "replica_chips", "replicas", "fits", "memory_gb", "why_not"}) {
    if (std::string(k) != "batch" || batch_column) unfit_keys.emplace_back(k);
  }
  return {layouts_keep_columns(t, keys), layouts_keep_columns(unfit, unfit_keys)};
}

std::string layouts_moe_routing(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const std::vector<Ranking>& rankings,
                                int64_t n_chips) {
  DeploymentOptions o = base;
  o.n_chips = n_chips;
  o.mechanisms.enabled = false;
  for (const auto& r : rankings) {
    for (const auto& c : r.ranked) {
      if (!c.fits) continue;
      o.mechanisms.enabled = true;
      o.mechanisms.layout = c.layout;
      o.n_chips = c.pp > 1 ? c.replica_chips / c.pp : c.replica_chips;
      try {
        const Deployment d = make_deployment(c.pp > 1 ? pipeline_stage_model(m, c.pp) : m, s, o);
        return moe_routing_text(d) + " (the first-ranked layout; each row at its own EP degree)";
      } catch (const InputError&) {
        o.mechanisms.enabled = false;
        o.n_chips = n_chips;
      }
      break;
    }
    break;
  }
  try {
    return moe_routing_text(make_deployment(m, s, o));
  } catch (const InputError&) {
    return "";
  }
}

void note_at_ranked_batch(ReplicaNote& note, const std::vector<Ranking>& rankings, const std::optional<UsdPerSecond>& price) {
  if (rankings.size() != 1 || note.pp > 1) return;
  const Ranking& r = rankings.front();
  if (r.batch == 0 && !note.fallback.empty()) return;
  const auto take = [&](ModePoint& p, const LayoutCandidate& c, int64_t batch) {
    p.batch = batch;
    p.memory_full_batch = 0;
    p.step.t_step = c.step.t_step;
    p.tokens_per_s_per_chip = TokensPerSecond(c.tokens_per_s_per_chip);
    p.tokens_per_s_per_user = TokensPerSecond(c.tokens_per_s_per_user);
    if (p.cost_per_token && price) p.cost_per_token = UsdPerToken(price->value() / c.tokens_per_s_per_chip);
  };
  // The best-ranked fitting single-pass row on replicas of `p`'s size.
  const auto as_ranked = [&](ModePoint& p) {
    for (const LayoutCandidate& c : r.ranked) {
      if (!c.fits || c.pp != 1 || c.replica_chips != p.n_chips || !(c.tokens_per_s_per_chip > 0)) continue;
      take(p, c, r.batch > 0 && c.replicas == 1 ? r.batch : static_cast<int64_t>(c.batch));
      return true;
    }
    return false;
  };
  if (r.batch == 0) {
    if (!note.pipeline.empty()) return;
    as_ranked(note.choice);
    if (note.runner_up) as_ranked(*note.runner_up);
    return;
  }
  // A stated batch: the line states the deployment rank 1 runs, all the chips, at that batch.
  const auto first = std::find_if(r.ranked.begin(), r.ranked.end(), [](const LayoutCandidate& c) { return c.fits && c.tokens_per_s_per_chip > 0; });
  if (first == r.ranked.end() || first->replica_chips * first->replicas != note.choice.n_chips) return;
  take(note.choice, *first, r.batch);
  note.choice.layout = first->name;
  // A runner-up chosen at another batch (the latency rule's memory-full cheapest) takes its
  // size's ranked row, or goes where the ranking has none: its figures would be at another
  // batch than the line states. One chosen at this batch (cheapest_serving_replica) stays.
  if (note.at_batch != r.batch && note.runner_up && (note.runner_up->n_chips == note.choice.n_chips || !as_ranked(*note.runner_up))) {
    note.runner_up.reset();
  }
  note.at_batch = r.batch;
}

}  // namespace chalk::cli
