// Options shared by every command that places a model on hardware, and how a
// deployment is described to people and programs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "arg_parse.h"
#include "chalk/engine/roofline.h"

namespace chalk::cli {

/// --model, --hardware, --chips and the format/efficiency/price overrides.
struct DeploymentArgs {
  std::string model = "deepseek-v3";
  std::string hardware = "gb200-nvl72";
  int64_t chips = 0;  ///< 0 = one scale-up domain
  std::string weights, kv = "bf16", compute;
  std::optional<double> matmul_efficiency, hbm_efficiency, price_usd_per_chip_hour;
  double memory_reserve = 0.10;
  bool mechanisms = false;   ///< add collectives, kernel floors and kernel efficiencies (overhead.h)
  std::optional<int64_t> tp, ep;   ///< layout degrees with --mechanisms (unset = derived)
  bool two_batch_overlap = false;  ///< two micro-batches hide EP traffic (--mechanisms)
  std::optional<std::string> dispatch_dtype;  ///< EP dispatch format (--mechanisms; unset = bf16)
};

/// Output format flags.
struct OutputArgs {
  bool json = false;
  bool csv = false;
};

/// Adds the deployment options; `layout_flags` adds --mechanisms, --tp, --ep,
/// --two-batch-overlap and --dispatch-dtype too (`chalk layouts` searches the layout instead).
void add_deployment_options(CLI::App& app, DeploymentArgs& a, bool layout_flags = true);
void add_output_options(CLI::App& app, OutputArgs& o);

/// The options every placement shares (formats, efficiencies, price, reserve, mechanisms),
/// without the chip count. Throws InputError.
DeploymentOptions options_from(const DeploymentArgs& a);

/// Loads the model and system and resolves the deployment. Throws InputError.
Deployment resolve(const DeploymentArgs& a);

/// Warnings about a deployment that hold at any batch: a replica wider than the scale-up
/// domain without --mechanisms (no scale-out term), a --tp that splits heads no engine
/// can split (attention_split_problem), two micro-batches with no EP traffic to hide.
std::vector<std::string> deployment_warnings(const Deployment& d);

/// The model, hardware and every assumption, for --json.
nlohmann::json describe_json(const Deployment& d);

/// The same for people: a few labelled lines.
std::string describe_text(const Deployment& d);

/// describe_text followed by a "warning" line for each of deployment_warnings(d), for a
/// `max_context` beyond the model's max_position_embeddings, and for weights that do not
/// fit in the replica's HBM (the figures then assume they did).
std::string describe_text_with_warnings(const Deployment& d, int64_t max_context = 0);

/// 1e9 -> "1.00e+09"-free human form: "671.0B", "37.5B", "70.3 KB".
std::string human_count(double n);
std::string human_bytes(double bytes);

}  // namespace chalk::cli
