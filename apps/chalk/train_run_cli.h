// Helpers shared by the `chalk train run`, `chinchilla` and `equilibrium` front ends
// (cmd_train_run.cc, cmd_train_scaling.cc).
#pragma once

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chalk/base/error.h"

namespace chalk::cli::train_run {

// The default MFU when neither --mfu nor --step-time-s is given, and where it comes from.
inline constexpr double kDefaultMfu = 0.4373;
inline constexpr const char* kDefaultMfuSource =
    "default: DeepSeek-V3 pre-training, 43.73% of the bf16 peak (Zhao et al. 2025, ISCA'25 Table 4)";

inline nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

inline std::string money(double usd) {
  if (usd >= 1e9) return fmt::format("${:.2f}B", usd / 1e9);
  if (usd >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  return fmt::format("${:.0f}", usd);
}

// Runs `f`, renaming the library's field in an InputError to the flag that set it.
template <class F>
auto with_flags(const std::map<std::string, std::string>& flags, F f) {
  try {
    return f();
  } catch (const InputError& e) {
    std::string field = e.field();
    std::string message = std::string(e.what()).substr(field.size() + 2);
    for (const auto& [lib, flag] : flags) {
      if (field == lib) throw InputError(flag, message);
      // phases[i].<key> -> --phase[i] <key>
      if (field.rfind("phases[", 0) == 0 && field.size() > lib.size() && field.ends_with("." + lib)) {
        throw InputError("--phase" + field.substr(6, field.size() - lib.size() - 7) + "." + flag, message);
      }
    }
    throw;
  }
}

}  // namespace chalk::cli::train_run
