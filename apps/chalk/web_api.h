// The JSON API of `chalk web` (issue 18): each endpoint runs one CLI command, parsed
// from the request's fields as if they were its long flags, and answers with the JSON the
// command prints under --json (print_json, captured): one builder per command's document,
// shared by the CLI and the server, so the API and the CLI cannot drift apart. The
// endpoints and their fields are described in web/openapi.json (checked by tests/web/).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "request_budget.h"

namespace chalk::cli::web {

/// One endpoint: a path and the CLI command it runs.
struct ApiEndpoint {
  std::string path;                  ///< "/api/decode", "/api/serving/sweep"
  std::vector<std::string> command;  ///< the CLI words: {"decode"}, {"serving", "sweep"}
  void (*add)(CLI::App&, Action&);   ///< the register_* function that adds command.front()
  bool get = false;                  ///< true: GET without a body (catalogs); false: POST with a JSON object
  /// Positional argument a field may set (prices infer's "sheet"), empty for none.
  std::string positional;
  /// Fields whose value the API bounds (the CLI allows more): {"requests", 20000}.
  std::vector<std::pair<std::string, double>> caps;
  /// Fields whose value is JSON itself (step's "batches": a list of batch objects), passed to
  /// the flag as JSON text; a string is refused (the CLI would read it as a file name). A
  /// list holds at most kMaxListRows items (413).
  std::vector<std::string> json_fields = {};
};

/// Every endpoint, in the order web/openapi.json lists them.
const std::vector<ApiEndpoint>& api_endpoints();

/// The endpoint at `path`, or nullptr.
const ApiEndpoint* find_endpoint(std::string_view path);

/// An HTTP status and a JSON body.
struct ApiReply {
  int status = 200;
  nlohmann::json body;
};

/// {"error": "<field>: <message>", "field": "<field>"} with `status`; the field cut to 100
/// bytes and the message to 600 (at UTF-8 boundaries, "..." marking a cut), line breaks
/// made spaces: one short line whatever a request quoted.
ApiReply api_error(int status, const std::string& field, const std::string& message);

/// Runs `e` on a request body: a JSON object whose keys are the command's long flags
/// ("batch", "kv-dtype" or "kv_dtype") and whose values are strings, numbers, booleans
/// (a flag when true) or arrays (joined with commas), plus "model_config": an uploaded HF
/// config.json or chalk-model file as an object, read with the CLI's validation. Models,
/// systems and price sheets are named from the built-in catalogs: the server reads no file
/// a request names. Bad input is a 400 naming the field (the CLI's InputError, or CLI11's
/// parse error mapped back to the field); anything else thrown is a 500. Thread-safe and
/// re-entrant: a command's options live in thread_local storage, and each request
/// registers, parses and runs its command on its own thread. A body nested deeper than
/// kMaxJsonDepth (web_json.h) is a 400 before it is parsed. With `budget`, the command runs
/// under it (request_budget.h): work over it is a 413 (refused up front, naming the field)
/// or a 503 (stopped: deadline, step budget, client gone); so is running out of memory.
ApiReply call_api(const ApiEndpoint& e, std::string_view body, RequestBudget* budget = nullptr);

}  // namespace chalk::cli::web
