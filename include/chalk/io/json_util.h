// Internal: typed, path-naming access to nlohmann::json objects.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace chalk::detail {

using json = nlohmann::json;

/// Parses text; malformed JSON becomes InputError(where, "malformed JSON: ...").
json parse_json(std::string_view text, const std::string& where);

/// A JSON object with the path it sits at, for messages like "h100.json: chip.hbm_gb".
class Obj {
 public:
  Obj(const json& j, std::string path);
  const std::string& path() const { return path_; }
  bool has(const char* key) const;
  /// Throws unless every key is in `allowed` (typos must not fall back to defaults).
  void only(std::initializer_list<std::string_view> allowed) const;
  int64_t integer(const char* key) const;                 ///< required positive-or-zero integer
  std::optional<int64_t> opt_integer(const char* key) const;  ///< null or absent -> nullopt
  double number(const char* key) const;                    ///< required finite number
  std::optional<double> opt_number(const char* key) const;
  std::string string(const char* key) const;
  std::optional<std::string> opt_string(const char* key) const;
  std::optional<bool> opt_boolean(const char* key) const;
  Obj object(const char* key) const;
  std::optional<Obj> opt_object(const char* key) const;
  const json& raw(const char* key) const;  ///< required, any type
  std::string field(const char* key) const { return path_ + key; }

 private:
  const json& j_;
  std::string path_;  ///< "where: a.b." prefix
};

}  // namespace chalk::detail
