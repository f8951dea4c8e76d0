// Fuzzes the chalk-prices/1 reader. An accepted sheet must survive the round trip
// `prices show --json` makes: written by price_sheet_to_json and read back, it is accepted
// again, and holds no JSON null (a null where a price was, from a NaN, fails this; the word
// "null" inside a free-text field does not: regressions/price_sheet/word-null-inside-notes.json).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"
#include "fuzz_common.h"

namespace {
bool holds_null(const nlohmann::json& j) {
  if (j.is_null()) return true;
  if (j.is_structured()) {
    for (const auto& v : j) {
      if (holds_null(v)) return true;
    }
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  chalk::PriceSheet s;
  try {
    s = chalk::price_sheet_from_json(text, "fuzz.json");
  } catch (const chalk::InputError&) {
    return 0;
  }
  const std::string written = chalk::price_sheet_to_json(s);
  CHALK_FUZZ_CHECK(!holds_null(nlohmann::json::parse(written)));
  try {
    chalk::price_sheet_from_json(written, "round trip");
  } catch (const chalk::InputError& e) {
    std::fprintf(stderr, "round trip refused: %s\n", e.what());
    CHALK_FUZZ_CHECK(false && "price_sheet_to_json wrote a sheet its reader refuses");
  }
  return 0;
}
