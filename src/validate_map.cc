// Mapping a measurement row's free-text fields to chalk's inputs (docs/accuracy.md,
// "Mapping rules"). Each rule reads one field; an input the row leaves unstated gets a
// stated assumption; a field no rule reads makes the row unmapped, with the reason.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "chalk/io.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

bool has(std::string_view s, std::string_view w) { return s.find(w) != std::string_view::npos; }

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

/// Splits on any of `seps`; parentheses are separators too, so "(WG XYZ prefill, WS 2D
/// decode)" yields its parts.
std::vector<std::string> clauses(std::string_view s, std::string_view seps = ";,()") {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (seps.find(c) != std::string_view::npos) {
      if (!trim(cur).empty()) out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

/// The earliest storage format named in `s` (lower case), if any.
std::optional<DType> find_dtype(std::string_view s) {
  static const std::pair<const char*, DType> names[] = {{"nvfp4", DType::nvfp4}, {"mxfp4", DType::mxfp4}, {"fp8", DType::fp8},
                                                        {"int8", DType::int8},   {"int4", DType::int4},   {"bf16", DType::bf16},
                                                        {"fp16", DType::fp16},   {"fp32", DType::fp32}};
  std::size_t best = std::string_view::npos;
  std::optional<DType> out;
  for (const auto& [name, t] : names) {
    const auto at = s.find(name);
    if (at != std::string_view::npos && at < best) {
      best = at;
      out = t;
    }
  }
  return out;
}

std::optional<int64_t> degree(const std::string& clause, const char* prefix) {
  std::smatch m;
  const std::regex re(std::string(prefix) + "([0-9]+)");
  if (std::regex_search(clause, m, re)) return std::stoll(m[1]);
  return std::nullopt;
}

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

std::string model_name(const std::string& text) {
  std::string s = lower(text);
  if (auto slash = s.find('/'); slash != std::string::npos) s = s.substr(0, slash);
  if (auto paren = s.find('('); paren != std::string::npos) s = s.substr(0, paren);
  s = trim(s);
  std::replace(s.begin(), s.end(), ' ', '-');
  static const std::pair<const char*, const char*> aliases[] = {
      {"gpt-3-174.6b", "gpt-3-175b"}, {"llama-3-70b", "llama-3.1-70b"}, {"llama-3-405b", "llama-3.1-405b"}, {"llama-3-8b", "llama-3.1-8b"}};
  for (const auto& [from, to] : aliases) {
    if (s == from) return to;
  }
  return s;
}

std::optional<std::string> system_name(const std::string& text) {
  const std::string s = lower(text);
  static const std::pair<const char*, const char*> table[] = {
      {"tpu v4", "tpu-v4"},   {"tpu v5p", "tpu-v5p"}, {"tpu v5e", "tpu-v5e"},   {"tpu v6e", "tpu-v6e"}, {"ironwood", "tpu-ironwood"},
      {"gb200", "gb200-nvl72"}, {"gb300", "gb300-nvl72"}, {"b200", "b200"},     {"h800", "h800-sxm"},   {"h200", "h200"},
      {"h100", "h100-sxm"},   {"a100", "a100-80gb"},   {"mi300x", "mi300x"},     {"mi355x", "mi355x"}};
  for (const auto& [key, name] : table) {
    if (has(s, key)) return std::string(name);
  }
  return std::nullopt;
}

std::string fmt_num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

/// Weight formats by component from `precision_weights`.
void read_weights(const std::string& text, RowPlan& p) {
  const std::string l = lower(text);
  bool any = false;
  for (const auto& c : clauses(l, ";")) {
    const auto t = find_dtype(c);
    if (!t || has(c, "router")) continue;
    const bool attn = has(c, "attention"), ffn = has(c, "ffn") || has(c, "moe") || has(c, "expert") || has(c, "dense");
    if (attn) p.w_attention = t;
    if (ffn) p.w_ffn = p.w_experts = t;
    if (!attn && !ffn && !any) p.w_attention = p.w_ffn = p.w_experts = t;
    any = true;
  }
  if (!any) {
    p.assumptions.push_back("weights format not stated ('" + text + "'): the checkpoint's own");
  } else if (has(l, "unverified") || has(l, "not read")) {
    p.assumptions.push_back("weights format as the row states but unverified ('" + text + "')");
  }
}

/// KV-cache format and EP dispatch/combine formats from `precision_kv_or_activations`.
void read_kv(const std::string& text, RowPlan& p) {
  const std::string l = lower(text);
  std::optional<DType> kv, plain, activations;
  for (const auto& c : clauses(l, ";,/")) {
    const auto t = find_dtype(c);
    if (has(c, "dispatch") && t) {
      p.layout.dispatch_bytes_per_element = p.prefill_layout.dispatch_bytes_per_element = bytes_per_element(*t);
    }
    if (has(c, "combine") && t) p.layout.combine_bytes_per_element = p.prefill_layout.combine_bytes_per_element = bytes_per_element(*t);
    if (!t) continue;
    if (has(c, "kv")) {
      kv = t;
    } else if (has(c, "activation")) {
      activations = t;
    } else if (!has(c, "dispatch") && !has(c, "combine") && !plain) {
      plain = t;
    }
  }
  if (kv) {
    p.kv = *kv;
    if (has(l, "unverified") || has(l, "typical")) p.assumptions.push_back("KV cache " + std::string(to_string(*kv)) + " as the row states but unverified");
  } else if (plain) {
    p.kv = *plain;
  } else if (activations) {
    p.kv = *activations;
    p.assumptions.push_back("KV-cache format not stated ('" + text + "'): assumed " + std::string(to_string(*activations)) +
                            ", the activations' format");
  } else {
    p.kv = DType::bf16;
    p.assumptions.push_back("KV-cache format not stated ('" + text + "'): assumed bf16, the engines' default");
  }
}

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

}  // namespace

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> first_number(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    if (i > 0 && (std::isalpha(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '-')) {
      // part of a name such as "TP8" or "H100": skip the whole token
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
      continue;
    }
    std::string digits;
    std::size_t j = i;
    for (; j < s.size(); ++j) {
      const char c = s[j];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        digits += c;
      } else if (c == ',' && j + 3 < s.size() + 1 && j + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        continue;  // thousands separator "16,384"
      } else {
        break;
      }
    }
    try {
      return std::stod(digits);
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> single_number(std::string_view s) {
  std::string t;
  for (char c : s) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) continue;
    t += c;
  }
  if (t.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(t, &used);
    if (used != t.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

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
