// Internal to validate's mapping (validate_map.cc): the rules that read a measurement
// row's free-text fields, shared by the files that hold them. Text helpers are in
// validate_map_text.cc, names in validate_map_names.cc, storage formats in
// validate_map_formats.cc and the parallel layout in validate_map_layout.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validate_internal.h"

namespace chalk::detail {

// Text (validate_map_text.cc).

/// Whether `s` contains `w`.
bool has(std::string_view s, std::string_view w);
/// `s` without leading and trailing white space.
std::string trim(std::string_view s);
/// Splits on any of `seps`; parentheses are separators too, so "(WG XYZ prefill, WS 2D
/// decode)" yields its parts.
std::vector<std::string> clauses(std::string_view s, std::string_view seps = ";,()");
/// A number as the notes print it: fixed, without trailing zeros ("16384", "1.875").
std::string fmt_num(double v);

// Names (validate_map_names.cc).

/// The built-in model name a row's `model` field names, aliases applied.
std::string model_name(const std::string& text);
/// The built-in system a row's `hardware` field names, if any.
std::optional<std::string> system_name(const std::string& text);

// Storage formats (validate_map_formats.cc).

/// Weight formats by component from `precision_weights`.
void read_weights(const std::string& text, RowPlan& p);
/// KV-cache format and EP dispatch/combine formats from `precision_kv_or_activations`.
void read_kv(const std::string& text, RowPlan& p);

// Parallel layout (validate_map_layout.cc).

/// Layout terms from `parallelism`; returns whether any degree or layout was stated.
bool read_layout(const std::string& text, int64_t chips, RowPlan& p);

}  // namespace chalk::detail
