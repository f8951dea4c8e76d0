// Reading a measurement row's fields into chalk's inputs (docs/accuracy.md, "How a row is
// read"). Each input comes from its own column; an empty column takes chalk's default,
// which is printed among the row's assumptions. No free text is read. plan_row runs the
// steps below in order: defaults for what the row leaves unstated (validate_defaults.cc),
// chips, formats, layout, speculative decoding, batch and lengths, the target its metric
// names, and the engine's scheduling policy.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/roofline.h"
#include "measurement_row.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

void apply_ffn_layout(const std::string& l, int64_t chips, ParallelLayout& L) {
  if (l == "ws2d") L.tp_attention = L.tp_ffn = chips;
  if (l == "wg") L.weight_gathered = true;
}

bool has_moe(const ModelSpec& model) {
  bool moe = false;
  for (const auto& g : model.groups) moe = moe || g.ffn.kind == FfnKind::moe;
  return moe;
}

/// Chips: a replica of chips / dp; run totals scale by dp. Padded heads.
void plan_chips(const Measurement& r, RowPlan& p) {
  const int64_t dp = r.dp.value_or(1);
  p.chips = *r.chips / dp;
  if (dp > 1) p.notes.push_back(std::to_string(dp) + " independent replicas of " + std::to_string(p.chips) + " chips; each predicted alone");
  // A serving replica's pipeline is not modelled here (pp is a training row's column): its
  // chips are priced at the stated tp, which for a throughput row is what a pipeline of full
  // microbatches sustains per chip (docs/formulas.md, "Pipelines in inference"), less the hops.
  if (r.pp && *r.pp > 1) {
    p.notes.push_back("pp " + std::to_string(*r.pp) + ": not read (a serving replica has no pipeline here; its " + std::to_string(p.chips) +
                      " chips are priced at the stated layout)");
  }
  if (r.padded_heads) {
    p.heads_padded_to = *r.padded_heads;
    p.notes.push_back("attention heads padded to " + std::to_string(*r.padded_heads) + " for partitioning: their projections are computed and stored");
  }
}

/// Formats: weights (a format, or one per part), KV cache, compute.
void plan_formats(const Measurement& r, const ModelSpec& model, RowPlan& p) {
  for (const auto& [part, f] : weight_parts(r.weights, r.id + ": weights")) {
    const DType t = storage_format(f);
    if (part.empty() || part == "attention") p.w_attention = t;
    if (part.empty() || part == "ffn") p.w_ffn = t;
    if (part.empty() || part == "experts") p.w_experts = t;
    if (part == "embeddings") p.w_embedding = t;
  }
  if (r.weights.empty()) {
    const auto& w = model.weights;
    p.assumptions.push_back(std::string("weights: empty, the checkpoint's own (attention ") + std::string(to_string(w.attention)) + ", FFN " +
                            std::string(to_string(w.dense_ffn)) + (has_moe(model) ? ", experts " + std::string(to_string(w.experts)) : "") + ")");
  }
  if (r.kv.empty()) {
    p.kv = DType::bf16;
    p.assumptions.push_back("kv: empty, bf16 (the engines' default KV-cache format)");
  } else {
    p.kv = storage_format(r.kv);
  }
  if (!r.compute.empty()) {
    p.notes.push_back("compute " + r.compute + " not modelled for serving: each matmul runs at its weights' format");
  }
}

/// Layout: the stated degrees, FFN layout, KV split and expert traffic formats; the derived
/// layout's degrees for the columns left empty, each named.
void plan_layout(const Measurement& r, const ModelSpec& model, RowPlan& p) {
  if (r.attention == "dp" && r.tp && *r.tp > 1) {
    throw InputError(r.id + ": tp", "tp " + std::to_string(*r.tp) + " with attention dp: tp is attention's tensor-parallel degree, 1 under dp attention");
  }
  const bool moe = has_moe(model);
  const auto& attn = model.groups.front().attention;
  const bool single_kv = attn.kind == AttentionKind::mla || attn.n_kv_heads == 1;
  ParallelLayout& L = p.layout;
  if (r.attention == "dp") L.tp_attention = 1;
  if (r.tp) L.tp_attention = *r.tp;
  if (r.ep) L.ep = *r.ep;
  if (r.expert_tp) L.tp_expert = *r.expert_tp;
  apply_ffn_layout(r.ffn_layout, p.chips, L);
  if (r.ffn_layout == "ws2d") {
    p.notes.push_back("ffn_layout ws2d: read as tensor parallel over all " + std::to_string(p.chips) +
                      " chips (an all-reduce per attention and FFN block); the 2D layout's smaller traffic is not modelled");
  }
  if (r.kv_split == "batch") L.kv_sharded_by_batch = true;
  p.kv_split_heads = r.kv_split == "heads";
  if (r.ep_dispatcher == "alltoall") {
    throw InputError(r.id + ": ep_dispatcher", "alltoall is modelled for training rows; a serving engine's expert traffic is DeepEP's "
                                               "(one copy per remote domain), leave the column empty or write deepep");
  }
  if (r.ep_overlap == "yes") {
    throw InputError(r.id + ": ep_overlap", "Megatron-Core's EP overlap is a training schedule; a serving row states two_batch_overlap");
  }
  if (!r.sequence_parallel.empty()) {
    throw InputError(r.id + ": sequence_parallel", "'" + r.sequence_parallel + "' is a training plan's setting; a serving row leaves it empty");
  }
  if (!r.fp8_recipe.empty()) {
    throw InputError(r.id + ": fp8_recipe", "'" + r.fp8_recipe + "' is a training recipe; a serving row states its formats in weights, kv and compute");
  }
  if (!r.compile.empty()) {
    throw InputError(r.id + ": compile", "'" + r.compile + "' says whether a torchtitan training run compiles its blocks; a serving row leaves it empty");
  }
  if (r.two_batch_overlap == "yes") L.overlap_micro_batches = true;
  p.two_batch_overlap_stated = !r.two_batch_overlap.empty();
  p.expert_balance = parse_expert_balance(r.eplb, r.id + ": eplb");
  if (!moe && !r.eplb.empty()) throw InputError(r.id + ": eplb", "'" + r.eplb + "' places routed experts; " + model.name + " has none (leave it empty)");
  if (!r.dispatch.empty()) L.dispatch_bytes_per_element = bytes_per_element(storage_format(r.dispatch));
  if (!r.combine.empty()) L.combine_bytes_per_element = bytes_per_element(storage_format(r.combine));
  p.layout_stated = r.tp || r.ep || r.expert_tp || !r.attention.empty() || !r.ffn_layout.empty() || p.chips == 1;
  if (!p.layout_stated) {
    p.assumptions.push_back("layout: tp, ep, expert_tp and attention empty: tensor parallel over the chips within the scale-up domain, experts over all chips");
  } else if (p.chips > 1) {
    // A layout stated in part: the columns left empty take the derived layout's degrees.
    if (!r.tp && r.attention.empty() && r.ffn_layout.empty()) {
      p.assumptions.push_back("tp: empty, attention tensor parallel over the chips within the scale-up domain");
    }
    if (moe && !r.ep && !r.expert_tp) {
      p.assumptions.push_back("ep, expert_tp: empty, the routed experts over all " + std::to_string(p.chips) + " chips");
    }
  }
  if (single_kv && p.chips > 1 && r.kind != "prefill" && r.attention.empty() && r.kv_split.empty()) {
    p.assumptions.push_back(std::string("attention and kv_split empty: heads split over the tensor-parallel chips, the ") +
                            (attn.kind == AttentionKind::mla ? "MLA latent" : "single KV head") +
                            " on each of them unless it does not fit (then split by sequence)");
  }
  if (moe && p.chips > 1) {
    if (r.dispatch.empty()) p.assumptions.push_back("dispatch: empty, bf16 (expert-parallel dispatch at the activations' format)");
    if (r.combine.empty()) p.assumptions.push_back("combine: empty, bf16");
    if (r.two_batch_overlap.empty()) p.assumptions.push_back("two_batch_overlap: empty, no");
    if (r.eplb.empty()) p.assumptions.push_back("eplb: empty, uniform routing (the lower bound on expert imbalance)");
  }
  p.prefill_layout = L;
  if (!r.prefill_ffn_layout.empty()) {
    p.prefill_layout.weight_gathered = false;
    apply_ffn_layout(r.prefill_ffn_layout, p.chips, p.prefill_layout);
  }
}

/// Speculative decoding: drafts per step and the tokens kept (stated, or the drafter's
/// published acceptance: default_accepted_tokens).
void plan_speculative(const Measurement& r, const ModelSpec& model, RowPlan& p) {
  if (r.kind == "prefill") return;
  if (!r.draft_tokens) {
    p.assumptions.push_back("draft_tokens: empty, 0 (no speculative or MTP drafts)");
  } else if (*r.draft_tokens > 0) {
    p.mtp_tokens = 1 + static_cast<double>(*r.draft_tokens);
    if (r.accepted_tokens) {
      p.mtp_accepted = *r.accepted_tokens;
    } else {
      std::string assumption;
      p.mtp_accepted = default_accepted_tokens(r, model, assumption);
      p.assumptions.push_back(assumption);
    }
  }
  if (r.attention_draft_tokens && *r.attention_draft_tokens > 0) {
    p.attention_tokens = 1 + static_cast<double>(*r.attention_draft_tokens);
    p.notes.push_back("attention does the work of " + row_num(p.attention_tokens) + " query tokens per sequence, matmuls of " + row_num(p.mtp_tokens) +
                      " (attention_draft_tokens)");
  }
}

/// Batch (sequences of a replica) and lengths, within the ranges every front end takes.
void plan_batch_and_lengths(const Measurement& r, RowPlan& p) {
  const std::string at = r.id + ": ";
  const int64_t dp = r.dp.value_or(1);
  const double replica_chips = static_cast<double>(p.chips);
  if (r.batch == "max") {
    p.batch_from_capacity = true;
    if (r.requests) p.requests_cap = static_cast<double>(*r.requests) / static_cast<double>(dp);
  } else if (!r.batch.empty()) {
    const double b = std::stod(r.batch);
    p.batch = r.batch_per == "chip" ? b * replica_chips : r.batch_per == "run" ? b / static_cast<double>(dp) : b;
    if (r.batch_per == "chip") p.notes.push_back("batch " + r.batch + " sequences per chip x " + std::to_string(p.chips) + " chips");
    // The range every front end takes (the CLI's --batch): beyond it a step is no run.
    if (p.batch > static_cast<double>(kMaxStepBatch)) {
      throw InputError(at + "batch", "expected at most " + std::to_string(kMaxStepBatch) + " sequences per replica (chalk decode's --batch range), got " +
                                         r.batch + (r.batch_per == "replica" ? "" : " per " + r.batch_per + " = " + row_num(p.batch) + " per replica"));
    }
  }
  if (r.prefill_batch && *r.prefill_batch > kMaxStepBatch) {
    throw InputError(at + "prefill_batch", "expected at most " + std::to_string(kMaxStepBatch) + " prompts, got " + std::to_string(*r.prefill_batch));
  }
  // Token counts within the CLI's --context range (each front end's limit).
  for (const auto& [column, v] : {std::pair{"context", r.context}, std::pair{"input_tokens", r.input_tokens}, std::pair{"output_tokens", r.output_tokens}}) {
    if (v && *v > kMaxContextTokens) {
      throw InputError(at + column, "expected at most " + std::to_string(kMaxContextTokens) + " tokens (chalk decode's --context range), got " + std::to_string(*v));
    }
  }
  const int64_t cached = r.cached_tokens.value_or(0);
  if (r.input_tokens) {
    p.prompt = *r.input_tokens - cached;
    p.prefix = cached;
    if (cached > 0) p.notes.push_back(std::to_string(cached) + " of " + std::to_string(*r.input_tokens) + " input tokens served from a prefix cache");
  }
  if (r.output_tokens) p.output = *r.output_tokens;
  // Steady-state batches hold long requests longer: a dataset whose per-sample lengths were
  // read gives the running sequences' mean context (docs/formulas.md, "Running sequences are
  // length-biased").
  const DatasetLengths* ds = r.dataset.empty() ? nullptr : find_dataset(r.dataset);
  if (ds && (ds->output_tokens_cv || ds->input_output_weight) && r.output_tokens && p.output > 0) {
    const double prompt = static_cast<double>(p.prompt);
    p.running_context = running_context_mean(prompt, static_cast<double>(p.output), ds);
    p.running_reserved = 2 * p.running_context - ds->input_output_weight.value_or(1.0) * prompt;
  }
}

/// What the metric names: the target predicted, its unit, and whether throughput counts the
/// replica's chips or the whole run's.
void plan_target(const Measurement& r, bool simulated, bool latency_metric, RowPlan& p) {
  const int64_t dp = r.dp.value_or(1);
  const bool per_chip = r.metric.size() > 9 && r.metric.substr(r.metric.size() - 9) == "_per_chip";
  p.per_chips = per_chip ? 1 : static_cast<double>(*r.chips);
  const std::string& k = r.kind;
  const std::string& m = r.metric;
  if (k == "decode") {
    if (r.context) {
      p.context = *r.context;
    } else if (r.output_tokens) {
      p.context = *r.input_tokens + *r.output_tokens / 2;
      p.notes.push_back("context: the mean over the generation, input_tokens + output_tokens / 2 = " + std::to_string(p.context));
    } else {
      p.context = *r.input_tokens;
      p.notes.push_back("context: input_tokens (" + std::to_string(p.context) + ")");
    }
    if (m == "step_ms" || m == "itl_ms" || m == "tpot_ms") {
      p.target = Target::decode_step_s;
      p.to_unit = 1e3;
      p.per_kept_token = m == "tpot_ms";
    } else if (m == "decode_s") {
      p.target = Target::decode_total_s;
    } else if (m == "tok_per_s_per_user") {
      p.target = Target::per_user_tokens_per_s;
    } else {
      p.target = Target::decode_tokens_per_s;
    }
  } else if (k == "prefill") {
    if (m == "prefill_ms" || m == "ttft_ms") {
      p.target = Target::prefill_s;
      p.to_unit = 1e3;
    } else {
      p.target = Target::prefill_tokens_per_s;
    }
  } else if (simulated) {
    p.target = Target::serving_simulated;
    // dp independent replicas share the arrivals: each is simulated alone at its share.
    p.request_rate_per_s = r.request_rate_per_s.value_or(0) / static_cast<double>(dp);
    p.requests = r.requests ? (*r.requests + dp - 1) / dp : 0;
    p.constant_arrivals = r.arrivals == "constant";
    if (r.request_rate_per_s && r.arrivals.empty()) p.assumptions.push_back("arrivals: empty, poisson (exponential gaps)");
    if (dp > 1 && r.request_rate_per_s) {
      p.notes.push_back("request rate " + row_num(*r.request_rate_per_s) + "/s over " + std::to_string(dp) + " replicas: " + row_num(p.request_rate_per_s) +
                        "/s each");
    }
    p.engine = r.engine;
    p.metric = m;
    if (m == "ttft_ms" || m == "tpot_ms" || m == "itl_ms") p.to_unit = 1e3;
    p.count_input_tokens = m == "total_tok_per_s_per_chip";
    p.assumptions.push_back(m == "e2e_s" || latency_metric ? "statistic: the mean over the simulated requests (the format has no column for it)"
                                                           : "throughput: tokens finished / (last finish - first arrival)");
  } else {  // serving
    if (m == "e2e_s" || m == "mfu_pct") {
      p.decode_batch = p.batch;
      if (r.prefill_batch) p.batch = static_cast<double>(*r.prefill_batch) / static_cast<double>(dp);
      p.target = m == "e2e_s" ? Target::serving_latency_s : Target::serving_mfu;
      if (m == "mfu_pct") p.to_unit = 100;
    } else {
      p.target = Target::serving_tokens_per_s;
      p.count_input_tokens = m == "total_tok_per_s_per_chip";
    }
  }
}

}  // namespace

Mapped plan_row(const Measurement& row) {
  if (row.kind == "microbenchmark") {
    return {std::nullopt, RowStatus::calibration, "microbenchmark: a calibration input (efficiencies), never scored"};
  }
  // Defaults for what the row leaves unstated (docs/file-formats.md, "Defaults"): filled
  // into a copy, each named among the row's assumptions.
  Measurement r = row;
  std::vector<std::string> filled = fill_unstated_lengths_and_batch(r);
  // Serving at a request rate, or latencies of a loaded engine: through the simulator.
  const bool latency_metric = r.metric == "ttft_ms" || r.metric == "tpot_ms" || r.metric == "itl_ms" || r.metric == "tok_per_s_per_user";
  const bool simulated = r.kind == "serving" && (r.request_rate_per_s.has_value() || latency_metric);
  if (r.kind == "serving" && r.batch.empty() && !r.request_rate_per_s) {
    return {std::nullopt, RowStatus::not_modelled, "serving without a batch or a request rate: not modelled"};
  }
  if (simulated && r.metric == "mfu_pct") {
    return {std::nullopt, RowStatus::not_modelled, "mfu_pct of a serving run at a request rate: not modelled"};
  }

  RowPlan p;
  p.engine = r.engine;
  p.model = resolve_model(r);
  p.hardware = resolve_system(r);
  const ModelSpec model = load_row_model(p.model);
  const SystemSpec sys = load_row_system(p.hardware);  // read here so a bad hardware file is the row's error
  if (!r.chips) filled.push_back(fill_unstated_chips(r, model, sys));
  p.assumptions.insert(p.assumptions.end(), filled.begin(), filled.end());

  plan_chips(r, p);
  plan_formats(r, model, p);
  plan_layout(r, model, p);
  plan_speculative(r, model, p);
  plan_batch_and_lengths(r, p);
  p.batch_unstated = row.batch.empty() && (r.kind == "decode" || r.kind == "prefill") && p.batch_from_capacity;
  plan_target(r, simulated, latency_metric, p);
  plan_engine_policy(r, p);
  for (std::size_t i = 0; i < r.assumed.size(); ++i) {
    p.assumptions.push_back(r.assumed[i] + " " + r.assumed_values[i] + ": filled in by the row's author, not stated by the source (see its notes)");
  }
  return {p, RowStatus::predicted, ""};
}

}  // namespace chalk::detail
