// Parallel layout: a measurement row's `parallelism` field read as tensor, expert and data
// parallel degrees, for decode and prefill apart (docs/accuracy.md, "Mapping rules").
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "chalk/engine/overhead.h"
#include "validate_internal.h"
#include "validate_map_rules.h"

namespace chalk::detail {
namespace {

std::optional<int64_t> degree(const std::string& clause, const char* prefix) {
  std::smatch m;
  const std::regex re(std::string(prefix) + "([0-9]+)");
  if (std::regex_search(clause, m, re)) return std::stoll(m[1]);
  return std::nullopt;
}

}  // namespace

/// Layout terms from `parallelism`; returns whether any degree or layout was stated.
bool read_layout(const std::string& text, int64_t chips, RowPlan& p) {
  const std::string l = lower(text);
  bool stated = false;
  for (const auto& c : clauses(l)) {
    const bool prefill_only = has(c, "prefill") && !has(c, "decode");
    const bool decode_only = has(c, "decode") && !has(c, "prefill");
    std::vector<ParallelLayout*> targets;
    if (!decode_only) targets.push_back(&p.prefill_layout);
    if (!prefill_only) targets.push_back(&p.layout);
    const auto tp = degree(c, "tp"), ep = degree(c, "ep"), dp = degree(c, "dp");
    const bool dp_word = dp || has(c, "dp ");
    const bool attn = has(c, "attention") || has(c, "mla");
    const bool shared = has(c, "shared") || has(c, "dense ffn");
    const bool experts = !shared && (has(c, "moe") || has(c, "expert"));
    for (auto* t : targets) {
      if (attn && dp_word) t->tp_attention = 1, stated = true;
      if (attn && !dp_word && tp) t->tp_attention = *tp, stated = true;
      if (shared && dp_word) t->tp_ffn = 1, stated = true;
      if (shared && !dp_word && tp) t->tp_ffn = *tp, stated = true;
      if (experts && tp) t->tp_expert = *tp, stated = true;
      if (ep && !shared) t->ep = *ep, stated = true;
      if (!attn && !shared && !experts && tp) t->tp_attention = t->tp_ffn = *tp, stated = true;
      if (has(c, "ws 2d") || has(c, "weight-stationary")) t->tp_attention = t->tp_ffn = chips, stated = true;
      if (has(c, "wg xyz") || has(c, "weight-gathered")) t->weight_gathered = true, stated = true;
      if ((has(c, "multiquery") || has(c, "kv")) && has(c, "by batch")) t->kv_sharded_by_batch = true;
      if (has(c, "overlap") && (has(c, "batch") || has(c, "micro") || has(c, "pipeline"))) t->overlap_micro_batches = true;
    }
  }
  if (has(l, "ws 2d") || has(l, "weight-stationary")) {
    p.notes.push_back("weight-stationary 2D read as tensor parallel over all " + std::to_string(chips) +
                      " chips (an all-reduce per attention and FFN block); the 2D layout's smaller traffic is not modelled");
  }
  if (has(l, "eplb")) p.notes.push_back("EPLB not modelled: routed load is uniform top-k, a lower bound on imbalance");
  return stated;
}

}  // namespace chalk::detail
