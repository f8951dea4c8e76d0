// Built-in catalogs (embedded data/) and loading by name or path.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/io/embedded.h"
#include "chalk/io/json_util.h"
#include "hf_internal.h"

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

/// A repo id name's suffix that marks a variant of the same architecture: a tuning
/// (-instruct, -chat, -base, -hf, -it, -thinking), a dtype (-bf16), or a quantized copy
/// (-fp8, -fp8-dynamic, -awq-int4, -quantized.w4a16, ...: load_model applies the format).
bool variant_tail(const std::string& tail) {
  static const char* const kVariant[] = {"instruct", "chat",  "base",  "hf",   "bf16", "it",   "thinking", "fp8",
                                         "fp4",      "nvfp4", "mxfp4", "int4", "int8", "awq",  "gptq",     "w4a16",
                                         "w8a8",     "w8a16", "dynamic", "quantized.w4a16", "quantized.w8a8", "quantized.w8a16"};
  return std::find_if(std::begin(kVariant), std::end(kVariant), [&](const char* v) { return tail == v; }) != std::end(kVariant);
}

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

/// A snapshot's config.json, with ModelOpt's hf_quant_config.json beside it spliced in as
/// its quantization_config when config.json has none (older NVIDIA ModelOpt checkpoints
/// keep their quantization there only; apply_quantization reads its nested "quantization").
ModelSpec model_from_snapshot_file(const std::string& config_path, const std::string& name) {
  const std::string text = read_file(config_path);
  const auto slash = config_path.rfind('/');
  const std::string quant_path = (slash == std::string::npos ? std::string() : config_path.substr(0, slash + 1)) + "hf_quant_config.json";
  std::error_code ec;
  if (!std::filesystem::exists(quant_path, ec)) return model_from_text(text, name, config_path);
  auto j = detail::parse_json(text, config_path);
  if (!j.is_object() || j.contains("format") || j.contains("quantization_config")) return model_from_text(text, name, config_path);
  auto q = detail::parse_json(read_file(quant_path), quant_path);
  if (!q.is_object() || !q.contains("quantization")) {
    throw InputError(quant_path, "expected ModelOpt's object with a \"quantization\" object (quant_algo, exclude_modules)");
  }
  j["quantization_config"] = q;
  return model_from_text(j.dump(), name, config_path + " with " + quant_path);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Levenshtein distance (insertions, deletions, substitutions of one character).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// A directory given as --model: a snapshot holding config.json, or a HF cache folder
/// models--ORG--NAME whose refs/main names the snapshot (read without network).
std::string snapshot_dir(const std::string& dir) {
  std::error_code ec;
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(dir) / "config.json", ec)) return dir;
  if (fs::exists(fs::path(dir) / "refs" / "main", ec)) {
    std::string rev = read_file((fs::path(dir) / "refs" / "main").string());
    while (!rev.empty() && std::isspace(static_cast<unsigned char>(rev.back()))) rev.pop_back();
    const fs::path snap = fs::path(dir) / "snapshots" / rev;
    if (fs::exists(snap / "config.json", ec)) return snap.string();
  }
  // No refs/main (a download by revision): the one snapshot that holds a config.json.
  std::vector<std::string> snaps;
  if (fs::is_directory(fs::path(dir) / "snapshots", ec)) {
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "snapshots", ec)) {
      if (fs::exists(e.path() / "config.json", ec)) snaps.push_back(e.path().string());
    }
  }
  std::sort(snaps.begin(), snaps.end());
  if (snaps.size() == 1) return snaps.front();
  if (snaps.size() > 1) {
    throw InputError("--model", "directory '" + dir + "' holds " + std::to_string(snaps.size()) +
                                    " snapshots and no refs/main; pass one snapshot directory: " + join(snaps));
  }
  throw InputError("--model", "directory '" + dir + "' holds no config.json (expected a HF snapshot directory)");
}

/// The model's name from a snapshot path: NAME of .../models--ORG--NAME/snapshots/<rev>,
/// else the directory's own name.
std::string snapshot_name(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(dir);
  if (!p.has_filename()) p = p.parent_path();
  for (fs::path q = p; !q.empty() && q.has_filename(); q = q.parent_path()) {
    const std::string f = q.filename().string();
    if (f.rfind("models--", 0) == 0) return lower(f.substr(f.rfind("--") + 2));
    if (q == q.parent_path()) break;
  }
  return p.filename().string();
}

/// What a typed model name is compared by: NAME of a repo id ORG/NAME (the organisation is
/// in no built-in name), lower-cased, less a "meta-" prefix and the variant suffixes
/// resolve_model_name drops (Qwen/Qwen2.5-1.5B-Instruct -> qwen2.5-1.5b).
std::string typed_base_name(const std::string& text) {
  std::string n = lower(text);
  const auto slash = n.rfind('/');
  if (slash != std::string::npos) n = n.substr(slash + 1);
  if (n.rfind("meta-", 0) == 0) n = n.substr(5);
  for (auto dash = n.rfind('-'); dash != std::string::npos && dash > 0; dash = n.rfind('-')) {
    const std::string tail = n.substr(dash + 1);
    const bool variant = variant_tail(tail);
    const bool date = tail.size() == 4 && std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
    const bool version = tail.size() >= 2 && tail[0] == 'v' && std::isdigit(static_cast<unsigned char>(tail[1])) && tail.find('.') != std::string::npos;
    if (!variant && !date && !version) break;
    n = n.substr(0, dash);
  }
  return n;
}

std::string nearest_text(const std::string& text, const std::vector<std::string>& names) {
  std::string s = "nearest: ";
  const auto near = nearest_names(typed_base_name(text), names, 3);
  for (std::size_t i = 0; i < near.size(); ++i) s += (i ? ", " : "") + near[i];
  return s + "; all: " + join(names);
}


}  // namespace

std::string read_file(const std::string& path, std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(path, ec);  // follows symbolic links
  if (ec || !fs::exists(st)) throw InputError(path, "cannot read file (does it exist?)");
  if (fs::is_directory(st)) throw InputError(path, "is a directory; expected a file");
  // A FIFO, a device (/dev/zero, /dev/urandom) or a socket never ends, or blocks on open:
  // refused before it is opened (issue 28).
  if (!fs::is_regular_file(st)) throw InputError(path, "is not a regular file (a pipe, device or socket); expected a file");
  const auto size = fs::file_size(path, ec);
  if (!ec && size > max_bytes) {
    throw InputError(path, "is " + std::to_string(size) + " bytes; expected at most " + std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot read file (does it exist?)");
  // Read at most max_bytes + 1, so a file that grows while it is read is still bounded.
  std::string text(static_cast<std::size_t>(std::min<std::uintmax_t>(ec ? 0 : size, max_bytes)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  char extra[4096];
  while (in && text.size() <= max_bytes) {
    in.read(extra, sizeof extra);
    text.append(extra, static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > max_bytes) throw InputError(path, "is over " + std::to_string(max_bytes) + " bytes; expected at most that");
  return text;
}

std::optional<std::string> hf_cache_snapshot(const std::string& repo_id) {
  const auto slash = repo_id.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= repo_id.size() || repo_id.find('/', slash + 1) != std::string::npos ||
      repo_id.find("..") != std::string::npos) {
    return std::nullopt;
  }
  namespace fs = std::filesystem;
  std::string hub;
  if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) hub = v;
  else if (const char* v2 = std::getenv("HUGGINGFACE_HUB_CACHE"); v2 && *v2) hub = v2;
  else if (const char* h = std::getenv("HF_HOME"); h && *h) hub = (fs::path(h) / "hub").string();
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) hub = (fs::path(x) / "huggingface" / "hub").string();
  else if (const char* home = std::getenv("HOME"); home && *home) hub = (fs::path(home) / ".cache" / "huggingface" / "hub").string();
  if (hub.empty()) return std::nullopt;
  const fs::path dir = fs::path(hub) / ("models--" + repo_id.substr(0, slash) + "--" + repo_id.substr(slash + 1));
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  return snapshot_dir(dir.string());
}

namespace {

/// The quantization a model name marks beyond the built-in `resolved` it names: the first
/// dash-separated part of the name's last path segment (lower-cased) that is fp8, fp4,
/// nvfp4, mxfp4, int4, int8, awq, gptq, w4a16, w8a8 or w8a16 (also as quantized.w4a16),
/// "" when none or when the whole name is the built-in one (qwen3-32b-fp8 carries its own).
std::string quantization_tag(const std::string& text, const std::string& resolved) {
  std::string n = text;
  for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == resolved) return "";
  if (const auto slash = n.rfind('/'); slash != std::string::npos) n = n.substr(slash + 1);
  static const char* const kTags[] = {"fp8", "fp4", "nvfp4", "mxfp4", "int4", "int8", "awq", "gptq", "w4a16", "w8a8", "w8a16"};
  std::stringstream parts(n);
  for (std::string part; std::getline(parts, part, '-');) {
    if (part.rfind("quantized.", 0) == 0) part = part.substr(10);
    for (const char* t : kTags) {
      if (part == t && resolved.find(std::string("-") + t) == std::string::npos) return t;
    }
  }
  return "";
}

}  // namespace

ModelSpec load_model(const std::string& name_or_path) {
  std::error_code ec0;
  if (!std::filesystem::exists(name_or_path, ec0)) {
    // A repo id cached locally wins over the built-in config of the same architecture: the
    // cache holds that checkpoint's own config.json (its quantization, its context).
    if (auto snap = hf_cache_snapshot(name_or_path)) {
      return model_from_snapshot_file(*snap + "/config.json", snapshot_name(*snap));
    }
  }
  if (auto name = resolve_model_name(name_or_path)) {
    auto p = builtin_path(*name, {"models/hf/", "models/native/"});
    ModelSpec m = model_from_text(*detail::embedded_file(*p), *name, "built-in model " + *name);
    // A repo id whose name marks a quantized copy (Qwen/Qwen3-30B-A3B-FP8,
    // RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8) holds the built-in architecture in that
    // format: its weights are what launches, so they are what is modelled.
    const std::string tag = quantization_tag(name_or_path, *name);
    if (!tag.empty() && !(tag == "fp8" && m.weights.attention == DType::fp8)) {
      const std::string words = hf::apply_name_quantization(tag, m);
      m.weights.quantization = words + ", from the repo name's '-" + tag +
                               "' (the checkpoint's quantization_config was not read: pass its config.json for its exact groups)";
      m.source += "; weights " + words + " as the name '" + name_or_path + "' marks";
    }
    return m;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    const std::string dir = snapshot_dir(name_or_path);
    return model_from_snapshot_file(dir + "/config.json", snapshot_name(dir));
  }
  if (looks_like_path(name_or_path) || std::filesystem::exists(name_or_path, ec)) {
    if (!std::filesystem::exists(name_or_path, ec) && name_or_path.find(".json") == std::string::npos &&
        std::count(name_or_path.begin(), name_or_path.end(), '/') == 1) {
      throw InputError("--model", "unknown model '" + name_or_path + "': no built-in config of that architecture and no such path; " +
                                      nearest_text(name_or_path, builtin_model_names()) + " (a HF snapshot directory holding config.json also works)");
    }
    return stem(name_or_path) == "config" ? model_from_snapshot_file(name_or_path, stem(name_or_path))
                                          : model_from_text(read_file(name_or_path), stem(name_or_path), name_or_path);
  }
  throw InputError("--model", "unknown model '" + name_or_path + "'; " + nearest_text(name_or_path, builtin_model_names()) +
                                  " (or a path to a config.json, a chalk-model file or a snapshot directory)");
}

SystemSpec load_system(const std::string& name_or_path) {
  if (auto name = resolve_system_name(name_or_path)) {
    auto p = builtin_path(*name, {"hardware/"});
    return system_from_json(*detail::embedded_file(*p), "built-in hardware " + *name);
  }
  std::error_code ec;
  if (looks_like_path(name_or_path) || std::filesystem::exists(name_or_path, ec)) {
    return system_from_json(read_file(name_or_path), name_or_path);
  }
  throw InputError("--hardware", "unknown hardware '" + name_or_path + "'; " + nearest_text(name_or_path, builtin_system_names()) +
                                     " (or a path to a chalk-hardware file)");
}

std::optional<std::string> resolve_model_name(const std::string& text) {
  const auto names = builtin_model_names();
  const auto aliases = builtin_model_aliases();
  // A built-in name, or an alias's model; an alias that refuses ends the search.
  const auto known = [&](std::string& n) {
    if (std::find(names.begin(), names.end(), n) != names.end()) return true;
    for (const auto& a : aliases) {
      if (a.name != n) continue;
      if (!a.refuse.empty()) throw InputError("--model", "'" + excerpt(text) + "' is not a built-in model: " + a.refuse);
      n = a.model;
      return true;
    }
    return false;
  };
  std::string n = lower(text);
  if (known(n)) return n;
  // A HF repo id (ORG/NAME) names the built-in config of the same architecture: NAME
  // lower-cased, less the suffixes that mark a variant of the same weights' shape.
  const auto slash = n.rfind('/');
  if (slash != std::string::npos) {
    if (n.find(".json") != std::string::npos || std::count(n.begin(), n.end(), '/') != 1) return std::nullopt;
    std::error_code ec;
    if (std::filesystem::exists(text, ec)) return std::nullopt;  // a local directory or file wins
    n = n.substr(slash + 1);
  }
  for (bool changed = true; changed && !known(n);) {
    changed = false;
    if (n.rfind("meta-", 0) == 0) {
      n = n.substr(5);
      changed = true;
      continue;
    }
    const auto dash = n.rfind('-');
    if (dash == std::string::npos) break;
    const std::string tail = n.substr(dash + 1);
    const bool variant = variant_tail(tail);
    // Release tags: "-2507", "-0324", "-v0.1".
    const bool date = tail.size() == 4 && std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
    const bool version = tail.size() >= 2 && tail[0] == 'v' && std::isdigit(static_cast<unsigned char>(tail[1])) &&
                         tail.find('.') != std::string::npos;
    if (variant || date || version) {
      n = n.substr(0, dash);
      changed = true;
    }
  }
  if (known(n)) return n;
  return std::nullopt;
}

std::optional<std::string> resolve_system_name(const std::string& text) {
  const auto names = builtin_system_names();
  const std::string n = lower(text);
  if (std::find(names.begin(), names.end(), n) != names.end()) return n;
  // Names people type for the built-in systems (the chip's marketing name).
  static const std::pair<const char*, const char*> kAliases[] = {
      {"h100", "h100-sxm"},     {"h100sxm", "h100-sxm"},  {"h800", "h800-sxm"},         {"a100", "a100-80gb"},
      {"a100-80g", "a100-80gb"}, {"gb200", "gb200-nvl72"}, {"nvl72", "gb200-nvl72"},       {"gb300", "gb300-nvl72"},
      {"rubin", "rubin-nvl144"}, {"vr200", "rubin-nvl144"}, {"ironwood", "tpu-ironwood"}, {"tpu-v7", "tpu-ironwood"},
      {"v4", "tpu-v4"},         {"v5e", "tpu-v5e"},       {"v5p", "tpu-v5p"},             {"v6e", "tpu-v6e"},
      {"trillium", "tpu-v6e"},  {"h200-sxm", "h200"},     {"b200-sxm", "b200"},           {"mi300", "mi300x"},
      {"mi355", "mi355x"},       {"a100-40g", "a100-40gb"}, {"a100-sxm4-40gb", "a100-40gb"}, {"h100pcie", "h100-pcie"},
      {"h100nvl", "h100-nvl"},   {"gaudi3", "gaudi-3"},     {"hl-325l", "gaudi-3"},         {"nvidia-l4", "l4"},
      {"nvidia-a10g", "a10g"}};
  for (const auto& [alias, name] : kAliases) {
    if (n == alias && std::find(names.begin(), names.end(), name) != names.end()) return std::string(name);
  }
  return std::nullopt;
}

std::vector<std::string> nearest_names(const std::string& text, const std::vector<std::string>& names, std::size_t count) {
  const std::string t = lower(text);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& n : names) {
    // A name that contains what was typed (or the reverse) ranks first.
    const bool contains = n.find(t) != std::string::npos || t.find(n) != std::string::npos;
    scored.push_back({contains ? 0 : edit_distance(t, n), n});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
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
