// Every number explains itself (issue 18): the replica's HBM by component, as
// memory_plan computes it and `chalk decode --json` reports it ("memory", each row's
// max_batch_at_context), and as the page's memory view draws it with the limit marked.
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "chalk/engine/explain.h"

namespace chalk {
namespace {

std::string memory_chip_source(const Deployment& d) {
  const std::string& s = d.system.chip_source.empty() ? d.system.source : d.system.chip_source;
  return fmt::format("{} datasheet ({}{})", d.system.chip.name, s.empty() ? "chalk hardware" : s, d.system.date.empty() ? "" : ", " + d.system.date);
}

}  // namespace

std::vector<Explanation> explain_memory(const Deployment& d, int64_t batch, int64_t context) {
  const MemoryPlan m = memory_plan(d, batch, context);
  const MemoryPlan one = memory_plan(d, 1, context);  // one sequence's KV, replicas included
  const double n = static_cast<double>(d.n_chips);
  const double cap_gb = to_gb(d.system.chip.hbm_capacity);
  const double kv_seq_gb = to_gb(one.kv_cache);
  const double B = static_cast<double>(batch);
  const auto& N = explain_number;
  const ExplainInput chips{"n", "chips in the replica", n, "chips", "--chips, or the smallest replica that holds the model"};
  std::vector<Explanation> out;
  out.push_back({"hbm_total_gb", "HBM of the replica: the limit the memory view marks", "HBM = n x capacity per chip",
                 {chips, {"capacity", "HBM per chip", cap_gb, "GB", memory_chip_source(d)}},
                 fmt::format("{} x {} GB = {} GB", N(n), N(cap_gb), N(to_gb(m.hbm_total))), to_gb(m.hbm_total), "GB",
                 "lecture 19:52-21:51 (memory capacity); docs/formulas.md 5 (memory fit)", ""});
  out.push_back({"weights_gb", "bytes of every weight the replica stores",
                 d.mechanisms.enabled ? "weights = sum over tensors of parameters x bytes per parameter, with the copies the layout keeps "
                                        "(data-parallel attention weights)"
                                      : "weights = sum over tensors of parameters x bytes per parameter",
                 {{"N_total", "parameters", d.params.total() / 1e9, "billion", fmt::format("{}'s config", d.model.name)},
                  {"b_w", "mean bytes per stored weight", d.weight_bytes_total.value() / std::max(1.0, d.params.total()), "bytes",
                   "--weights, or the checkpoint's format (block scales included)"}},
                 fmt::format("{} x 1e9 x {} bytes = {} GB{}", N(d.params.total() / 1e9),
                             N(d.weight_bytes_total.value() / std::max(1.0, d.params.total())), N(to_gb(d.weight_bytes_total)),
                             std::abs(m.weights.value() - d.weight_bytes_total.value()) > 1e-3 * d.weight_bytes_total.value() ? fmt::format("; stored with the layout's copies: {} GB", N(to_gb(m.weights))) : ""),
                 to_gb(m.weights), "GB", "docs/formulas.md 1.1 (parameters) and 5 (memory fit); lecture 19:52", ""});
  out.push_back({"kv_cache_gb", "the batch's KV cache at this context", "KV = B x (KV bytes of one sequence at S)",
                 {{"B", "batch", B, "sequences", "--batch"},
                  {"KV/seq", "KV bytes of one sequence at context S, over all layers (and the copies tensor parallelism keeps)", kv_seq_gb, "GB",
                   fmt::format("kv_bytes_per_token at S = {} (--context)", context)}},
                 fmt::format("{} x {} GB = {} GB", N(B), N(kv_seq_gb), N(to_gb(m.kv_cache))), to_gb(m.kv_cache), "GB",
                 "lecture 11:00, 19:52-21:51; docs/formulas.md 5 (memory fit)", ""});
  out.push_back({"reserve_gb", "HBM kept back for activations and the runtime", "reserve = f_reserve x HBM",
                 {{"f_reserve", "fraction of HBM reserved", d.memory_reserve_fraction, "fraction", "vLLM's gpu_memory_utilization 0.9 (roofline.h)"},
                  {"HBM", "HBM of the replica", to_gb(m.hbm_total), "GB", "hbm_total_gb"}},
                 fmt::format("{} x {} GB = {} GB", N(d.memory_reserve_fraction), N(to_gb(m.hbm_total)), N(to_gb(m.reserve))), to_gb(m.reserve), "GB",
                 "roofline.h (memory_reserve_fraction)", ""});
  if (one.max_batch != INT64_MAX) {
    const double room = to_gb(m.hbm_total - m.weights - m.reserve);
    out.push_back({"max_batch_at_context", "the largest batch whose KV cache fits beside the weights and the reserve",
                   "B_max = floor((HBM - weights - reserve) / KV/seq)",
                   {{"HBM", "HBM of the replica", to_gb(m.hbm_total), "GB", "hbm_total_gb"},
                    {"weights", "stored weights", to_gb(m.weights), "GB", "weights_gb"},
                    {"reserve", "reserve", to_gb(m.reserve), "GB", "reserve_gb"},
                    {"KV/seq", "KV bytes of one sequence at S", kv_seq_gb, "GB", "kv_cache_gb"}},
                   fmt::format("floor(({} - {} - {}) GB / {} GB) = {}{}", N(to_gb(m.hbm_total)), N(to_gb(m.weights)), N(to_gb(m.reserve)), N(kv_seq_gb),
                               one.max_batch, room < 0 ? " (the weights do not fit)" : ""),
                   static_cast<double>(one.max_batch), "sequences", "lecture 19:52-21:51 (how many users fit)",
                   d.mechanisms.enabled ? "sequences are whole: each data-parallel group holds its own, so the figure is a multiple of the groups" : ""});
  }
  return out;
}

}  // namespace chalk
