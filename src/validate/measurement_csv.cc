// Reading measurement rows (reference/measurements.csv format).
#include <set>

#include "chalk/base/error.h"
#include "chalk/validate/validate.h"
#include "chalk/io/embedded.h"

namespace chalk {
namespace {

/// Splits CSV text into records of fields, with each record's starting line.
std::vector<std::pair<int64_t, std::vector<std::string>>> split_csv(std::string_view text, const std::string& where) {
  std::vector<std::pair<int64_t, std::vector<std::string>>> records;
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, any = false;
  int64_t line = 1, start = 1;
  auto end_record = [&] {
    if (any || !field.empty() || !fields.empty()) {
      fields.push_back(field);
      records.emplace_back(start, fields);
    }
    fields.clear();
    field.clear();
    any = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\r') {
      // tolerated before \n
    } else if (c == '\n') {
      end_record();
      ++line;
      start = line;
    } else {
      if (fields.empty() && field.empty() && !any) start = line;
      field += c;
      any = true;
    }
  }
  if (quoted) throw InputError(where + ": line " + std::to_string(start), "unterminated quoted field");
  end_record();
  return records;
}

}  // namespace

const std::vector<std::string>& measurement_columns() {
  static const std::vector<std::string> cols = {
      "id", "kind", "model", "model_shape", "hardware", "num_chips", "interconnect", "precision_weights",
      "precision_kv_or_activations", "parallelism", "batch_or_concurrency", "input_len", "output_len_or_context", "metric",
      "value", "unit", "hw_peak_specs", "source", "source_location", "confidence", "notes"};
  return cols;
}

std::vector<Measurement> parse_measurements(std::string_view text, const std::string& where) {
  const auto records = split_csv(text, where);
  if (records.empty()) throw InputError(where, "empty file; expected a header row: " + measurement_columns().front() + ",kind,...");
  const auto& cols = measurement_columns();
  const auto& header = records.front().second;
  for (std::size_t i = 0; i < std::max(header.size(), cols.size()); ++i) {
    if (i >= header.size()) throw InputError(where + ": header", "missing column '" + cols[i] + "'");
    if (i >= cols.size()) throw InputError(where + ": header", "unexpected column '" + header[i] + "'");
    if (header[i] != cols[i]) {
      throw InputError(where + ": header", "column " + std::to_string(i + 1) + " is '" + header[i] + "', expected '" + cols[i] + "'");
    }
  }
  std::vector<Measurement> out;
  std::set<std::string> seen;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& [line, f] = records[r];
    const std::string at = where + ": line " + std::to_string(line);
    if (f.size() != cols.size()) {
      throw InputError(at, "expected " + std::to_string(cols.size()) + " fields, got " + std::to_string(f.size()));
    }
    Measurement m;
    m.line = line;
    std::string* dst[] = {&m.id, &m.kind, &m.model, &m.model_shape, &m.hardware, &m.num_chips, &m.interconnect,
                          &m.precision_weights, &m.precision_kv_or_activations, &m.parallelism, &m.batch_or_concurrency,
                          &m.input_len, &m.output_len_or_context, &m.metric, &m.value, &m.unit, &m.hw_peak_specs,
                          &m.source, &m.source_location, &m.confidence, &m.notes};
    for (std::size_t i = 0; i < cols.size(); ++i) *dst[i] = f[i];
    if (m.id.empty()) throw InputError(at + ": id", "empty id; every row needs one");
    if (!seen.insert(m.id).second) throw InputError(at + ": id", "repeated id '" + m.id + "'");
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Measurement> builtin_measurements() {
  const auto text = detail::embedded_file("measurements/measurements.csv");
  if (!text) throw InputError("data/measurements/measurements.csv", "not compiled in; rebuild chalk");
  return parse_measurements(*text, "built-in measurements");
}

}  // namespace chalk
