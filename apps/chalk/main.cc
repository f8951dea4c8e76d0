// chalk: what it costs, and how fast it is, to serve or train an LLM on real hardware.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "chalk/base/error.h"
#include "arg_parse.h"
#include "chalk/io/io.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"chalk: the cost and speed of serving and training LLMs on real hardware, from first principles.\n"
               "Rooflines from real HF configs and datasheets; see docs/formulas.md for every equation."};
  app.name("chalk");
  app.require_subcommand(1);
  app.set_version_flag("--version", "chalk 0.1.0");
  chalk::cli::Action run;
  chalk::cli::register_decode(app, run);
  chalk::cli::register_prefill(app, run);
  chalk::cli::register_catalog(app, run);
  chalk::cli::register_serving(app, run);
  chalk::cli::register_prices(app, run);
  chalk::cli::register_validate(app, run);
  chalk::cli::register_layouts(app, run);
  chalk::cli::register_scaleup(app, run);
  chalk::cli::register_train(app, run);
  chalk::cli::register_simulate(app, run);
  chalk::cli::register_plan(app, run);
  chalk::cli::strict_numbers(app);  // every numeric flag: the whole argument or an error ("8k" is not 8)
  // An unknown command is named, with the nearest ones (CLI11 would only say an argument
  // was not expected).
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      const auto near = chalk::nearest_names(word, names, 2);
      std::cerr << "chalk: error: unknown command '" << word << "'; did you mean '" << near.front() << "'"
                << (near.size() > 1 ? " or '" + near[1] + "'" : std::string()) << "? (see chalk --help)\n";
      return 2;
    }
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
    std::cerr << "chalk: error: " << e.what() << " (see chalk --help)\n";
    return 2;
  }
  try {
    if (run) run();
  } catch (const chalk::InputError& e) {
    std::cerr << "chalk: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "chalk: internal error: " << e.what() << '\n';
    return 3;
  }
  return 0;
}
