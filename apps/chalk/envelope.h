// The one envelope every command's --json is (issue 30 item 5; docs/output-schema.md,
// "Envelope"): the same top-level keys for every command, one row array named `rows`, and
// the rows' keys in the order the CLI's table prints them.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "table.h"

namespace chalk::cli {

/// chalk's version: CMakeLists.txt's project(VERSION) and pyproject.toml's version say the same.
inline constexpr const char* kChalkVersion = "0.1.0";

/// The keys every command's --json has at its top level, in the order docs/output-schema.md
/// lists them; a command adds its own objects beside them (docs/output-schema.json, "top_level").
inline constexpr std::array<const char*, 8> kEnvelopeKeys = {"command", "chalk_version", "model", "hardware",
                                                            "assumptions", "warnings", "columns", "rows"};

/// The column keys of `t`, in the table's order (what `columns` lists for its rows).
std::vector<std::string> column_keys(const Table& t);

/// A command's --json document in the envelope. `command` is the command's words ("train
/// step"). `body` is the command's JSON: an array (a catalog's rows), or an object holding
/// its row array under "rows" plus its own objects. Sets `command` and `chalk_version`; fills
/// what `body` lacks with `model` null, `hardware` null (no single model or system: catalogs,
/// scaling laws, several systems), `assumptions` {} and `warnings` []; sets `columns` to
/// `columns` (the table's keys, column_keys) kept where some row has the key, followed by
/// any other key the rows hold, in first-seen order. Throws std::logic_error (an internal
/// error, exit 3) when an object body has no "rows" array: every command names its one row
/// array `rows` (a single result is its one row).
///
/// A new command adopts it by printing `print_json(std::cout, envelope("calibrate", j,
/// column_keys(t)))` and adding its invocation and any key of its own to tests/cli/output_schema.sh
/// and docs/output-schema.{md,json}.
nlohmann::json envelope(std::string_view command, nlohmann::json body, const std::vector<std::string>& columns = {});

}  // namespace chalk::cli
