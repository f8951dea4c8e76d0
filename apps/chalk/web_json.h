// Untrusted JSON in `chalk web` (issue 28): bounds checked before anything recursive runs
// on a request body, and text from a request quoted safely in an answer. nlohmann-json's
// dump(), copy and comparison recurse once per nesting level, so a body nested 70,000
// deep overflowed the stack where an error quoted it; the body's depth is now checked by
// an iterative scan of its bytes before it is parsed.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace chalk::cli::web {

/// Deepest nesting of arrays and objects a request body may have (an uploaded config.json
/// needs 4).
inline constexpr int kMaxJsonDepth = 64;

/// The byte offset at which `text`'s nesting of '[' and '{' (outside strings) first goes
/// deeper than `max_depth`, or nullopt. Iterative and linear: safe on any bytes, JSON or not.
std::optional<size_t> json_too_deep(std::string_view text, int max_depth = kMaxJsonDepth);

/// At most `max_bytes` of `s`, cut at a UTF-8 character boundary, with "..." when cut.
/// Invalid UTF-8 is kept as is (dump_json replaces it).
std::string utf8_prefix(std::string_view s, size_t max_bytes);

/// `v` as compact JSON, invalid UTF-8 in its strings replaced by U+FFFD (dump() would
/// throw). `v` must be depth-bounded (json_too_deep on its source): dump() recurses.
std::string dump_json(const nlohmann::json& v);

/// At most `max_bytes` of dump_json(v), for an error message that quotes a value.
std::string json_excerpt(const nlohmann::json& v, size_t max_bytes);

/// `text` (an error's field or message) with each command-line flag it names ("--kv-dtype")
/// written as a request field (issue 30 review L3: the API's errors named CLI flags): the
/// request's own key for that flag when it has one ("kv-dtype" or "kv_dtype"), else the
/// snake_case name web/openapi.json documents ("kv_dtype"). A flag is "--" then a lowercase
/// letter, at the start of `text` or after a character that is not a letter, digit or '-'.
/// `short_flags` maps the command's one-letter flags to their long names ("-n" to
/// "--chips"): such a flag, standing alone, is written as its field too (review 10 L4:
/// POST /api/decode {"chips": 3} answered "...; -n 2 or -n 4").
std::string api_field_names(const std::string& text, const nlohmann::json& request,
                            const std::map<std::string, std::string>& short_flags = {});

}  // namespace chalk::cli::web
