// Internal to `chalk serving ...`: the options every serving subcommand shares and the
// helpers its files share. cmd_serving.cc holds the options, the shared helpers and the
// registration; cmd_serving_sweep.cc sweep, balance and window; cmd_serving_frontier.cc
// frontier and modes; cmd_serving_plot.cc plot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "chalk/serving/serving.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli::serving_cli {

// ---------------------------------------------------------------------------------------
// Options.

struct LeverArgs {
  int64_t draft = 0;
  std::optional<double> acceptance;
  std::optional<double> accepted_tokens;  ///< measured mean kept per step (instead of --acceptance)
  std::string drafter;                    ///< mtp, none, or a draft model; empty: mtp when the model has one
  std::optional<int64_t> sparse_top_k;
  std::optional<double> sparse_sqrt;
};

struct ServingArgs {
  DeploymentArgs deployment;
  OutputArgs output;
  LeverArgs levers;
  std::string batch = "1:65536";
  /// -b given (sweep): without it the sweep stops at the batch that fills HBM, so no row
  /// it prints by default is one that cannot run (issue 30).
  bool batch_stated = false;
  bool every_integer = false;
  std::string context = "4096";
  std::string replica_chips;  // empty: 1..scale-up domain
  bool all_points = false;
  std::string speed_multiples = "2.5";
  std::string price_multiples = "6,100";
  std::optional<double> baseline_speed;
  double baseline_tolerance = 0.01;
  std::string html_path = "chalk-serving.html";
  int64_t crossover_batch = 256;
  bool explain = false;  ///< --explain (sweep, balance): how each figure is computed (chalk/serving/explain.h)
  /// --pp (sweep): pipeline stages; unset: the pipeline `chalk layouts` ranks first when no
  /// replica within the scale-up domain holds the model, else 1 (pipeline_cli.h).
  std::optional<int64_t> pp;
};

void add_lever_options(CLI::App& cmd, LeverArgs& l);
/// --draft, --acceptance, --accepted-tokens, --drafter alone (simulate and plan: no sparse
/// attention there).
void add_draft_options(CLI::App& cmd, LeverArgs& l);

// ---------------------------------------------------------------------------------------
// Shared helpers (cmd_serving.cc).

/// The levers, the drafter resolved against the deployment's model (`deployment.model`,
/// loaded only when --draft is given).
ServingLevers levers_of(const LeverArgs& l, const DeploymentArgs& deployment);
std::string describe_levers(const ServingLevers& l);
nlohmann::json levers_json(const ServingLevers& l);
int64_t single_int(const std::string& text, const std::string& field, int64_t lo, int64_t hi);
std::vector<int64_t> batch_list(const ServingArgs& a);
std::vector<int64_t> replica_list(const ServingArgs& a);

/// The frontier, modes and plot vary chips per replica themselves.
void forbid_chips(const ServingArgs& a);

/// DeploymentOptions as resolve() builds them, without fixing the chip count.
DeploymentOptions base_options(const DeploymentArgs& a);

Cell cost_cell(const std::optional<UsdPerToken>& c);
nlohmann::json opt_json(const std::optional<int64_t>& v);
/// The table as CSV, JSON (head + "rows") or text (text_head, the table, then
/// `explain_text`: the algebra --explain prints under the table).
void print(std::string_view command, const ServingArgs& a, const Table& t, const nlohmann::json& head, const std::string& text_head, const std::string& explain_text = "");

// ---------------------------------------------------------------------------------------
// sweep, balance, window (cmd_serving_sweep.cc).

/// The sweep's rows, each with the plain roofline of the same step beside the engine's
/// (`t_step_roofline_ms`: the deployment with mechanisms off, the levers resolved at the
/// row's context).
Table sweep_table(const Deployment& d, const std::vector<ServingPoint>& pts, const ServingLevers& lev);
/// The window's JSON; `pp` > 1: `d` is a pipeline's busiest stage and w's step its cycle
/// (the roofline beside it the pipeline's, pipeline_decode with mechanisms off).
nlohmann::json window_json(const BatchingWindow& w, const Deployment& d, const ServingLevers& lev, int64_t pp = 1);
void run_sweep(const ServingArgs& a);
void run_balance(const ServingArgs& a);
void run_window(const ServingArgs& a);

// ---------------------------------------------------------------------------------------
// frontier, modes (cmd_serving_frontier.cc).

struct Loaded {
  ModelSpec model;
  SystemSpec system;
  DeploymentOptions base;
  Deployment shown;  ///< one scale-up domain (or the smallest that fits), for describe_*; a pipeline's busiest stage
  /// Pipeline stages of every replica (frontier_default); shown is then the busiest stage on
  /// the chips resolve_pipeline_stage gives it.
  int64_t pp = 1;
  /// > 0: the one replica size priced (frontier_default's replica_chips).
  int64_t wide_replica = 0;
};

/// What frontier, modes and plot price with no --replica-chips when no replica within the
/// scale-up domain holds the model at `context` tokens, as `serving sweep`, `decode` and
/// `prices forward` price it (resolve() with prices_pipeline), so the default is a deployment
/// an operator runs, not exit 2 (review 5 M1): `pp` stages per replica (Llama 3.1 405B bf16
/// on H100: PP2 x TP8), or one replica of `replica_chips` across domains where the layout
/// search ranks no pipeline first (DeepSeek-V3 on H100: EP16 over two domains) or a lever
/// (--draft, --sparse-*) is priced without stages. pp 1 and replica_chips 0 otherwise (the
/// sizes within the domain).
struct FrontierDefault {
  int64_t pp = 1;
  int64_t replica_chips = 0;
};
FrontierDefault frontier_default(const ServingArgs& a, int64_t context);

/// A warning when --replica-chips asks for replicas wider than the scale-up domain but the
/// plain roofline, which has no scale-out term, prices them; "" otherwise.
std::string scale_out_warning(const Loaded& l, const ServingArgs& a);

/// The model, system and options; the stages or the one wide replica of frontier_default.
Loaded load(const ServingArgs& a);

/// The header of a pipelined frontier, modes or plot: describe_json of the busiest stage with
/// its "pipeline" object (pipeline_json: pp, microbatches, chips_per_stage, ...), for --json;
/// the same as lines for people (pipeline_text). `l.pp` > 1.
nlohmann::json pipeline_head(const Loaded& l);
std::string pipeline_head_text(const Loaded& l, int64_t context);
/// The plain roofline's step (ms) of a point on `chips` of the loaded model and system: the
/// base options with mechanisms off (the roofline has no layout), the levers at `context`;
/// one deployment per chip count, kept.
/// With l.pp > 1, the pipeline's roofline: pipeline_decode of the stage model on chips / pp
/// chips per stage with mechanisms off, its cycle.
class RooflineBeside {
 public:
  RooflineBeside(const Loaded& l, const ServingLevers& lev) : l_(l), lev_(lev) {}
  double t_step_ms(int64_t chips, int64_t batch, int64_t context);

 private:
  const Loaded& l_;
  ServingLevers lev_;
  std::map<int64_t, Deployment> deps_;
};

Table frontier_table(const std::vector<FrontierPoint>& pts, RooflineBeside& lower, int64_t context);
nlohmann::json excluded_json(const std::vector<ExcludedReplica>& ex);
FrontierOptions frontier_options(const ServingArgs& a, const ServingLevers& lev);
ModesOptions modes_options(const ServingArgs& a, const ServingLevers& lev);
nlohmann::json modes_json(const ModesReport& r, RooflineBeside& lower);
std::string modes_text(const ModesReport& r);
void run_frontier(const ServingArgs& a);
void run_modes(const ServingArgs& a);

// ---------------------------------------------------------------------------------------
// plot (cmd_serving_plot.cc).

void run_plot(const ServingArgs& a);

}  // namespace chalk::cli::serving_cli
