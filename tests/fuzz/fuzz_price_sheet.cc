// Fuzzes the chalk-prices/1 reader. An accepted sheet must survive the round trip
// `prices show --json` makes: written by price_sheet_to_json and read back, it is accepted
// again (a null where a price was, from a NaN, fails this).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  chalk::PriceSheet s;
  try {
    s = chalk::price_sheet_from_json(text, "fuzz.json");
  } catch (const chalk::InputError&) {
    return 0;
  }
  const std::string written = chalk::price_sheet_to_json(s);
  CHALK_FUZZ_CHECK(written.find("null") == std::string::npos);
  try {
    chalk::price_sheet_from_json(written, "round trip");
  } catch (const chalk::InputError& e) {
    std::fprintf(stderr, "round trip refused: %s\n", e.what());
    CHALK_FUZZ_CHECK(false && "price_sheet_to_json wrote a sheet its reader refuses");
  }
  return 0;
}
