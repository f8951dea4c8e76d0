// Reading a measurements CSV (docs/file-formats.md, "Measurements"): records, the header,
// and each row through measurement_row.cc's strict field reader.
#include <algorithm>
#include <map>
#include <set>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "chalk/validate/measurement.h"
#include "measurement_row.h"

namespace chalk::detail {

std::vector<CsvRecord> split_csv(std::string_view text, const std::string& where) {
  std::vector<CsvRecord> records;
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

EmbeddedTable read_embedded_table(const std::string& path) {
  EmbeddedTable t;
  t.where = "data/" + path;
  const auto text = embedded_file(path);
  if (!text) throw InputError(t.where, "not compiled in; rebuild chalk");
  t.records = split_csv(*text, t.where);
  if (t.records.empty()) throw InputError(t.where, "empty file; expected a header row");
  return t;
}

std::size_t EmbeddedTable::column(const std::string& name) const {
  const auto& header = records.front().second;
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) throw InputError(where + ": header", "missing column '" + name + "'");
  return static_cast<std::size_t>(it - header.begin());
}

}  // namespace chalk::detail

namespace chalk {
using detail::split_csv;

const std::vector<std::string>& measurement_columns() {
  static const std::vector<std::string> cols = {
      "id", "kind", "model", "hardware", "chips", "tp", "pp", "dp", "ep", "expert_tp", "cp", "attention", "ffn_layout",
      "prefill_ffn_layout", "kv_split", "padded_heads", "weights", "kv", "dispatch", "combine", "compute", "batch",
      "batch_per", "prefill_batch", "requests", "request_rate_per_s", "arrivals", "input_tokens", "cached_tokens", "output_tokens",
      "context", "dataset", "draft_tokens", "accepted_tokens", "drafter", "attention_draft_tokens", "two_batch_overlap", "eplb", "ep_dispatcher", "ep_overlap", "sequence_parallel", "fp8_recipe", "engine", "compile", "kv_admission", "chunked_prefill",
      "max_batched_tokens", "max_sequences", "gpu_memory_utilization", "kv_offload_gb", "microbatch",
      "schedule", "virtual_stages", "recompute", "zero", "train_tokens", "step_tokens", "operation", "shape", "message_bytes", "metric",
      "value", "assumed", "source", "location", "confidence", "notes"};
  return cols;
}

MeasurementFile parse_measurements(std::string_view text, const std::string& where, bool keep_going, const std::string& base_dir) {
  // A UTF-8 byte-order mark before the header (Excel's "CSV UTF-8" writes one) is not part
  // of the first column's name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const auto records = split_csv(text, where);
  if (records.empty()) throw InputError(where, "empty file; expected a header row naming the columns (id,kind,model,...)");
  const auto& known = measurement_columns();
  const std::set<std::string> known_set(known.begin(), known.end());
  const auto& header = records.front().second;
  std::set<std::string> seen_cols;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string& h = header[i];
    if (!known_set.count(h)) {
      throw InputError(where + ": header", "unknown column '" + h + "' (column " + std::to_string(i + 1) +
                                               "); the columns are listed in docs/file-formats.md, \"Measurements\"");
    }
    if (!seen_cols.insert(h).second) throw InputError(where + ": header", "repeated column '" + h + "'");
  }
  for (const char* need : {"id", "kind", "metric", "value"}) {
    if (!seen_cols.count(need)) throw InputError(where + ": header", std::string("missing column '") + need + "'");
  }
  MeasurementFile out;
  std::set<std::string> ids;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& [line, f] = records[r];
    const std::string at = where + ": line " + std::to_string(line);
    std::string id = f.empty() ? "" : detail::trim_cell(f.front());
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) {
      if (header[i] == "id") id = detail::trim_cell(f[i]);
    }
    try {
      if (f.size() != header.size()) {
        throw InputError(at, "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
      }
      std::map<std::string, std::string> cells;
      for (std::size_t i = 0; i < header.size(); ++i) cells[header[i]] = f[i];
      if (id.empty()) throw InputError(at + ": id", "empty id; every row needs one");
      if (!ids.insert(id).second) throw InputError(at + ": " + id + ": id", "repeated id '" + id + "'");
      Measurement m = detail::read_measurement_row(cells, at + ": " + id);
      m.file = where;
      m.line = line;
      m.base_dir = base_dir;
      out.rows.push_back(std::move(m));
    } catch (const InputError& e) {
      if (!keep_going) throw;
      out.unreadable.push_back({id, line, e.what()});
    }
  }
  return out;
}

std::vector<Measurement> builtin_measurements() {
  const auto text = detail::embedded_file("measurements/measurements.csv");
  if (!text) throw InputError("data/measurements/measurements.csv", "not compiled in; rebuild chalk");
  // Relative model paths name files compiled in beside the rows (data/measurements/models/).
  return parse_measurements(*text, "built-in measurements", false, "builtin:measurements").rows;
}

}  // namespace chalk
