// Built-in catalogs (embedded data/) and loading by name or path.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/io/embedded.h"
#include "chalk/io/json_util.h"

namespace chalk {
namespace detail {

std::optional<std::string_view> embedded_file(std::string_view path) {
  for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
    if (path == kEmbeddedFiles[i].path) return std::string_view(kEmbeddedFiles[i].content);
  }
  return std::nullopt;
}

std::vector<std::string_view> embedded_files(std::string_view prefix) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
    std::string_view p = kEmbeddedFiles[i].path;
    if (p.substr(0, prefix.size()) == prefix) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace detail

namespace {

std::string stem(std::string_view path) {
  const auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(base.substr(0, base.rfind('.')));
}

/// The embedded path of built-in `name` among directories `dirs`, if any.
std::optional<std::string> builtin_path(const std::string& name, std::initializer_list<std::string_view> dirs) {
  for (auto dir : dirs) {
    for (auto p : detail::embedded_files(dir)) {
      if (stem(p) == name) return std::string(p);
    }
  }
  return std::nullopt;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.find(".json") != std::string::npos;
}

ModelSpec model_from_text(std::string_view text, const std::string& name, const std::string& where) {
  const auto j = detail::parse_json(text, where);
  if (j.is_object() && j.contains("format")) return model_from_native(text, where);
  return model_from_hf_config(text, name, where);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a directory; expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot read file (does it exist?)");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ModelSpec load_model(const std::string& name_or_path) {
  if (auto p = builtin_path(name_or_path, {"models/hf/", "models/native/"})) {
    return model_from_text(*detail::embedded_file(*p), name_or_path, "built-in model " + name_or_path);
  }
  std::error_code ec;
  if (looks_like_path(name_or_path) || std::filesystem::exists(name_or_path, ec)) {
    return model_from_text(read_file(name_or_path), stem(name_or_path), name_or_path);
  }
  throw InputError("--model", "unknown model '" + name_or_path + "'; expected a path or one of: " + join(builtin_model_names()));
}

SystemSpec load_system(const std::string& name_or_path) {
  if (auto p = builtin_path(name_or_path, {"hardware/"})) {
    return system_from_json(*detail::embedded_file(*p), "built-in hardware " + name_or_path);
  }
  std::error_code ec;
  if (looks_like_path(name_or_path) || std::filesystem::exists(name_or_path, ec)) {
    return system_from_json(read_file(name_or_path), name_or_path);
  }
  throw InputError("--hardware", "unknown hardware '" + name_or_path + "'; expected a path or one of: " + join(builtin_system_names()));
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> out;
  for (auto dir : {"models/hf/", "models/native/"}) {
    for (auto p : detail::embedded_files(dir)) out.push_back(stem(p));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> builtin_system_names() {
  std::vector<std::string> out;
  for (auto p : detail::embedded_files("hardware/")) out.push_back(stem(p));
  return out;
}

}  // namespace chalk
