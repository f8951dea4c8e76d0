#pragma once
// Reading explanations (chalk/engine/explain.h) in the library's tests: one definition for
// the engine's, serving's and training's explanation tests (unity batches, expect.h).
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/engine/explain.h"

namespace chalk::testing {

/// The explanations by the output key they explain.
inline std::map<std::string, Explanation> explanations_by_key(const std::vector<Explanation>& xs) {
  std::map<std::string, Explanation> m;
  for (const auto& x : xs) m[x.key] = x;
  return m;
}

/// The value put in for `symbol`; a test failure (and 0) when the explanation has none.
inline double explained_input(const Explanation& x, const std::string& symbol) {
  for (const auto& i : x.inputs) {
    if (i.symbol == symbol) return i.value;
  }
  ADD_FAILURE() << x.key << " has no input " << symbol;
  return 0;
}

}  // namespace chalk::testing
