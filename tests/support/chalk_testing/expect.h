#pragma once
// Assertions shared by the library's tests (src/**/*_test.cc). One definition here, so
// that the tests can be compiled as unity batches (CMakeLists.txt) without two files'
// private copies of a helper colliding.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace chalk::testing {

/// |got - want| / |want|: the relative error of `got` (want must be non-zero).
inline double rel(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

/// Expects `got` within a fraction `rel` of `want`: |got - want| <= rel * |want|.
/// `what` names the quantity in the failure message.
inline void expect_rel(double got, double want, double rel, const std::string& what = "") {
  EXPECT_NEAR(got, want, rel * std::fabs(want)) << what << (what.empty() ? "" : ": ") << got << " vs " << want;
}

}  // namespace chalk::testing
