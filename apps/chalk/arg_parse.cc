#include "arg_parse.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/format.h>

#include "chalk/base/error.h"

namespace chalk::cli {
namespace {

/// The text for a message: quoted, at most 40 characters.
std::string shown(std::string_view text) {
  constexpr size_t kMax = 40;
  return "'" + std::string(text.substr(0, kMax)) + (text.size() > kMax ? "...'" : "'");
}

}  // namespace

int64_t parse_integer(std::string_view text, const std::string& field) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (!text.empty() && ec == std::errc() && ptr == end) return v;
  // Scientific notation of a whole number, as the number options take it (review 11a item 8:
  // `-s 1e9` was refused where `train run --tokens 14.8e12` is read): "1e9", "2.5e3".
  if (text.find_first_of("eE") != std::string_view::npos) {
    double d = 0;
    const auto [dptr, dec] = std::from_chars(text.data(), end, d, std::chars_format::scientific);
    if (dec == std::errc() && dptr == end && std::isfinite(d)) {
      if (d != std::floor(d)) throw InputError(field, "expected an integer, got " + shown(text) + ", not a whole number");
      if (std::fabs(d) >= 9.2e18) throw InputError(field, "expected an integer within int64, got " + shown(text));
      return static_cast<int64_t>(d);
    }
  }
  throw InputError(field, "expected an integer, got " + shown(text));
}

double parse_number(std::string_view text, const std::string& field) {
  double v = 0;
  const char* end = text.data() + text.size();
  // from_chars: no leading spaces or '+', no hex unless asked; "inf" and "nan" parse, so
  // finiteness is checked after.
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) {
    throw InputError(field, "expected a finite number, got " + shown(text));
  }
  return v;
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& field, int64_t lo, int64_t hi) {
  auto parse_one = [&](std::string_view t) -> int64_t {
    const int64_t v = parse_integer(t, field);
    if (v < lo || v > hi) throw InputError(field, fmt::format("must be in {}..{}, got {}", lo, hi, v));
    return v;
  };
  std::vector<int64_t> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw InputError(field, "expected a comma list of integers, got " + shown(text));
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      const int64_t a = parse_one(item.substr(0, colon)), b = parse_one(item.substr(colon + 1));
      if (a < 1 || b < a) throw InputError(field, "a range a:b needs 1 <= a <= b, got " + shown(item));
      for (int64_t v = a; v <= b; v *= 2) {  // v <= b / 2 before doubling: no overflow
        out.push_back(v);
        if (v > b / 2) break;
      }
    } else {
      out.push_back(parse_one(item));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<double> parse_positive_list(const std::string& text, const std::string& field) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw InputError(field, "expected a comma list of numbers, got " + shown(text));
    const double v = parse_number(item, field);
    if (!(v > 0)) throw InputError(field, "must be positive, got " + std::string(item));
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void strict_numbers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string full = opt->get_type_name();  // "INT", or "INT:INT in [1 - 1048576]" with checks
    const std::string type = full.substr(0, full.find(':'));
    const bool integer = type == "INT" || type == "UINT";
    if (!integer && type != "FLOAT") continue;
    // Validators run on each string before CLI11 converts it; a non-empty return fails
    // the parse (exit 2, "chalk: error: --flag: ...").
    opt->transform(CLI::Validator(  // transform: first, and may rewrite the string (check() gets a copy)
        [integer, name = opt->get_name()](std::string& s) -> std::string {
          try {
            // CLI11 converts integers with strtoll base 0, reading "010" as octal 8: hand
            // it the canonical decimal instead.
            if (integer) s = std::to_string(parse_integer(s, name));
            else parse_number(s, name);
          } catch (const InputError& e) {
            const std::string w = e.what();
            return w.substr(w.find(": ") + 2);
          }
          return {};
        },
        "", "strict"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) strict_numbers(*sub);
}

CLI::Option* file_name_option(CLI::Option* opt) {
  opt->check(CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty() || s[0] != '-') return {};
        return "expected a file name, got '" + s.substr(0, 40) + "' (a misplaced option?); name a file that starts with '-' as ./" + s.substr(0, 40);
      },
      "FILE", "file name"));
  return opt;
}

}  // namespace chalk::cli
