// One measurement row, read strictly (docs/file-formats.md, "Measurements"): every closed
// vocabulary checked, every number whole, and the inputs the row's kind and metric need
// present. Nothing is read from the provenance columns.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "chalk/engine/engine_name.h"
#include "chalk/base/error.h"
#include "chalk/sim/policy.h"
#include "measurement_row.h"

namespace chalk::detail {
std::string trim_cell(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

namespace {
std::string trim(std::string_view s) { return trim_cell(s); }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}


/// A number as docs/file-formats.md writes them: digits with at most one decimal point and
/// an optional decimal exponent, an optional leading minus. strtod alone also takes hex
/// (0x1e), inf, nan and leading spaces.
bool plain_decimal(std::string_view v) {
  std::size_t i = 0, digits = 0;
  auto is_digit = [&](std::size_t k) { return k < v.size() && v[k] >= '0' && v[k] <= '9'; };
  if (i < v.size() && v[i] == '-') ++i;
  while (is_digit(i)) ++i, ++digits;
  if (i < v.size() && v[i] == '.') {
    ++i;
    while (is_digit(i)) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (!is_digit(i)) return false;
    while (is_digit(i)) ++i;
  }
  return i == v.size();
}

struct Reader {
  const std::map<std::string, std::string>& cells;
  const std::string& at;

  std::string field(const std::string& col) const { return at + ": " + col; }
  std::string text(const std::string& col) const {
    const auto it = cells.find(col);
    return it == cells.end() ? "" : trim(it->second);
  }
  std::string closed(const std::string& col) const {
    const std::string v = text(col);
    const auto* vocab = vocabulary(col);
    if (!v.empty() && vocab && std::find(vocab->begin(), vocab->end(), v) == vocab->end()) {
      throw InputError(field(col), "'" + v + "' is not one of " + join(*vocab));
    }
    return v;
  }
  std::optional<int64_t> integer(const std::string& col, int64_t min) const {
    const std::string v = text(col);
    if (v.empty()) return std::nullopt;
    int64_t x = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || p != v.data() + v.size()) throw InputError(field(col), "expected a whole number, got '" + v + "'");
    if (x < min) throw InputError(field(col), "expected at least " + std::to_string(min) + ", got " + v);
    return x;
  }
  std::optional<double> number(const std::string& col, bool positive) const {
    const std::string v = text(col);
    if (v.empty()) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (!plain_decimal(v) || end != v.c_str() + v.size() || !std::isfinite(x)) {
      // strtod took all of it (hex, inf, nan): say what the format allows.
      const bool c_number = end == v.c_str() + v.size();
      throw InputError(field(col), "expected a number, got '" + v + "'" + (c_number ? " (plain decimal only: 16384, 0.48886, 2.664e6)" : ""));
    }
    if (positive ? !(x > 0) : x < 0) throw InputError(field(col), std::string("expected a ") + (positive ? "positive" : "non-negative") + " number, got " + v);
    return x;
  }
  void need(bool ok, const std::string& col, const std::string& why) const {
    if (!ok) throw InputError(field(col), "missing; " + why);
  }
};

}  // namespace

std::vector<std::pair<std::string, std::string>> weight_parts(const std::string& text, const std::string& field) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string t = trim(text);
  if (t.empty()) return out;
  static const std::vector<std::string> parts = {"attention", "ffn", "experts", "embeddings"};
  if (t.find('=') == std::string::npos) {
    if (std::find(kMeasurementFormats.begin(), kMeasurementFormats.end(), t) == kMeasurementFormats.end()) {
      throw InputError(field, "'" + t + "' is not one of " + join(kMeasurementFormats) + " (or part=format pairs separated by ';')");
    }
    out.emplace_back("", t);
    return out;
  }
  std::size_t start = 0;
  std::set<std::string> seen;
  while (start <= t.size()) {
    const auto semi = t.find(';', start);
    const std::string pair = trim(t.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    const auto eq = pair.find('=');
    if (eq == std::string::npos) throw InputError(field, "'" + pair + "' is not part=format (parts: " + join(parts) + ")");
    const std::string part = trim(pair.substr(0, eq)), format = trim(pair.substr(eq + 1));
    if (std::find(parts.begin(), parts.end(), part) == parts.end()) {
      throw InputError(field, "part '" + part + "' is not one of " + join(parts));
    }
    if (std::find(kMeasurementFormats.begin(), kMeasurementFormats.end(), format) == kMeasurementFormats.end()) {
      throw InputError(field, "format '" + format + "' of " + part + " is not one of " + join(kMeasurementFormats));
    }
    if (!seen.insert(part).second) throw InputError(field, "part '" + part + "' given twice");
    out.emplace_back(part, format);
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return out;
}

Measurement read_measurement_row(const std::map<std::string, std::string>& cells, const std::string& at) {
  const Reader r{cells, at};
  Measurement m;
  m.id = r.text("id");
  m.kind = r.closed("kind");
  r.need(!m.kind.empty(), "kind", "one of " + join(*vocabulary("kind")));
  m.metric = r.closed("metric");
  r.need(!m.metric.empty(), "metric", "what the value measures (docs/file-formats.md)");
  const auto& kind_metrics = metrics_of_kind(m.kind);
  if (std::find(kind_metrics.begin(), kind_metrics.end(), m.metric) == kind_metrics.end()) {
    throw InputError(r.field("metric"), "'" + m.metric + "' is not a metric of kind " + m.kind + " (" + join(kind_metrics) + ")");
  }
  const auto value = r.number("value", true);
  r.need(value.has_value(), "value", "the measured number in the metric's unit");
  m.value = *value;

  m.model = r.text("model");
  m.hardware = r.text("hardware");
  m.chips = r.integer("chips", 1);
  m.tp = r.integer("tp", 1);
  m.pp = r.integer("pp", 1);
  m.dp = r.integer("dp", 1);
  m.ep = r.integer("ep", 1);
  m.expert_tp = r.integer("expert_tp", 1);
  m.cp = r.integer("cp", 1);
  m.attention = r.closed("attention");
  m.ffn_layout = r.closed("ffn_layout");
  m.prefill_ffn_layout = r.closed("prefill_ffn_layout");
  m.kv_split = r.closed("kv_split");
  m.padded_heads = r.integer("padded_heads", 1);
  m.weights = r.text("weights");
  weight_parts(m.weights, r.field("weights"));
  m.kv = r.closed("kv");
  m.dispatch = r.closed("dispatch");
  m.combine = r.closed("combine");
  m.compute = r.closed("compute");
  m.batch = r.text("batch");
  if (!m.batch.empty() && m.batch != "max") {
    const auto b = r.integer("batch", 1);
    m.batch = std::to_string(*b);
  }
  m.batch_per = r.closed("batch_per");
  m.prefill_batch = r.integer("prefill_batch", 1);
  m.requests = r.integer("requests", 1);
  m.request_rate_per_s = r.number("request_rate_per_s", true);
  m.arrivals = r.closed("arrivals");
  r.need(m.arrivals.empty() || m.request_rate_per_s, "request_rate_per_s", "arrivals " + m.arrivals + " describes a run at a request rate");
  m.input_tokens = r.integer("input_tokens", 1);
  m.cached_tokens = r.integer("cached_tokens", 0);
  m.output_tokens = r.integer("output_tokens", 1);
  m.context = r.integer("context", 1);
  m.dataset = r.text("dataset");
  const DatasetLengths* dataset = nullptr;
  if (!m.dataset.empty()) {
    dataset = find_dataset(m.dataset);
    if (!dataset) {
      std::vector<std::string> names;
      for (const auto& d : builtin_datasets()) names.push_back(d.name);
      throw InputError(r.field("dataset"), "'" + m.dataset + "' is not one of " + join(names) + " (data/datasets/datasets.csv)");
    }
  }
  m.draft_tokens = r.integer("draft_tokens", 0);
  m.accepted_tokens = r.number("accepted_tokens", true);
  m.drafter = r.text("drafter");
  check_drafter(m.drafter, m.draft_tokens, r.field("drafter"));
  m.attention_draft_tokens = r.integer("attention_draft_tokens", 0);
  m.two_batch_overlap = r.closed("two_batch_overlap");
  m.eplb = r.closed("eplb");
  m.ep_dispatcher = r.closed("ep_dispatcher");
  m.ep_overlap = r.closed("ep_overlap");
  m.sequence_parallel = r.closed("sequence_parallel");
  m.fp8_recipe = r.closed("fp8_recipe");
  m.compile = r.closed("compile");
  {
    // A serving engine may name its release, "vllm-0.10": engine_policy reads the defaults
    // that changed between releases (host overlap).
    const std::string e = r.text("engine");
    if (e.find('-') != std::string::npos && is_serving_engine(e)) {
      try {
        (void)sim::engine_policy(e);
      } catch (const InputError& err) {
        throw InputError(r.field("engine"), std::string(err.what()).substr(std::string("engine: ").size()));
      }
      m.engine = e;
    } else {
      m.engine = r.closed("engine");
    }
  }
  m.kv_admission = r.closed("kv_admission");
  m.chunked_prefill = r.closed("chunked_prefill");
  m.max_batched_tokens = r.integer("max_batched_tokens", 1);
  m.max_sequences = r.integer("max_sequences", 1);
  m.gpu_memory_utilization = r.number("gpu_memory_utilization", true);
  if (m.gpu_memory_utilization && !(*m.gpu_memory_utilization > 0 && *m.gpu_memory_utilization <= 1)) {
    throw InputError(r.field("gpu_memory_utilization"), "expected a fraction of HBM in (0, 1], got " + r.text("gpu_memory_utilization"));
  }
  m.kv_offload_gb = r.number("kv_offload_gb", false);
  if (m.kv_offload_gb && !(*m.kv_offload_gb >= 0 && *m.kv_offload_gb <= 1e6)) {
    throw InputError(r.field("kv_offload_gb"), "expected host-memory GB per replica in [0, 1e6], got " + r.text("kv_offload_gb"));
  }
  m.microbatch = r.integer("microbatch", 1);
  m.schedule = r.closed("schedule");
  m.virtual_stages = r.integer("virtual_stages", 1);
  m.recompute = r.closed("recompute");
  m.zero = r.closed("zero");
  m.train_tokens = r.number("train_tokens", true);
  m.step_tokens = r.number("step_tokens", true);
  m.operation = r.closed("operation");
  m.shape = r.text("shape");
  m.message_bytes = r.number("message_bytes", true);
  {
    const std::string a = r.text("assumed");
    std::size_t start = 0;
    while (!a.empty() && start <= a.size()) {
      const auto semi = a.find(';', start);
      const std::string col = trim(a.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
      const auto& cols = measurement_columns();
      if (std::find(cols.begin(), cols.end(), col) == cols.end()) {
        throw InputError(r.field("assumed"), "'" + col + "' is not a column");
      }
      if (r.text(col).empty()) throw InputError(r.field("assumed"), "'" + col + "' is listed as assumed but the row leaves it empty");
      m.assumed.push_back(col);
      m.assumed_values.push_back(r.text(col));
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
  }
  // Provenance: kept verbatim, never read for a prediction.
  auto raw = [&](const char* col) {
    const auto it = cells.find(col);
    return it == cells.end() ? std::string() : it->second;
  };
  m.source = raw("source");
  m.location = raw("location");
  m.confidence = raw("confidence");
  m.notes = raw("notes");

  // What the kind and metric need.
  r.need(!m.hardware.empty(), "hardware", "a built-in system name or a chalk-hardware/1 file");
  // Serving, decode and prefill rows without chips run on dp (default 1) replicas of the
  // smallest that holds the model: a throughput of the whole system (tokens/s without
  // _per_chip) is then read as those replicas' (the row's assumption says so). A training
  // or whole-run row without chips runs on the product of its stated degrees when it states
  // dp, a model card's GPU-hours on the middle of the clusters its plan fits (validate's
  // defaults, docs/file-formats.md). Only a training step, or a run's wall-clock, with no
  // dp has no default: the cluster is what they measure.
  const bool whole_system = m.metric == "output_tok_per_s" || m.metric == "prefill_tok_per_s" || m.metric == "train_tok_per_s";
  const bool chips_default = m.kind == "decode" || m.kind == "prefill" || m.kind == "serving" || m.dp.has_value() ||
                             (m.kind == "run" && m.metric == "gpu_hours");
  r.need(m.chips.has_value() || chips_default, "chips",
         "all chips of the measured system, or dp with the other degrees" +
             std::string(m.kind == "run" ? " (a run's wall_hours depend on them)" : whole_system ? " (" + m.metric + " counts the whole system)" : ""));
  if (m.kind == "microbenchmark") {
    r.need(!m.operation.empty(), "operation", "a microbenchmark row names its operation (" + join(*vocabulary("operation")) + ")");
    return m;
  }
  r.need(!m.model.empty(), "model", "a built-in model name, an HF repo id or a path to a config.json or chalk-model file");
  const bool numeric_batch = !m.batch.empty() && m.batch != "max";
  if (numeric_batch) r.need(!m.batch_per.empty(), "batch_per", "batch " + m.batch + " counts sequences per run, replica or chip");
  if (m.dp && m.chips && *m.chips % *m.dp != 0) {
    throw InputError(r.field("dp"), std::to_string(*m.dp) + " replicas do not divide the " + std::to_string(*m.chips) + " chips");
  }
  if (m.cached_tokens && (!m.input_tokens || *m.cached_tokens >= *m.input_tokens)) {
    throw InputError(r.field("cached_tokens"), "the cached prefix must be shorter than input_tokens");
  }
  if (m.accepted_tokens) {
    r.need(m.draft_tokens.has_value(), "draft_tokens", "accepted_tokens " + r.text("accepted_tokens") + " needs the draft length");
    if (*m.accepted_tokens < 1 || *m.accepted_tokens > static_cast<double>(*m.draft_tokens + 1)) {
      throw InputError(r.field("accepted_tokens"), "expected between 1 and draft_tokens + 1 = " + std::to_string(*m.draft_tokens + 1) +
                                                        ", got " + r.text("accepted_tokens"));
    }
  }
  // A dataset that publishes its mean prompt stands for input_tokens (validate's default).
  const bool input_known = m.input_tokens || (dataset && dataset->input_tokens_mean);
  if (m.kind == "decode") {
    // An empty batch is validate's default: a throughput row's is what the engine admits
    // under its KV budget at the row's context, a latency's one sequence.
    const bool throughput = m.metric == "output_tok_per_s" || m.metric == "output_tok_per_s_per_chip";
    if (m.batch == "max" && !throughput) {
      throw InputError(r.field("batch"), "max (what the engine admits) is for a throughput; a decode latency states the sequences in flight, or leaves it empty for one");
    }
    r.need(m.context || input_known, "context", "a decode row states the KV tokens of its step (context), or input_tokens");
    if (m.metric == "decode_s") r.need(m.output_tokens.has_value(), "output_tokens", "decode_s is the time of output_tokens steps");
  } else if (m.kind == "prefill") {
    r.need(input_known, "input_tokens", "a prefill row states its prompt length" + std::string(dataset ? " (dataset " + m.dataset + " publishes no mean input)" : ""));
    const bool throughput = m.metric == "prefill_tok_per_s" || m.metric == "prefill_tok_per_s_per_chip";
    if (m.batch == "max" && !throughput) {
      throw InputError(r.field("batch"), "max (what the engine admits) is for a throughput; a prefill latency states the prompts prefilled together, or leaves it empty for one");
    }
  } else if (m.kind == "serving") {
    const std::string no_input = dataset ? " (dataset " + m.dataset + " publishes no mean input)" : " (or a dataset that publishes it)";
    const std::string no_output = dataset ? " (dataset " + m.dataset + " publishes no mean output)" : " (or a dataset that publishes it)";
    r.need(m.input_tokens || (dataset && dataset->input_tokens_mean), "input_tokens", "a serving row states the mean prompt" + no_input);
    r.need(m.output_tokens || (dataset && dataset->output_tokens_mean), "output_tokens", "a serving row states the mean generated tokens" + no_output);
    // An empty batch without a request rate is validate's default: a throughput row's is
    // what the engine admits (`max`), a latency's one request. `max` is for throughputs.
    if ((m.metric == "e2e_s" && !m.request_rate_per_s) || m.metric == "mfu_pct") {
      if (m.batch == "max") throw InputError(r.field("batch"), "max (what the engine admits) is for a throughput; " + m.metric + " is predicted at a stated batch, one when empty (or, e2e_s, a request_rate_per_s)");
    }
  } else if (m.kind == "training" || m.kind == "run") {
    if (m.kind == "run") r.need(m.train_tokens.has_value(), "train_tokens", "a whole run states its total tokens");
    r.need(m.input_tokens.has_value(), "input_tokens", "a " + m.kind + " row states its sequence length");
    r.need(numeric_batch || m.step_tokens, "batch", "a " + m.kind + " row states the sequences per step, or step_tokens (tokens per step)");
    if (numeric_batch && m.step_tokens) {
      // Both stated: they must agree within a published rounding ("4M tokens" for 4,194,304).
      const double seqs = std::stod(m.batch) * (m.batch_per == "chip" && m.chips ? static_cast<double>(*m.chips) : 1.0);
      const double tokens = seqs * static_cast<double>(*m.input_tokens);
      if (std::fabs(tokens / *m.step_tokens - 1) > 0.05) {
        throw InputError(r.field("step_tokens"), r.text("step_tokens") + " tokens per step contradict batch " + m.batch + " x input_tokens " +
                                                     std::to_string(*m.input_tokens) + " = " + std::to_string(static_cast<int64_t>(tokens)) +
                                                     " (expected within 5%; leave one of batch and step_tokens empty)");
      }
    }
  }
  return m;
}

}  // namespace chalk::detail
