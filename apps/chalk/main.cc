// chalk: what it costs, and how fast it is, to serve or train an LLM on real hardware.
#include <iostream>

#include <CLI/CLI.hpp>

#include "chalk/base/error.h"
#include "arg_parse.h"
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
  chalk::cli::strict_numbers(app);  // every numeric flag: the whole argument or an error ("8k" is not 8)
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
