// Reading a measurement row's fields into chalk's inputs (docs/accuracy.md, "How a row is
// read"). Each input comes from its own column; an empty column takes chalk's default,
// which is printed among the row's assumptions. No free text is read.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "chalk/base/error.h"
#include "chalk/engine/default_layout.h"
#include "chalk/engine/roofline.h"
#include "chalk/io/embedded.h"
#include "chalk/io/io.h"
#include "measurement_row.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, v == std::floor(v) && std::fabs(v) < 1e15 ? "%.0f" : "%.4g", v);
  return buf;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

DType format(const std::string& f) {
  static const std::pair<const char*, DType> t[] = {{"bf16", DType::bf16}, {"fp16", DType::fp16},   {"fp8", DType::fp8}, {"int8", DType::int8},
                                                    {"int4", DType::int4}, {"nvfp4", DType::nvfp4}, {"mxfp4", DType::mxfp4}};
  for (const auto& [name, d] : t) {
    if (f == name) return d;
  }
  throw InputError("format", "'" + f + "' is not a storage format");  // unreachable: the parser checked
}

constexpr std::string_view kBuiltin = "builtin:";

/// A built-in name, a file (relative to the CSV), or an HF repo id whose name is built in.
/// The built-in rows' relative paths name files compiled in beside them
/// (data/measurements/models/): "builtin:measurements/<path>".
std::string resolve(const std::string& text, const std::string& base_dir, const std::vector<std::string>& builtin,
                    const std::string& field, const char* what) {
  if (std::find(builtin.begin(), builtin.end(), text) != builtin.end()) return text;
  if (base_dir.rfind(kBuiltin, 0) == 0) {
    const std::string key = base_dir.substr(kBuiltin.size()) + "/" + text;
    if (chalk::detail::embedded_file(key)) return std::string(kBuiltin) + key;
  }
  namespace fs = std::filesystem;
  const fs::path p = fs::path(text).is_absolute() || base_dir.empty() ? fs::path(text) : fs::path(base_dir) / text;
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p.string();
  if (const auto slash = text.find('/'); slash != std::string::npos && text.find('/', slash + 1) == std::string::npos) {
    const std::string name = lower(text.substr(slash + 1));
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end()) return name;
  }
  throw InputError(field, "'" + text + "' is neither a built-in " + what + " (chalk " + (std::string(what) == "model" ? "models" : "hardware") +
                              ") nor a file" + (base_dir.empty() ? "" : " under " + base_dir));
}

}  // namespace

ModelSpec load_row_model(const std::string& resolved) {
  if (resolved.rfind(kBuiltin, 0) == 0) {
    const std::string key = resolved.substr(kBuiltin.size());
    return model_from_native(*chalk::detail::embedded_file(key), "data/" + key);
  }
  return load_model(resolved);
}

SystemSpec load_row_system(const std::string& resolved) {
  if (resolved.rfind(kBuiltin, 0) == 0) {
    const std::string key = resolved.substr(kBuiltin.size());
    return system_from_json(*chalk::detail::embedded_file(key), "data/" + key);
  }
  return load_system(resolved);
}

std::string resolve_system(const Measurement& r) {
  return resolve(r.hardware, r.base_dir, builtin_system_names(), r.id + ": hardware", "system");
}

std::string resolve_model(const Measurement& r) {
  return resolve(r.model, r.base_dir, builtin_model_names(), r.id + ": model", "model");
}

namespace {

void apply_ffn_layout(const std::string& l, int64_t chips, ParallelLayout& L) {
  if (l == "ws2d") L.tp_attention = L.tp_ffn = chips;
  if (l == "wg") L.weight_gathered = true;
}

}  // namespace

std::string metric_unit(const std::string& metric) {
  static const std::pair<const char*, const char*> t[] = {
      {"step_ms", "ms"},          {"tpot_ms", "ms"},          {"itl_ms", "ms"},         {"ttft_ms", "ms"},
      {"prefill_ms", "ms"},       {"e2e_s", "s"},             {"decode_s", "s"},        {"step_s", "s"},
      {"output_tok_per_s", "tok/s"}, {"output_tok_per_s_per_chip", "tok/s/chip"}, {"total_tok_per_s_per_chip", "tok/s/chip"},
      {"tok_per_s_per_user", "tok/s/user"}, {"prefill_tok_per_s", "tok/s"}, {"prefill_tok_per_s_per_chip", "tok/s/chip"},
      {"mfu_pct", "%"},           {"tflop_per_s_per_chip", "TFLOP/s/chip"}, {"train_tok_per_s", "tok/s"},
      {"train_tok_per_s_per_chip", "tok/s/chip"}, {"gpu_hours", "chip-hours"}, {"wall_hours", "h"},
      {"hbm_gb_per_s", "GB/s"},   {"busbw_gb_per_s", "GB/s"}, {"latency_us", "us"},     {"bandwidth_gb_per_s", "GB/s"}};
  for (const auto& [m, u] : t) {
    if (metric == m) return u;
  }
  return "";
}

namespace {

/// Accepted tokens per step of DeepSeek-V3's multi-token-prediction module as its drafter:
/// "the acceptance rate of the second token prediction ranges between 85% and 90%"
/// (DeepSeek-V3 technical report, arXiv 2412.19437, section 5.4.3); the midpoint.
constexpr double kDeepSeekMtpAcceptance = 0.875;

/// Tokens kept per step with `k` drafts each accepted with probability `a`, independently
/// and in order: (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, "Fast Inference from
/// Transformers via Speculative Decoding", Eq. 1). k = 1, a = 0.875: 1.875.
double expected_kept_tokens(double a, int64_t k) { return (1 - std::pow(a, static_cast<double>(k + 1))) / (1 - a); }

/// The smallest replica that holds the row's model in its stated formats with one sequence
/// of `context` tokens (smallest_replica_chips: chalk decode's default chips; the layout
/// search lays it out unless the row states tp or ep).
int64_t default_replica_chips(const Measurement& r, const ModelSpec& published, const SystemSpec& sys, int64_t context) {
  ModelSpec m = published;
  for (const auto& [part, f] : weight_parts(r.weights, r.id + ": weights")) {
    const DType t = format(f);
    if (part.empty() || part == "attention") m.weights.attention = t, m.weights.attention_bits = 0;
    if (part.empty() || part == "ffn") m.weights.dense_ffn = t, m.weights.dense_ffn_bits = 0;
    if (part.empty() || part == "experts") m.weights.experts = t, m.weights.experts_bits = 0;
    if (part == "embeddings") m.weights.embedding = t, m.weights.embedding_bits = 0;
  }
  DeploymentOptions o;
  o.kv = r.kv.empty() ? DType::bf16 : format(r.kv);
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

Mapped plan_row(const Measurement& row) {
  const std::string at = row.id + ": ";
  if (row.kind == "microbenchmark") {
    return {std::nullopt, RowStatus::calibration, "microbenchmark: a calibration input (efficiencies), never scored"};
  }
  // Defaults for what the row leaves unstated (docs/file-formats.md, "Defaults"): filled
  // into a copy, each named among the row's assumptions.
  Measurement r = row;
  std::vector<std::string> filled;
  if (const DatasetLengths* ds = r.dataset.empty() ? nullptr : find_dataset(r.dataset)) {
    if (!r.input_tokens && ds->input_tokens_mean) {
      r.input_tokens = std::llround(*ds->input_tokens_mean);
      filled.push_back("input_tokens: empty, " + std::to_string(*r.input_tokens) + ": the mean prompt of dataset " + ds->name + " (" + ds->source + ")");
    }
    if (!r.output_tokens && ds->output_tokens_mean) {
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
  const SystemSpec sys = load_row_system(p.hardware);
  bool moe = false;
  for (const auto& g : model.groups) moe = moe || g.ffn.kind == FfnKind::moe;
  const auto& attn = model.groups.front().attention;
  const bool single_kv = attn.kind == AttentionKind::mla || attn.n_kv_heads == 1;
  if (!r.chips) {
    const int64_t in = r.input_tokens.value_or(0), out = r.output_tokens.value_or(0);
    const int64_t context = r.kind == "prefill" ? in : r.kind == "decode" ? (r.context ? *r.context + out : in + out) : in + out;
    const int64_t replica = default_replica_chips(r, model, sys, context);
    r.chips = replica * r.dp.value_or(1);
    filled.push_back("chips: empty, " + std::to_string(*r.chips) + (r.dp && *r.dp > 1 ? " (" + std::to_string(*r.dp) + " replicas of " + std::to_string(replica) + ")" : "") +
                     ": the smallest replica that holds the weights and one sequence of " + std::to_string(context) +
                     " tokens (chalk decode's default chips, smallest_replica_chips" + (r.tp || r.ep || r.attention == "dp" ? ", at the stated layout)" : "; the layout search lays it out)"));
  }
  p.assumptions.insert(p.assumptions.end(), filled.begin(), filled.end());

  // Chips: a replica of chips / dp; run totals scale by dp.
  const int64_t total = *r.chips, dp = r.dp.value_or(1);
  p.chips = total / dp;
  if (dp > 1) p.notes.push_back(std::to_string(dp) + " independent replicas of " + std::to_string(p.chips) + " chips; each predicted alone");
  if (r.padded_heads) {
    p.heads_padded_to = *r.padded_heads;
    p.notes.push_back("attention heads padded to " + std::to_string(*r.padded_heads) + " for partitioning: their projections are computed and stored");
  }

  // Formats.
  for (const auto& [part, f] : weight_parts(r.weights, at + "weights")) {
    const DType t = format(f);
    if (part.empty() || part == "attention") p.w_attention = t;
    if (part.empty() || part == "ffn") p.w_ffn = t;
    if (part.empty() || part == "experts") p.w_experts = t;
    if (part == "embeddings") p.w_embedding = t;
  }
  if (r.weights.empty()) {
    const auto& w = model.weights;
    p.assumptions.push_back(std::string("weights: empty, the checkpoint's own (attention ") + std::string(to_string(w.attention)) + ", FFN " +
                            std::string(to_string(w.dense_ffn)) + (moe ? ", experts " + std::string(to_string(w.experts)) : "") + ")");
  }
  if (r.kv.empty()) {
    p.kv = DType::bf16;
    p.assumptions.push_back("kv: empty, bf16 (the engines' default KV-cache format)");
  } else {
    p.kv = format(r.kv);
  }
  if (!r.compute.empty()) {
    p.notes.push_back("compute " + r.compute + " not modelled for serving: each matmul runs at its weights' format");
  }

  // Layout.
  if (r.attention == "dp" && r.tp && *r.tp > 1) {
    throw InputError(at + "tp", "tp " + std::to_string(*r.tp) + " with attention dp: tp is attention's tensor-parallel degree, 1 under dp attention");
  }
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
  if (r.two_batch_overlap == "yes") L.overlap_micro_batches = true;
  p.two_batch_overlap_stated = !r.two_batch_overlap.empty();
  if (!r.dispatch.empty()) L.dispatch_bytes_per_element = bytes_per_element(format(r.dispatch));
  if (!r.combine.empty()) L.combine_bytes_per_element = bytes_per_element(format(r.combine));
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
  }
  p.prefill_layout = L;
  if (!r.prefill_ffn_layout.empty()) {
    p.prefill_layout.weight_gathered = false;
    apply_ffn_layout(r.prefill_ffn_layout, p.chips, p.prefill_layout);
  }

  // Speculative decoding.
  if (r.kind != "prefill") {
    if (!r.draft_tokens) {
      p.assumptions.push_back("draft_tokens: empty, 0 (no speculative or MTP drafts)");
    } else if (*r.draft_tokens > 0) {
      p.mtp_tokens = 1 + static_cast<double>(*r.draft_tokens);
      if (r.accepted_tokens) {
        p.mtp_accepted = *r.accepted_tokens;
      } else if (model.n_mtp_layers > 0 && model.architecture == "deepseek_v3") {
        // The drafter of DeepSeek-V3 and R1 (HF model_type deepseek_v3) is its own MTP module
        // (SGLang's, vLLM's and TensorRT-LLM's MTP speculative decoding), whose acceptance
        // the V3 report publishes; other models' MTP modules (GLM-4.5) have no such figure.
        p.mtp_accepted = expected_kept_tokens(kDeepSeekMtpAcceptance, *r.draft_tokens);
        p.assumptions.push_back("accepted_tokens: empty, " + num(p.mtp_accepted) + " tokens kept per step: the model's MTP module as drafter, " +
                                num(100 * kDeepSeekMtpAcceptance) + "% acceptance per draft (DeepSeek-V3 report section 5.4.3: 85-90% for the second token), " +
                                "each of " + std::to_string(*r.draft_tokens) + " drafts accepted independently: (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, Eq. 1)");
      } else {
        throw InputError(at + "accepted_tokens", "missing; draft_tokens " + std::to_string(*r.draft_tokens) +
                                                     " needs the measured tokens kept per step (chalk has a published acceptance only for DeepSeek-V3's and R1's own MTP module)");
      }
    }
    if (r.attention_draft_tokens && *r.attention_draft_tokens > 0) {
      p.attention_tokens = 1 + static_cast<double>(*r.attention_draft_tokens);
      p.notes.push_back("attention does the work of " + num(p.attention_tokens) + " query tokens per sequence, matmuls of " + num(p.mtp_tokens) +
                        " (attention_draft_tokens)");
    }
  }

  // Batch: sequences of a replica.
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
                                         r.batch + (r.batch_per == "replica" ? "" : " per " + r.batch_per + " = " + num(p.batch) + " per replica"));
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

  // Lengths.
  const int64_t cached = r.cached_tokens.value_or(0);
  if (r.input_tokens) {
    p.prompt = *r.input_tokens - cached;
    p.prefix = cached;
    if (cached > 0) p.notes.push_back(std::to_string(cached) + " of " + std::to_string(*r.input_tokens) + " input tokens served from a prefix cache");
  }
  if (r.output_tokens) p.output = *r.output_tokens;

  // Throughput over the replica (per chip) or the whole run.
  const bool per_chip = r.metric.size() > 9 && r.metric.substr(r.metric.size() - 9) == "_per_chip";
  p.per_chips = per_chip ? 1 : static_cast<double>(total);

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
    if (dp > 1 && r.request_rate_per_s) {
      p.notes.push_back("request rate " + num(*r.request_rate_per_s) + "/s over " + std::to_string(dp) + " replicas: " + num(p.request_rate_per_s) +
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
  // KV admission decides how many sequences a loaded engine runs: it matters where the
  // engine fills its KV cache (a `max` batch, or the simulator). Chunked prefill decides how
  // the prompts that replace finished requests share the steps: it matters in the steady
  // state of a throughput row (any batch) and in the simulator.
  const bool admits = r.kind == "serving" && (p.batch_from_capacity || p.target == Target::serving_simulated);
  const bool steady = r.kind == "serving" && (p.target == Target::serving_tokens_per_s || p.target == Target::serving_simulated);
  if (!admits && !r.kv_admission.empty()) {
    p.notes.push_back("kv_admission " + r.kv_admission + ": not read (it sets the batch of serving rows at a max batch or through the simulator)");
  }
  if (!steady && !r.chunked_prefill.empty()) {
    p.notes.push_back("chunked_prefill " + r.chunked_prefill + ": not read (it sets the steps of serving throughput rows and simulated rows)");
  }
  if (steady) {
    p.whole_prompts = r.chunked_prefill.empty() ? r.engine == "trtllm" : r.chunked_prefill == "no";
    if (r.chunked_prefill.empty()) {
      p.assumptions.push_back(p.whole_prompts ? "chunked_prefill: empty, no (TensorRT-LLM's default, enable_chunked_prefill false: each prompt runs whole in one step)"
                                              : "chunked_prefill: empty, yes (prompts split into chunks that ride in decode steps, as vLLM and SGLang do)");
    }
  }
  if (admits) {
    p.kv_reserved = r.kv_admission.empty() ? r.engine == "trtllm" : r.kv_admission == "to_completion";
    if (r.kv_admission.empty()) {
      p.assumptions.push_back(p.kv_reserved ? "kv_admission: empty, to_completion (TensorRT-LLM's default capacity scheduler, "
                                              "GUARANTEED_NO_EVICT: each admitted request holds the KV of all its tokens)"
                                            : "kv_admission: empty, on_demand (KV blocks taken as tokens arrive, as vLLM and SGLang do)");
    }
  }
  for (std::size_t i = 0; i < r.assumed.size(); ++i) {
    p.assumptions.push_back(r.assumed[i] + " " + r.assumed_values[i] + ": filled in by the row's author, not stated by the source (see its notes)");
  }
  return {p, RowStatus::predicted, ""};
}

}  // namespace chalk::detail
