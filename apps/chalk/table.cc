#include "table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ostream>

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "envelope.h"

namespace chalk::cli {

std::string format_number(double v, int sig) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  const double mag = std::floor(std::log10(std::fabs(v)));
  if (mag >= 15 || mag < -6) return fmt::format("{:.{}e}", v, std::max(sig - 1, 0));
  const int decimals = std::max(0, sig - 1 - static_cast<int>(mag));
  return fmt::format("{:.{}f}", v, decimals);
}

std::string format_count(double v, int sig) {
  // From 1e16 up, scientific without a suffix (review 10 L7: "1.000e+18T" tokens and
  // "3.479e+16M chip-hours"): T is the last suffix, and up to 9999T (ironwood's largest
  // model, 1710T parameters) it still reads as a count.
  if (!std::isfinite(v) || std::fabs(v) >= 1e16) return format_number(v, sig);
  static constexpr std::pair<double, const char*> kSuffixes[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& [scale, suffix] : kSuffixes) {
    if (std::fabs(v) >= scale) return format_number(v / scale, sig) + suffix;
  }
  return format_number(v, sig);
}

ArchitectureParts split_architecture(const std::string& architecture, const std::string& source) {
  const std::size_t cut = architecture.find(" (");
  if (cut == std::string::npos) return {architecture, source};
  return {architecture.substr(0, cut), source + "; " + architecture.substr(cut + 1)};
}

std::string readable(double v, int sig) {
  return std::isfinite(v) && std::fabs(v) >= 1e5 ? format_count(v, sig) : format_number(v, sig);
}

std::string counted(double n, std::string_view noun) {
  const std::string k = n == std::floor(n) && std::fabs(n) < 1e15 ? fmt::format("{:.0f}", n) : format_number(n, 4);
  return k + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string chip_and_system(const std::string& chip, const std::string& system) {
  if (!chip.empty() && chip.back() == ')') return chip + ", " + system;
  return chip + " (" + system + ")";
}

namespace {

std::string render(const Cell& c, int precision, bool count = false, double count_scale = 1) {
  if (std::holds_alternative<std::monostate>(c)) return "-";
  // A figure from 100,000 up reads 289B style ("736.8K" ms, not "736846": review L2); from
  // 1e15 up (FLOPs) it keeps format_number's scientific notation, as T is the last suffix.
  if (auto* d = std::get_if<double>(&c)) return count ? format_count(*d * count_scale, precision) : (std::fabs(*d) >= 1e5 && std::fabs(*d) < 1e15 ? format_count(*d, std::max(precision, 4)) : format_number(*d, precision));
  if (auto* i = std::get_if<int64_t>(&c)) {
    // An integer count below 10,000 stays whole ("2048" chips, not "2.05K").
    if (count && (std::llabs(*i) >= 10000 || count_scale != 1)) return format_count(static_cast<double>(*i) * count_scale, precision);
    return std::to_string(*i);
  }
  return std::get<std::string>(c);
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

/// A yes/no column (every non-empty cell "yes" or "no") is a boolean: "yes"/"no" for people,
/// true/false in CSV and JSON (one type per quantity in every command's output).
std::vector<bool> boolean_columns(const Table& t) {
  std::vector<bool> out(t.columns.size(), false);
  for (size_t c = 0; c < t.columns.size(); ++c) {
    bool any = false, all = true;
    for (const auto& row : t.rows) {
      if (c >= row.size()) continue;
      if (auto* s = std::get_if<std::string>(&row[c])) {
        any = true;
        if (*s != "yes" && *s != "no") all = false;
      } else if (!std::holds_alternative<std::monostate>(row[c])) {
        all = false;
      }
    }
    out[c] = any && all;
  }
  return out;
}

}  // namespace

int terminal_width() {
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return std::max(40, static_cast<int>(ws.ws_col));
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && v > 0) return std::max(40L, std::min(v, 100000L));
  }
  return 100;
}

bool& wide_tables() {
  static thread_local bool wide = false;  // per thread, like the command options (web_api.h)
  return wide;
}

namespace {
thread_local std::ostream* quiet_out = nullptr;  // the real standard output while QuietOutput is alive
thread_local int quiet_tables_printed = 0;
}  // namespace

bool& quiet_tables() {
  static thread_local bool quiet = false;
  return quiet;
}

QuietOutput::QuietOutput() : saved_(nullptr) {
  if (!quiet_tables()) return;
  saved_ = std::cout.rdbuf();
  quiet_out = new std::ostream(saved_);
  quiet_tables_printed = 0;
  std::cout.rdbuf(nullptr);  // a stream without a buffer drops what it is given (badbit)
}

QuietOutput::~QuietOutput() {
  if (saved_ == nullptr) return;
  quiet_out->flush();
  delete quiet_out;
  quiet_out = nullptr;
  std::cout.rdbuf(saved_);
  std::cout.clear();
}

void print_table(std::ostream& to, const Table& t) {
  // --quiet: the tables reach the real standard output, one blank line between two.
  std::ostream& out = quiet_out != nullptr && &to == &std::cout ? *quiet_out : to;
  if (&out != &to && quiet_tables_printed++ > 0) out << '\n';
  std::vector<size_t> width(t.columns.size());
  std::vector<std::vector<std::string>> cells;
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].header.size();
  for (const auto& row : t.rows) {
    std::vector<std::string> r;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      r.push_back(c < row.size() ? render(row[c], t.columns[c].precision, t.columns[c].count, t.columns[c].count_scale) : "-");
      width[c] = std::max(width[c], r.back().size());
    }
    cells.push_back(std::move(r));
  }
  // Hide repeats, detail columns, then ordinary ones, rightmost first, until the table fits.
  std::vector<bool> shown(t.columns.size(), true);
  std::vector<std::string> hidden;
  if (!wide_tables()) {
    const size_t limit = static_cast<size_t>(terminal_width());
    auto total = [&] {
      size_t w = 0, n = 0;
      for (size_t c = 0; c < width.size(); ++c) {
        if (shown[c]) w += width[c], ++n;
      }
      return n == 0 ? 0 : w + 2 * (n - 1);
    };
    for (int p = 3; p >= 1 && total() > limit; --p) {
      for (size_t c = t.columns.size(); c-- > 0 && total() > limit;) {
        if (t.columns[c].priority == p) shown[c] = false;
      }
    }
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (!shown[c]) hidden.push_back(t.columns[c].header);
    }
  }
  auto line = [&](auto get) {
    std::string s;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (shown[c]) s += fmt::format("{}{:>{}}", s.empty() ? "" : "  ", get(c), width[c]);
    }
    out << s << '\n';
  };
  line([&](size_t c) { return t.columns[c].header; });
  for (const auto& r : cells) line([&](size_t c) { return r[c]; });
  if (!hidden.empty()) {
    std::string names;
    for (const auto& h : hidden) names += (names.empty() ? "" : ", ") + h;
    // A note, not the table: --quiet drops it (`to` is the muted standard output then).
    to << fmt::format("({} more column{}: {}; --wide shows every column)\n", hidden.size(), hidden.size() == 1 ? "" : "s", names);
  }
}

void print_csv(std::ostream& out, const Table& t, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "chalk: warning: " << w << '\n';
  print_csv(out, t);
}

void print_csv(std::ostream& out, const Table& t) {
  const std::vector<bool> boolean = boolean_columns(t);
  for (size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << t.columns[c].key;
  out << '\n';
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c) out << ',';
      if (c >= row.size()) continue;
      const Cell& cell = row[c];
      if (auto* d = std::get_if<double>(&cell)) out << fmt::format("{}", *d);  // shortest exact form: notebooks lose nothing
      else if (auto* i = std::get_if<int64_t>(&cell)) out << *i;
      else if (auto* s = std::get_if<std::string>(&cell)) out << (boolean[c] ? (*s == "yes" ? "true" : "false") : csv_escape(*s));
    }
    out << '\n';
  }
}

nlohmann::json to_json(const Table& t) {
  const std::vector<bool> boolean = boolean_columns(t);
  auto arr = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json o = nlohmann::json::object();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Cell& cell = c < row.size() ? row[c] : Cell{};
      if (auto* d = std::get_if<double>(&cell)) o[t.columns[c].key] = std::isfinite(*d) ? nlohmann::json(*d) : nlohmann::json();
      else if (auto* i = std::get_if<int64_t>(&cell)) o[t.columns[c].key] = *i;
      else if (auto* s = std::get_if<std::string>(&cell)) o[t.columns[c].key] = boolean[c] ? nlohmann::json(*s == "yes") : nlohmann::json(*s);
      else o[t.columns[c].key] = nullptr;
    }
    arr.push_back(std::move(o));
  }
  return arr;
}

nlohmann::json without_nulls(const nlohmann::json& rows) {
  auto out = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json kept = nlohmann::json::object();
    for (const auto& [k, v] : row.items()) {
      if (!v.is_null()) kept[k] = v;
    }
    out.push_back(std::move(kept));
  }
  return out;
}

void print_table_or(std::ostream& out, const Table& t, bool json, bool csv, const std::string& title, std::string_view command) {
  if (csv) {
    print_csv(out, t);
  } else if (json) {
    print_json(out, envelope(command, to_json(t), column_keys(t)));
  } else {
    out << title << "\n\n";
    print_table(out, t);
  }
}

namespace {
thread_local nlohmann::json* json_capture = nullptr;
}  // namespace

void print_json(std::ostream& out, const nlohmann::json& j) {
  if (json_capture != nullptr) {
    *json_capture = j;
  } else {
    out << j.dump(2) << '\n';
  }
}

void write_file(const std::string& path, const std::string& text, const std::string& field) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw InputError(field, "cannot write '" + path + "'");
  f << text;
  f.close();
  if (!f) throw InputError(field, "cannot write '" + path + "'");
}

JsonCapture::JsonCapture(nlohmann::json* into) : previous_(json_capture) { json_capture = into; }
JsonCapture::~JsonCapture() { json_capture = previous_; }

}  // namespace chalk::cli
