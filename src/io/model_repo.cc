// The model an engine serves (model_repo.h): data/models/repos.json and the user's text.
#include "chalk/io/model_repo.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "chalk/io/embedded.h"
#include "chalk/io/io.h"

namespace chalk {

std::optional<std::string> builtin_model_repo(const std::string& name) {
  static const nlohmann::json table = [] {
    const auto text = detail::embedded_file("models/repos.json");
    return text ? nlohmann::json::parse(*text) : nlohmann::json::object();
  }();
  const auto repos = table.find("repos");
  if (repos == table.end() || !repos->contains(name)) return std::nullopt;
  return (*repos)[name].at("repo").get<std::string>();
}

namespace {

/// data/models/served.json's entry of a built-in model, or null.
const nlohmann::json* served_entry(const std::string& name) {
  static const nlohmann::json table = [] {
    const auto text = detail::embedded_file("models/served.json");
    return text ? nlohmann::json::parse(*text) : nlohmann::json::object();
  }();
  const auto served = table.find("served");
  if (served == table.end() || !served->contains(name)) return nullptr;
  return &(*served)[name];
}

}  // namespace

std::optional<std::string> builtin_served_repo(const std::string& name) {
  if (const nlohmann::json* e = served_entry(name)) return e->at("repo").get<std::string>();
  return builtin_model_repo(name);
}

std::optional<std::string> builtin_fp8_checkpoint(const std::string& name) {
  const nlohmann::json* e = served_entry(name);
  if (!e || !e->contains("fp8")) return std::nullopt;
  return e->at("fp8").get<std::string>();
}

std::optional<std::string> served_model(const std::string& model_text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(model_text, ec)) {
    // A HF cache folder models--ORG--NAME: its repo id, which the engines find in that cache.
    const std::string leaf = fs::path(model_text).lexically_normal().filename().string().empty()
                                 ? fs::path(model_text).lexically_normal().parent_path().filename().string()
                                 : fs::path(model_text).lexically_normal().filename().string();
    const auto sep = leaf.find("--", 8);
    if (leaf.rfind("models--", 0) == 0 && sep != std::string::npos && sep > 8 && sep + 2 < leaf.size()) {
      return leaf.substr(8, sep - 8) + "/" + leaf.substr(sep + 2);
    }
    return model_text;
  }
  if (fs::is_regular_file(model_text, ec)) {
    // A HF config.json: the engines load the directory that holds it with the weights. A
    // chalk-model file (native format) describes no weights.
    if (fs::path(model_text).filename() != "config.json") return std::nullopt;
    const fs::path dir = fs::path(model_text).parent_path();
    return dir.empty() ? std::string(".") : dir.string();
  }
  const std::optional<std::string> builtin = resolve_model_name(model_text);
  const bool repo_id = std::count(model_text.begin(), model_text.end(), '/') == 1 && model_text.front() != '/' &&
                       model_text.back() != '/' && model_text.find(".json") == std::string::npos;
  if (repo_id) return model_text;  // the variant the user named, which resolve_model_name maps to its architecture
  if (!builtin) return std::nullopt;
  // An alias whose weights are not its model's own (deepseek-r1-distill-llama-70b is
  // llama-3.3-70b's architecture, DeepSeek's weights) names its repo in aliases.json.
  static const nlohmann::json aliases = [] {
    const auto text = detail::embedded_file("models/aliases.json");
    return text ? nlohmann::json::parse(*text) : nlohmann::json::object();
  }();
  std::string typed = model_text;
  for (auto& c : typed) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& a : aliases.value("aliases", nlohmann::json::array())) {
    if (a.value("name", "") == typed && a.contains("repo")) return a.at("repo").get<std::string>();
  }
  return builtin_served_repo(*builtin);
}

std::optional<std::string> served_fp8_checkpoint(const std::string& model_text) {
  std::error_code ec;
  if (std::filesystem::exists(model_text, ec) || std::count(model_text.begin(), model_text.end(), '/') > 0) return std::nullopt;
  const std::optional<std::string> builtin = resolve_model_name(model_text);
  if (!builtin || served_model(model_text) != builtin_served_repo(*builtin)) return std::nullopt;  // an alias with its own weights
  return builtin_fp8_checkpoint(*builtin);
}

bool needs_remote_code(const std::string& model_text) {
  namespace fs = std::filesystem;
  const auto has_auto_map = [](std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() && j.contains("auto_map");
  };
  const auto file_has_auto_map = [&](const fs::path& path) {
    std::ifstream in(path);
    return in && has_auto_map(std::string(std::istreambuf_iterator<char>(in), {}));
  };
  std::error_code ec;
  if (fs::is_directory(model_text, ec)) return file_has_auto_map(fs::path(model_text) / "config.json");
  if (fs::is_regular_file(model_text, ec)) return fs::path(model_text).filename() == "config.json" && file_has_auto_map(model_text);
  const std::optional<std::string> builtin = resolve_model_name(model_text);
  if (!builtin) return false;
  const auto text = detail::embedded_file("models/hf/" + *builtin + ".json");
  return text && has_auto_map(*text);
}

}  // namespace chalk
