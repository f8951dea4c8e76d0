// `chalk calibrate` (issue 29): fits named constants of an engine profile to a user's own
// benchmark runs (src/calibrate; docs/simulator.md, "Calibration") and writes the profile
// that `simulate`, `plan` and `validate` take with --engine-profile.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "arg_parse.h"
#include "chalk/base/error.h"
#include "chalk/calibrate/bench.h"
#include "chalk/calibrate/bench_formats.h"
#include "chalk/calibrate/fit.h"
#include "chalk/calibrate/holdout.h"
#include "chalk/calibrate/profile.h"
#include "chalk/engine/layout_search.h"
#include "chalk/io/io.h"
#include "commands.h"
#include "envelope.h"
#include "deployment_options.h"
#include "sim_cli.h"

namespace chalk::cli {
namespace {

struct CalibrateArgs {
  std::vector<std::string> files;
  DeploymentArgs deployment;
  PolicyArgs policy;
  OutputArgs output;
  std::string fit = "request_overhead_s,host_s_per_sequence,kernel_floor_s";
  int64_t max_requests = calibrate::kDefaultMaxRequests;
  std::string profile_out;
  bool no_loo = false;
  std::string holdout;  ///< --holdout: "" = fit every run, "half"
  bool fit_saturated = false;  ///< --fit-saturated: keep runs saturated at the defaults in the --holdout fit
  bool model_given = false, hardware_given = false;  ///< -m and -H were on the command line
};

std::vector<calibrate::Constant> constants_from(const std::string& text) {
  std::vector<calibrate::Constant> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto c = calibrate::constant_named(name);
    if (!c) throw InputError("--fit", "unknown constant '" + excerpt(name) + "'; expected request_overhead_s, host_s_per_sequence, kernel_floor_s or allreduce_latency_s");
    if (std::find(out.begin(), out.end(), *c) != out.end()) throw InputError("--fit", "names " + name + " twice");
    out.push_back(*c);
    start = comma + 1;
  }
  return out;
}

/// The benchmark runs of the files: a .csv is chalk's measurement format; any other file is
/// one of the engines' clients, told apart by its content (bench_formats.h parse_bench_file).
std::vector<calibrate::BenchRun> read_runs(const CalibrateArgs& a, int64_t& skipped) {
  std::vector<calibrate::BenchRun> runs;
  skipped = 0;
  for (const auto& f : a.files) {
    if (std::filesystem::path(f).extension() == ".csv") {
      int64_t s = 0;
      const auto file = parse_measurements(read_file(f), f, false, std::filesystem::path(f).parent_path().string());
      for (auto& r : calibrate::runs_from_measurements(file.rows, s)) runs.push_back(std::move(r));
      skipped += s;
    } else {
      for (auto& r : calibrate::parse_bench_file(read_file(f), f)) runs.push_back(std::move(r));
    }
  }
  return runs;
}

/// A run's replica and policy: the flags, with what the run states itself (a CSV row's model,
/// hardware, chips, tp, engine and knobs) in their place.
calibrate::RunModel model_of(const CalibrateArgs& a, const calibrate::BenchRun& run) {
  DeploymentArgs d = a.deployment;
  PolicyArgs p = a.policy;
  if (!run.model.empty()) d.model = run.model;
  if (!run.hardware.empty()) d.hardware = run.hardware;
  if (run.chips > 0) d.chips = run.chips;
  if (run.tp > 0) d.tp = run.tp;
  if (!sim::known_engine_family(run.engine).empty()) p.engine = run.engine;  // a row's other engine: --engine's defaults, as validate
  if (run.max_batched_tokens > 0) p.max_batched_tokens = run.max_batched_tokens;
  if (run.max_sequences > 0) p.max_seqs = run.max_sequences;
  if (run.gpu_memory_utilization > 0) p.gpu_memory_utilization = run.gpu_memory_utilization;
  if (p.gpu_memory_utilization) d.memory_reserve = 1.0 - memory_utilization_from(p, d.memory_reserve);  // else 0.1 stays 0.1
  sim::SimOptions o;
  o.policy = policy_from(p);
  const int64_t in = std::max<int64_t>(1, run.total_input_tokens / run.completed);
  const int64_t out = std::max<int64_t>(1, run.total_output_tokens / run.completed);
  return calibrate::make_run_model(run, resolve(d, steady_state_context(in, out)), o, a.max_requests);
}

nlohmann::json opt(const std::optional<double>& v, double scale = 1) { return v ? nlohmann::json(*v * scale) : nlohmann::json(nullptr); }

/// A run's source as the text tables show it: a measurement CSV's joined rows
/// ("f.csv: VLS-X-R10-TTFT+VLS-X-R10-E2E") as their ids' common stem and each row's rest
/// ("VLS-X-R10-{TTFT,E2E}"), the file left to the "read" line; other sources as they are.
std::string shown_source(const std::string& source) {
  const std::size_t colon = source.rfind(": ");
  if (colon == std::string::npos || source.find('+', colon) == std::string::npos) return source;
  std::vector<std::string> ids;
  for (std::size_t at = colon + 2; at <= source.size();) {
    const std::size_t plus = std::min(source.find('+', at), source.size());
    ids.push_back(source.substr(at, plus - at));
    at = plus + 1;
  }
  std::size_t stem = ids.front().size();
  for (const auto& id : ids) {
    std::size_t k = 0;
    while (k < stem && k < id.size() && id[k] == ids.front()[k]) ++k;
    stem = k;
  }
  // Back to the last '-' within the common prefix: the stem ends between words.
  const std::size_t dash = stem == 0 ? std::string::npos : ids.front().rfind('-', stem - 1);
  if (dash == std::string::npos) return source.substr(colon + 2);
  stem = dash + 1;
  std::string out = ids.front().substr(0, stem) + "{";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + ids[i].substr(stem);
  return out + "}";
}

/// The JSON `holdout` object (docs/output-schema.md, calibration).
nlohmann::json holdout_json(const calibrate::HoldoutReport& h, const std::string& split) {
  nlohmann::json rs = nlohmann::json::array(), ms = nlohmann::json::array();
  for (const auto& r : h.held_out) rs.push_back({{"source", r.source}, {"error_before_fraction", r.before}, {"error_after_fraction", r.after}});
  for (const auto& m : h.metrics) {
    ms.push_back({{"metric", m.metric}, {"count", m.count}, {"median_abs_error_before_fraction", m.median_before},
                  {"median_abs_error_after_fraction", m.median_after}});
  }
  nlohmann::json sat = nlohmann::json::array();
  for (const auto& s : h.saturated) {
    sat.push_back({{"source", s.source}, {"arrival_req_per_s", s.arrival_req_per_s}, {"capacity_req_per_s", s.capacity_req_per_s}, {"note", s.note}});
  }
  return {{"split", split}, {"fit_runs", static_cast<int64_t>(h.split.fit.size())}, {"held_out_runs", static_cast<int64_t>(h.split.held_out.size())},
          {"saturated_runs", sat}, {"run_errors", rs}, {"metrics", ms}};
}

/// The held-out half in the people's text: each run, then each metric's median.
void print_holdout(const calibrate::HoldoutReport& h, std::size_t runs) {
  std::cout << fmt::format("\nHeld out (--holdout half): the fit above is over {} of the {} runs (each deployment's runs ordered by "
                           "request rate, alternately fitted and held out, the first fitted); {}{}, predicted:\n",
                           h.split.fit.size(), runs, h.saturated.empty() ? "the other " : "", h.split.held_out.size(),
                           h.saturated.empty() ? "" : fmt::format(" others, {} left out as saturated", h.saturated.size()));
  for (const auto& s : h.saturated) std::cout << "left out    " << shown_source(s.source) << ": " << s.note << '\n';
  Table r;
  r.columns = {{"source", "held-out run"}, {"error_before_fraction", "defaults", 3}, {"error_after_fraction", "fit (other half)", 3}};
  for (const auto& e : h.held_out) r.add({shown_source(e.source), e.before, e.after});
  r.set_priority({"source", "error_before_fraction", "error_after_fraction"}, 0);  // a CSV's sources are long: never hide the errors
  print_table(std::cout, r);
  std::cout << "\nMedian |predicted / measured - 1| per metric over the held-out runs:\n";
  Table m;
  m.columns = {{"metric", "metric"}, {"count", "n"}, {"median_abs_error_before_fraction", "defaults", 3},
               {"median_abs_error_after_fraction", "fit (other half)", 3}};
  for (const auto& x : h.metrics) m.add({x.metric, x.count, x.median_before, x.median_after});
  print_table(std::cout, m);
}

void run_calibrate(const CalibrateArgs& a) {
  if (a.files.empty()) {
    throw InputError("files", "none given; expected benchmark results (vllm bench serve, SGLang bench_serving, AIPerf, genai-perf, trtllm-bench) "
                              "or a measurements CSV");
  }
  if (!a.holdout.empty() && !calibrate::holdout_named(a.holdout)) {
    throw InputError("--holdout", "unknown split '" + excerpt(a.holdout) + "'; expected half");
  }
  int64_t skipped = 0;
  auto runs = read_runs(a, skipped);
  // The clients' files name no hardware and only a model id: the flags must say what ran, never
  // the command's defaults (DeepSeek-V3 on GB200) by omission. The id names the model when -m
  // does not, and a -m of another architecture is refused (review 2026-12-06: runs of an 8B
  // fitted against llama-3.1-70b to a 224% median error, written as a profile).
  for (auto& r : runs) {
    if (!r.model.empty() || r.model_id.empty()) continue;
    std::optional<std::string> named;
    try {
      named = resolve_model_name(r.model_id);
    } catch (const InputError&) {
    }
    if (!named) continue;
    if (!a.model_given) {
      r.model = r.model_id;
    } else if (const auto flag = resolve_model_name(a.deployment.model); flag && *flag != *named) {
      throw InputError("--model", fmt::format("{} ran {} ({}), not {}; expected the model that ran, or no -m", r.source, r.model_id, *named, *flag));
    }
  }
  for (const auto& r : runs) {
    if (r.model.empty() && !a.model_given) throw InputError("--model", r.source + " does not say which model ran; expected -m/--model");
    if (r.hardware.empty() && !a.hardware_given) throw InputError("--hardware", r.source + " does not say which system ran; expected -H/--hardware");
  }
  std::vector<calibrate::RunModel> models;
  std::string family;
  for (const auto& r : runs) {
    models.push_back(model_of(a, r));
    const std::string f = models.back().o.policy.name;
    if (!family.empty() && f != family) throw InputError("engine", r.source + " ran " + f + ", the others " + family + "; expected one engine per profile");
    family = f;
  }
  calibrate::FitOptions fo;
  fo.constants = constants_from(a.fit);
  fo.leave_one_out = !a.no_loo;
  if (runs.empty()) {
    throw InputError("files", fmt::format("hold no run to fit ({} measurement row(s) skipped: calibrate reads serving rows with request_rate_per_s "
                                          "and a ttft_ms, tpot_ms, itl_ms or e2e_s metric)",
                                          skipped));
  }
  // --holdout half: the constants are fitted on one half of the runs and the other half is
  // predicted with them (holdout.h); the report and the profile are the fit half's.
  std::optional<calibrate::HoldoutReport> held;
  if (!a.holdout.empty()) held = calibrate::fit_holdout(models, fo, a.fit_saturated);
  const calibrate::FitReport rep = held ? held->fit : calibrate::fit(models, fo);
  const int64_t fitted_runs = static_cast<int64_t>(held ? held->split.fit.size() : runs.size());
  // A fit that leaves the runs this far off has not found the engine's constants: the setup
  // given is not the one that ran (model, system, chips, engine). No profile is written.
  constexpr double kImplausible = 0.5;
  if (rep.median_error_after > kImplausible) {
    throw InputError("runs", fmt::format("the fit leaves a median error of {:.0f}% ({:.0f}% with the defaults), above {:.0f}%: these runs "
                                         "are not {} on {}; expected -m, -H, -n and --engine of the setup that ran (no profile written)",
                                         100 * rep.median_error_after, 100 * rep.median_error_before, 100 * kImplausible,
                                         models.front().d.model.name, models.front().d.system.name));
  }
  std::string sources;
  for (const auto& f : a.files) sources += (sources.empty() ? "" : ", ") + f;
  const std::string profile = calibrate::profile_json(family, rep, fitted_runs,
                                                       "chalk calibrate over " + sources + (held ? " (--holdout half: the fit half)" : ""));
  if (!a.profile_out.empty()) write_file(a.profile_out, profile, "--output");
  Table t;
  t.columns = {{"name", "constant"}, {"default_value_s", "default (s)", 4}, {"value_s", "value (s)", 4}, {"uncertainty_s", "+- 1 sigma (s)", 2}, {"fitted", "fitted"}};
  for (const auto& c : rep.constants) t.add({c.name, c.initial, c.value, c.sigma ? Cell(*c.sigma) : Cell{}, std::string(c.fitted ? "yes" : "no")});
  if (a.output.csv) {
    print_csv(std::cout, t);
    return;
  }
  const auto pct = [](double e) { return fmt::format("{:.1f}%", 100 * e); };
  if (a.output.json) {
    nlohmann::json j = describe_json(models.front().d);  // the first run's deployment (a CSV's runs may differ)
    j["engine"] = family;
    j["runs"] = static_cast<int64_t>(runs.size());
    j["rows_skipped"] = skipped;
    j["residuals"] = rep.residual_count;
    j["iterations"] = rep.iterations;
    j["max_requests"] = a.max_requests;
    nlohmann::json cs = nlohmann::json::array();
    for (const auto& c : rep.constants) {
      cs.push_back({{"name", c.name}, {"default_value_s", c.initial}, {"value_s", c.value}, {"uncertainty_s", opt(c.sigma)},
                    {"fitted", c.fitted}, {"at_bound", c.at_bound}, {"note", c.note}});
    }
    j["rows"] = cs;  // the envelope's rows: one per constant
    nlohmann::json rs = nlohmann::json::array();
    for (const auto& r : rep.runs) {
      rs.push_back({{"source", r.source}, {"error_before_fraction", r.before}, {"error_after_fraction", r.after},
                    {"error_left_out_fraction", opt(r.leave_one_out)}});
    }
    j["run_errors"] = rs;
    j["rms_log_error_before"] = rep.rms_log_before;
    j["rms_log_error_after"] = rep.rms_log_after;
    j["median_abs_error_before_fraction"] = rep.median_error_before;
    j["median_abs_error_after_fraction"] = rep.median_error_after;
    j["median_abs_error_left_out_fraction"] = opt(rep.median_error_loo);
    j["profile_file"] = a.profile_out.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.profile_out);
    j["holdout"] = held ? holdout_json(*held, a.holdout) : nlohmann::json(nullptr);
    j["notes"] = rep.notes;
    print_json(std::cout, envelope("calibrate", std::move(j), {"name", "default_value_s", "value_s", "uncertainty_s", "fitted", "at_bound", "note"}));
    return;
  }
  std::cout << fmt::format("chalk calibrate: {} constant(s) of engine {} fitted to {} run(s), {} measured means (log residuals, soft-L1, "
                           "bounded Levenberg-Marquardt; docs/simulator.md, \"Calibration\")\n",
                           std::count_if(rep.constants.begin(), rep.constants.end(), [](const auto& c) { return c.fitted; }), family,
                           fitted_runs, rep.residual_count);
  std::map<std::string, int64_t> formats;
  for (const auto& r : runs) ++formats[r.format];
  std::string read;
  for (const auto& [f, n] : formats) read += fmt::format("{}{} {}", read.empty() ? "" : ", ", n, f);
  std::cout << "read        " << read << " run(s)\n";
  if (skipped > 0) std::cout << fmt::format("skipped     {} measurement row(s) that are not serving rows under load with a latency metric\n", skipped);
  std::cout << fmt::format("simulated   at most {} requests of each run (--max-requests), {} iterations\n\n", a.max_requests, rep.iterations);
  // People read the constants in one notation: microseconds (review L2: "3.5e-06" beside
  // "0.0121" in seconds); CSV and JSON keep seconds.
  Table us;
  us.columns = {{"name", "constant"}, {"default_value_us", "default (us)", 4}, {"value_us", "value (us)", 4}, {"uncertainty_us", "+- 1 sigma (us)", 2}, {"fitted", "fitted"}};
  // A constant is named without the "_s" of its JSON key beside figures in us, at its end or
  // before a per-unit (review 7 L2: "request_overhead_s ... (us) 6908"; review 8 L2:
  // "host_s_per_sequence" stayed, and the notes named "allreduce_latency_s").
  const auto shown = [](std::string name) {
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "_s") == 0) return name.substr(0, name.size() - 2);
    if (const auto at = name.find("_s_per_"); at != std::string::npos) name.erase(at, 2);
    return name;
  };
  for (const auto& c : rep.constants) {
    us.add({shown(c.name), 1e6 * c.initial, 1e6 * c.value, c.sigma ? Cell(1e6 * *c.sigma) : Cell{}, std::string(c.fitted ? "yes" : "no")});
  }
  print_table(std::cout, us);
  std::cout << "\nError per run, mean |predicted / measured - 1| over its metrics:\n";
  Table e;
  e.columns = {{"source", "run"}, {"error_before_fraction", "defaults", 3}, {"error_after_fraction", "fit (all runs)", 3},
               {"error_left_out_fraction", "fit without it", 3}};
  for (const auto& r : rep.runs) e.add({shown_source(r.source), r.before, r.after, r.leave_one_out ? Cell(*r.leave_one_out) : Cell{}});
  // A measurement CSV's sources ("file: ID-TTFT+ID-E2E+ID-TPOT") were wider than a terminal:
  // the table hid every column and printed blank lines. Shown shorter, and never hidden.
  e.set_priority({"source", "error_before_fraction", "error_after_fraction", "error_left_out_fraction"}, 0);
  print_table(std::cout, e);
  std::cout << fmt::format("\nmedian      {} with the defaults, {} with the fit{}\n", pct(rep.median_error_before), pct(rep.median_error_after),
                           rep.median_error_loo ? ", " + pct(*rep.median_error_loo) + " left out (leave-one-out)" : std::string());
  if (held) print_holdout(*held, runs.size());
  for (const auto& c : rep.constants) {
    if (!c.note.empty()) std::cout << "note        " << shown(c.name) << ": " << c.note << '\n';
  }
  for (const auto& n : rep.notes) std::cout << "note        " << n << '\n';
  if (!a.profile_out.empty()) {
    std::cout << "wrote       " << a.profile_out << " (chalk simulate|plan|validate --engine-profile " << a.profile_out << ")\n";
  } else {
    std::cout << "profile     not written (-o FILE writes it)\n";
  }
}

}  // namespace

void register_calibrate(CLI::App& app, Action& run) {
  static thread_local CalibrateArgs a;
  a = CalibrateArgs{};
  a.deployment.replica_rule = ReplicaRule::smallest;  // as simulate: latency runs on the smallest replica unless -n says
  auto* cmd = app.add_subcommand("calibrate",
                                 "Fit an engine profile (request overhead, host time per sequence, kernel floor, all-reduce latency) to "
                                 "your own benchmark runs: vllm bench serve, SGLang bench_serving, AIPerf, genai-perf or trtllm-bench "
                                 "results, or serving rows of a measurements CSV");
  cmd->add_option("files", a.files,
                  "Benchmark results, the format told by content: vllm bench serve --save-result JSON, SGLang bench_serving "
                  "--output-file JSONL (a run a line), AIPerf profile_export_aiperf.json, genai-perf profile_export_genai_perf.json, "
                  "trtllm-bench --report_json (-m, -H, -n/--tp and --engine say what the file does not), or a measurements CSV "
                  "(.csv) whose serving rows with request_rate_per_s state their own setup")
      ->required();
  add_deployment_options(*cmd, a.deployment);
  add_policy_options(*cmd, a.policy);
  cmd->remove_option(cmd->get_option("--engine-profile"));  // calibrate writes profiles (-o); it fits from the engine's defaults
  cmd->add_option("--fit", a.fit,
                  "Comma list of the constants to fit (others keep the engine's defaults): request_overhead_s, host_s_per_sequence, "
                  "kernel_floor_s, allreduce_latency_s (runs at TP > 1 only)")
      ->capture_default_str();
  cmd->add_option("--max-requests", a.max_requests, "Requests simulated per run at most, the run's first ones (each fit simulates every run ~50 times)")
      ->capture_default_str();
  file_name_option(cmd->add_option("-o,--output", a.profile_out, "Write the engine profile (chalk-engine-profile/1, docs/file-formats.md) to this file"));
  cmd->add_flag("--no-leave-one-out", a.no_loo, "Skip the leave-one-out errors (one fit per run)");
  cmd->add_option("--holdout", a.holdout,
                  "half: fit on half of the runs (each deployment's runs ordered by request rate, alternately fitted and held "
                  "out, the first fitted) and report each metric's median |error| on the other half with the engine's defaults "
                  "and with the fit; the profile written is the fit half's. Runs that chalk simulate finds OVERLOADED at the "
                  "engine's defaults (a queue growing through the whole run) are left out of the fit and the medians");
  cmd->add_flag("--fit-saturated", a.fit_saturated, "With --holdout: keep the runs saturated at the defaults in the fit and the medians");
  add_output_options(*cmd, a.output);
  cmd->callback([&run, cmd] {
    a.model_given = cmd->get_option("--model")->count() > 0;
    a.hardware_given = cmd->get_option("--hardware")->count() > 0;
    run = [] { with_flag_names([] { run_calibrate(a); }); };
  });
}

}  // namespace chalk::cli
