// Benchmark datasets' published mean lengths (data/datasets/datasets.csv): what a
// measurement row that names its dataset instead of its lengths is predicted at; and the
// shape of the lengths, which sets an offline run's running context (running_context_mean).
#include <algorithm>
#include <cstdlib>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "measurement_row.h"

namespace chalk::detail {

std::vector<DatasetLengths> parse_datasets(const EmbeddedTable& table) {
  const std::string& where = table.where;
  const auto& records = table.records;
  const auto& header = records.front().second;
  auto column = [&](const std::string& name) { return table.column(name); };
  const std::size_t c_name = column("name"), c_in = column("input_tokens_mean"), c_out = column("output_tokens_mean"),
                    c_cv = column("output_tokens_cv"), c_w = column("input_output_weight"), c_src = column("source");
  std::vector<DatasetLengths> out;
  for (std::size_t i = 1; i < records.size(); ++i) {
    // Not a structured binding: clang 14 (Debian 12's) cannot capture one in the lambda below.
    const auto& line = records[i].first;
    const auto& f = records[i].second;
    const std::string at = std::string(where) + ": line " + std::to_string(line);
    if (f.size() != header.size()) throw InputError(at, "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    auto mean = [&](std::size_t c, const char* col) -> std::optional<double> {
      const std::string v = trim_cell(f[c]);
      if (v.empty()) return std::nullopt;
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || !(x >= 1)) throw InputError(at + ": " + col, "expected a mean of at least 1 token, got '" + v + "'");
      return x;
    };
    // The shape of the lengths: a coefficient of variation >= 0, a weighting > 0.
    auto shape = [&](std::size_t c, const char* col, bool open) -> std::optional<double> {
      const std::string v = trim_cell(f[c]);
      if (v.empty()) return std::nullopt;
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || !(open ? x > 0 : x >= 0) || !(x < 100)) {
        throw InputError(at + ": " + col, std::string("expected a number ") + (open ? "above" : "of at least") + " 0 and below 100, got '" + v + "'");
      }
      return x;
    };
    DatasetLengths d{trim_cell(f[c_name]), mean(c_in, "input_tokens_mean"), mean(c_out, "output_tokens_mean"),
                     shape(c_cv, "output_tokens_cv", false), shape(c_w, "input_output_weight", true), trim_cell(f[c_src])};
    if (d.name.empty()) throw InputError(at + ": name", "empty; every dataset needs one");
    if (d.source.empty()) throw InputError(at + ": source", "empty; every figure needs its source");
    out.push_back(std::move(d));
  }
  return out;
}

const std::vector<DatasetLengths>& builtin_datasets() {
  static const std::vector<DatasetLengths> all = parse_datasets(read_embedded_table("datasets/datasets.csv"));
  return all;
}

double running_context_mean(double prompt, double output, const DatasetLengths* d) {
  const double cv = d && d->output_tokens_cv ? *d->output_tokens_cv : 0.0;
  const double w = d && d->input_output_weight ? *d->input_output_weight : 1.0;
  return w * prompt + output * (1 + cv * cv) / 2;
}

const DatasetLengths* find_dataset(const std::string& name) {
  for (const auto& d : builtin_datasets()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace chalk::detail
