// Mapping a measurement row's free-text fields to chalk's inputs (docs/accuracy.md,
// "Mapping rules"). Each rule reads one field; an input the row leaves unstated gets a
// stated assumption; a field no rule reads makes the row unmapped, with the reason.
// This file: resolving "as above" references and the per-kind mapping of a whole row; the
// rules for single fields are in validate_map_<concept>.cc (see validate_map_rules.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "chalk/io/io.h"
#include "validate_internal.h"
#include "validate_map_rules.h"

namespace chalk::detail {
namespace {

/// "as above" / "as <ID> ..." takes the referenced row's field, keeping the rest.
std::string resolve(const std::string& field, std::size_t index, const std::vector<Measurement>& all,
                    std::string Measurement::*member) {
  const std::string l = lower(field);
  if (l.rfind("as above", 0) == 0 && index > 0) return all[index - 1].*member + field.substr(8);
  if (l.rfind("as ", 0) == 0) {
    const std::string rest = trim(field.substr(3));
    for (const auto& r : all) {
      if (!r.id.empty() && rest.rfind(r.id, 0) == 0 && r.id != all[index].id) return r.*member + rest.substr(r.id.size());
    }
  }
  return field;
}

Mapped unmapped(const std::string& field, const std::string& why) { return {std::nullopt, RowStatus::unmapped, field + ": " + why}; }

}  // namespace

Mapped plan_row(const Measurement& row_in, const std::vector<Measurement>& all) {
  std::size_t index = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].id == row_in.id) index = i;
  }
  Measurement row = row_in;
  if (index < all.size() && all[index].id == row_in.id) {
    for (auto member : {&Measurement::precision_weights, &Measurement::precision_kv_or_activations, &Measurement::parallelism,
                        &Measurement::batch_or_concurrency, &Measurement::input_len, &Measurement::output_len_or_context}) {
      row.*member = resolve(row.*member, index, all, member);
    }
  }
  const std::string kind = lower(trim(row.kind));
  if (kind.rfind("training", 0) == 0) return {std::nullopt, RowStatus::not_modelled, "training: not modelled yet"};
  if (kind.rfind("microbenchmark", 0) == 0) {
    return {std::nullopt, RowStatus::calibration, "microbenchmark: a calibration input (efficiencies), never scored"};
  }
  const bool decode = kind == "decode", prefill = kind == "prefill", serving = kind == "end-to-end serving";
  if (!decode && !prefill && !serving) {
    return unmapped("kind", "'" + row.kind + "' is not one validate predicts (decode, prefill, end-to-end serving)");
  }

  RowPlan p;
  p.model = model_name(row.model);
  const auto models = builtin_model_names();
  if (std::find(models.begin(), models.end(), p.model) == models.end()) {
    return unmapped("model", "no built-in model for '" + row.model + "' (tried '" + p.model + "'; see chalk models)");
  }
  {
    std::smatch pad;
    const std::string shape = lower(row.model_shape);
    if (std::regex_search(shape, pad, std::regex("heads padded to ([0-9]+)"))) {
      p.heads_padded_to = std::stoll(pad[1]);
      p.notes.push_back("attention heads padded to " + pad[1].str() + " as the row states: their projections are computed and stored");
    }
  }
  const auto sys = system_name(row.hardware);
  if (!sys) return unmapped("hardware", "no built-in system for '" + row.hardware + "' (see chalk hardware)");
  p.hardware = *sys;

  {
    static const std::regex gpus("\\(([0-9]+) (gpus|chips)\\)");
    std::smatch m;
    const std::string c = lower(row.num_chips);
    const auto n = std::regex_search(c, m, gpus) ? std::optional<double>(std::stod(m[1])) : first_number(c);
    if (!n || *n < 1 || *n != std::floor(*n)) return unmapped("num_chips", "expected a chip count, got '" + row.num_chips + "'");
    p.chips = static_cast<int64_t>(*n);
  }
  const auto value = single_number(row.value);
  if (!value || *value <= 0) return unmapped("value", "expected one positive number, got '" + row.value + "'");

  read_weights(row.precision_weights, p);
  read_kv(row.precision_kv_or_activations, p);
  if (!read_layout(row.parallelism, p.chips, p)) {
    p.layout_stated = false;
    p.assumptions.push_back("parallel layout not stated ('" + row.parallelism +
                            "'): tensor parallel over the chips within the scale-up domain, experts over all chips");
  }

  if (!prefill && !has(lower(row.parallelism), "attention") && !has(lower(row.parallelism), "mla") &&
      !has(lower(row.parallelism), "multiquery") && p.chips > 1) {
    const ModelSpec spec = load_model(p.model);
    const auto& a = spec.groups.front().attention;
    if (a.kind == AttentionKind::mla || a.n_kv_heads == 1) {
      p.assumptions.push_back(std::string("attention layout not stated: heads split over the tensor-parallel chips, the ") +
                              (a.kind == AttentionKind::mla ? "MLA latent" : "single KV head") +
                              " on each of them unless it does not fit (then split by sequence)");
    }
  }
  const std::string unit = lower(row.unit), metric = lower(row.metric), in = lower(row.input_len),
                    outf = lower(row.output_len_or_context), batch = lower(row.batch_or_concurrency), par = lower(row.parallelism);
  const bool per_node = has(unit, "per node") || has(unit, "per 8-gpu node");
  if (per_node) p.per_chips = has(unit, "8-gpu") ? 8 : -1;

  // Batch.
  const auto batch_number = first_number(batch);
  if (has(batch, "per gpu") && has(batch, "sequences") && batch_number) {
    p.batch = *batch_number * static_cast<double>(p.chips);
    p.notes.push_back("batch " + fmt_num(*batch_number) + " sequences per chip x " + std::to_string(p.chips) + " chips");
  } else if (has(batch, "tok/s per user") || has(batch, "tok/s/user")) {
    const auto lo = first_number(batch);
    double hi = lo.value_or(0);
    if (auto dash = batch.find('-', batch.find(fmt_num(lo.value_or(0)))); dash != std::string::npos) hi = first_number(batch.substr(dash + 1)).value_or(hi);
    p.slo_tokens_per_s_per_user = (lo.value_or(0) + hi) / 2;
    p.assumptions.push_back("batch not stated: the largest whose per-user speed meets " + fmt_num(p.slo_tokens_per_s_per_user) +
                            " tok/s (the row's stated speed)");
  } else if (has(batch, "max") || has(batch, "offline")) {
    p.batch_from_capacity = true;
    if (has(batch, "requests") && batch_number) p.requests_cap = *batch_number;
    p.assumptions.push_back("batch not stated: the largest the KV cache holds at the mean context" +
                            std::string(p.requests_cap > 0 ? " (at most the " + fmt_num(p.requests_cap) + " requests)" : ""));
  } else if (has(batch, "tokens per gpu") && batch_number) {
    // prefill: whole prompts per chip; resolved once the prompt is known
  } else if (batch_number && !has(batch, "production") &&
             (std::isdigit(static_cast<unsigned char>(trim(batch).empty() ? 'x' : trim(batch)[0])) || has(batch, "("))) {
    p.batch = *batch_number;
  } else if (!prefill) {
    return unmapped("batch_or_concurrency", "no batch in '" + row.batch_or_concurrency + "'");
  }

  // MTP.
  if (has(par, "mtp in production")) {
    p.mtp_tokens = 2;
    p.mtp_accepted = 1.875;
    p.assumptions.push_back("MTP: one draft token accepted 87.5% of the time (DeepSeek-V3 report 5.4.3: 85-90%) -> 1.875 tokens per step");
  }
  if (has(par, "emulate mtp")) {
    p.attention_tokens = 2;
    p.assumptions.push_back("MTP emulation: attention does the work of 2 query tokens per sequence, matmuls of 1, 1 token kept");
  }

  auto known_context = [&](const std::string& f) -> std::optional<double> {
    if (has(f, "context") || has(f, "kv length") || has(f, "kv-cache length")) return first_number(f);
    return std::nullopt;
  };

  if (decode) {
    if (auto c = known_context(in)) {
      p.context = static_cast<int64_t>(*c);
    } else if (auto c2 = known_context(outf)) {
      p.context = static_cast<int64_t>(*c2);
    } else if (auto i = first_number(in), o = first_number(outf); i && o) {
      p.context = static_cast<int64_t>(*i + *o / 2);
      p.notes.push_back("context: the mean over the generation, " + fmt_num(*i) + " + " + fmt_num(*o) + " / 2");
    } else {
      return unmapped("input_len", "no context in '" + row.input_len + "' or '" + row.output_len_or_context + "'");
    }
    if (unit == "s" && has(metric, "generate")) {
      p.target = Target::decode_total_s;
      const auto o = first_number(outf);
      if (!o || *o < 1) return unmapped("output_len_or_context", "no number of generated tokens in '" + row.output_len_or_context + "'");
      p.output = static_cast<int64_t>(*o);
    } else if (unit == "ms/token") {
      p.target = Target::decode_step_s;
      p.to_unit = 1e3;
    } else if (has(unit, "tokens/s/user")) {
      p.target = Target::per_user_tokens_per_s;
    } else if (per_node) {
      p.target = Target::decode_tokens_per_s;
    } else {
      return unmapped("unit", "decode metric in '" + row.unit + "' is not one validate predicts");
    }
  } else if (prefill) {
    const std::string t = trim(in);
    if (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0]))) {
      p.prompt = static_cast<int64_t>(*first_number(t));
    } else {
      // No length: the context of a sibling row of the same source that states one.
      for (const auto& r : all) {
        if (r.source != row.source || r.id == row.id) continue;
        if (auto c = known_context(lower(r.output_len_or_context))) {
          p.prompt = static_cast<int64_t>(*c);
          p.assumptions.push_back("prompt not stated: " + fmt_num(*c) + " tokens, the mean KV length of row " + r.id + " (same source)");
          break;
        }
      }
      if (p.prompt == 0) return unmapped("input_len", "no prompt length in '" + row.input_len + "'");
    }
    if (has(in, "cache hit")) {
      const auto pct = in.find('%');
      std::size_t start = pct;
      while (start > 0 && (std::isdigit(static_cast<unsigned char>(in[start - 1])) || in[start - 1] == '.')) --start;
      if (pct != std::string::npos && start < pct) p.cache_hit_fraction = std::stod(in.substr(start, pct - start)) / 100;
      p.prefix = static_cast<int64_t>(std::round(static_cast<double>(p.prompt) * p.cache_hit_fraction));
      p.prompt -= p.prefix;
      p.notes.push_back(fmt_num(p.cache_hit_fraction * 100) + "% of input tokens are cache hits: a cached prefix of " +
                        std::to_string(p.prefix) + " and " + std::to_string(p.prompt) + " computed tokens per prompt");
    }
    const auto per_chip_tokens = has(batch, "tokens per gpu") ? batch_number : std::nullopt;
    if (per_chip_tokens || (has(batch, "production") && per_node)) {
      const double tokens = per_chip_tokens.value_or(16384);
      if (!per_chip_tokens) {
        p.assumptions.push_back("batch not stated: 16384 tokens per chip, a compute-bound prefill chunk (SGLang's setting, rows SGL-H100-PREFILL-*)");
      }
      // A chunk counts the tokens computed: a cached prefix is read, not recomputed.
      const double seqs = std::max(1.0, std::floor(tokens / static_cast<double>(std::max<int64_t>(p.prompt, 1))));
      p.batch = seqs * static_cast<double>(p.chips);
      p.notes.push_back("batch " + fmt_num(seqs) + " whole prompts per chip (" + fmt_num(tokens) + " tokens per chip)");
    }
    if (unit == "s") {
      p.target = Target::prefill_s;
    } else if (per_node) {
      p.target = Target::prefill_tokens_per_s;
    } else {
      return unmapped("unit", "prefill metric in '" + row.unit + "' is not one validate predicts");
    }
  } else {  // end-to-end serving
    const auto o = first_number(outf);
    if (!o || *o < 1) return unmapped("output_len_or_context", "no output length in '" + row.output_len_or_context + "'");
    p.output = static_cast<int64_t>(*o);
    if (has(in, "cached")) {
      p.prompt = static_cast<int64_t>(first_number(in).value_or(0));
      const auto plus = in.find('+');
      if (plus != std::string::npos) p.prefix = static_cast<int64_t>(first_number(in.substr(plus)).value_or(0));
    } else if (auto i = first_number(in)) {
      p.prompt = static_cast<int64_t>(*i);
    } else if (has(in, "openorca")) {
      p.prompt = 512;
      p.assumptions.push_back("mean input not stated ('" + row.input_len +
                              "'): assumed 512 tokens, half of MLPerf's 1024-token input cap (mlcommons/inference language/llama2-70b processorca.py --seqlen_limit=1024)");
    } else {
      return unmapped("input_len", "no input length in '" + row.input_len + "'");
    }
    if (p.prompt < 1) return unmapped("input_len", "no input length in '" + row.input_len + "'");
    {
      static const std::regex decode_batch("batch [0-9]+-([0-9]+) decode");
      std::smatch m;
      if (std::regex_search(par, m, decode_batch)) {
        p.decode_batch = std::stod(m[1]);
        p.assumptions.push_back("decode batch " + fmt_num(p.decode_batch) + ", the upper end of the stated range ('" + row.parallelism +
                                "'); the request's prefill runs at batch " + fmt_num(p.batch));
      }
    }
    if (unit == "ms") {
      p.target = Target::serving_latency_s;
      p.to_unit = 1e3;
    } else if (unit == "s") {
      p.target = Target::serving_latency_s;
    } else if (has(unit, "mfu")) {
      p.target = Target::serving_mfu;
      p.to_unit = 100;
    } else if (has(unit, "tokens/s")) {
      p.target = Target::serving_tokens_per_s;
      if (!p.batch_from_capacity) {
        return unmapped("batch_or_concurrency", "a throughput row needs a stated or maximal concurrency, got '" + row.batch_or_concurrency + "'");
      }
    } else {
      return unmapped("unit", "serving metric in '" + row.unit + "' is not one validate predicts");
    }
  }
  return {p, RowStatus::predicted, ""};
}

}  // namespace chalk::detail
