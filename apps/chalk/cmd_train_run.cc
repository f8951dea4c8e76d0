// `chalk train run`: whole training runs (training/run.h; docs/training-runs.md). The
// `chinchilla` and `equilibrium` subcommands are in cmd_train_scaling.cc.
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/equilibrium.h"
#include "chalk/training/run.h"
#include "chalk/training/scaling_laws.h"
#include "commands.h"
#include "deployment_options.h"
#include "table.h"
#include "train_run_cli.h"

namespace chalk::cli {
namespace {

using namespace train_run;

// ---------------------------------------------------------------- train run

struct RunArgs {
  std::string model = "deepseek-v3", hardware = "h800-sxm";
  std::vector<std::string> phases;
  std::string name = "pre-training";
  std::optional<double> tokens, flops, mfu, step_time_s, tokens_per_step;
  int64_t chips = 2048, seq = 4096;
  double goodput = 1;
  std::optional<double> usd_per_chip_hour, chip_power_w;
  double pue = 1.0;
  std::string peak = "bf16";
  bool causal = false;
  OutputArgs output;
};

double parse_number(const std::string& text, const std::string& field) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw InputError(field, "expected a number, got '" + text + "'");
}

// "name=context extension,tokens=126e9,chips=2048,seq=32768,mfu=0.35" -> a phase.
RunPhase parse_phase(const std::string& text, size_t index) {
  const std::string at = "--phase[" + std::to_string(index) + "]";
  RunPhase p;
  p.name = "phase " + std::to_string(index + 1);
  p.n_chips = 0;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError(at, "expected key=value items, got '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const std::string field = at + "." + key;
    if (key == "name") p.name = value;
    else if (key == "tokens") p.tokens = parse_number(value, field);
    else if (key == "flops") p.flops = parse_number(value, field);
    else if (key == "chips") p.n_chips = static_cast<int64_t>(parse_number(value, field));
    else if (key == "seq") p.sequence_length = static_cast<int64_t>(parse_number(value, field));
    else if (key == "mfu") p.mfu = parse_number(value, field);
    else if (key == "step_time_s") p.step_time = seconds(parse_number(value, field));
    else if (key == "tokens_per_step") p.tokens_per_step = parse_number(value, field);
    else if (key == "goodput") p.goodput = parse_number(value, field);
    else
      throw InputError(field, "unknown key, expected name, tokens, flops, chips, seq, mfu, step_time_s, tokens_per_step "
                              "or goodput");
  }
  if (!p.mfu && !p.step_time) p.mfu = kDefaultMfu;
  return p;
}

void run_train_run(const RunArgs& a) {
  RunInputs in;
  in.model = load_model(a.model);
  in.system = load_system(a.hardware);
  in.peak_precision = parse_matmul_precision(a.peak, "--peak");
  in.causal_attention_flops = a.causal;
  if (a.usd_per_chip_hour) {
    if (!(*a.usd_per_chip_hour >= 0))
      throw InputError("--usd-per-chip-hour", fmt::format("must be >= 0, got {}", *a.usd_per_chip_hour));
    in.price_per_chip = usd_per_hour(*a.usd_per_chip_hour);
  }
  in.chip_power_w = a.chip_power_w.value_or(in.system.power_w_per_chip.value_or(0.0));
  in.pue = a.pue;
  bool default_mfu = false;
  if (a.phases.empty()) {
    RunPhase p;
    p.name = a.name;
    if (!a.tokens && !a.flops) throw InputError("--tokens", "give a budget: --tokens or --flops (or --phase)");
    p.tokens = a.tokens.value_or(0);
    p.flops = a.flops.value_or(0);
    p.n_chips = a.chips;
    p.sequence_length = a.seq;
    p.goodput = a.goodput;
    if (a.step_time_s) {
      p.step_time = seconds(*a.step_time_s);
      p.tokens_per_step = a.tokens_per_step.value_or(0);
    }
    if (a.mfu) p.mfu = *a.mfu;
    if (!a.mfu && !a.step_time_s) p.mfu = kDefaultMfu, default_mfu = true;
    in.phases = {p};
  } else {
    for (size_t i = 0; i < a.phases.size(); ++i) {
      in.phases.push_back(parse_phase(a.phases[i], i));
      default_mfu |= a.phases[i].find("mfu=") == std::string::npos && a.phases[i].find("step_time_s=") == std::string::npos;
    }
  }
  const std::map<std::string, std::string> flags = {
      {"n_chips", "chips"}, {"mfu", "mfu"}, {"goodput", "goodput"}, {"tokens", "tokens"},
      {"sequence_length", "seq"}, {"step_time", "step_time_s"}, {"tokens_per_step", "tokens_per_step"},
      {"pue", "--pue"}, {"chip_power_w", "--chip-power-w"}, {"peak_precision", "--peak"}, {"phases", "--phase"}};
  std::map<std::string, std::string> single = flags;
  if (a.phases.empty()) {
    // One phase from flags: phases[0].<key> names the flag itself.
    single = {{"pue", "--pue"}, {"chip_power_w", "--chip-power-w"}, {"peak_precision", "--peak"}};
  }
  RunReport r;
  try {
    r = with_flags(single, [&] { return plan_run(in); });
  } catch (const InputError& e) {
    if (!a.phases.empty() || e.field().rfind("phases[0].", 0) != 0) throw;
    static const std::map<std::string, std::string> one = {
        {"n_chips", "--chips"}, {"mfu", "--mfu"}, {"goodput", "--goodput"}, {"tokens", "--tokens"},
        {"sequence_length", "--seq"}, {"step_time", "--step-time-s"}, {"tokens_per_step", "--tokens-per-step"}};
    const std::string key = e.field().substr(10);
    const std::string message = std::string(e.what()).substr(e.field().size() + 2);
    throw InputError(one.count(key) ? one.at(key) : e.field(), message);
  }

  Table t;
  t.columns = {{"phase", "phase"},
               {"chips", "chips"},
               {"seq_len_tokens", "seq"},
               {"tokens", "tokens", 4},
               {"train_flops", "FLOPs", 4},
               {"train_flops_per_token", "FLOPs/token", 4},
               {"mfu", "MFU"},
               {"mfu_from", "from"},
               {"tok_per_s", "tok/s", 4},
               {"goodput", "goodput"},
               {"wall_clock_days", "days", 4},
               {"gpu_hours", "GPU-hours", 4},
               {"cost_usd", "USD", 4},
               {"energy_mwh", "MWh", 4}};
  for (const auto& p : r.phases) {
    t.add({p.name, p.n_chips, p.sequence_length, p.tokens, p.flops, p.flops_per_token.value(), p.mfu, p.speed_from,
           p.tokens_per_s.value(), p.goodput, p.wall_clock.value() / 86400, p.chip_hours,
           p.cost ? Cell(p.cost->value()) : Cell{}, p.energy_mwh ? Cell(*p.energy_mwh) : Cell{}});
  }
  if (r.phases.size() > 1) {
    t.add({std::string("total"), Cell{}, Cell{}, r.tokens, r.flops, Cell{}, Cell{}, Cell{}, Cell{}, Cell{},
           r.wall_clock.value() / 86400, r.chip_hours, r.cost ? Cell(r.cost->value()) : Cell{},
           r.energy_mwh ? Cell(*r.energy_mwh) : Cell{}});
  }
  const std::string mfu_note = default_mfu ? kDefaultMfuSource : "given";
  if (a.output.csv) return print_csv(std::cout, t);
  if (a.output.json) {
    nlohmann::json j = {{"model", model_json(in.model, in.system)},
                        {"hardware", hardware_json(in.system)},
                        {"chip", in.system.chip.name},
                        {"peak_tflop_per_s_per_chip", to_tflop_per_s(r.peak_per_chip)},
                        {"peak_precision", a.peak},
                        {"attention_flops", a.causal ? "causal" : "non-causal"},
                        {"mfu_source", mfu_note},
                        {"price_usd_per_chip_hour", r.price_per_chip ? nlohmann::json(to_usd_per_hour(*r.price_per_chip)) : nlohmann::json()},
                        {"price_source", r.price_per_chip ? r.price_source : ""},
                        {"chip_power_w", r.chip_power_w > 0 ? nlohmann::json(r.chip_power_w) : nlohmann::json()},
                        {"pue", r.pue},
                        {"phases", to_json(t)},
                        {"tokens", r.tokens},
                        {"train_flops", r.flops},
                        {"wall_clock_days", r.wall_clock.value() / 86400},
                        {"gpu_hours", r.chip_hours},
                        {"cost_usd", r.cost ? nlohmann::json(r.cost->value()) : nlohmann::json()},
                        {"energy_mwh", opt(r.energy_mwh)}};
    print_json(std::cout, j);
    return;
  }
  std::cout << fmt::format("chalk train run: {} on {} ({}), phases run one after another (docs/training-runs.md)\n",
                           in.model.name, in.system.chip.name, in.system.name);
  std::cout << fmt::format("FLOPs/token 3 x forward (2 x {} active matmul params + {} attention over the sequence; PaLM App. B)\n",
                           human_count(count_params(in.model).active_matmul()), a.causal ? "causal" : "non-causal");
  std::cout << fmt::format("speed       MFU against the {} dense peak, {:.1f} TFLOP/s per chip ({})\n", a.peak,
                           to_tflop_per_s(r.peak_per_chip), mfu_note);
  std::cout << (r.price_per_chip ? fmt::format("price       ${:.2f} per chip-hour ({})\n", to_usd_per_hour(*r.price_per_chip), r.price_source)
                                 : std::string("price       none in the catalog for this system: pass --usd-per-chip-hour\n"));
  std::cout << (r.chip_power_w > 0
                    ? fmt::format("energy      {:.0f} W per chip (TDP) x PUE {:.2f}{}\n", r.chip_power_w, r.pue,
                                  r.pue == 1 ? " (chips only: pass --pue for hosts, network and cooling)" : "")
                    : std::string("energy      no chip power in the catalog for this system: pass --chip-power-w\n"));
  std::cout << '\n';
  print_table(std::cout, t);
  std::cout << fmt::format("\ntotal       {:.1f} days, {:.4g}M GPU-hours{}{}\n", r.wall_clock.value() / 86400, r.chip_hours / 1e6,
                           r.cost ? ", " + money(r.cost->value()) : "",
                           r.energy_mwh ? fmt::format(", {:.4g} MWh", *r.energy_mwh) : "");
}

}  // namespace

void register_train_run(CLI::App& train, Action& run) {
  static thread_local RunArgs r;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  r = RunArgs{};
  auto* cmd = train.add_subcommand("run", "GPU-hours, days, dollars and energy of a whole training run (one or more phases)");
  cmd->add_option("-m,--model", r.model, "Built-in model name or config.json path")->capture_default_str();
  cmd->add_option("-H,--hardware", r.hardware, "Built-in system name or chalk-hardware/1 file")->capture_default_str();
  cmd->add_option("--tokens", r.tokens, "Training tokens D (one phase)");
  cmd->add_option("--flops", r.flops, "Training FLOPs C instead of tokens (one phase)");
  cmd->add_option("-n,--chips", r.chips, "Chips training at once")->capture_default_str();
  cmd->add_option("--seq", r.seq, "Sequence length in tokens")->capture_default_str();
  cmd->add_option("--mfu", r.mfu, fmt::format("Model FLOP utilization (default {}: {})", kDefaultMfu, kDefaultMfuSource));
  cmd->add_option("--step-time-s", r.step_time_s, "Step time in seconds instead of --mfu (with --tokens-per-step)");
  cmd->add_option("--tokens-per-step", r.tokens_per_step, "Tokens per optimizer step (global batch x sequence length)");
  cmd->add_option("--goodput", r.goodput, "Fraction of wall clock spent on steps that count (restarts, rollbacks, stalls)")
      ->capture_default_str();
  cmd->add_option("--name", r.name, "Name of the single phase")->capture_default_str();
  cmd->add_option("--phase", r.phases,
                  "A phase as key=value items (name, tokens|flops, chips, seq, mfu|step_time_s+tokens_per_step, goodput); "
                  "repeat for several phases, summed");
  cmd->add_option("--usd-per-chip-hour", r.usd_per_chip_hour, "Price per chip-hour (default: the hardware catalog's)");
  cmd->add_option("--chip-power-w", r.chip_power_w, "Power per chip in W (default: the catalog's TDP)");
  cmd->add_option("--pue", r.pue, "Power usage effectiveness, facility / IT energy (1 = chips only)")->capture_default_str();
  cmd->add_option("--peak", r.peak, "Peak the MFU is measured against: bf16, fp8, int8, fp4")->capture_default_str();
  cmd->add_flag("--causal", r.causal, "Count causal attention FLOPs (half the scores) instead of PaLM's non-causal convention");
  add_output_options(*cmd, r.output);
  cmd->callback([&run] { run = [] { run_train_run(r); }; });

  register_train_scaling(train, run);
}

}  // namespace chalk::cli
