// Fuzzes the CLI's number and list arguments (apps/chalk/arg_parse.h): the first byte
// picks the parser, the rest is the argument. Every value returned is within its range.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

#include "arg_parse.h"
#include "chalk/base/error.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: {
        constexpr int64_t lo = 1, hi = int64_t{1} << 30;  // --context
        for (int64_t v : chalk::cli::parse_int_list(text, "--context", lo, hi)) CHALK_FUZZ_CHECK(v >= lo && v <= hi);
        break;
      }
      case 1: {
        for (double v : chalk::cli::parse_positive_list(text, "--speed-multiple")) CHALK_FUZZ_CHECK(std::isfinite(v) && v > 0);
        break;
      }
      case 2: {
        const int64_t v = chalk::cli::parse_integer(text, "--chips");
        // A whole number in scientific notation is read too ("1e9", "60E0": review 11a item 8):
        // then the text is a finite double with nothing after it, whole, within int64, and v.
        if (text.find_first_of("eE") != std::string::npos) {
          double d = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d, std::chars_format::scientific);
          CHALK_FUZZ_CHECK(ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(d));
          CHALK_FUZZ_CHECK(d == std::floor(d) && std::fabs(d) < 9.2e18 && v == static_cast<int64_t>(d));
          break;
        }
        // Otherwise strict: the text is only an optional '-' and decimal digits (leading zeros are
        // decimal, "09" = 9: found by this harness), and it is the number parsed.
        const size_t digits = text[0] == '-' ? 1 : 0;
        CHALK_FUZZ_CHECK(text.size() > digits && text.find_first_not_of("0123456789", digits) == std::string::npos);
        const std::string canonical = std::to_string(v);
        const size_t first = text.find_first_not_of('0', digits);
        CHALK_FUZZ_CHECK(first == std::string::npos ? v == 0 : canonical.substr(canonical[0] == '-' ? 1 : 0) == text.substr(first));
        break;
      }
      case 3: {
        CHALK_FUZZ_CHECK(std::isfinite(chalk::cli::parse_number(text, "--price")));
        break;
      }
    }
  } catch (const chalk::InputError&) {
  }
  return 0;
}
