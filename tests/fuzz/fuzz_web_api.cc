// Fuzzes the web API's request handling (apps/chalk/web_api.h, web_guard.h, web_json.h):
// the input's first line is a path, the rest a request body (up to the server's 1 MiB).
// The guard sees the path and parts of the body as headers; an endpoint's body runs
// through call_api under a small budget (request_budget.h). Every answer must be
// well-formed: a status the API documents (never 500), a JSON object that reads back,
// numbers finite, an error with one line naming its field, no upload's temporary path in it.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "request_budget.h"
#include "web_api.h"
#include "web_guard.h"
#include "web_json.h"

namespace {

using nlohmann::json;

/// The input being run: an answer may quote it back, so text found in it is not a leak.
std::string_view g_input;

/// An upload's temporary directory as UploadedConfig (web_api.cc) names it.
const std::string& upload_prefix() {
  static const std::string p = (std::filesystem::temp_directory_path() / "chalk-web-").string();
  return p;
}

/// Walks `v` without recursion: numbers finite, depth bounded, and with `paths` no string
/// holding an upload's temporary path that the input did not hold.
void check_values(const json& v, bool paths) {
  std::vector<std::pair<const json*, int>> stack = {{&v, 1}};
  while (!stack.empty()) {
    const auto [j, depth] = stack.back();
    stack.pop_back();
    CHALK_FUZZ_CHECK(depth <= chalk::cli::web::kMaxJsonDepth + 8);
    if (j->is_number_float()) CHALK_FUZZ_CHECK(std::isfinite(j->get<double>()));
    if (paths && j->is_string()) {
      // An upload's temporary directory (its random suffix included) never shows, unless the
      // request itself said it. (On the answer as built: a round trip replaces bad UTF-8.)
      const auto& s = j->get_ref<const std::string&>();
      for (size_t at = s.find(upload_prefix()); at != std::string::npos; at = s.find(upload_prefix(), at + 1)) {
        const std::string path = s.substr(at, upload_prefix().size() + 6);  // mkdtemp's suffix: 6 letters or digits
        const bool temp_dir = path.size() == upload_prefix().size() + 6 &&
                              std::all_of(path.end() - 6, path.end(), [](unsigned char c) { return std::isalnum(c); });
        CHALK_FUZZ_CHECK(!temp_dir || g_input.find(path) != std::string_view::npos);
      }
    }
    if (j->is_structured()) {
      for (const auto& item : *j) stack.emplace_back(&item, depth + 1);
    }
  }
}

/// An answer the API may give: documented status, an object, an error naming its field.
void check_reply(const chalk::cli::web::ApiReply& r) {
  const int s = r.status;
  CHALK_FUZZ_CHECK(s == 200 || s == 400 || s == 403 || s == 405 || s == 413 || s == 415 || s == 503);
  CHALK_FUZZ_CHECK(r.body.is_object());
  check_values(r.body, true);  // as built: a NaN would be dumped as null
  const std::string text = chalk::cli::web::dump_json(r.body);
  const json back = json::parse(text, nullptr, false);
  CHALK_FUZZ_CHECK(!back.is_discarded());
  check_values(back, false);
  if (s != 200) {
    CHALK_FUZZ_CHECK(back.contains("error") && back["error"].is_string() && back.contains("field") && back["field"].is_string());
    const std::string error = back["error"].get<std::string>(), field = back["field"].get<std::string>();
    CHALK_FUZZ_CHECK(error.find('\n') == std::string::npos);
    CHALK_FUZZ_CHECK(error.rfind(field + ": ", 0) == 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 20)) return 0;  // the server's body limit
  const std::string input(reinterpret_cast<const char*>(data), size);
  g_input = input;
  const auto newline = input.find('\n');
  const std::string path = input.substr(0, newline);
  const std::string body = newline == std::string::npos ? "" : input.substr(newline + 1);
  namespace web = chalk::cli::web;

  // The guard: the path as sent, slices of the body as headers.
  web::RequestHead head;
  head.method = body.size() % 3 == 0 ? "GET" : "POST";
  head.path = path;
  head.host = body.substr(0, 40);
  if (body.size() > 40) head.origin = body.substr(40, 40);
  if (body.size() % 2) head.content_type = "application/json";
  if (const auto refusal = web::guard_request(head, body.size() % 5 == 0)) {
    check_reply(*refusal);
    CHALK_FUZZ_CHECK(refusal->status == 400 || refusal->status == 403 || refusal->status == 415);
  }

  // valid_utf8 agrees with nlohmann-json's strict dump (which throws on bad UTF-8).
  bool dumps = true;
  try {
    (void)json(path).dump();
  } catch (const json::type_error&) {
    dumps = false;
  }
  CHALK_FUZZ_CHECK(web::valid_utf8(path) == dumps);

  // The nesting bound agrees with the parser: a body that passes it parses no deeper.
  if (!web::json_too_deep(body)) {
    const json parsed = json::parse(body, nullptr, false);
    if (!parsed.is_discarded()) check_values(parsed, false);
  }

  const web::ApiEndpoint* e = web::find_endpoint(path);
  if (e == nullptr || e->get) return 0;
  chalk::cli::RequestBudget budget;
  budget.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  budget.deadline_s = 2;
  budget.max_steps = 200'000;
  const web::ApiReply r = web::call_api(*e, body, &budget);
  if (std::getenv("CHALK_FUZZ_VERBOSE")) std::fprintf(stderr, "%s -> %d %s\n", path.c_str(), r.status, web::json_excerpt(r.body, 160).c_str());
  check_reply(r);
  CHALK_FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 413 || r.status == 503);
  return 0;
}
