// The defaults for what a serving, decode or prefill row leaves unstated (issue 32;
// docs/file-formats.md, "Defaults"): each fills a copy of the row and returns the sentence,
// with the value used and why, that the row lists among its assumptions. Training and
// whole-run rows take theirs in validate_training.cc and validate_run_cluster.cc.
#include <algorithm>
#include <cmath>

#include "chalk/base/error.h"
#include "chalk/engine/default_layout.h"
#include "chalk/serving/serving.h"
#include "chalk/sim/policy.h"
#include "chalk/sim/simulator.h"
#include "measurement_row.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {


/// The smallest replica that holds the row's model in its stated formats with one sequence
/// of `context` tokens (smallest_replica_chips: chalk decode's default chips; the layout
/// search lays it out unless the row states tp or ep).
int64_t default_replica_chips(const Measurement& r, const ModelSpec& published, const SystemSpec& sys, int64_t context) {
  ModelSpec m = published;
  for (const auto& [part, f] : weight_parts(r.weights, r.id + ": weights")) {
    const DType t = storage_format(f);
    if (part.empty() || part == "attention") m.weights.attention = t, m.weights.attention_bits = 0;
    if (part.empty() || part == "ffn") m.weights.dense_ffn = t, m.weights.dense_ffn_bits = 0;
    if (part.empty() || part == "experts") m.weights.experts = t, m.weights.experts_bits = 0;
    if (part == "embeddings") m.weights.embedding = t, m.weights.embedding_bits = 0;
  }
  DeploymentOptions o;
  o.kv = r.kv.empty() ? DType::bf16 : storage_format(r.kv);
  o.mechanisms.enabled = true;
  if (r.attention == "dp") o.mechanisms.layout.tp_attention = 1;
  if (r.tp) o.mechanisms.layout.tp_attention = *r.tp;
  if (r.ep) o.mechanisms.layout.ep = *r.ep;
  if (r.expert_tp) o.mechanisms.layout.tp_expert = *r.expert_tp;
  try {
    return smallest_replica_chips(m, sys, o, std::max<int64_t>(context, 1));
  } catch (const InputError& e) {
    // A stated layout no replica size suits (PaLM's 2D layouts, read as degrees alone): the
    // layout search's smallest replica, on which the stated degrees are then checked.
    const bool stated = r.tp || r.ep || r.expert_tp || r.attention == "dp";
    if (stated) {
      DeploymentOptions searched = o;
      searched.mechanisms.layout = ParallelLayout{};
      try {
        return smallest_replica_chips(m, sys, searched, std::max<int64_t>(context, 1));
      } catch (const InputError&) {
      }
    }
    throw InputError(r.id + ": chips", std::string("missing, and no default: ") + e.what());
  }
}

}  // namespace

std::vector<std::string> fill_unstated_lengths_and_batch(Measurement& r) {
  std::vector<std::string> filled;
  // Only the lengths the row's kind reads: a serving row both, a prefill row its prompt, a
  // decode row without a context both (its context is input + output / 2).
  const bool reads_input = r.kind == "serving" || r.kind == "prefill" || (r.kind == "decode" && !r.context);
  const bool reads_output = r.kind == "serving" || (r.kind == "decode" && !r.context);
  if (const DatasetLengths* ds = r.dataset.empty() ? nullptr : find_dataset(r.dataset)) {
    if (reads_input && !r.input_tokens && ds->input_tokens_mean) {
      r.input_tokens = std::llround(*ds->input_tokens_mean);
      filled.push_back("input_tokens: empty, " + std::to_string(*r.input_tokens) + ": the mean prompt of dataset " + ds->name + " (" + ds->source + ")");
    }
    if (reads_output && !r.output_tokens && ds->output_tokens_mean) {
      r.output_tokens = std::llround(*ds->output_tokens_mean);
      char published[32];
      std::snprintf(published, sizeof published, "%.6g", *ds->output_tokens_mean);
      filled.push_back("output_tokens: empty, " + std::to_string(*r.output_tokens) + ": the mean generated tokens of dataset " + ds->name + " (" +
                       published + "; " + ds->source + ")");
    }
  }
  if (r.kind == "serving" && r.batch.empty() && !r.request_rate_per_s &&
      (r.metric == "output_tok_per_s" || r.metric == "output_tok_per_s_per_chip" || r.metric == "total_tok_per_s_per_chip")) {
    r.batch = "max";
    filled.push_back("batch: empty, max: a throughput run's batch is what the engine admits under its KV budget (the KV cache left beside the weights)");
  }
  // A decode or prefill throughput row without a batch: the batch its engine admits, which
  // predict() computes on the deployment and names with its value (engine_admitted_batch).
  const bool decode_throughput = r.kind == "decode" && (r.metric == "output_tok_per_s" || r.metric == "output_tok_per_s_per_chip");
  const bool prefill_throughput = r.kind == "prefill" && (r.metric == "prefill_tok_per_s" || r.metric == "prefill_tok_per_s_per_chip");
  if ((decode_throughput || prefill_throughput) && r.batch.empty()) r.batch = "max";
  // A latency (a step, a request's time, an MFU) quoted with neither a batch nor a request
  // rate: one sequence, as a single-request benchmark runs it (llm-analysis and LLM-Viewer
  // default their batch to 1 the same way). A loaded run that leaves its batch out is
  // predicted too fast, and its row says why.
  if (r.batch.empty() && !r.request_rate_per_s) {
    r.batch = "1";
    r.batch_per = "replica";
    filled.push_back(std::string("batch: empty, 1 ") + (r.kind == "prefill" ? "prompt" : "sequence") + " per replica: a " + r.metric +
                     " quoted without a batch or a request rate is read as a single request's");
  }
  return filled;
}

std::string fill_unstated_chips(Measurement& r, const ModelSpec& model, const SystemSpec& sys) {
  const int64_t in = r.input_tokens.value_or(0), out = r.output_tokens.value_or(0);
  const int64_t context = r.kind == "prefill" ? in : r.kind == "decode" ? (r.context ? *r.context + out : in + out) : in + out;
  const int64_t replica = default_replica_chips(r, model, sys, context);
  const bool whole_system = r.metric == "output_tok_per_s" || r.metric == "prefill_tok_per_s";
  r.chips = replica * r.dp.value_or(1);
  return "chips: empty, " + std::to_string(*r.chips) + (r.dp && *r.dp > 1 ? " (" + std::to_string(*r.dp) + " replicas of " + std::to_string(replica) + ")" : "") +
         ": the smallest replica that holds the weights and one sequence of " + std::to_string(context) +
         " tokens (chalk decode's default chips, smallest_replica_chips" + (r.tp || r.ep || r.attention == "dp" ? ", at the stated layout)" : "; the layout search lays it out)") +
         (whole_system ? "; the row's " + r.metric + " is read as " + (r.dp && *r.dp > 1 ? "those replicas'" : "one replica's") +
                             " (a system of more replicas states chips or dp)"
                       : "");
}

double default_accepted_tokens(const Measurement& r, const ModelSpec& model, std::string& assumption) {
  const int64_t k = *r.draft_tokens;
  if (r.drafter.empty() || r.drafter == "mtp") {
    if (const auto a = published_mtp_acceptance(model)) {
      // The drafter of DeepSeek-V3 and R1 (HF model_type deepseek_v3) is its own MTP module
      // (SGLang's, vLLM's and TensorRT-LLM's MTP speculative decoding), whose acceptance
      // the V3 report publishes (serving.h); other models' MTP modules (GLM-4.5) have no such
      // figure. Kept per step: Leviathan et al. 2023 Eq. 1 (roofline.h).
      const double kept = expected_accepted_tokens(k, *a);
      assumption = "accepted_tokens: empty, " + row_num(kept) + " tokens kept per step: the model's MTP module as drafter, " + row_num(100 * *a) +
                   "% acceptance per draft (DeepSeek-V3 report section 5.4.3: 85-90% for the second token), " + "each of " + std::to_string(k) +
                   " drafts accepted independently: (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, Eq. 1)";
      return kept;
    }
  }
  const std::string family = model.architecture;
  if (!r.drafter.empty() && r.drafter != "mtp") {
    if (const DrafterAcceptance* d = find_drafter_row(r.drafter, family, model.name, k)) {
      const std::string measured = d->model == model.name ? "" : " (measured on " + d->model + ")";
      if (d->draft_tokens == k) {
        assumption = "accepted_tokens: empty, " + row_num(d->accepted_tokens) + " tokens kept per step: " + r.drafter + " drafting " + std::to_string(k) +
                     " for a " + family + " target" + measured + ", as published (data/drafters/acceptance.csv; " + d->source + ")";
        return d->accepted_tokens;
      }
      // Another draft length: the per-draft acceptance that row implies, at this row's
      // length (each draft accepted independently, Leviathan et al. 2023 Eq. 1).
      const double a = per_draft_acceptance(d->draft_tokens, d->accepted_tokens);
      const double kept = expected_accepted_tokens(k, a);
      assumption = "accepted_tokens: empty, " + row_num(kept) + " tokens kept per step: " + r.drafter + " for a " + family + " target" + measured +
                   " keeps " + row_num(d->accepted_tokens) + " at " + std::to_string(d->draft_tokens) + " drafts (data/drafters/acceptance.csv; " + d->source +
                   "), " + row_num(100 * a) + "% per draft; at " + std::to_string(k) + " drafts (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, Eq. 1)";
      return kept;
    }
  }
  std::string known;
  for (const auto& d : builtin_drafters()) {
    const std::string pair = d.drafter + " on " + d.family;
    if (known.find(pair) == std::string::npos) known += (known.empty() ? "" : ", ") + pair;
  }
  const std::string what = r.drafter.empty() || r.drafter == "mtp" ? "the model's MTP module" : "drafter " + r.drafter + " on a " + family + " target";
  throw InputError(r.id + ": accepted_tokens", "missing; draft_tokens " + std::to_string(k) + " needs the measured tokens kept per step: chalk has no published acceptance for " +
                                                   what + " (it has DeepSeek-V3's and R1's MTP module, and " + known + ": data/drafters/acceptance.csv)");
}

double engine_admitted_batch(const RowPlan& p, const Deployment& d, std::string& why) {
  const bool known = is_serving_engine(p.engine);
  sim::EnginePolicy pol = sim::engine_policy(known ? p.engine : "vllm");
  if (p.max_sequences > 0) pol.max_sequences = p.max_sequences;            // the row's knobs, else the engine's
  if (p.max_batched_tokens > 0) pol.max_batched_tokens = p.max_batched_tokens;
  const bool prefill = p.target == Target::prefill_s || p.target == Target::prefill_tokens_per_s;
  const int64_t held = prefill ? p.prompt + p.prefix : p.context;  // KV tokens one sequence holds
  const int64_t blocks = sim::kv_blocks_available(d, pol.block_size);
  const int64_t per_sequence = std::max<int64_t>(1, (held + pol.block_size - 1) / pol.block_size);
  const int64_t by_kv = blocks / per_sequence;
  if (by_kv < 1) {
    throw InputError("memory", "no sequence of " + std::to_string(held) + " tokens fits: " + std::to_string(blocks) + " KV blocks of " +
                                   std::to_string(pol.block_size) + " tokens beside the weights");
  }
  int64_t batch = std::min(by_kv, pol.max_sequences);
  why = std::to_string(blocks) + " KV blocks of " + std::to_string(pol.block_size) + " tokens / " + std::to_string(per_sequence) + " per sequence of " +
        std::to_string(held) + " tokens = " + std::to_string(by_kv) + ", max_sequences " + std::to_string(pol.max_sequences);
  if (prefill) {
    const int64_t by_budget = std::max<int64_t>(1, pol.max_batched_tokens / std::max<int64_t>(1, p.prompt));
    batch = std::min(batch, by_budget);
    why += ", token budget max_batched_tokens " + std::to_string(pol.max_batched_tokens) + " / prompt " + std::to_string(p.prompt) + " = " +
           std::to_string(by_budget);
  }
  why += " (" + pol.name + "'s scheduler" + (known ? "" : ", vLLM's defaults for engine '" + p.engine + "'") + ", as chalk simulate admits requests)";
  return static_cast<double>(batch);
}

}  // namespace chalk::detail
