#include "cli_inprocess.h"

#include <iostream>
#include <regex>
#include <sstream>

#include <CLI/CLI.hpp>

#include "arg_parse.h"
#include "chalk/base/error.h"
#include "commands.h"

namespace chalk::python {
namespace {

// The app of apps/chalk/main.cc: the same registrations in the same order. A command added
// to main.cc is added here too (tests/test_bindings.py fails on one the CLI lists and this
// does not).
void build_app(CLI::App& app, cli::Action& run) {
  app.name("chalk");
  app.require_subcommand(1);
  cli::register_decode(app, run);
  cli::register_prefill(app, run);
  cli::register_catalog(app, run);
  cli::register_serving(app, run);
  cli::register_prices(app, run);
  cli::register_validate(app, run);
  cli::register_layouts(app, run);
  cli::register_scaleup(app, run);
  cli::register_train(app, run);
  cli::register_simulate(app, run);
  cli::register_plan(app, run);
  cli::register_fleet(app, run);
  cli::register_calibrate(app, run);
  cli::register_step(app, run);
  cli::strict_numbers(app);
}

/// Restores std::cout's buffer on every exit path.
struct CoutCapture {
  std::ostringstream out;
  std::streambuf* saved;
  CoutCapture() : saved(std::cout.rdbuf(out.rdbuf())) {}
  ~CoutCapture() { std::cout.rdbuf(saved); }
};

std::string first_flag(const std::string& message) {
  static const std::regex flag("--[a-z0-9][a-z0-9-]*");
  std::smatch m;
  return std::regex_search(message, m, flag) ? m.str() : "arguments";
}

void collect(const CLI::App* app, std::vector<std::string> path, std::vector<CommandInfo>& out) {
  const auto subs = app->get_subcommands({});
  if (!path.empty() && subs.empty()) {
    CommandInfo c{path, app->get_description(), {}};
    for (const CLI::Option* o : app->get_options()) {
      if (o->get_name() == "--help" || o->get_name() == "--wide" || o->get_name() == "--quiet") continue;
      OptionInfo i;
      i.positional = o->get_positional();
      i.name = i.positional ? o->get_name(true, false) : (o->get_lnames().empty() ? o->get_snames().front() : o->get_lnames().front());
      i.description = o->get_description();
      i.default_str = o->get_default_str();
      i.flag = o->get_expected_max() == 0;  // add_flag sets expected(0)
      i.repeated = o->get_items_expected_max() > 1;
      i.shorts = o->get_snames();
      c.options.push_back(std::move(i));
    }
    out.push_back(std::move(c));
  }
  for (const CLI::App* s : subs) {
    auto p = path;
    p.push_back(s->get_name());
    collect(s, p, out);
  }
}

}  // namespace

std::string run_cli(const std::vector<std::string>& args) {
  CLI::App app;
  cli::Action run;
  build_app(app, run);
  std::vector<std::string> argv_rev(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(argv_rev);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    const std::string field = first_flag(what);
    if (what.rfind(field + ": ", 0) == 0) what = what.substr(field.size() + 2);  // "--tp: expected ..." names it already
    throw InputError(field, what.empty() ? e.get_name() : what);
  }
  CoutCapture capture;
  if (run) run();
  return capture.out.str();
}

std::vector<CommandInfo> cli_commands() {
  CLI::App app;
  cli::Action run;
  build_app(app, run);
  std::vector<CommandInfo> out;
  collect(&app, {}, out);
  return out;
}

}  // namespace chalk::python
