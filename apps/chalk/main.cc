// chalk: what it costs, and how fast it is, to serve or train an LLM on real hardware.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "chalk/base/error.h"
#include "arg_parse.h"
#include "chalk/io/io.h"
#include "commands.h"
#include "envelope.h"
#include "help_format.h"
#include "table.h"
#include "wrap.h"

int main(int argc, char** argv) {
  CLI::App app{"chalk: the cost and speed of serving and training LLMs on real hardware, from first principles.\n"
               "Rooflines from real HF configs and datasheets; see docs/formulas.md for every equation."};
  app.name("chalk");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("chalk ") + chalk::cli::kChalkVersion);
  // Help fits the terminal like every other output (commands inherit the formatter).
  app.formatter(std::make_shared<chalk::cli::HelpFormatter>(chalk::cli::terminal_width()));
  chalk::cli::Action run;
  // Each command and the function that registers it (`models` and `hardware` share one).
  // Only the command being run is registered: building every command's options took over
  // half of a `chalk decode` run (issue 11, start-up). `chalk`, `chalk --help`, a flag first
  // or an unknown word register them all, so help still lists every command.
  using Register = void (*)(CLI::App&, chalk::cli::Action&);
  const std::vector<std::pair<std::string, Register>> commands = {
      {"decode", chalk::cli::register_decode},     {"prefill", chalk::cli::register_prefill},
      {"models", chalk::cli::register_catalog},    {"hardware", chalk::cli::register_catalog},
      {"serving", chalk::cli::register_serving},   {"prices", chalk::cli::register_prices},
      {"validate", chalk::cli::register_validate}, {"layouts", chalk::cli::register_layouts},
      {"scaleup", chalk::cli::register_scaleup},   {"train", chalk::cli::register_train},
      {"web", chalk::cli::register_web},         {"simulate", chalk::cli::register_simulate},
      {"plan", chalk::cli::register_plan},         {"fleet", chalk::cli::register_fleet},
      {"calibrate", chalk::cli::register_calibrate}, {"step", chalk::cli::register_step},
  };
  const std::string word = argc > 1 ? argv[1] : "";
  const auto named = std::find_if(commands.begin(), commands.end(), [&](const auto& c) { return c.first == word; });
  std::vector<Register> registered;
  const bool version_only = argc == 2 && word == "--version";  // prints before any command is read
  for (const auto& [name, add] : commands) {
    if (version_only) break;
    if (named != commands.end() && add != named->second) continue;
    if (std::find(registered.begin(), registered.end(), add) != registered.end()) continue;
    add(app, run);
    registered.push_back(add);
  }
  chalk::cli::strict_numbers(app);  // every numeric flag: the whole argument or an error ("8k" is not 8)
  // An unknown command is named, with the nearest ones (CLI11 would only say an argument
  // was not expected).
  if (!word.empty() && word[0] != '-' && named == commands.end()) {
    std::vector<std::string> names;
    for (const auto& c : commands) names.push_back(c.first);
    const auto near = chalk::nearest_names(word, names, 2);
    std::cerr << "chalk: error: unknown command '" << word << "'; did you mean '" << near.front() << "'"
              << (near.size() > 1 ? " or '" + near[1] + "'" : std::string()) << "? (see chalk --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the help of the command the error is in, and name a group's commands when one
    // is missing (review 4 L9: "chalk serving" said "see chalk --help", which lists none).
    std::string path = "chalk";
    CLI::App* at = &app;
    for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) path += " " + (at = subs.front())->get_name();
    std::string commands;
    if (at != &app && at->get_subcommands().empty()) {
      for (const CLI::App* c : at->get_subcommands([](CLI::App*) { return true; })) commands += (commands.empty() ? "" : ", ") + c->get_name();
    }
    std::cerr << "chalk: error: " << chalk::detail::bounded_line(e.what()) << (commands.empty() ? "" : ": " + commands) << " (see " << path
              << " --help)\n";
    return 2;
  }
  // Human-readable output fits the terminal: tables hide columns (print_table), prose wraps
  // (wrap.h). JSON, CSV, --wide and the web server's log are left as written.
  const bool machine = std::any_of(argv + 1, argv + argc, [](const char* a) {
    const std::string s = a;
    return s == "--json" || s == "--csv";
  });
  std::optional<chalk::cli::WrapOutput> wrap;
  if (!machine && !chalk::cli::wide_tables() && word != "web") wrap.emplace(std::cout, chalk::cli::terminal_width());
  try {
    chalk::cli::command_outcome() = {};
    std::optional<chalk::cli::QuietOutput> quiet;  // --quiet: the tables alone on standard output
    if (!machine && word != "web") quiet.emplace();
    if (run) run();
  } catch (const chalk::InputError& e) {
    std::cerr << "chalk: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "chalk: internal error: " << chalk::detail::bounded_line(e.what()) << '\n';
    return 3;
  }
  if (const auto& o = chalk::cli::command_outcome(); o.status != 0) {
    std::cout.flush();
    std::cerr << "chalk: " << o.note << '\n';
    return o.status;
  }
  return 0;
}
