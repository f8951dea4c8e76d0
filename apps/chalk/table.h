// A rectangular result (columns with unit-suffixed keys, rows of cells) and its three
// renderings: an aligned table for people, CSV and JSON for programs.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace chalk::cli {

/// A cell: empty (rendered "-" / "" / null), a number, an integer or text.
using Cell = std::variant<std::monostate, double, int64_t, std::string>;

struct Column {
  std::string key;     ///< CSV/JSON key, with its unit suffix (t_step_ms, cost_usd_per_mtok)
  std::string header;  ///< table header for people
  int precision = 3;   ///< significant digits for doubles in the people's table
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  void add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

/// Formats a double to `sig` significant digits, with thousands kept plain ("1234", "0.0123").
std::string format_number(double v, int sig);

void print_table(std::ostream& out, const Table& t);
void print_csv(std::ostream& out, const Table& t);
nlohmann::json to_json(const Table& t);  ///< array of objects keyed by column key

/// The table as CSV (`csv`), as a JSON array (`json`), or for people under `title`.
void print_table_or(std::ostream& out, const Table& t, bool json, bool csv, const std::string& title);

}  // namespace chalk::cli
