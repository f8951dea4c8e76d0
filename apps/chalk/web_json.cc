#include "web_json.h"

#include <algorithm>

namespace chalk::cli::web {

std::optional<size_t> json_too_deep(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t n = max_bytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "...";
}

std::string dump_json(const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string json_excerpt(const nlohmann::json& v, size_t max_bytes) { return utf8_prefix(dump_json(v), max_bytes); }

std::string api_field_names(const std::string& in, const nlohmann::json& request, const std::map<std::string, std::string>& short_flags) {
  const auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // One-letter flags first, as their long names: "-n 2" reads "--chips 2", then "chips 2".
  std::string text;
  for (size_t i = 0; i < in.size();) {
    const bool alone = in[i] == '-' && i + 1 < in.size() && letter(in[i + 1]) && (i == 0 || !(name_char(in[i - 1]) || letter(in[i - 1]))) &&
                       (i + 2 == in.size() || !(name_char(in[i + 2]) || letter(in[i + 2])));
    const auto long_name = alone ? short_flags.find(in.substr(i, 2)) : short_flags.end();
    if (long_name == short_flags.end()) {
      text += in[i++];
      continue;
    }
    text += long_name->second;
    i += 2;
  }
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool flag = text.compare(i, 2, "--") == 0 && i + 2 < text.size() && text[i + 2] >= 'a' && text[i + 2] <= 'z' &&
                      (i == 0 || !(name_char(text[i - 1]) || (text[i - 1] >= 'A' && text[i - 1] <= 'Z')));
    if (!flag) {
      out += text[i++];
      continue;
    }
    size_t end = i + 2;
    while (end < text.size() && name_char(text[end])) ++end;
    const std::string kebab = text.substr(i + 2, end - i - 2);
    std::string name = kebab;
    std::replace(name.begin(), name.end(), '-', '_');
    if (request.is_object()) {
      for (const auto& [key, value] : request.items()) {
        std::string k = key;
        std::replace(k.begin(), k.end(), '_', '-');
        if (k == kebab) name = key;
      }
    }
    out += name;
    i = end;
  }
  return out;
}

}  // namespace chalk::cli::web
