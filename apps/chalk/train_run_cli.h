// Helpers shared by the `chalk train run`, `chinchilla` and `equilibrium` front ends
// (cmd_train_run.cc, cmd_train_scaling.cc).
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/base/units.h"
#include "chalk/model/model.h"

namespace chalk::cli::train_run {

// The default MFU when neither --mfu nor --step-time-s is given, and where it comes from.
// ISCA'25 Table 4 states DeepSeek-V3's one step under both attention conventions; each MFU
// goes with its own FLOPs per token (training_flops_per_token): causal, the default and
// `chalk train step`'s definition, and non-causal (PaLM App. B, `train run --non-causal`).
inline constexpr double kDefaultMfu = 0.3894;
inline constexpr const char* kDefaultMfuSource =
    "default: DeepSeek-V3 pre-training, 38.94% of the bf16 peak with causal attention FLOPs (Zhao et al. 2025, ISCA'25 Table 4)";
inline constexpr double kDefaultMfuNonCausal = 0.4373;
inline constexpr const char* kDefaultMfuNonCausalSource =
    "default: DeepSeek-V3 pre-training, 43.73% of the bf16 peak with non-causal attention FLOPs (Zhao et al. 2025, ISCA'25 Table 4)";

// Chips one run may use, as `train step`'s degrees allow (2^20).
inline constexpr int64_t kMaxRunChips = int64_t{1} << 20;

// Serving tokens `train equilibrium` prices at most: 1e30, far above any model's lifetime
// (50M tok/s for a century is 1.6e17), so that the budgets it derives stay finite.
inline constexpr double kMaxServingTokens = 1e30;

// --window-days as the library's seconds, checked here so that an error shows the days
// typed; with --serving-tok-per-s the serving tokens stay at most kMaxServingTokens.
inline Seconds serving_window(double window_days, double serving_tok_per_s) {
  if (!(window_days > 0) || !std::isfinite(window_days))
    throw InputError("--window-days", fmt::format("must be a positive number of days, got {}", window_days));
  if (!(serving_tok_per_s * window_days * 86400 <= kMaxServingTokens))
    throw InputError("--window-days", fmt::format("--serving-tok-per-s x --window-days must be at most {:.0e} serving tokens (far "
                                                  "more than any model serves), got {} tok/s x {} days",
                                                  kMaxServingTokens, serving_tok_per_s, window_days));
  return Seconds(window_days * 86400);
}

// A warning when a training or serving context is longer than the model was built for
// (as decode and prefill warn).
inline void warn_context(std::vector<std::string>& warnings, const ModelSpec& m, int64_t tokens, const std::string& what) {
  if (m.max_context > 0 && tokens > m.max_context)
    warnings.push_back(fmt::format("{} {} exceeds {}'s max_position_embeddings {}", what, tokens, m.name, m.max_context));
}

// What `mfu` means in the training commands' JSON (`mfu_definition`), as `train step` states it.
inline std::string mfu_definition(bool causal, const std::string& peak) {
  return fmt::format("model FLOPs (6 N_matmul + 3 x {} attention per token; N_matmul: the active parameters a token multiplies by, "
                     "the output head included, the embedding lookup not) / (step time x chips x {} dense peak)",
                     causal ? "causal" : "non-causal", peak);
}

inline nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

/// Dollars for people: $1.23B, $4.56M, $789; from $1e12 up scientific ($8.175e+22), never
/// a suffix over a huge mantissa (review 10 L7: "$81751266288606.86B").
inline std::string money(double usd) {
  if (!std::isfinite(usd) || usd >= 1e12) return fmt::format("${:.4g}", usd);
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
