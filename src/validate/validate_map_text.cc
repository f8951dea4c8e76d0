// Text helpers of validate's mapping rules: splitting, trimming and reading numbers from a
// measurement row's free-text fields (docs/accuracy.md, "Mapping rules").
#include <cctype>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "validate_internal.h"
#include "validate_map_rules.h"

namespace chalk::detail {

bool has(std::string_view s, std::string_view w) { return s.find(w) != std::string_view::npos; }

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

/// Splits on any of `seps`; parentheses are separators too, so "(WG XYZ prefill, WS 2D
/// decode)" yields its parts.
std::vector<std::string> clauses(std::string_view s, std::string_view seps) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (seps.find(c) != std::string_view::npos) {
      if (!trim(cur).empty()) out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

std::string fmt_num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> first_number(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    if (i > 0 && (std::isalpha(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '-')) {
      // part of a name such as "TP8" or "H100": skip the whole token
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
      continue;
    }
    std::string digits;
    std::size_t j = i;
    for (; j < s.size(); ++j) {
      const char c = s[j];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        digits += c;
      } else if (c == ',' && j + 3 < s.size() + 1 && j + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        continue;  // thousands separator "16,384"
      } else {
        break;
      }
    }
    try {
      return std::stod(digits);
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> single_number(std::string_view s) {
  std::string t;
  for (char c : s) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) continue;
    t += c;
  }
  if (t.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(t, &used);
    if (used != t.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace chalk::detail
