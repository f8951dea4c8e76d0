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
#include "names_internal.h"

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
    if (f.rfind("models--", 0) == 0) return detail::lower(f.substr(f.rfind("--") + 2));
    if (q == q.parent_path()) break;
  }
  return p.filename().string();
}



/// The name of a model given as a path to a HF config.json (review 11a item 7: it was shown
/// as "config", the file's stem): the directory holding it (NAME of a HF cache's
/// .../models--ORG--NAME/snapshots/<rev>/config.json), else the last part of the config's
/// "_name_or_path" (a bare config.json has no directory to name it), else "config".
std::string config_json_model_name(const std::string& config_path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(config_path).parent_path();
  if (!dir.empty() && dir.filename() != "." && dir.filename() != "..") {
    const std::string name = snapshot_name(dir.string());
    if (!name.empty() && name != "." && name != "..") return name;
  }
  try {
    const auto j = nlohmann::json::parse(read_file(config_path), nullptr, false);
    if (j.is_object() && j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
      std::string n = j["_name_or_path"].get<std::string>();
      while (!n.empty() && n.back() == '/') n.pop_back();
      n = n.substr(n.rfind('/') == std::string::npos ? 0 : n.rfind('/') + 1);
      if (!n.empty() && n != "." && n != "..") return n;
    }
  } catch (const InputError&) {
    // the load that follows names the unreadable file
  }
  return "config";
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
    const std::string tag = detail::quantization_tag(name_or_path, *name);
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
                                      detail::nearest_text(name_or_path, builtin_model_names()) + " (a HF snapshot directory holding config.json also works)");
    }
    return stem(name_or_path) == "config" ? model_from_snapshot_file(name_or_path, config_json_model_name(name_or_path))
                                          : model_from_text(read_file(name_or_path), stem(name_or_path), name_or_path);
  }
  throw InputError("--model", "unknown model '" + name_or_path + "'; " + detail::nearest_text(name_or_path, builtin_model_names()) +
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
  throw InputError("--hardware", "unknown hardware '" + name_or_path + "'; " + detail::nearest_text(name_or_path, builtin_system_names()) +
                                     " (or a path to a chalk-hardware file)");
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
