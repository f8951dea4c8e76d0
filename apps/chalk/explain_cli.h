// How the front ends show the library's explanations (chalk/engine/explain.h): as JSON
// (the "explanations" of --json, which the web page shows when a number is clicked) and
// as the algebra `--explain` prints under a table.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/engine/explain.h"

namespace chalk::cli {

/// [{"key", "quantity", "formula", "inputs": [{"symbol", "name", "value", "unit", "source"}],
///   "substituted", "result", "unit", "source", "note"}]
nlohmann::json explanations_json(const std::vector<Explanation>& xs);

/// One block per figure: "key = formula", the inputs with units and sources, the algebra.
std::string explanations_text(const std::vector<Explanation>& xs);

}  // namespace chalk::cli
