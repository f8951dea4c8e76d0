// Names people type (issue 30 item 9): a built-in model or system by its name in any case,
// a HF repo id, an alias, or a quantized copy's repo name; the nearest names when none
// matches. Loading by name is catalog.cc's.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "names_internal.h"

namespace chalk {

using detail::lower;

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

/// A suffix resolve_model_name drops: a variant (variant_tail) or a release tag ("-2507",
/// "-0324", "-v0.1").
bool droppable_tail(const std::string& tail) {
  const bool date = tail.size() == 4 && std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
  const bool version = tail.size() >= 2 && tail[0] == 'v' && std::isdigit(static_cast<unsigned char>(tail[1])) && tail.find('.') != std::string::npos;
  return variant_tail(tail) || date || version;
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
    if (!droppable_tail(tail)) break;
    n = n.substr(0, dash);
  }
  return n;
}

}  // namespace

namespace detail {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string nearest_text(const std::string& text, const std::vector<std::string>& names) {
  std::string s = "nearest: ";
  const auto near = nearest_names(typed_base_name(text), names, 3);
  for (std::size_t i = 0; i < near.size(); ++i) s += (i ? ", " : "") + near[i];
  s += "; all: ";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

std::string quantization_tag(const std::string& text, const std::string& resolved) {
  std::string n = lower(text);
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

}  // namespace detail

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
    if (droppable_tail(tail)) {
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
  // The spelling of a datasheet or README ("AWS Trainium2", "Intel Gaudi 3", "Cloud TPU
  // v5p"): spaces and underscores as dashes, the vendor's name dropped.
  std::string key = n;
  for (auto& c : key) {
    if (c == ' ' || c == '_') c = '-';
  }
  for (const char* vendor : {"nvidia-", "amd-", "intel-", "aws-", "amazon-", "google-", "cloud-", "instinct-"}) {
    const std::string v = vendor;
    if (key.rfind(v, 0) == 0 && key.size() > v.size()) key = key.substr(v.size());
  }
  if (key == "tpu") return std::nullopt;  // "Cloud TPU" names no generation
  if (std::find(names.begin(), names.end(), key) != names.end()) return key;
  // Names people type for the built-in systems: the chip's marketing name (each vendor's
  // product page spells it so), its instance or board names.
  static const std::pair<const char*, const char*> kAliases[] = {
      {"h100", "h100-sxm"},     {"h100sxm", "h100-sxm"},  {"h800", "h800-sxm"},         {"a100", "a100-80gb"},
      {"a100-80g", "a100-80gb"}, {"gb200", "gb200-nvl72"}, {"nvl72", "gb200-nvl72"},       {"gb300", "gb300-nvl72"},
      {"rubin", "rubin-nvl144"}, {"vr200", "rubin-nvl144"}, {"ironwood", "tpu-ironwood"}, {"tpu-v7", "tpu-ironwood"},
      {"v4", "tpu-v4"},         {"v5e", "tpu-v5e"},       {"v5p", "tpu-v5p"},             {"v6e", "tpu-v6e"},
      {"trillium", "tpu-v6e"},  {"h200-sxm", "h200"},     {"b200-sxm", "b200"},           {"mi300", "mi300x"},
      {"mi355", "mi355x"},       {"a100-40g", "a100-40gb"}, {"a100-sxm4-40gb", "a100-40gb"}, {"h100pcie", "h100-pcie"},
      {"h100nvl", "h100-nvl"},   {"gaudi3", "gaudi-3"},     {"hl-325l", "gaudi-3"},         {"nvidia-l4", "l4"},
      {"nvidia-a10g", "a10g"},
      // AWS names the chip Trainium2 and its instances trn2.48xlarge and trn2u.48xlarge
      // (the UltraServer) on its Trainium product page.
      {"trainium2", "trn2"},    {"trainium-2", "trn2"},   {"trn2.48xlarge", "trn2"},      {"trainium2-ultraserver", "trn2-ultraserver"},
      {"trn2u", "trn2-ultraserver"}, {"trn2u.48xlarge", "trn2-ultraserver"},
      // Google's names: TPU7x / v7 is Ironwood, v5 lite (v5litepod) is v5e.
      {"tpu7x", "tpu-ironwood"}, {"tpu-v7x", "tpu-ironwood"}, {"v7x", "tpu-ironwood"},
      {"tpu-v5-lite", "tpu-v5e"}, {"v5litepod", "tpu-v5e"}, {"tpu-v6-lite", "tpu-v6e"},  {"tpu-trillium", "tpu-v6e"},
      {"tpuv4", "tpu-v4"},      {"tpuv5e", "tpu-v5e"},    {"tpuv5p", "tpu-v5p"},          {"tpuv6e", "tpu-v6e"},
      {"mi325", "mi325x"},      {"b300-sxm", "b300"},     {"gb200-nvl", "gb200-nvl72"},   {"gb300-nvl", "gb300-nvl72"},
      {"vera-rubin", "rubin-nvl144"}, {"rubin-ultra", "rubin-nvl576"}};
  for (const auto& [alias, name] : kAliases) {
    if ((n == alias || key == alias) && std::find(names.begin(), names.end(), name) != names.end()) return std::string(name);
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

}  // namespace chalk
