// Predictions against published measurements (issues 5 and 15; docs/accuracy.md). Rows of
// the measurement format (measurement.h) are read field by field into chalk's inputs,
// predicted twice (the plain roofline, and with the mechanisms of overhead.h) and compared
// with the measured value. Rows chalk cannot predict are kept, with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/model/model.h"
#include "chalk/sim/policy.h"
#include "chalk/validate/measurement.h"

namespace chalk {

/// What validate did with a row.
enum class RowStatus {
  predicted,     ///< read and predicted
  not_modelled,  ///< a kind or metric chalk does not predict yet (training); `reason` says which
  calibration,   ///< a microbenchmark: an input to the efficiencies, never scored
  unreadable,    ///< a field the format rejects (only with keep_going); `reason` names it
  rejected,      ///< a throughput row at `max` batch whose weights fit in no layout; `reason` says so
};
std::string_view to_string(RowStatus s);

/// One row's outcome. Values are in the row's own unit.
struct Prediction {
  std::string id, kind, metric, unit;
  RowStatus status = RowStatus::unreadable;
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

/// Median and 90th percentile of |error| over one kind, subset and metric.
struct ErrorSummary {
  std::string kind;    ///< "decode", "prefill", "serving", "training", "run", or "all"
  std::string subset;  ///< "all rows", "fully specified", "with assumptions"
  /// "all", or one metric key of the measurement format (docs/file-formats.md,
  /// "Measurements"): the serving kind's rows of that metric alone (issue 29's goal is
  /// stated per metric: TTFT, TPOT, end-to-end latency, throughput).
  std::string metric = "all";
  int64_t count = 0;
  double median_abs = 0, p90_abs = 0;              ///< with mechanisms
  double median_abs_plain = 0, p90_abs_plain = 0;  ///< plain roofline
};

/// The p-th percentile (0 <= p <= 1) of `values` by linear interpolation between closest
/// ranks (numpy's default): sorted v, position p (n - 1). Throws InputError when empty
/// or p is outside [0, 1].
double percentile(std::vector<double> values, double p);

/// Summaries per kind ("decode", "prefill", "serving", "training", "run", then "all"), each
/// for all predicted rows, the fully specified ones and those with assumptions (a subset
/// with no rows is omitted), all with metric "all". After the serving kind's three, one
/// summary per metric its predicted rows measure (subset "all rows", metrics in key order).
std::vector<ErrorSummary> summarize(const std::vector<Prediction>& rows);

struct ValidationReport {
  std::vector<Prediction> rows;  ///< one per input row, in input order
  std::vector<ErrorSummary> summary;
};

/// Reads every row's fields into chalk's inputs and predicts it (docs/accuracy.md, "How a
/// row is read"). An input the row leaves empty takes chalk's default, printed among the
/// row's assumptions, as is every column the row's `assumed` lists. Throws InputError
/// naming the row id and the column for a field chalk cannot use (a model or system it
/// cannot find, a degree that does not divide the chips, a batch or context beyond the
/// CLI's ranges); with `keep_going` such a row is kept with status unreadable and the error
/// as its reason. A doubtful row (weights and KV not fitting in HBM, a tensor-parallel
/// degree the heads do not divide, a context beyond the model's maximum) is predicted with
/// a note saying so. A throughput row at `max` batch that fits in no layout is kept with
/// status rejected.
/// With `profile` (chalk calibrate's engine profile), the rows whose engine is the profile's
/// (engine_family, any release) are predicted with its constants instead of the engine's
/// defaults: the kernel floor, the host time per sequence and the request overhead; each such
/// row gets a note saying so.
ValidationReport validate_measurements(const std::vector<Measurement>& rows, bool keep_going = false,
                                       const sim::EngineProfile* profile = nullptr);

/// The model a row names, read as validate reads it (a built-in name, an HF repo id whose
/// name is built in, or a path relative to the row's CSV; the built-in rows' paths are
/// files compiled in from data/measurements/). Throws InputError "<id>: model" when chalk
/// has no such model. For the training module, which predicts the training rows.
ModelSpec measurement_model(const Measurement& row);

/// The rows of `file` that could not be read (parse_measurements with keep_going), as
/// report rows with status unreadable, for listing beside the predicted ones.
std::vector<Prediction> unreadable_rows(const MeasurementFile& file);

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
