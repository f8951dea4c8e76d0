// Internal to validate: reading one measurement row's cells strictly
// (measurement_row.cc) and the vocabularies of docs/file-formats.md, "Measurements".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chalk/validate/measurement.h"

namespace chalk::detail {

/// Reads one row's cells (column -> text). `at` prefixes every error: "<where>: line N:
/// <id>"; each InputError's field is `at: <column>`. Checks every closed vocabulary, every
/// number, the metrics a kind has, and the inputs the kind and metric need.
Measurement read_measurement_row(const std::map<std::string, std::string>& cells, const std::string& at);

/// A cell as every reader sees it: spaces and tabs at either end removed.
std::string trim_cell(std::string_view s);

/// The weight, KV and dispatch formats a row may name (measurement_vocabulary.cc).
extern const std::vector<std::string> kMeasurementFormats;

/// The closed vocabulary of a column, or nullptr for an open one.
const std::vector<std::string>* vocabulary(const std::string& column);

/// The metrics a kind has.
const std::vector<std::string>& metrics_of_kind(const std::string& kind);

/// `weights` as (part, format) pairs: one format alone is ("", format); parts are
/// attention, ffn, experts, embeddings. Throws InputError(field, ...) on anything else.
std::vector<std::pair<std::string, std::string>> weight_parts(const std::string& text, const std::string& field);

/// One CSV record: its starting line and its fields (RFC 4180).
using CsvRecord = std::pair<int64_t, std::vector<std::string>>;
/// Splits CSV text into records (quoted fields may hold commas, newlines and doubled
/// quotes). Throws InputError(where) on an unterminated quote.
std::vector<CsvRecord> split_csv(std::string_view text, const std::string& where);

/// A table of data/ compiled into chalk (embedded_file), read by split_csv: `records[0]` is
/// the header. `where` ("data/drafters/acceptance.csv") prefixes every error.
struct EmbeddedTable {
  std::string where;
  std::vector<CsvRecord> records;
  /// The index of column `name` in the header; throws InputError("<where>: header",
  /// "missing column 'name'").
  std::size_t column(const std::string& name) const;
};
/// Reads `path` under data/ ("datasets/datasets.csv"). Throws InputError(where) when the file
/// is not compiled in or has no header row.
EmbeddedTable read_embedded_table(const std::string& path);

/// A benchmark dataset's published mean lengths (data/datasets/datasets.csv), and the shape of
/// its per-sample lengths where a per-sample file is in reach.
struct DatasetLengths {
  std::string name;
  std::optional<double> input_tokens_mean, output_tokens_mean;  ///< unset: not published
  /// Coefficient of variation of the generated tokens L (std / mean, >= 0), and the prompts'
  /// weighting by output length E[P L] / (E[P] E[L]) (> 0; 1 when P and L are independent).
  /// Unset: no per-sample file read.
  std::optional<double> output_tokens_cv, input_output_weight;
  std::string source;  ///< where the figures are stated
};

/// Mean KV tokens of a running sequence in an offline run's steady state (docs/formulas.md,
/// "Running sequences are length-biased"): each batch slot runs one request after another, and
/// a request of L generated tokens holds its slot for L steps, so the batch samples requests
/// in proportion to L (renewal theory's inspection paradox). Its prompt averages
/// E[P L] / E[L] = w P and its tokens generated so far E[L^2] / (2 E[L]) = L (1 + cv^2) / 2:
/// w P + L (1 + cv^2) / 2 tokens, in tokens (`prompt` P and `output` L are the means).
/// Without a dataset's shape (`d` null or its fields unset: cv 0, w 1) it is P + L / 2, the
/// context of requests that all have the mean lengths.
double running_context_mean(double prompt, double output, const DatasetLengths* d);

/// The datasets of `table` (datasets.csv's columns; records[0] the header), in order. Throws
/// InputError("<where>: line N[: column]") on a record whose field count differs from the
/// header's, a mean below 1 token, an output_tokens_cv outside [0, 100) or an
/// input_output_weight outside (0, 100), an empty name or source.
std::vector<DatasetLengths> parse_datasets(const EmbeddedTable& table);

/// Every dataset of data/datasets/datasets.csv (compiled in), in file order.
const std::vector<DatasetLengths>& builtin_datasets();

/// The dataset named `name`, or nullptr.
const DatasetLengths* find_dataset(const std::string& name);

/// A drafter's published tokens kept per step (data/drafters/acceptance.csv): the mean
/// acceptance length (accepted drafts + the target's own token) of `drafter` drafting a chain
/// of `draft_tokens` for a target of HF model_type `family`, measured on chalk model `model`.
struct DrafterAcceptance {
  std::string drafter, family, model;
  int64_t draft_tokens = 0;
  double accepted_tokens = 0;
  std::string source;  ///< where the figure is stated
};

/// Every row of data/drafters/acceptance.csv (compiled in), in file order.
const std::vector<DrafterAcceptance>& builtin_drafters();

/// The row for `drafter` on `family` nearest `k` drafts (at equal distance, the one measured
/// on `model`), or nullptr when the table has no row for that drafter and family.
const DrafterAcceptance* find_drafter_row(const std::string& drafter, const std::string& family, const std::string& model, int64_t k);

/// Checks a row's `drafter` cell (`field` names it in errors): empty, `mtp` (the model's own
/// MTP module) or a drafter of data/drafters/acceptance.csv, with `draft_tokens` above 0.
void check_drafter(const std::string& drafter, const std::optional<int64_t>& draft_tokens, const std::string& field);

/// The per-draft acceptance a for which k drafts keep `kept` tokens per step,
/// (1 - a^(k+1)) / (1 - a) = kept (Leviathan et al. 2023, Eq. 1); kept in (1, k + 1].
double per_draft_acceptance(int64_t k, double kept);

}  // namespace chalk::detail
