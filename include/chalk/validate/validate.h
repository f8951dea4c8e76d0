// Predictions against published measurements (issue 5; docs/accuracy.md). Rows in the
// format of reference/measurements.csv are mapped to chalk's inputs, predicted twice (the
// plain roofline, and with the mechanisms of overhead.h) and compared with the measured
// value. Rows chalk cannot predict are kept, with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chalk {

/// One row of a measurements file, fields as written (the columns of
/// reference/measurements.csv, in that order).
struct Measurement {
  int64_t line = 0;  ///< 1-based line of the row's start in its file
  std::string id, kind, model, model_shape, hardware, num_chips, interconnect, precision_weights,
      precision_kv_or_activations, parallelism, batch_or_concurrency, input_len, output_len_or_context, metric, value,
      unit, hw_peak_specs, source, source_location, confidence, notes;
};

/// The 21 column names, in order.
const std::vector<std::string>& measurement_columns();

/// Parses CSV text (RFC 4180: quoted fields may hold commas, newlines and doubled quotes)
/// whose header row holds exactly the 21 columns of measurement_columns(). Throws
/// InputError naming `where` and the line for a missing or extra column, an unterminated
/// quote, a row with the wrong number of fields, or an empty or repeated id.
std::vector<Measurement> parse_measurements(std::string_view csv_text, const std::string& where);

/// The repository's own rows, data/measurements/measurements.csv (compiled in).
std::vector<Measurement> builtin_measurements();

/// What validate did with a row.
enum class RowStatus {
  predicted,     ///< mapped and predicted
  not_modelled,  ///< a kind chalk does not model yet (training)
  calibration,   ///< a microbenchmark: an input to the efficiencies, never scored
  unmapped,      ///< a field validate could not map; `reason` says which
};
std::string_view to_string(RowStatus s);

/// One row's outcome. Values are in the row's own unit.
struct Prediction {
  std::string id, kind, metric, unit;
  RowStatus status = RowStatus::unmapped;
  std::string reason;          ///< why the row is not predicted
  std::string inputs;          ///< chalk's inputs, e.g. "deepseek-r1 on 8 x b200, batch 1, context 2048"
  std::string layout;          ///< the parallel layout used, stated or derived
  double measured = 0;
  double predicted = 0;        ///< with the mechanisms
  double predicted_plain = 0;  ///< the plain roofline
  double error = 0;            ///< predicted / measured - 1 (signed)
  double error_plain = 0;
  std::string governs;         ///< with mechanisms: compute, weights, kv-cache, communication, overhead
  std::string bound_plain;     ///< the plain roofline's bound
  /// Inputs the row leaves unstated and the value validate assumed for each.
  std::vector<std::string> assumptions;
  /// How a stated input was read (derivations, not assumptions).
  std::vector<std::string> notes;
  bool fully_specified() const { return assumptions.empty(); }
};

/// Median and 90th percentile of |error| over one kind and subset.
struct ErrorSummary {
  std::string kind;    ///< "decode", "prefill", "end-to-end serving", or "all"
  std::string subset;  ///< "all rows", "fully specified", "with assumptions"
  int64_t count = 0;
  double median_abs = 0, p90_abs = 0;              ///< with mechanisms
  double median_abs_plain = 0, p90_abs_plain = 0;  ///< plain roofline
};

/// The p-th percentile (0 <= p <= 1) of `values` by linear interpolation between closest
/// ranks (numpy's default): sorted v, position p (n - 1). Throws InputError when empty
/// or p is outside [0, 1].
double percentile(std::vector<double> values, double p);

/// Summaries per kind ("decode", "prefill", "end-to-end serving", then "all"), each for
/// all predicted rows, the fully specified ones and those with assumptions (a subset
/// with no rows is omitted).
std::vector<ErrorSummary> summarize(const std::vector<Prediction>& rows);

struct ValidationReport {
  std::vector<Prediction> rows;  ///< one per input row, in input order
  std::vector<ErrorSummary> summary;
};

/// Maps and predicts every row (see docs/accuracy.md for the mapping rules). Never
/// throws for a row it cannot map: the row is kept with status unmapped and the reason.
/// A field that refers to another row ("as SGL-H100-DECODE") takes that row's field.
ValidationReport validate_measurements(const std::vector<Measurement>& rows);

/// One calibrated constant of the mechanisms, with the microbenchmark behind it.
struct CalibrationEntry {
  std::string name;   ///< e.g. "kernel_floor_us"
  double value = 0;
  std::string rows;   ///< measurement ids it comes from
  std::string source;
};

/// The calibrated constants and the catalog efficiencies they complement.
std::vector<CalibrationEntry> calibration_entries();

}  // namespace chalk
