// The widening of an integer count (tokens, parameters, layers, bytes) to double that the
// library's cost formulas write as d(n).
//
// Library files once each defined their own `double d(int64_t)` in an anonymous namespace.
// chalk_core compiles as unity batches (CMakeLists.txt), where two such definitions in one
// batch are a redefinition; a using-declaration may repeat, so each file now names this one
// (`using counts::d;` in its anonymous namespace) and every call reads as before.
#pragma once

#include <cstdint>

namespace chalk::counts {

/// `x` as a double: exact for |x| < 2^53, correctly rounded beyond. No error path.
constexpr double d(std::int64_t x) { return static_cast<double>(x); }

}  // namespace chalk::counts
