// Shared by the launch-file tests (launch_test.cc, launch_flags_test.cc): the engines'
// argument lists of tests/data/engine-args/, a script's options and a YAML file's keys as the
// tests read them, and the deployments they launch.
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/sim/launch.h"
#include "chalk/sim/plan.h"

namespace chalk::sim::launch_testing {

/// An engine's argument names by context ("serve", "router", "yaml", ...) and the values
/// of its choice arguments (tests/data/engine-args/ENGINE.txt).
struct LaunchEngineArgs {
  std::map<std::string, std::set<std::string>> names;
  std::map<std::string, std::set<std::string>> values;
};

inline LaunchEngineArgs launch_engine_args(const std::string& engine) {
  std::ifstream f(std::string(CHALK_SOURCE_DIR) + "/tests/data/engine-args/" + engine + ".txt");
  LaunchEngineArgs a;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string context, name, v;
    in >> context >> name;
    if (context == "value") {
      while (in >> v) a.values[name].insert(v);
    } else {
      a.names[context].insert(name);
    }
  }
  return a;
}

inline std::string launch_unquote(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
  s.erase(std::remove(s.begin(), s.end(), '\''), s.end());
  return s;
}

/// The options of a script's exec command after its first line, each with the word after it ("" when the next
/// word is another option or there is none).
inline std::vector<std::pair<std::string, std::string>> launch_options_of(const std::string& script) {
  std::istringstream in(script);
  std::string line, words;
  bool in_command = false;
  while (std::getline(in, line)) {
    if (line.rfind("exec ", 0) == 0) {
      in_command = true;  // the program and its subcommand ("python3 -m sglang.launch_server"): not the engine's options
      continue;
    }
    if (!in_command) continue;
    if (!line.empty() && line.back() == '\\') line.pop_back();
    words += line + " ";
  }
  std::istringstream w(words);
  std::vector<std::string> tokens;
  for (std::string t; w >> t;) tokens.push_back(t);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].size() < 2 || tokens[i][0] != '-' || tokens[i] == "-1") continue;
    const bool has_value = i + 1 < tokens.size() && (tokens[i + 1][0] != '-' || tokens[i + 1] == "-1");
    out.push_back({tokens[i], has_value ? launch_unquote(tokens[i + 1]) : ""});
  }
  return out;
}

/// A YAML file's keys as dotted paths, each with its scalar value ("" for a mapping or a list).
inline std::vector<std::pair<std::string, std::string>> launch_yaml_keys(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::pair<std::size_t, std::string>> stack;  // indentation, key
  std::vector<std::pair<std::string, std::string>> out;
  while (std::getline(in, line)) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#' || line[indent] == '-') continue;
    const std::size_t colon = line.find(':', indent);
    if (colon == std::string::npos) continue;
    while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
    std::string path;
    for (const auto& s : stack) path += s.second + ".";
    const std::string key = line.substr(indent, colon - indent);
    std::string value = colon + 1 < line.size() ? line.substr(line.find_first_not_of(' ', colon + 1)) : "";
    if (colon + 1 >= line.size() || line.find_first_not_of(' ', colon + 1) == std::string::npos) value = "";
    out.push_back({path + key, value});
    stack.push_back({indent, key});
  }
  return out;
}

/// A Dynamo manifest's key with its worker services (the names of Dynamo's own example,
/// VllmDecodeWorker and VllmPrefillWorker) written WORKER, as the list writes them.
inline std::string launch_worker_key(std::string key) {
  for (const char* w : {"VllmDecodeWorker", "VllmPrefillWorker"}) {
    const auto at = key.find(std::string(".") + w);
    if (at != std::string::npos) key.replace(at + 1, std::string(w).size(), "WORKER");
  }
  return key;
}

/// The `- --flag` items of a Dynamo manifest's worker args are vLLM's serve arguments or
/// dynamo.vllm's own; returns how many were checked.
inline int launch_check_dynamo_args(const LaunchEngineArgs& a, const LaunchFile& f) {
  std::istringstream in(f.text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find("- --");
    if (at == std::string::npos) continue;
    const std::string flag = line.substr(at + 2);
    const bool known = (a.names.count("serve") && a.names.at("serve").count(flag)) || (a.names.count("dynamo") && a.names.at("dynamo").count(flag));
    EXPECT_TRUE(known) << f.path << ": " << flag << " is neither vLLM's nor dynamo.vllm's";
    ++n;
  }
  return n;
}

/// Every flag, key and choice of `launches` is among its engine's own; returns how many were checked.
inline int launch_check_against_engines(const std::vector<EngineLaunch>& launches) {
  int checked = 0;
  for (const auto& e : launches) {
    const LaunchEngineArgs a = launch_engine_args(e.engine);
    EXPECT_FALSE(a.names.empty()) << e.engine;
    for (const auto& f : e.files) {
      const std::string base = f.path.substr(f.path.rfind('/') + 1);
      const bool yaml = base.size() > 5 && base.substr(base.size() - 5) == ".yaml";
      const std::string context = base == "dynamo.yaml" ? "k8s"
                                  : yaml                 ? (base == "disagg.yaml" ? "disagg" : "yaml")
                                  : base == "proxy.sh"   ? "proxy"
                                  : base == "router.sh"  ? "router"
                                                         : "serve";
      if (context == "k8s") checked += launch_check_dynamo_args(a, f);
      for (auto [name, value] : yaml ? launch_yaml_keys(f.text) : launch_options_of(f.text)) {
        if (context == "k8s") name = launch_worker_key(name);
        EXPECT_TRUE(a.names.count(context) && a.names.at(context).count(name)) << e.engine << " " << f.path << ": " << name << " is not among the engine's " << context << " arguments";
        if (a.values.count(name) && !value.empty()) {
          EXPECT_TRUE(a.values.at(name).count(value)) << e.engine << " " << f.path << ": " << name << " " << value << " is not a choice it takes";
        }
        ++checked;
      }
    }
  }
  return checked;
}

inline LaunchTarget launch_test_target() {
  LaunchTarget t;
  t.model_name = "m";
  t.model = "org/m";
  t.system_name = "h100-sxm";
  t.hbm_bytes_per_chip = 80e9;
  t.policy = engine_policy("vllm");
  t.max_model_len = 4096;
  return t;
}

inline PlanCandidate launch_dp_attention_moe() {
  PlanCandidate c;
  c.replica_chips = 8;
  c.replicas = 2;
  c.chips = 16;
  c.max_sequences = 256;
  c.max_batched_tokens = 8192;
  c.layout = "attention TP2, experts EP8";
  c.parallel.tp_attention = 2;
  c.parallel.tp_ffn = 2;
  c.parallel.ep = 8;
  c.weight_bytes_per_chip = 35e9;
  return c;
}

inline const LaunchFile* launch_file_at(const std::vector<EngineLaunch>& l, const std::string& path) {
  for (const auto& e : l) {
    for (const auto& f : e.files) {
      if (f.path == path) return &f;
    }
  }
  return nullptr;
}

}  // namespace chalk::sim::launch_testing
