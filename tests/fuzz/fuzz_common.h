// Shared by the fuzz harnesses (tests/fuzz/README.md): what counts as a finding.
// A harness feeds bytes to one parser. chalk::InputError is the one allowed failure; any
// other exception escapes and libFuzzer reports it, as it reports a sanitizer finding, a
// timeout or a figure that is not finite (CHALK_FUZZ_CHECK traps).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

#define CHALK_FUZZ_CHECK(cond)                                                             \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

namespace chalk::fuzz {
inline bool finite_nonneg(double x) { return std::isfinite(x) && x >= 0; }
}  // namespace chalk::fuzz
