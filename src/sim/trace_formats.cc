// Published traces in their own formats (trace_formats.h; docs/file-formats.md, "Published
// traces").
#include "chalk/sim/trace_formats.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "chalk/base/error.h"

namespace chalk::sim {
namespace {

constexpr int64_t max_tokens = 10'000'000;
constexpr int64_t max_rows = 10'000'000;

bool to_int(std::string_view t, int64_t& out) {
  const auto* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, out);
  return !t.empty() && ec == std::errc() && p == end;
}

bool to_double(std::string_view t, double& out) {
  const auto* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, out);
  return !t.empty() && ec == std::errc() && p == end && std::isfinite(out);
}

/// The comma-separated fields of `s` into `out` (cleared first; its capacity kept from line
/// to line, so a million-row trace allocates once).
void split_commas(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t i = s.find(',', start);
    out.push_back(s.substr(start, i == std::string_view::npos ? std::string_view::npos : i - start));
    if (i == std::string_view::npos) return;
    start = i + 1;
  }
}

/// "FILE: line N", the field of an error (built only when one is thrown).
std::string at(const std::string& source, int64_t no) { return source + ": line " + std::to_string(no); }

/// Calls `line(text, line_no)` for each line of `text` but a final empty one, '\r' dropped.
template <class F>
void for_each_line(std::string_view text, F&& line) {
  std::size_t pos = 0;
  int64_t no = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    const bool last = nl >= text.size();
    pos = nl + 1;
    ++no;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.empty() && last) break;
    line(l, no);
  }
}

/// A token count of a published trace: an integer 0..10,000,000 (0: a failed request).
int64_t tokens(std::string_view t, const std::string& source, int64_t no, const char* column) {
  int64_t v = 0;
  if (!to_int(t, v) || v < 0 || v > max_tokens) {
    throw InputError(at(source, no), std::string(column) + ": expected an integer 0..10000000, got '" + excerpt(t) + "'");
  }
  return v;
}

/// Two digits of `s` at `i` as a number, or -1.
int two(std::string_view s, std::size_t i) {
  if (i + 2 > s.size() || s[i] < '0' || s[i] > '9' || s[i + 1] < '0' || s[i + 1] > '9') return -1;
  return (s[i] - '0') * 10 + (s[i + 1] - '0');
}

/// An Azure TIMESTAMP: "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (2023: seven
/// fractional digits, no zone; 2024: six and "+00:00"; 'T' for the space is read too).
/// Whole seconds since the epoch in UTC (the zone applied), the fraction, and the seconds
/// after midnight on the clock as written. False on anything else.
bool azure_time(std::string_view s, int64_t& whole, double& frac, double& of_day) {
  int64_t year = 0;
  if (s.size() < 19 || !to_int(s.substr(0, 4), year) || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' ||
      s[16] != ':') {
    return false;
  }
  const int month = two(s, 5), day = two(s, 8), hour = two(s, 11), minute = two(s, 14), second = two(s, 17);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) {
    return false;
  }
  std::size_t i = 19;
  frac = 0;
  if (i < s.size() && s[i] == '.') {
    const std::size_t start = i;
    ++i;
    uint64_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') digits = digits * 10 + static_cast<uint64_t>(s[i++] - '0');
    const std::size_t k = i - start - 1;
    if (k == 0) return false;
    if (k <= 15) {
      // Up to 15 digits the integer and 10^k are exact doubles, and one IEEE division rounds
      // their quotient correctly, as from_chars rounds "0.digits": the same double, without
      // building a string per row (bench_traces reads a million rows).
      static constexpr double kTen[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
      frac = static_cast<double>(digits) / kTen[k];
    } else if (!to_double(std::string("0") + std::string(s.substr(start, i - start)), frac)) {
      return false;
    }
  }
  int64_t offset_s = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int oh = two(s, i + 1), om = two(s, i + 4);
    if (i + 6 != s.size() || s[i + 3] != ':' || oh < 0 || oh > 23 || om < 0 || om > 59) return false;
    offset_s = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  }
  if (i != s.size()) return false;
  whole = civil_to_unix_s(year, month, day, hour, minute, second) - offset_s;
  of_day = hour * 3600.0 + minute * 60.0 + second + frac;
  return true;
}

/// One row before the times are made relative: whole seconds and a fraction (Azure's epoch
/// seconds would lose the fraction's last digits in one double), and the request.
struct Row {
  int64_t whole = 0;
  double frac = 0;
  double of_day = 0;
  Request r;
};

/// Sorts the rows by time (stably), makes the times relative to the first, checks the
/// clock's reach and fills the trace.
void finish(std::vector<Row>& rows, Trace& t, const std::string& source, bool has_time_of_day) {
  if (rows.empty()) {
    throw InputError(source, "no requests" + (t.rows_skipped > 0 ? " left after skipping " + std::to_string(t.rows_skipped) +
                                                                       " rows with 0 prompt or 0 generated tokens"
                                                                 : std::string(" after the header")));
  }
  auto before = [](const Row& a, const Row& b) { return a.whole < b.whole || (a.whole == b.whole && a.frac < b.frac); };
  for (std::size_t i = 1; i < rows.size(); ++i) t.rows_reordered += before(rows[i], rows[i - 1]) ? 1 : 0;
  if (t.rows_reordered > 0) std::stable_sort(rows.begin(), rows.end(), before);
  const Row& first = rows.front();
  if (has_time_of_day) t.start_of_day_s = first.of_day;
  t.requests.reserve(rows.size());
  for (Row& w : rows) {
    w.r.arrival_s = static_cast<double>(w.whole - first.whole) + (w.frac - first.frac);
    if (!(w.r.arrival_s <= max_clock_s)) {
      throw InputError(source, "the trace spans " + fmt::format("{:.6g}", w.r.arrival_s) + " s, beyond the " + clock_limit_text());
    }
    t.requests.push_back(std::move(w.r));
  }
}

void count_row(std::vector<Row>& rows, const std::string& source, int64_t no) {
  if (static_cast<int64_t>(rows.size()) >= max_rows) throw InputError(at(source, no), "more than 10000000 requests");
}

/// Keeps a row of a published trace that was served (prompt and output both above 0
/// tokens); a failed request, logged with 0 of either (BurstGPT's README), is counted in
/// `rows_skipped` instead.
void keep_served(Row w, std::vector<Row>& rows, Trace& t, const std::string& source, int64_t no) {
  if (w.r.input_tokens == 0 || w.r.output_tokens == 0) {
    ++t.rows_skipped;
    return;
  }
  count_row(rows, source, no);
  rows.push_back(std::move(w));
}

Trace read_azure(std::string_view text, const std::string& source) {
  Trace t;
  t.format = TraceFormat::azure;
  std::vector<Row> rows;
  rows.reserve(static_cast<std::size_t>(std::min<int64_t>(std::count(text.begin(), text.end(), '\n'), max_rows)));
  std::vector<std::string_view> f;
  for_each_line(text, [&](std::string_view line, int64_t no) {
    if (no == 1) return;  // the header, already matched
    split_commas(line, f);
    if (f.size() != 3) {
      throw InputError(at(source, no), fmt::format("expected 3 fields (TIMESTAMP,ContextTokens,GeneratedTokens), got {}: '{}'", f.size(), excerpt(line)));
    }
    Row w;
    if (!azure_time(f[0], w.whole, w.frac, w.of_day)) {
      throw InputError(at(source, no), "TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM]', got '" + excerpt(f[0]) + "'");
    }
    w.r.input_tokens = tokens(f[1], source, no, "ContextTokens");
    w.r.output_tokens = tokens(f[2], source, no, "GeneratedTokens");
    keep_served(std::move(w), rows, t, source, no);
  });
  finish(rows, t, source, true);
  return t;
}

Trace read_burstgpt(std::string_view text, const std::string& source) {
  Trace t;
  t.format = TraceFormat::burstgpt;
  std::vector<Row> rows;
  std::size_t n_fields = 0, at_time = 0, at_in = 0, at_out = 0;
  std::vector<std::string_view> f;
  for_each_line(text, [&](std::string_view line, int64_t no) {
    split_commas(line, f);
    if (no == 1) {  // the header: the columns by name
      n_fields = f.size();
      for (std::size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "Timestamp") at_time = i;
        if (f[i] == "Request tokens") at_in = i;
        if (f[i] == "Response tokens") at_out = i;
      }
      return;
    }
    if (f.size() != n_fields) {
      throw InputError(at(source, no), fmt::format("expected {} fields as the header names, got {}: '{}'", n_fields, f.size(), excerpt(line)));
    }
    Row w;
    double ts = 0;
    if (!to_double(f[at_time], ts) || ts < 0 || ts > 1e15) {
      throw InputError(at(source, no), "Timestamp: expected seconds >= 0 from the first day's 0:00:00, got '" + excerpt(f[at_time]) + "'");
    }
    w.whole = static_cast<int64_t>(std::floor(ts));
    w.frac = ts - static_cast<double>(w.whole);
    w.of_day = static_cast<double>(w.whole % 86400) + w.frac;
    w.r.input_tokens = tokens(f[at_in], source, no, "Request tokens");
    w.r.output_tokens = tokens(f[at_out], source, no, "Response tokens");
    keep_served(std::move(w), rows, t, source, no);
  });
  finish(rows, t, source, true);
  return t;
}

Trace read_mooncake(std::string_view text, const std::string& source) {
  constexpr uint64_t mooncake_block_salt = 0x300C'CA4E'0000'0000ull;
  Trace t;
  t.format = TraceFormat::mooncake;
  std::vector<Row> rows;
  for_each_line(text, [&](std::string_view line, int64_t no) {
    const std::string where = at(source, no);
    if (line.empty()) throw InputError(where, "expected a JSON object, got an empty line");
    const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(where, "expected one JSON object a line, got '" + excerpt(line) + "'");
    auto field = [&](const char* name) -> const nlohmann::json& {
      const auto it = j.find(name);
      if (it == j.end()) throw InputError(where, std::string(name) + ": missing; expected timestamp, input_length, output_length and hash_ids");
      return *it;
    };
    auto count = [&](const char* name) {
      const auto& v = field(name);
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > max_tokens) {
        throw InputError(where, std::string(name) + ": expected an integer 0..10000000, got " + excerpt(v.dump()));
      }
      return v.get<int64_t>();
    };
    Row w;
    const auto& ts = field("timestamp");
    if (!ts.is_number() || !(ts.get<double>() >= 0) || ts.get<double>() > 1e15) {
      throw InputError(where, "timestamp: expected milliseconds >= 0 from the trace's start, got " + excerpt(ts.dump()));
    }
    const double ms = ts.get<double>();
    w.whole = static_cast<int64_t>(std::floor(ms / 1000.0));
    w.frac = ms / 1000.0 - static_cast<double>(w.whole);
    w.r.input_tokens = count("input_length");
    w.r.output_tokens = count("output_length");
    const auto& ids = field("hash_ids");
    if (!ids.is_array()) throw InputError(where, "hash_ids: expected an array of block ids, got " + excerpt(ids.dump()));
    if (w.r.input_tokens == 0 || w.r.output_tokens == 0) {
      ++t.rows_skipped;
      return;
    }
    const int64_t blocks = (w.r.input_tokens + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
    if (static_cast<int64_t>(ids.size()) != blocks) {
      throw InputError(where, fmt::format("hash_ids: expected ceil(input_length {} / 512) = {} block ids, got {}", w.r.input_tokens, blocks,
                                          ids.size()));
    }
    w.r.prefix.reserve(ids.size());
    int64_t left = w.r.input_tokens;
    for (const auto& id : ids) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) throw InputError(where, "hash_ids: expected integers >= 0, got " + excerpt(id.dump()));
      const int64_t n = std::min(left, kMooncakeBlockTokens);
      w.r.prefix.push_back({mooncake_block_salt + static_cast<uint64_t>(id.get<int64_t>()), n});
      left -= n;
    }
    count_row(rows, source, no);
    rows.push_back(std::move(w));
  });
  finish(rows, t, source, false);
  return t;
}

}  // namespace

int64_t civil_to_unix_s(int64_t y, int m, int d, int hour, int minute, int second) {
  // Days from 1970-01-01 (Hinnant's days_from_civil): years start in March, so the leap day
  // ends the year; an era is 400 years (146,097 days).
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                   // [0, 399]
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           // [0, 146096]
  const int64_t days = era * 146097 + doe - 719468;
  return days * 86400 + hour * 3600 + minute * 60 + second;
}

std::string trace_format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::chalk: return "chalk CSV";
    case TraceFormat::azure: return "Azure LLM inference trace";
    case TraceFormat::burstgpt: return "BurstGPT";
    case TraceFormat::mooncake: return "Mooncake JSONL";
  }
  return "chalk CSV";
}

Trace read_trace(std::string_view text, const std::string& source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::string_view first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
  if (!first.empty() && first.front() == '{') return read_mooncake(text, source);
  if (first == "TIMESTAMP,ContextTokens,GeneratedTokens") return read_azure(text, source);
  const std::string head(first.substr(0, 4096));
  if (head.rfind("Timestamp,", 0) == 0 && head.find(",Request tokens") != std::string::npos && head.find(",Response tokens") != std::string::npos) {
    return read_burstgpt(text, source);
  }
  Trace t;
  t.requests = parse_trace_csv(text, source);
  return t;
}

}  // namespace chalk::sim
