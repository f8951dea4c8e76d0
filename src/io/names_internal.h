// What catalog.cc (loading by name) shares with names.cc (the names people type).
#pragma once

#include <string>
#include <vector>

namespace chalk::detail {

/// `s` lower-cased (ASCII).
std::string lower(std::string s);

/// "nearest: A, B, C; all: ..." for an error naming an unknown `text` among `names`: the
/// three nearest by nearest_names over the typed name less its org, "meta-" and variant
/// suffixes.
std::string nearest_text(const std::string& text, const std::vector<std::string>& names);

/// The quantization a model name marks beyond the built-in `resolved` it names: the first
/// dash-separated part of the name's last path segment (lower-cased) that is fp8, fp4,
/// nvfp4, mxfp4, int4, int8, awq, gptq, w4a16, w8a8 or w8a16 (also as quantized.w4a16),
/// "" when none or when the whole name is the built-in one (qwen3-32b-fp8 carries its own).
std::string quantization_tag(const std::string& text, const std::string& resolved);

}  // namespace chalk::detail
