// `chalk web` in the `chalk` binary: hands its arguments to `chalk-web`, the same command
// line with the HTTP server linked (cmd_web.cc), found beside this executable. Keeping
// cpp-httplib and its OpenSSL, brotli and zlib out of `chalk` saves every other command
// about 9 ms of dynamic loading at start-up (issue 11, start-up).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "commands.h"

namespace chalk::cli {
namespace {

/// The server binary: `chalk-web` in the directory of the running executable.
std::filesystem::path server_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : self.parent_path()) / "chalk-web";
}

}  // namespace

void register_web(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("web", web_description);
  // Every argument after `web`, --help included, goes to chalk-web unparsed.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([cmd, &run] {
    run = [args = cmd->remaining()] {
      const std::string path = server_path().string();
      std::vector<std::string> words = {path, "web"};
      words.insert(words.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      ::execv(path.c_str(), argv.data());
      // --help still answers without the server (review 6 L1: it printed this error): what
      // the command does, and where its options come from.
      if (std::find(args.begin(), args.end(), "--help") != args.end() || std::find(args.begin(), args.end(), "-h") != args.end()) {
        std::cout << web_description << "\nUsage: chalk web [OPTIONS]\n\nIts options are chalk-web's, which is not beside chalk (" << path
                  << "); build it with chalk (cmake --build --preset release) for the server and this help in full.\n";
        return;
      }
      throw InputError("web", "cannot start the server binary " + path + ": " + std::strerror(errno) +
                                  "; expected chalk-web beside chalk (built with it: cmake --build --preset release)");
    };
  });
}

}  // namespace chalk::cli
