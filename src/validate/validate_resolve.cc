// Resolving what a measurement row names into chalk's inputs: its model and hardware (a
// built-in name, a file beside the CSV, an HF repo id), its storage formats, and the unit a
// metric is printed in. Split from validate_plan.cc, which reads the rest of the row.
#include <algorithm>
#include <filesystem>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "chalk/io/io.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

constexpr std::string_view kBuiltin = "builtin:";

/// A built-in name, a file (relative to the CSV), or an HF repo id whose name is built in.
/// The built-in rows' relative paths name files compiled in beside them
/// (data/measurements/models/): "builtin:measurements/<path>".
std::string resolve(const std::string& text, const std::string& base_dir, const std::vector<std::string>& builtin,
                    const std::string& field, const char* what) {
  if (std::find(builtin.begin(), builtin.end(), text) != builtin.end()) return text;
  if (base_dir.rfind(kBuiltin, 0) == 0) {
    const std::string key = base_dir.substr(kBuiltin.size()) + "/" + text;
    if (chalk::detail::embedded_file(key)) return std::string(kBuiltin) + key;
  }
  namespace fs = std::filesystem;
  const fs::path p = fs::path(text).is_absolute() || base_dir.empty() ? fs::path(text) : fs::path(base_dir) / text;
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p.string();
  if (const auto slash = text.find('/'); slash != std::string::npos && text.find('/', slash + 1) == std::string::npos) {
    const std::string name = lower(text.substr(slash + 1));
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end()) return name;
  }
  throw InputError(field, "'" + text + "' is neither a built-in " + what + " (chalk " + (std::string(what) == "model" ? "models" : "hardware") +
                              ") nor a file" + (base_dir.empty() ? "" : " under " + base_dir));
}

}  // namespace

ModelSpec load_row_model(const std::string& resolved) {
  if (resolved.rfind(kBuiltin, 0) == 0) {
    const std::string key = resolved.substr(kBuiltin.size());
    return model_from_native(*chalk::detail::embedded_file(key), "data/" + key);
  }
  return load_model(resolved);
}

SystemSpec load_row_system(const std::string& resolved) {
  if (resolved.rfind(kBuiltin, 0) == 0) {
    const std::string key = resolved.substr(kBuiltin.size());
    return system_from_json(*chalk::detail::embedded_file(key), "data/" + key);
  }
  return load_system(resolved);
}

std::string resolve_system(const Measurement& r) {
  return resolve(r.hardware, r.base_dir, builtin_system_names(), r.id + ": hardware", "system");
}

std::string resolve_model(const Measurement& r) {
  return resolve(r.model, r.base_dir, builtin_model_names(), r.id + ": model", "model");
}

DType storage_format(const std::string& f) {
  static const std::pair<const char*, DType> t[] = {{"bf16", DType::bf16}, {"fp16", DType::fp16},   {"fp8", DType::fp8}, {"int8", DType::int8},
                                                    {"int4", DType::int4}, {"nvfp4", DType::nvfp4}, {"mxfp4", DType::mxfp4}};
  for (const auto& [name, d] : t) {
    if (f == name) return d;
  }
  throw InputError("format", "'" + f + "' is not a storage format");  // unreachable: the parser checked
}

std::string metric_unit(const std::string& metric) {
  static const std::pair<const char*, const char*> t[] = {
      {"step_ms", "ms"},          {"tpot_ms", "ms"},          {"itl_ms", "ms"},         {"ttft_ms", "ms"},
      {"prefill_ms", "ms"},       {"e2e_s", "s"},             {"decode_s", "s"},        {"step_s", "s"},
      {"output_tok_per_s", "tok/s"}, {"output_tok_per_s_per_chip", "tok/s/chip"}, {"total_tok_per_s_per_chip", "tok/s/chip"},
      {"tok_per_s_per_user", "tok/s/user"}, {"prefill_tok_per_s", "tok/s"}, {"prefill_tok_per_s_per_chip", "tok/s/chip"},
      {"mfu_pct", "%"},           {"tflop_per_s_per_chip", "TFLOP/s/chip"}, {"train_tok_per_s", "tok/s"},
      {"train_tok_per_s_per_chip", "tok/s/chip"}, {"gpu_hours", "chip-hours"}, {"wall_hours", "h"},
      {"hbm_gb_per_s", "GB/s"},   {"busbw_gb_per_s", "GB/s"}, {"latency_us", "us"},     {"bandwidth_gb_per_s", "GB/s"}};
  for (const auto& [m, u] : t) {
    if (metric == m) return u;
  }
  return "";
}

}  // namespace chalk::detail
