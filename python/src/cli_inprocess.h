// The command line run inside the Python process: the same CLI11 app that `chalk` builds
// (apps/chalk/main.cc), so every Python command returns exactly the JSON that
// `chalk ... --json` prints (one output vocabulary, docs/output-schema.md).
#pragma once

#include <string>
#include <vector>

namespace chalk::python {

/// Runs `chalk <args...>` in process and returns what it printed on stdout (with --json,
/// a JSON document). Bad input throws chalk::InputError whose field() names the flag or
/// the field (CLI11's parse errors become InputError too, with the flag they name, or
/// "arguments"). Not thread-safe: the CLI keeps its parsed arguments in statics, so callers
/// hold the GIL (the binding does).
std::string run_cli(const std::vector<std::string>& args);

/// One option of a subcommand, read from the CLI11 app: for stubs and docstrings.
struct OptionInfo {
  std::string name;         ///< long name without dashes, or the positional's name
  std::string description;  ///< the --help text
  std::string default_str;  ///< the default CLI11 prints, "" if none
  bool flag = false;        ///< takes no value
  bool positional = false;
  bool repeated = false;    ///< takes several values (given as a list in Python)
  std::vector<std::string> shorts;  ///< its one-letter names without the dash ("n" for -n, --chips)
};

/// One (sub)command: its path ("serving sweep"), --help text and options.
struct CommandInfo {
  std::vector<std::string> path;
  std::string description;
  std::vector<OptionInfo> options;
};

/// Every leaf command of the CLI app, in registration order.
std::vector<CommandInfo> cli_commands();

}  // namespace chalk::python
