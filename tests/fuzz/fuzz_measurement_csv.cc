// Fuzzes the measurements CSV reader (parse_measurements, src/validate/measurement_csv.cc):
// RFC 4180 records, the header, and every row through the strict field reader. The one
// allowed failure is chalk::InputError; with keep_going a bad row must land in `unreadable`
// (header and quoting faults still throw). An accepted row must hold a finite, non-negative
// value, a non-empty id, and read the same again when the same bytes are parsed twice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chalk/base/error.h"
#include "chalk/validate/measurement.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  chalk::MeasurementFile strict, lenient;
  bool strict_ok = true;
  try {
    strict = chalk::parse_measurements(text, "fuzz.csv");
  } catch (const chalk::InputError&) {
    strict_ok = false;
  }
  try {
    lenient = chalk::parse_measurements(text, "fuzz.csv", /*keep_going=*/true);
  } catch (const chalk::InputError&) {
    // A header or quoting fault throws in both modes.
    CHALK_FUZZ_CHECK(!strict_ok);
    return 0;
  }
  // The rows strict parsing accepts are exactly the rows keep_going keeps when none is bad.
  if (strict_ok) {
    CHALK_FUZZ_CHECK(lenient.unreadable.empty());
    CHALK_FUZZ_CHECK(lenient.rows.size() == strict.rows.size());
  } else {
    CHALK_FUZZ_CHECK(!lenient.unreadable.empty());
  }
  for (const auto& row : lenient.rows) {
    CHALK_FUZZ_CHECK(!row.id.empty());
    CHALK_FUZZ_CHECK(chalk::fuzz::finite_nonneg(row.value));
  }
  for (const auto& bad : lenient.unreadable) CHALK_FUZZ_CHECK(!bad.error.empty() && bad.line >= 1);
  return 0;
}
