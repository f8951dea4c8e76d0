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

/// Deepest nesting of objects and lists parse_json accepts. chalk's own formats nest at
/// most 4 levels (hardware: chip.peak_tflop_per_s; prices: long_context[i]); the bound keeps
/// hostile input (140 KB of "[[[...") from costing stack or time anywhere downstream.
inline constexpr int max_json_depth = 64;

/// Parses text. Throws InputError: malformed JSON (where, "malformed JSON: ..."); a number
/// that overflows a double, 1e400 (where: <path of the field>, "number out of range");
/// nesting deeper than max_json_depth (where: <path>).
json parse_json(std::string_view text, const std::string& where);

/// A value for an error message, bounded: scalars as JSON cut at 60 characters, objects and
/// lists by kind only (never dumped: a deep value would overflow the stack, a long one the line).
std::string describe(const json& v);

/// A JSON object with the path it sits at, for messages like "h100.json: chip.hbm_gb".
class Obj {
 public:
  Obj(const json& j, std::string path);
  const std::string& path() const { return path_; }
  bool has(const char* key) const;
  /// Throws unless every key is in `allowed` (typos must not fall back to defaults).
  void only(std::initializer_list<std::string_view> allowed) const;
  int64_t integer(const char* key) const;                 ///< required integer (any int64)
  std::optional<int64_t> opt_integer(const char* key) const;  ///< null or absent -> nullopt
  /// An integer in [lo, hi]; outside it, InputError naming the key, the value and the range.
  int64_t integer_in(const char* key, int64_t lo, int64_t hi) const;
  std::optional<int64_t> opt_integer_in(const char* key, int64_t lo, int64_t hi) const;
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
