// Model and hardware names: a measurement row's `model` and `hardware` fields read as
// chalk's built-in models and systems (docs/accuracy.md, "Mapping rules").
#include <algorithm>
#include <optional>
#include <string>

#include "validate_internal.h"
#include "validate_map_rules.h"

namespace chalk::detail {

std::string model_name(const std::string& text) {
  std::string s = lower(text);
  if (auto slash = s.find('/'); slash != std::string::npos) s = s.substr(0, slash);
  if (auto paren = s.find('('); paren != std::string::npos) s = s.substr(0, paren);
  s = trim(s);
  std::replace(s.begin(), s.end(), ' ', '-');
  static const std::pair<const char*, const char*> aliases[] = {
      {"gpt-3-174.6b", "gpt-3-175b"}, {"llama-3-70b", "llama-3.1-70b"}, {"llama-3-405b", "llama-3.1-405b"}, {"llama-3-8b", "llama-3.1-8b"}};
  for (const auto& [from, to] : aliases) {
    if (s == from) return to;
  }
  return s;
}

std::optional<std::string> system_name(const std::string& text) {
  const std::string s = lower(text);
  static const std::pair<const char*, const char*> table[] = {
      {"tpu v4", "tpu-v4"},   {"tpu v5p", "tpu-v5p"}, {"tpu v5e", "tpu-v5e"},   {"tpu v6e", "tpu-v6e"}, {"ironwood", "tpu-ironwood"},
      {"gb200", "gb200-nvl72"}, {"gb300", "gb300-nvl72"}, {"b200", "b200"},     {"h800", "h800-sxm"},   {"h200", "h200"},
      {"h100", "h100-sxm"},   {"a100", "a100-80gb"},   {"mi300x", "mi300x"},     {"mi355x", "mi355x"}};
  for (const auto& [key, name] : table) {
    if (has(s, key)) return std::string(name);
  }
  return std::nullopt;
}

}  // namespace chalk::detail
