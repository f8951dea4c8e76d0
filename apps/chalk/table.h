// A rectangular result (columns with unit-suffixed keys, rows of cells) and its three
// renderings: an aligned table for people, CSV and JSON for programs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace chalk::cli {

/// A cell: empty (rendered "-" / "" / null), a number, an integer or text.
using Cell = std::variant<std::monostate, double, int64_t, std::string>;

struct Column {
  std::string key;     ///< CSV/JSON key, with its unit suffix (t_step_ms, cost_usd_per_mtok)
  std::string header;  ///< table header for people
  int precision = 3;   ///< significant digits for doubles in the people's table
  /// Which columns a narrow table keeps: 0 always, 1 what a person reads first, 2 detail,
  /// 3 a repeat of what the text above the table already says (one layout on every row).
  /// Hidden from 3 down, rightmost first, when the table is wider than the terminal; --wide,
  /// --csv and --json show every column.
  int priority = 1;
  /// A count (parameters, tokens): the people's table writes 91.3B, 1.83T (precision
  /// significant digits before the K/M/B/T suffix), integer cells as well as doubles; CSV
  /// and JSON keep the number.
  bool count = false;
  /// With `count`: what one unit of the cell is, multiplied in before the suffix is chosen
  /// (a column of billions, scale 1e9, writes 1.71e6 as "1710T"). CSV and JSON keep the cell.
  double count_scale = 1;
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  void add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
  /// Marks the columns with these keys as counts (Column::count: 289B, 2.61M for people),
  /// each unit worth `scale` (1e9 for a column of billions).
  void set_count(std::initializer_list<const char*> keys, double scale = 1) {
    for (auto& c : columns) {
      for (const char* k : keys) {
        if (c.key == k) c.count = true, c.count_scale = scale;
      }
    }
  }
  /// Sets the priority of the columns with these keys (Column::priority).
  void set_priority(std::initializer_list<const char*> keys, int priority) {
    for (auto& c : columns) {
      for (const char* k : keys) {
        if (c.key == k) c.priority = priority;
      }
    }
  }
};

/// Formats a double to `sig` significant digits, with thousands kept plain ("1234", "0.0123").
std::string format_number(double v, int sig);

/// A count to `sig` significant digits with a K, M, B or T suffix ("91.3B", "1.83T", "512");
/// from 1e16 up scientific without one ("3.479e+22"), as format_number writes it.
std::string format_count(double v, int sig);

/// A model's architecture split for tables and JSON: its HF model_type alone ("deepseek_v3")
/// and its source with any note the architecture carried appended ("<file>; (DeepSeek
/// inference config)"), so that the models table's arch column stays narrow (review M5).
struct ArchitectureParts {
  std::string type;
  std::string source;
};
ArchitectureParts split_architecture(const std::string& architecture, const std::string& source);

/// A figure for people: counts from 100,000 up in 289B style (format_count: "327.7K",
/// "1.333B"), smaller ones as format_number (review L2: no "1333333333", no "3.277e+05").
std::string readable(double v, int sig);

/// "1 chip", "8 chips": a count and its noun, plural unless the count is 1 (review L5).
std::string counted(double n, std::string_view noun);

/// A chip and its system for a title: "H100 SXM (h100-sxm)", or "B200 (GB200), gb200-nvl72"
/// when the chip's own name already ends in parentheses (review L5: no doubled parenthesis).
std::string chip_and_system(const std::string& chip, const std::string& system);

/// The width tables fit by default: the terminal's (TIOCGWINSZ) when stdout is one, else
/// $COLUMNS when set to a number, else 100; at least 40.
int terminal_width();

/// --wide: every column, whatever the width. Set by add_output_options' flag.
bool& wide_tables();

/// The aligned table for people. Unless wide_tables(), columns of priority 3, 2 and then 1 are
/// hidden, rightmost first, until the table fits terminal_width(); a last line names them.
void print_table(std::ostream& out, const Table& t);
void print_csv(std::ostream& out, const Table& t);
/// print_csv, with each warning on standard error as "chalk: warning: ..." first: the CSV on
/// standard output stays a table for programs, and the warnings the text and JSON carry are
/// not lost.
void print_csv(std::ostream& out, const Table& t, const std::vector<std::string>& warnings);
nlohmann::json to_json(const Table& t);  ///< array of objects keyed by column key

/// The same rows with their null cells left out: a row that has no figure for a quantity
/// (a validation row chalk does not predict) omits the key rather than giving it null.
nlohmann::json without_nulls(const nlohmann::json& rows);

/// Prints a command's --json document to `out`, or, while a JsonCapture is alive on this
/// thread, hands it to the capture instead: the one place a command's JSON leaves it, so
/// that `chalk web` serves the very document the CLI prints (apps/chalk/web_api.h).
void print_json(std::ostream& out, const nlohmann::json& j);

/// Writes `text` to the file `path` (a chart page, say), replacing it. Throws InputError
/// naming `field` (the flag that gave the path) when the file cannot be opened or written.
void write_file(const std::string& path, const std::string& text, const std::string& field);

/// While alive, print_json on this thread stores its document in `*into` instead of
/// printing it.
class JsonCapture {
 public:
  explicit JsonCapture(nlohmann::json* into);
  ~JsonCapture();
  JsonCapture(const JsonCapture&) = delete;
  JsonCapture& operator=(const JsonCapture&) = delete;

 private:
  nlohmann::json* previous_;
};

/// The table as CSV (`csv`), as `command`'s JSON envelope with the table as its rows
/// (`json`; envelope.h), or for people under `title` (the table alone with --quiet).
void print_table_or(std::ostream& out, const Table& t, bool json, bool csv, const std::string& title, std::string_view command);

/// --quiet: text output is the tables alone (no title, notes or explanations). Set by
/// add_output_options' flag; main then sends everything else on standard output nowhere
/// (QuietOutput) while print_table writes to the real standard output.
bool& quiet_tables();

/// While alive (and quiet_tables()), std::cout goes nowhere and print_table's tables to
/// std::cout go where std::cout went before: the tables, separated by a blank line, and nothing else.
class QuietOutput {
 public:
  QuietOutput();
  ~QuietOutput();
  QuietOutput(const QuietOutput&) = delete;
  QuietOutput& operator=(const QuietOutput&) = delete;

 private:
  std::streambuf* saved_;
};

}  // namespace chalk::cli
