#include "explain_cli.h"

#include <cmath>

#include <fmt/format.h>

#include "table.h"

namespace chalk::cli {

nlohmann::json explanations_json(const std::vector<Explanation>& xs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : xs) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& i : x.inputs) {
      inputs.push_back({{"symbol", i.symbol}, {"name", i.name}, {"value", i.value}, {"unit", i.unit}, {"source", i.source}});
    }
    out.push_back({{"key", x.key},
                   {"quantity", x.quantity},
                   {"formula", x.formula},
                   {"inputs", inputs},
                   {"substituted", x.substituted},
                   {"result", std::isnan(x.result) ? nlohmann::json() : nlohmann::json(x.result)},  // NaN: no figure (null)
                   {"unit", x.unit},
                   {"source", x.source},
                   {"note", x.note}});
  }
  return out;
}

std::string explanations_text(const std::vector<Explanation>& xs) {
  std::string out;
  for (const auto& x : xs) {
    // A figure with no value (NaN: a price for a batch that does not fit) prints "-", as the table does.
    out += fmt::format("{} = {} {}: {}\n  {}\n", x.key, std::isnan(x.result) ? std::string("-") : readable(x.result, 4), x.unit, x.quantity, x.formula);
    // A count (layers, chips, heads) prints as the whole number it is, "80", not "80.0000"
    // (review 6 L6); other inputs keep six significant figures.
    for (const auto& i : x.inputs) {
      const bool whole = std::isfinite(i.value) && i.value == std::floor(i.value) && std::fabs(i.value) < 1e6;
      out += fmt::format("    {:<12} {:>12} {:<16} {} ({})\n", i.symbol, whole ? fmt::format("{:.0f}", i.value) : readable(i.value, 6), i.unit, i.name, i.source);
    }
    out += fmt::format("  = {}\n  source: {}\n", x.substituted, x.source);
    if (!x.note.empty()) out += "  note: " + x.note + "\n";
  }
  return out;
}

}  // namespace chalk::cli
