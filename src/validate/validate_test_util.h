// Helpers the validate tests share (test-only): run rows, find one by id, read a summary or an
// assumption, catch the error a CSV raises.
#pragma once

#include <stdexcept>
#include <string>

#include "chalk/base/error.h"
#include "chalk/validate/validate.h"
#include "measurement_row.h"

namespace chalk::testing_util {

/// `csv` parsed as measurement rows and predicted (parse_measurements, validate_measurements).
inline ValidationReport validate_csv(const std::string& csv, bool keep_going = false) {
  return validate_measurements(parse_measurements(csv, "d.csv").rows, keep_going);
}

/// The row `id` of a report; std::runtime_error when it has none.
inline const Prediction& find_row(const ValidationReport& r, const std::string& id) {
  for (const auto& p : r.rows) {
    if (p.id == id) return p;
  }
  throw std::runtime_error("no row " + id);
}

/// The summary of `kind` over `subset` and `metric` ("all": every metric); std::runtime_error
/// when the report has none.
inline const ErrorSummary& summary(const ValidationReport& r, const std::string& kind, const std::string& subset = "all rows",
                                   const std::string& metric = "all") {
  for (const auto& s : r.summary) {
    if (s.kind == kind && s.subset == subset && s.metric == metric) return s;
  }
  throw std::runtime_error("no summary " + kind + " " + metric);
}

/// The assumption of `p` that starts with `prefix` ("" when none does).
inline std::string assumption(const Prediction& p, const std::string& prefix) {
  for (const auto& a : p.assumptions) {
    if (a.rfind(prefix, 0) == 0) return a;
  }
  return "";
}

/// The InputError `csv` raises when validated ("" when it raises none).
inline std::string error_of(const std::string& csv) {
  try {
    validate_csv(csv);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace chalk::testing_util
