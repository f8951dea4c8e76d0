#include "envelope.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace chalk::cli {

std::vector<std::string> column_keys(const Table& t) {
  std::vector<std::string> out;
  for (const auto& c : t.columns) out.push_back(c.key);
  return out;
}

nlohmann::json envelope(std::string_view command, nlohmann::json body, const std::vector<std::string>& columns) {
  if (body.is_array()) body = nlohmann::json{{"rows", std::move(body)}};
  if (!body.is_object() || !body.contains("rows") || !body["rows"].is_array()) {
    throw std::logic_error("the JSON of '" + std::string(command) + "' has no rows array");
  }
  body["command"] = std::string(command);
  body["chalk_version"] = kChalkVersion;
  for (const char* k : {"model", "hardware"}) {
    if (!body.contains(k)) body[k] = nullptr;
  }
  if (!body.contains("assumptions")) body["assumptions"] = nlohmann::json::object();
  if (!body.contains("warnings")) body["warnings"] = nlohmann::json::array();
  // The rows' keys: the table's order first, then what the rows add, as they appear.
  std::set<std::string> present;
  std::vector<std::string> extra;
  for (const auto& row : body["rows"]) {
    if (!row.is_object()) continue;
    for (const auto& [k, v] : row.items()) {
      if (present.insert(k).second && std::find(columns.begin(), columns.end(), k) == columns.end()) extra.push_back(k);
    }
  }
  auto cols = nlohmann::json::array();
  for (const auto& c : columns) {
    if (present.count(c) != 0) cols.push_back(c);
  }
  for (const auto& c : extra) cols.push_back(c);
  body["columns"] = std::move(cols);
  return body;
}

}  // namespace chalk::cli
