// `chalk validate`: predictions against published measurements (docs/accuracy.md).
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "arg_parse.h"
#include "chalk/calibrate/profile.h"
#include "chalk/io/io.h"
#include "chalk/validate/validate.h"
#include "envelope.h"
#include "commands.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct ValidateArgs {
  std::string file;
  OutputArgs output;
  bool calibration = false;
  bool keep_going = false;
  std::string engine_profile;  ///< --engine-profile FILE (chalk calibrate)
};

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

Table rows_table(const ValidationReport& r, bool everything) {
  Table t;
  t.columns = {{"id", "id"},
               {"kind", "kind"},
               {"status", "status"},
               {"measured_in_unit", "measured", 4},
               {"unit", "unit"},
               {"predicted_in_unit", "predicted", 4},
               {"error_fraction", "error", 2},
               {"predicted_plain_in_unit", "plain roofline", 4},
               {"error_plain_fraction", "plain error", 2},
               {"governs", "governs (mechanisms)"},
               {"bound_plain", "plain bound"},
               {"fully_specified", "inputs"}};
  if (everything) {
    t.columns.push_back({"metric", "metric"});  // the row's measured quantity, as the measurement file names it
    t.columns.push_back({"inputs", "chalk inputs"});
    t.columns.push_back({"layout", "layout"});
    t.columns.push_back({"assumptions", "assumptions"});
    t.columns.push_back({"notes", "notes"});
    t.columns.push_back({"reason", "reason"});
  }
  for (const auto& p : r.rows) {
    const bool ok = p.status == RowStatus::predicted;
    if (!everything && !ok) continue;
    std::vector<Cell> row = {p.id,
                             p.kind,
                             std::string(to_string(p.status)),
                             ok ? Cell(p.measured) : Cell{},
                             p.unit,
                             ok ? Cell(p.predicted) : Cell{},
                             ok ? Cell(p.error) : Cell{},
                             ok ? Cell(p.predicted_plain) : Cell{},
                             ok ? Cell(p.error_plain) : Cell{},
                             ok ? Cell(p.governs) : Cell{},
                             ok ? Cell(p.bound_plain) : Cell{},
                             ok ? Cell(std::string(p.fully_specified() ? "stated" : "assumed")) : Cell{}};
    if (everything) {
      row.push_back(p.metric);
      row.push_back(p.inputs);
      row.push_back(p.layout);
      row.push_back(join(p.assumptions, " | "));
      row.push_back(join(p.notes, " | "));
      row.push_back(p.reason);
    }
    t.add(std::move(row));
  }
  // 8.405M chip-hours, not 8404992 (issue 30 item 2); CSV and JSON keep the numbers.
  t.set_count({"measured_in_unit", "predicted_in_unit", "predicted_plain_in_unit"});
  return t;
}

Table summary_table(const ValidationReport& r) {
  Table t;
  t.columns = {{"kind", "kind"},
               {"metric", "metric"},
               {"subset", "rows"},
               {"count", "n"},
               {"median_abs_error_fraction", "median |error|", 2},
               {"p90_abs_error_fraction", "p90 |error|", 2},
               {"median_abs_error_plain_fraction", "plain median", 2},
               {"p90_abs_error_plain_fraction", "plain p90", 2}};
  for (const auto& s : r.summary) {
    t.add({s.kind, s.metric, s.subset, s.count, s.median_abs, s.p90_abs, s.median_abs_plain, s.p90_abs_plain});
  }
  return t;
}

Table calibration_table() {
  Table t;
  t.columns = {{"name", "constant"}, {"value", "value", 4}, {"rows", "measurement rows"}, {"source", "source"}};
  for (const auto& c : calibration_entries()) t.add({c.name, c.value == 0 ? Cell{} : Cell(c.value), c.rows, c.source});
  return t;
}

std::string pct(double e) { return fmt::format("{:+.0f}%", 100 * e); }

void run_validate(const ValidateArgs& a) {
  MeasurementFile file;
  if (a.file.empty()) {
    file.rows = builtin_measurements();
  } else {
    file = parse_measurements(read_file(a.file), a.file, a.keep_going, std::filesystem::path(a.file).parent_path().string());
  }
  std::optional<sim::EngineProfile> profile;
  if (!a.engine_profile.empty()) profile = calibrate::parse_engine_profile(read_file(a.engine_profile), a.engine_profile);
  ValidationReport r = validate_measurements(file.rows, a.keep_going, profile ? &*profile : nullptr);
  for (auto& u : unreadable_rows(file)) r.rows.push_back(std::move(u));
  // With a profile: the same rows without it, for the summary's before and after.
  std::optional<ValidationReport> without;
  int64_t applied = 0;
  if (profile) {
    without = validate_measurements(file.rows, a.keep_going);
    const std::string mark = "engine profile " + profile->source;
    for (const auto& p : r.rows) {
      for (const auto& n : p.notes) applied += n.rfind(mark, 0) == 0 ? 1 : 0;
    }
  }
  if (a.output.csv) {
    print_csv(std::cout, a.calibration ? calibration_table() : rows_table(r, true));
    return;
  }
  if (a.output.json) {
    nlohmann::json j;
    j["source"] = a.file.empty() ? "built-in data/measurements/measurements.csv" : a.file;
    const Table rows = rows_table(r, true);
    j["rows"] = without_nulls(to_json(rows));
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      j["rows"][i]["assumptions"] = r.rows[i].assumptions;
      j["rows"][i]["notes"] = r.rows[i].notes;
    }
    j["summary"] = to_json(summary_table(r));
    j["calibration"] = to_json(calibration_table());
    if (profile) {
      const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
      j["engine_profile"] = {{"file", profile->source},
                             {"engine", profile->engine},
                             {"request_overhead_s", opt(profile->constants.request_overhead_s)},
                             {"host_s_per_sequence", opt(profile->constants.host_s_per_sequence)},
                             {"kernel_floor_s", opt(profile->constants.kernel_floor_s)},
                             {"allreduce_latency_s", opt(profile->constants.allreduce_latency_s)}};
      j["engine_profile_rows_applied"] = applied;
      j["summary_without_profile"] = to_json(summary_table(*without));
    }
    print_json(std::cout, envelope("validate", std::move(j), column_keys(rows)));
    return;
  }
  if (a.calibration) {
    std::cout << "chalk validate --calibration: the calibrated constants and the microbenchmark rows behind them\n\n";
    print_table(std::cout, calibration_table());
    return;
  }
  std::cout << "chalk validate: predictions against " << (a.file.empty() ? "the built-in measurements" : a.file)
            << " (error = predicted / measured - 1; plain = the roofline without mechanisms)\n";
  if (profile) {
    const auto& c = profile->constants;
    const auto us = [](const std::optional<double>& v, double scale) { return v ? format_number(*v * scale, 4) : std::string("default"); };
    std::cout << fmt::format("engine profile {} (engine {}) applied to {} row(s) of that engine: request overhead {} ms, host {} us per "
                             "sequence, kernel floor {} us, all-reduce stage {} us\n",
                             profile->source, profile->engine, applied, us(c.request_overhead_s, 1e3), us(c.host_s_per_sequence, 1e6),
                             us(c.kernel_floor_s, 1e6), us(c.allreduce_latency_s, 1e6));
  }
  std::cout << '\n';
  print_table(std::cout, rows_table(r, false));
  std::cout << "\nInputs, layout and assumptions of each predicted row:\n";
  for (const auto& p : r.rows) {
    if (p.status != RowStatus::predicted) continue;
    std::cout << fmt::format("  {} ({} with mechanisms, {} plain): {}\n    layout: {}\n", p.id, pct(p.error), pct(p.error_plain), p.inputs,
                             p.layout);
    for (const auto& s : p.assumptions) std::cout << "    assumed: " << s << '\n';
    for (const auto& s : p.notes) std::cout << "    note: " << s << '\n';
  }
  std::cout << "\nRows not predicted:\n";
  for (const auto& p : r.rows) {
    if (p.status == RowStatus::predicted) continue;
    std::cout << fmt::format("  {:<26} {:<13} {}\n", p.id, to_string(p.status), p.reason);
  }
  std::cout << "\nSummary of |error| (fractions)" << (profile ? ", with the engine profile" : "") << ":\n";
  print_table(std::cout, summary_table(r));
  if (without) {
    std::cout << "\nSummary of |error| (fractions), without the engine profile:\n";
    print_table(std::cout, summary_table(*without));
  }
}

}  // namespace

void register_validate(CLI::App& app, Action& run) {
  static thread_local ValidateArgs a;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  a = ValidateArgs{};
  auto* cmd = app.add_subcommand("validate", "Predict published measurements and compare (docs/accuracy.md)");
  cmd->add_option("file", a.file, "Measurements CSV (docs/file-formats.md, \"Measurements\"; default: the built-in rows)");
  cmd->add_flag("--keep-going", a.keep_going, "Report a row chalk cannot read as unreadable and go on (default: exit 2 at the first)");
  cmd->add_flag("--calibration", a.calibration, "Print the calibrated constants and their microbenchmark rows");
  file_name_option(cmd->add_option("--engine-profile", a.engine_profile,
                  "An engine profile written by `chalk calibrate`: rows of its engine are predicted with its constants; the summary "
                  "is shown with and without it"));
  add_output_options(*cmd, a.output);
  cmd->callback([&run] { run = [] { run_validate(a); }; });
}

}  // namespace chalk::cli
