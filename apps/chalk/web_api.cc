#include "web_api.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>

#include "arg_parse.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/prices/price_sheet.h"
#include "request_budget.h"
#include "table.h"
#include "web_json.h"

namespace chalk::cli::web {
namespace {

/// Fields a request may not set: output formats (the API always answers JSON), flags
/// that write files (`plot`, `launch-dir`), and `trace`, `engine-profile` and `rate-curve`
/// (files the server would read).
bool forbidden(const std::string& flag) {
  static const std::vector<std::string> no = {"json",      "csv",        "wide",  "quiet",          "help",      "version",
                                              "plot",      "launch-dir", "trace", "engine-profile", "rate-curve"};
  return std::find(no.begin(), no.end(), flag) != no.end();
}

/// A field as a command-line value: strings as they are, numbers in their shortest exact
/// form, arrays joined with commas. Throws InputError naming the field.
std::string flag_value(const std::string& field, const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) {
      if (item.is_array() || item.is_object()) throw InputError(field, "expected a list of numbers or strings, got a nested " + std::string(item.type_name()));
      if (!out.empty()) out += ',';
      out += flag_value(field, item);
    }
    return out;
  }
  throw InputError(field, std::string("expected a string, number, boolean or list, got ") + v.type_name());
}

/// A model name as the built-in catalog's name, without touching the file system: a HF
/// repo id (ORG/NAME) is looked up by NAME alone, so resolve_model_name never probes the
/// disk for it, and the name passed on is the catalog's, so load_model never reads the
/// HuggingFace cache for it.
std::optional<std::string> builtin_model(const std::string& value) {
  const auto slash = value.find('/');
  if (slash == std::string::npos) return resolve_model_name(value);
  if (slash == 0 || value.find('/', slash + 1) != std::string::npos || value.find("..") != std::string::npos ||
      value.find(".json") != std::string::npos || value.find('\\') != std::string::npos) {
    return std::nullopt;
  }
  return resolve_model_name(value.substr(slash + 1));
}

/// The server reads no file a request names: models, systems and price sheets come from
/// the built-in catalogs (an uploaded config travels in the body as "model_config").
/// Throws InputError unless `value` names a built-in model, system, drafter or price sheet
/// (by `flag`); returns the value to pass on: a model's or a system's catalog name.
std::string check_catalog_name(const std::string& field, const std::string& flag, const std::string& value) {
  if (flag == "model") {
    std::optional<std::string> resolved;
    try {
      resolved = builtin_model(value);
    } catch (const InputError& e) {
      // A name aliases.json refuses: the reason, under the request's own field.
      throw InputError(field, std::string(e.what()).substr(e.field().size() + 2));
    }
    if (resolved) return *resolved;
    const auto near = nearest_names(value, builtin_model_names(), 3);
    throw InputError(field, fmt::format("unknown model '{}'; built-in models near it: {} (or upload a config.json as model_config)",
                                        utf8_prefix(value, 80), fmt::join(near, ", ")));
  } else if (flag == "hardware") {
    if (auto name = resolve_system_name(value)) return *name;
    if (value.find(',') != std::string::npos) {  // a comma list (prices compare): each a built-in system
      std::string out, item;
      std::stringstream items(value);
      while (std::getline(items, item, ',')) out += (out.empty() ? "" : ",") + check_catalog_name(field, flag, item);
      return out;
    }
    const auto near = nearest_names(value, builtin_system_names(), 3);
    throw InputError(field, fmt::format("unknown system '{}'; built-in systems near it: {}", utf8_prefix(value, 80), fmt::join(near, ", ")));
  } else if (flag == "drafter") {
    if (value == "mtp" || value == "none" || value == "eagle" || value == "eagle3") return value;
    if (auto name = builtin_model(value)) return *name;
    const auto near = nearest_names(value, builtin_model_names(), 3);
    throw InputError(field, fmt::format("unknown drafter '{}': expected mtp, eagle, eagle3, none or a built-in model; near it: {}", utf8_prefix(value, 80),
                                        fmt::join(near, ", ")));
  } else if (flag == "sheet" || flag == "compare") {
    const auto names = builtin_price_sheet_names();
    if (std::find(names.begin(), names.end(), value) == names.end()) {
      const auto near = nearest_names(value, names, 3);
      throw InputError(field, fmt::format("unknown price sheet '{}'; built-in sheets near it: {}", utf8_prefix(value, 80), fmt::join(near, ", ")));
    }
  }
  return value;
}

/// An uploaded config written where load_model reads it, removed when the request ends.
class UploadedConfig {
 public:
  explicit UploadedConfig(const nlohmann::json& config) {
    if (!config.is_object()) throw InputError("model_config", std::string("expected a config.json object, got ") + config.type_name());
    std::string dir_template = (std::filesystem::temp_directory_path() / "chalk-web-XXXXXX").string();
    if (mkdtemp(dir_template.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory for model_config");
    dir_ = dir_template;
    // The model is named by the directory holding its config.json (load_model; review 11a
    // item 7: an upload was shown as "config"): the last part of the config's _name_or_path,
    // in file-name characters, else "uploaded-model".
    std::string name;
    if (config.contains("_name_or_path") && config["_name_or_path"].is_string()) {
      std::string n = config["_name_or_path"].get<std::string>();
      while (!n.empty() && n.back() == '/') n.pop_back();
      for (const char c : n.substr(n.rfind('/') == std::string::npos ? 0 : n.rfind('/') + 1)) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') name += c;
      }
    }
    if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "uploaded-model";
    std::filesystem::create_directory(dir_ + "/" + name);
    path_ = dir_ + "/" + name + "/config.json";
    std::ofstream(path_) << dump_json(config);
  }
  ~UploadedConfig() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, path_;
};

/// Rows in an answer grow with the product of its list fields' lengths (decode, sweep:
/// batch x context): at most this many through the web API (a 256 x 256 sweep was 62 MB
/// of JSON and 3.5 s).
constexpr double kMaxListRows = 16384;

/// The values a list field stands for: each comma-separated number counts 1, a range
/// "a:b" the powers of two times a up to b; parts that are not numbers (a phase's
/// "name=a") count nothing. At least 1.
double list_items(const std::string& v) {
  double n = 0;
  size_t start = 0;
  while (start <= v.size()) {
    const size_t end = std::min(v.find(',', start), v.size());
    const std::string part = v.substr(start, end - start);
    const size_t colon = part.find(':');
    char* rest = nullptr;
    if (colon != std::string::npos) {
      const double a = std::strtod(part.substr(0, colon).c_str(), nullptr);
      const double b = std::strtod(part.substr(colon + 1).c_str(), nullptr);
      n += a > 0 && b >= a && std::isfinite(b) ? std::floor(std::log2(b / a)) + 1 : 1;
    } else if (!part.empty()) {
      std::strtod(part.c_str(), &rest);
      if (rest != part.c_str()) n += 1;
    }
    start = end + 1;
  }
  return std::max(1.0, n);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
  return s;
}

}  // namespace

const std::vector<ApiEndpoint>& api_endpoints() {
  static const std::vector<ApiEndpoint> all = {
      {"/api/models", {"models"}, register_catalog, true, "", {}},
      {"/api/hardware", {"hardware"}, register_catalog, true, "", {}},
      {"/api/decode", {"decode"}, register_decode, false, "", {}},
      {"/api/prefill", {"prefill"}, register_prefill, false, "", {}},
      {"/api/serving/sweep", {"serving", "sweep"}, register_serving, false, "", {}},
      {"/api/serving/balance", {"serving", "balance"}, register_serving, false, "", {}},
      {"/api/serving/window", {"serving", "window"}, register_serving, false, "", {}},
      {"/api/serving/frontier", {"serving", "frontier"}, register_serving, false, "", {}},
      {"/api/serving/modes", {"serving", "modes"}, register_serving, false, "", {}},
      {"/api/layouts", {"layouts"}, register_layouts, false, "", {}},
      {"/api/prices/list", {"prices", "list"}, register_prices, true, "", {}},
      {"/api/prices/infer", {"prices", "infer"}, register_prices, false, "sheet", {}},
      {"/api/prices/forward", {"prices", "forward"}, register_prices, false, "", {}},
      {"/api/prices/compare", {"prices", "compare"}, register_prices, false, "", {}},
      {"/api/validate", {"validate"}, register_validate, false, "", {}},
      {"/api/train/step", {"train", "step"}, register_train, false, "", {}},
      {"/api/train/memory", {"train", "memory"}, register_train, false, "", {}},
      {"/api/train/layouts", {"train", "layouts"}, register_train, false, "", {}},
      {"/api/train/run", {"train", "run"}, register_train, false, "", {}},
      {"/api/train/chinchilla", {"train", "chinchilla"}, register_train, false, "", {}},
      {"/api/train/equilibrium", {"train", "equilibrium"}, register_train, false, "", {}},
      {"/api/train/moe", {"train", "moe"}, register_train, false, "", {}},
      // A simulation's work grows with its requests (and a plan's with the chips it may
      // try): the server bounds one request's work so that no request holds a thread for
      // long (the CLI takes up to 10,000,000 requests).
      {"/api/simulate", {"simulate"}, register_simulate, false, "", {{"requests", 20000}, {"replicas", 64}, {"prefill-replicas", 64}, {"decode-replicas", 64}}},
      {"/api/plan", {"plan"}, register_plan, false, "", {{"requests", 5000}, {"budget-chips", 256}}},
      // Many batches per request: a simulator asks for its steps in bulk (docs/simulator.md,
      // "chalk as a step-time predictor").
      {"/api/step", {"step"}, register_step, false, "", {}, {"batches"}},
  };
  return all;
}

const ApiEndpoint* find_endpoint(std::string_view path) {
  for (const auto& e : api_endpoints()) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

ApiReply api_error(int status, const std::string& field, const std::string& message) {
  // One line, and short: a message may quote a value from the request (CLI11's do whole).
  auto line = [](const std::string& s, size_t most) {
    std::string out = utf8_prefix(s, most);
    std::replace_if(out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return out;
  };
  const std::string f = line(field, 100);
  return {status, {{"error", f + ": " + line(message, 600)}, {"field", f}}};
}

ApiReply call_api(const ApiEndpoint& e, std::string_view body, RequestBudget* budget) {
  nlohmann::json request = nlohmann::json::object();
  if (!body.empty()) {
    // Before anything recursive (parse, dump, copy) sees it: nesting is bounded.
    if (const auto at = json_too_deep(body)) {
      return api_error(400, "body", fmt::format("nested deeper than {} arrays and objects (at byte {}); expected one JSON object of the "
                                                "command's fields with plain values",
                                                kMaxJsonDepth, *at));
    }
    request = nlohmann::json::parse(body, nullptr, false);
    if (request.is_discarded()) return api_error(400, "body", "malformed JSON: expected one JSON object of the command's fields");
    if (!request.is_object()) return api_error(400, "body", std::string("expected a JSON object of the command's fields, got ") + request.type_name());
  }
  // Requests run concurrently, one per server thread: each command's options live in
  // thread_local storage (apps/chalk/cmd_*.cc), registered, parsed and run on this thread.
  std::optional<UploadedConfig> upload;
  std::map<std::string, std::string> short_flags;  // "-n" -> "--chips": errors name the field (api_field_names)
  try {
    CLI::App app{"chalk"};
    Action run;
    e.add(app, run);
    strict_numbers(app);
    CLI::App* cmd = &app;
    for (const auto& word : e.command) cmd = cmd->get_subcommand(word);
    for (const CLI::Option* o : cmd->get_options()) {
      if (o->get_lnames().empty()) continue;
      for (const auto& s : o->get_snames()) short_flags["-" + s] = "--" + o->get_lnames().front();
    }
    std::vector<std::string> args(e.command.begin(), e.command.end());
    args.push_back("--json");
    std::vector<std::pair<std::string, double>> lists;               // list fields and the values each stands for
    for (const auto& [key, value] : request.items()) {
      std::string flag = key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      if (key == "model_config") {
        if (value.is_null()) continue;
        if (cmd->get_option_no_throw("--model") == nullptr) throw InputError(key, "this endpoint takes no model");
        if (request.contains("model") && !request["model"].is_null()) throw InputError(key, "give either model (a built-in name) or model_config (an uploaded config), not both");
        upload.emplace(value);
        args.push_back("--model=" + upload->path());
        continue;
      }
      const bool valid_name = !flag.empty() && std::all_of(flag.begin(), flag.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      });
      if (!e.positional.empty() && flag == e.positional) {
        if (value.is_null()) continue;
        const std::string v = flag_value(key, value);
        args.push_back(check_catalog_name(key, flag, v));
        continue;
      }
      const CLI::Option* opt = valid_name && !forbidden(flag) ? cmd->get_option_no_throw("--" + flag) : nullptr;
      if (opt == nullptr || opt->get_lnames().empty() || opt->get_lnames().front() != flag) {
        // Also refuse a short alias ("b" for --batch): one name per field.
        throw InputError(utf8_prefix(key, 60), "unknown field for " + e.path + " (see /openapi.json for its fields)");
      }
      if (value.is_null()) continue;
      if (std::find(e.json_fields.begin(), e.json_fields.end(), flag) != e.json_fields.end()) {
        if (!value.is_array() && !value.is_object()) throw InputError(key, "expected a JSON list of batch objects, got " + json_excerpt(value, 40));
        const nlohmann::json& items = value.is_object() && value.contains("batches") ? value["batches"] : value;
        if (items.is_array() && static_cast<double>(items.size()) > kMaxListRows) {
          throw WorkLimitError(413, key, fmt::format("{} items; the web API answers at most {:g} per request (the CLI takes more)", items.size(), kMaxListRows));
        }
        args.push_back("--" + flag + "=" + dump_json(value));
        continue;
      }
      if (!value.is_boolean()) {
        if (const double n = list_items(flag_value(key, value)); n > 1) lists.emplace_back(key, n);
      }
      const bool is_flag = opt->get_type_size() == 0 || opt->get_expected_max() == 0 || opt->get_type_name().empty();
      if (is_flag) {  // a flag: true sets it, false leaves it off
        if (!value.is_boolean()) throw InputError(key, "expected true or false, got " + json_excerpt(value, 40));
        if (value.get<bool>()) args.push_back("--" + flag);
        continue;
      }
      // A repeatable option (--phase) takes each list item as its own occurrence: joined with
      // commas, items whose values hold commas would merge into one.
      if (value.is_array() && opt->get_expected_max() > 1 && opt->get_delimiter() == '\0') {
        for (const auto& item : value) {
          const std::string v = check_catalog_name(key, flag, flag_value(key, item));
          args.push_back("--" + flag + "=" + v);
        }
        continue;
      }
      const std::string v = check_catalog_name(key, flag, flag_value(key, value));
      for (const auto& [capped, most] : e.caps) {
        if (capped != flag) continue;
        const double n = value.is_number() ? value.get<double>() : std::strtod(v.c_str(), nullptr);
        if (!(n <= most)) throw InputError(key, fmt::format("at most {} through the web API (the CLI takes more), got {}", most, utf8_prefix(v, 40)));
      }
      args.push_back("--" + flag + "=" + v);  // "=": a value can never be read as another flag
    }
    double rows = 1;
    const std::pair<std::string, double>* longest = nullptr;
    std::string product;
    for (const auto& l : lists) {
      rows *= l.second;
      if (longest == nullptr || l.second > longest->second) longest = &l;
      product += fmt::format("{}{} {:g}", product.empty() ? "" : " x ", utf8_prefix(l.first, 40), l.second);
    }
    if (longest != nullptr && rows > kMaxListRows) {
      throw WorkLimitError(413, longest->first, fmt::format("the lists ask for about {:g} rows ({}); the web API answers at most {:g} "
                                                            "per request (the CLI takes more): shorten {}",
                                                            rows, product, kMaxListRows, utf8_prefix(longest->first, 40)));
    }
    std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
    try {
      app.parse(args);
    } catch (const CLI::ParseError& pe) {
      std::string message = pe.what();
      std::string field = "body";
      std::smatch m;
      if (std::regex_search(message, m, std::regex("--[a-z0-9-]+"))) {
        field = api_field_names(m.str(), request);
        if (message.rfind(m.str() + ": ", 0) == 0) message = message.substr(m.str().size() + 2);
      }
      return api_error(400, field, api_field_names(message, request, short_flags));
    }
    nlohmann::json out;
    {
      std::optional<BudgetScope> scope;
      if (budget != nullptr) scope.emplace(*budget);
      JsonCapture capture(&out);
      if (run) run();
    }
    if (out.is_null()) return api_error(500, "body", "the command printed no JSON");
    return {200, std::move(out)};
  } catch (const WorkLimitError& we) {
    const std::string what = we.what();
    return api_error(we.status(), we.field(), what.substr(std::min(what.size(), we.field().size() + 2)));
  } catch (const InputError& ie) {
    std::string field = ie.field();
    const std::string what = ie.what();
    std::string message = what.size() >= field.size() + 2 ? what.substr(field.size() + 2) : what;
    // The request's fields, never the CLI's flags: "--kv-dtype" is the request's own key, else kv_dtype.
    field = api_field_names(field, request, short_flags);
    message = api_field_names(message, request, short_flags);
    if (upload) {
      // The upload's temporary path is the server's business: name the field instead.
      field = replace_all(field, upload->path(), "model_config");
      field = replace_all(field, upload->dir(), "model_config");
      message = replace_all(message, upload->path(), "model_config");
      message = replace_all(message, upload->dir(), "model_config");
      if (field == "model") field = "model_config";
    }
    return api_error(400, field, message);
  } catch (const std::bad_alloc&) {
    return api_error(503, "request", "the server ran out of memory for this request; a smaller one fits");
  } catch (const std::exception& ex) {
    // The exception's text is the server's business (it may hold a path): the log has it.
    std::cerr << "chalk web: internal error on " << e.path << ": " << ex.what() << "\n";
    return api_error(500, "body", "internal error (the server's log says which); please report it with the request");
  }
}

}  // namespace chalk::cli::web
