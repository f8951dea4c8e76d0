// `chalk train run`: whole training runs (training/run.h; docs/training-runs.md). The
// `chinchilla` and `equilibrium` subcommands are in cmd_train_scaling.cc.
#include <iostream>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/equilibrium.h"
#include "chalk/training/run.h"
#include "chalk/training/scaling_laws.h"
#include "envelope.h"
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
  std::optional<std::string> name;
  std::optional<double> tokens, flops, mfu, step_time_s, tokens_per_step;
  int64_t chips = 2048, seq = 4096;
  std::optional<double> goodput, interruptions_per_chip_hour;
  std::optional<double> usd_per_chip_hour, chip_power_w;
  double pue = 1.0;
  std::string peak = "bf16";
  bool non_causal = false;
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

// A count (chips, tokens per sequence): a whole number, as the flags' integer options take.
int64_t parse_whole(const std::string& text, const std::string& field) {
  const double v = parse_number(text, field);
  if (!(std::fabs(v) <= 9e15) || v != std::floor(v)) throw InputError(field, "expected a whole number, got '" + text + "'");
  return static_cast<int64_t>(v);
}

// "name=context extension,tokens=126e9,chips=2048,seq=32768,mfu=0.35" -> a phase. Keys it
// leaves out come from `defaults`, the run's flags (--chips, --seq, --goodput, --mfu or
// --step-time-s with --tokens-per-step); each key at most once (a second phase needs its own
// --phase). Sets `*default_mfu` when neither the phase nor the flags give a speed.
RunPhase parse_phase(const std::string& text, size_t index, const RunPhase& defaults, bool* default_mfu) {
  const std::string at = "--phase[" + std::to_string(index) + "]";
  RunPhase p = defaults;
  p.name = "phase " + std::to_string(index + 1);
  std::set<std::string> seen;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError(at, "expected key=value items, got '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const std::string field = at + "." + key;
    if (!seen.insert(key).second)
      throw InputError(field, "given twice in one --phase ('" + value + "' again): give each phase its own --phase");
    if (key == "name") p.name = value;
    else if (key == "tokens") p.tokens = parse_number(value, field);
    else if (key == "flops") p.flops = parse_number(value, field);
    else if (key == "chips") p.n_chips = parse_whole(value, field);
    else if (key == "seq") p.sequence_length = parse_whole(value, field);
    else if (key == "mfu") p.mfu = parse_number(value, field);
    else if (key == "step_time_s") p.step_time = seconds(parse_number(value, field));
    else if (key == "tokens_per_step") p.tokens_per_step = parse_number(value, field);
    else if (key == "goodput") p.goodput = parse_number(value, field);
    else
      throw InputError(field, "unknown key, expected name, tokens, flops, chips, seq, mfu, step_time_s, tokens_per_step "
                              "or goodput");
  }
  // The phase's own speed replaces the flags'; both in one phase is the library's error.
  if (seen.count("mfu") && !seen.count("step_time_s")) p.step_time.reset();
  if (seen.count("step_time_s") && !seen.count("mfu")) p.mfu.reset();
  if (seen.count("tokens_per_step") && !p.step_time)
    throw InputError(at + ".tokens_per_step", "needs step_time_s (the phase's speed comes from an MFU)");
  if (!p.mfu && !p.step_time) *default_mfu = true;
  return p;
}

// The peaks `chip` has, for the error naming what --peak accepts.
std::string peaks_of(const ChipSpec& chip) {
  std::string out;
  for (MatmulPrecision m : {MatmulPrecision::bf16, MatmulPrecision::fp8, MatmulPrecision::int8, MatmulPrecision::fp4}) {
    if (chip.peak_for(m).value() > 0) out += (out.empty() ? "" : ", ") + std::string(to_string(m));
  }
  return out;
}

// "0.900: 0.36 interruptions/h x 14.7 min lost (12.7 min restart + half a checkpoint
// interval), checkpoint every 4.0 min at 2.8 s a save" (goodput.h).
std::string describe_goodput(const InterruptionGoodput& g) {
  if (g.interruptions_per_hour == 0) return fmt::format("{:.3f}: no interruptions", g.goodput);
  return fmt::format("{:.3f}: {:.3g} interruptions/h x {:.3g} min lost ({:.3g} min restart + half a checkpoint interval), "
                     "checkpoint every {:.3g} min at {:.3g} s a save ({:.3g} TB at {:.3g} TB/s)",
                     g.goodput, g.interruptions_per_hour, g.lost_per_interruption.value() / 60, g.restart_time.value() / 60,
                     g.checkpoint_interval.value() / 60, g.save_stall.value(), g.checkpoint_bytes / 1e12,
                     g.checkpoint_bytes / std::max(g.save_stall.value(), 1e-300) / 1e12);
}

// Where the phases' goodput comes from: "given", "interruption model" or "mixed".
std::string goodput_source(const RunReport& r) {
  const auto n = std::count_if(r.phases.begin(), r.phases.end(), [](const PhaseReport& p) { return p.goodput_parts.has_value(); });
  return n == 0 ? "given" : n == static_cast<long>(r.phases.size()) ? "interruption model" : "mixed";
}

void run_train_run(const RunArgs& a) {
  RunInputs in;
  in.model = load_model(a.model);
  in.system = load_system(a.hardware);
  if (a.peak == "fp16") {
    throw InputError("--peak", "expected bf16, fp8, int8 or fp4, got 'fp16' (the fp16 dense peak is the bf16 one: give bf16)");
  }
  in.peak_precision = parse_matmul_precision(a.peak, "--peak");
  const std::string peak(to_string(in.peak_precision));
  if (!(in.system.chip.peak_for(in.peak_precision).value() > 0))
    throw InputError("--peak", fmt::format("{} has no dense {} peak; expected one it has: {}", in.system.chip.name, peak,
                                           peaks_of(in.system.chip)));
  in.causal_attention_flops = !a.non_causal;
  const double default_mfu_value = a.non_causal ? kDefaultMfuNonCausal : kDefaultMfu;
  if (a.usd_per_chip_hour) {
    if (!(*a.usd_per_chip_hour >= 0))
      throw InputError("--price-usd-per-chip-hour", fmt::format("must be >= 0, got {}", *a.usd_per_chip_hour));
    in.price_per_chip = usd_per_hour(*a.usd_per_chip_hour);
  }
  in.chip_power_w = a.chip_power_w.value_or(in.system.power_w_per_chip.value_or(0.0));
  in.pue = a.pue;
  // The flags: the single phase, or each --phase's defaults.
  if (a.chips > kMaxRunChips)
    throw InputError("--chips", fmt::format("must be at most {} chips, got {}", kMaxRunChips, a.chips));
  if (a.tokens_per_step && !a.step_time_s &&
      std::none_of(a.phases.begin(), a.phases.end(), [](const std::string& p) { return p.find("step_time_s=") != std::string::npos; }))
    throw InputError("--tokens-per-step", "needs --step-time-s (it sets the speed with it; --mfu alone needs no tokens per step)");
  RunPhase flags_phase;
  flags_phase.name = a.name.value_or("pre-training");
  flags_phase.n_chips = a.chips;
  flags_phase.sequence_length = a.seq;
  flags_phase.goodput = a.goodput;
  if (a.interruptions_per_chip_hour) in.interruptions.interruptions_per_chip_hour = *a.interruptions_per_chip_hour;
  if (a.mfu) flags_phase.mfu = *a.mfu;
  if (a.step_time_s) flags_phase.step_time = seconds(*a.step_time_s);
  flags_phase.tokens_per_step = a.tokens_per_step.value_or(0);
  bool default_mfu = false;
  if (a.phases.empty()) {
    if (!a.tokens && !a.flops) throw InputError("--tokens", "give a budget: --tokens or --flops (or --phase)");
    RunPhase p = flags_phase;
    p.tokens = a.tokens.value_or(0);
    p.flops = a.flops.value_or(0);
    if (!p.mfu && !p.step_time) p.mfu = default_mfu_value, default_mfu = true;
    in.phases = {p};
  } else {
    // A budget or name beside --phase belongs to no phase: refused, not dropped.
    if (a.tokens) throw InputError("--tokens", "give each phase's budget inside its --phase (tokens= or flops=), not beside --phase");
    if (a.flops) throw InputError("--flops", "give each phase's budget inside its --phase (tokens= or flops=), not beside --phase");
    if (a.name) throw InputError("--name", "names the single phase: with --phase give name= inside each --phase");
    for (size_t i = 0; i < a.phases.size(); ++i) {
      bool d = false;
      in.phases.push_back(parse_phase(a.phases[i], i, flags_phase, &d));
      if (d) in.phases.back().mfu = default_mfu_value, default_mfu = true;
      if (in.phases.back().n_chips > kMaxRunChips)
        throw InputError(fmt::format("--phase[{}].chips", i),
                         fmt::format("must be at most {} chips, got {}", kMaxRunChips, in.phases.back().n_chips));
    }
  }
  // The default MFU is a fraction of the bf16 peak: against another peak it would claim the
  // same fraction of a faster peak (fp8: twice the tokens per second).
  if (default_mfu && in.peak_precision != MatmulPrecision::bf16)
    throw InputError("--peak", fmt::format("the default MFU ({:.2f}%) is measured against the bf16 peak; with --peak {} give "
                                           "--mfu (or mfu= in each --phase) against that peak, or --step-time-s",
                                           100 * default_mfu_value, peak));
  const std::map<std::string, std::string> flags = {
      {"n_chips", "chips"}, {"mfu", "mfu"}, {"goodput", "goodput"}, {"tokens", "tokens"},
      {"sequence_length", "seq"}, {"step_time", "step_time_s"}, {"tokens_per_step", "tokens_per_step"},
      {"pue", "--pue"}, {"chip_power_w", "--chip-power-w"}, {"peak_precision", "--peak"}, {"phases", "--phase"},
      {"interruptions_per_chip_hour", "--interruptions-per-chip-hour"}};
  std::map<std::string, std::string> single = flags;
  if (a.phases.empty()) {
    // One phase from flags: phases[0].<key> names the flag itself.
    single = {{"pue", "--pue"}, {"chip_power_w", "--chip-power-w"}, {"peak_precision", "--peak"},
              {"interruptions_per_chip_hour", "--interruptions-per-chip-hour"}};
  }
  RunReport r;
  try {
    r = with_flags(single, [&] { return plan_run(in); });
  } catch (const InputError& e) {
    if (!a.phases.empty() || e.field().rfind("phases[0].", 0) != 0) throw;
    static const std::map<std::string, std::string> one = {
        {"n_chips", "--chips"}, {"mfu", "--mfu"}, {"goodput", "--goodput"}, {"tokens", "--tokens"},
        {"sequence_length", "--seq-len"}, {"step_time", "--step-time-s"}, {"tokens_per_step", "--tokens-per-step"}};
    const std::string key = e.field().substr(10);
    const std::string message = std::string(e.what()).substr(e.field().size() + 2);
    throw InputError(one.count(key) ? one.at(key) : e.field(), message);
  }

  const std::string budget_flag = a.phases.empty() ? (a.flops ? "--flops" : "--tokens") : "--phase";
  if (!std::isfinite(r.flops) || !std::isfinite(r.chip_hours))
    throw InputError(budget_flag, fmt::format("the budget gives {:.3g} FLOPs and {:.3g} chip-hours: not a finite run", r.flops, r.chip_hours));
  std::vector<std::string> warnings;
  for (const auto& p : r.phases) warn_context(warnings, in.model, p.sequence_length, p.name + ": sequence length");

  Table t;
  t.columns = {{"phase", "phase"},
               {"chips", "chips"},
               {"context_tokens", "seq"},
               {"tokens", "tokens", 4},
               {"goodput", "goodput"},
               {"train_flops", "FLOPs", 4},
               {"train_flops_per_token", "FLOPs/token", 4},
               {"mfu", "MFU"},
               {"mfu_from", "from"},
               {"tok_per_s", "tok/s", 4},
               {"wall_clock_days", "days", 4},
               {"chip_hours", "chip-hours", 4},
               {"cost_usd", "USD", 4},
               {"energy_mwh", "MWh", 4}};
  for (const auto& p : r.phases) {
    t.add({p.name, p.n_chips, p.sequence_length, p.tokens, p.goodput, p.flops, p.flops_per_token.value(), p.mfu, p.speed_from,
           p.tokens_per_s.value(), p.wall_clock.value() / 86400, p.chip_hours,
           p.cost ? Cell(p.cost->value()) : Cell{}, p.energy_mwh ? Cell(*p.energy_mwh) : Cell{}});
  }
  t.set_count({"tokens", "train_flops_per_token", "tok_per_s", "chip_hours"});  // 15.0T, not 15000000000000 (issue 30 item 2)
  const std::string mfu_note = default_mfu ? (a.non_causal ? kDefaultMfuNonCausalSource : kDefaultMfuSource) : "given";
  const std::string attention = a.non_causal ? "non-causal" : "causal";
  // A phase given goodput 1 is a lower bound on wall clock: say so.
  const bool ideal = std::all_of(r.phases.begin(), r.phases.end(), [](const PhaseReport& p) { return p.goodput == 1; });
  const bool modelled = std::any_of(r.phases.begin(), r.phases.end(), [](const PhaseReport& p) { return p.goodput_parts.has_value(); });
  // Phases only, one row each (the sums are top-level keys): summing the rows gives the totals.
  if (a.output.csv) return print_csv(std::cout, t, warnings);
  if (a.output.json) {
    nlohmann::json j = {{"model", model_json(in.model, in.system)},
                        {"hardware", hardware_json(in.system)},
                        {"chip", in.system.chip.name},
                        {"peak_tflop_per_s_per_chip", to_tflop_per_s(r.peak_per_chip)},
                        {"peak_precision", peak},
                        {"attention_flops", attention},
                        {"mfu_definition", mfu_definition(!a.non_causal, peak)},
                        // What the figures assume sits under `assumptions`, as every serving
                        // command keeps its price and source (docs/output-schema.md; review 8 M3:
                        // they were top-level keys beside an empty `assumptions`).
                        {"assumptions",
                         {{"mfu_source", mfu_note},
                          {"price_usd_per_chip_hour", r.price_per_chip ? nlohmann::json(to_usd_per_hour(*r.price_per_chip)) : nlohmann::json()},
                          {"price_source", r.price_per_chip ? r.price_source : ""},
                          {"chip_power_w", r.chip_power_w > 0 ? nlohmann::json(r.chip_power_w) : nlohmann::json()},
                          {"pue", r.pue},
                          {"goodput_source", goodput_source(r)},
                          {"interruptions_per_chip_hour", modelled ? nlohmann::json(in.interruptions.interruptions_per_chip_hour) : nlohmann::json()},
                          {"restart_s", modelled ? nlohmann::json(in.interruptions.restart_time.value()) : nlohmann::json()},
                          {"checkpoint_write_gb_per_s", modelled ? nlohmann::json(in.interruptions.checkpoint_write_bytes_per_s / 1e9) : nlohmann::json()}}},
                        {"rows", to_json(t)},  // the phases
                        {"tokens", r.tokens},
                        {"train_flops", r.flops},
                        {"wall_clock_days", r.wall_clock.value() / 86400},
                        {"chip_hours", r.chip_hours},
                        {"cost_usd", r.cost ? nlohmann::json(r.cost->value()) : nlohmann::json()},
                        {"energy_mwh", opt(r.energy_mwh)},
                        {"warnings", warnings}};
    print_json(std::cout, envelope("train run", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk train run: {} on {}, phases run one after another (docs/training-runs.md)\n",
                           in.model.name, chip_and_system(in.system.chip.name, in.system.name));
  std::cout << fmt::format("FLOPs/token 3 x forward (2 x {} active matmul params + {} attention over the sequence{})\n",
                           human_count(count_params(in.model).active_matmul()), attention,
                           a.non_causal ? "; PaLM App. B" : ", as train step's MFU; --non-causal for PaLM's convention");
  std::cout << fmt::format("speed       MFU against the {} dense peak, {:.1f} TFLOP/s per chip ({})\n", peak,
                           to_tflop_per_s(r.peak_per_chip), mfu_note);
  std::cout << (r.price_per_chip ? fmt::format("price       ${:.2f} per chip-hour ({})\n", to_usd_per_hour(*r.price_per_chip), r.price_source)
                                 : std::string("price       none in the catalog for this system: pass --price-usd-per-chip-hour\n"));
  std::cout << (r.chip_power_w > 0
                    ? fmt::format("energy      {:.0f} W per chip (TDP) x PUE {:.2f}{}\n", r.chip_power_w, r.pue,
                                  r.pue == 1 ? " (chips only: pass --pue for hosts, network and cooling)" : "")
                    : std::string("energy      no chip power in the catalog for this system: pass --chip-power-w\n"));
  for (const auto& p : r.phases) {
    if (p.goodput_parts) std::cout << "goodput     " << (r.phases.size() > 1 ? p.name + ": " : "") << describe_goodput(*p.goodput_parts) << '\n';
  }
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
  if (r.phases.size() > 1) {
    t.add({std::string("total"), Cell{}, Cell{}, r.tokens, Cell{}, r.flops, Cell{}, Cell{}, Cell{}, Cell{},
           r.wall_clock.value() / 86400, r.chip_hours, r.cost ? Cell(r.cost->value()) : Cell{},
           r.energy_mwh ? Cell(*r.energy_mwh) : Cell{}});
  }
  print_table(std::cout, t);
  const double days = r.wall_clock.value() / 86400;
  // Chip-hours as people read counts (2.673M), scientific from 1e15 up (format_count; review
  // 10 L7: "3.479e+16M chip-hours").
  std::cout << fmt::format("\ntotal       {} days, {} chip-hours{}{}{}\n", days < 1e5 ? fmt::format("{:.1f}", days) : fmt::format("{:.4g}", days),
                           r.chip_hours >= 1e6 ? format_count(r.chip_hours, 4) : format_number(r.chip_hours, 4),
                           r.cost ? ", " + money(r.cost->value()) : "",
                           r.energy_mwh ? fmt::format(", {:.4g} MWh", *r.energy_mwh) : "",
                           ideal ? " (a lower bound: goodput 1, no restarts, rollbacks or stalls)" : "");
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
  cmd->add_option("-n,--chips", r.chips, "Chips training at once (each --phase's default)")->capture_default_str();
  cmd->add_option("-s,--seq-len,--seq", r.seq, "Sequence length in tokens (each --phase's default)")->capture_default_str();
  cmd->add_option("--mfu", r.mfu,
                  fmt::format("Model FLOP utilization against --peak, causal attention FLOPs as train step counts them (default {}, "
                              "{} with --non-causal: DeepSeek-V3, ISCA'25 Table 4; each --phase's default)",
                              kDefaultMfu, kDefaultMfuNonCausal));
  cmd->add_option("--step-time-s", r.step_time_s, "Step time in seconds instead of --mfu (with --tokens-per-step)");
  cmd->add_option("--tokens-per-step", r.tokens_per_step, "Tokens per optimizer step (global batch x sequence length)");
  cmd->add_option("--goodput", r.goodput,
                  "Fraction of wall clock spent on steps that count (default: modelled from interruptions per chip-hour, restart "
                  "time and Young/Daly checkpoints, docs/formulas.md; 1: the ideal, a lower bound on wall clock; each --phase's default)");
  cmd->add_option("--interruptions-per-chip-hour", r.interruptions_per_chip_hour,
                  fmt::format("Interruption rate behind the default goodput (default {:.3g}: Llama 3 405B's 466 in 54 days on 16,384 H100)",
                              kInterruptionsPerChipHour));
  cmd->add_option("--name", r.name, "Name of the single phase (default pre-training; with --phase, name= in each)");
  cmd->add_option("--phase", r.phases,
                  "A phase as key=value items (name, tokens|flops, chips, seq, mfu|step_time_s+tokens_per_step, goodput); "
                  "one phase per --phase, each key at most once; keys left out come from the flags; repeat for several phases, summed");
  // One name with every other command (review 2 M5); --usd-per-chip-hour stays for scripts.
  cmd->add_option("--price-usd-per-chip-hour", r.usd_per_chip_hour, "Price per chip-hour (default: the hardware catalog's)");
  cmd->add_option("--usd-per-chip-hour", r.usd_per_chip_hour, "The same, its former name")->group("");
  cmd->add_option("--chip-power-w", r.chip_power_w, "Power per chip in W (default: the catalog's TDP)");
  cmd->add_option("--pue", r.pue, "Power usage effectiveness, facility / IT energy (1 = chips only)")->capture_default_str();
  cmd->add_option("--peak", r.peak, "Dense peak the MFU is measured against: bf16, fp8, int8, fp4 (one the chip has; other than bf16 needs --mfu or --step-time-s)")
      ->capture_default_str();
  cmd->add_flag("--non-causal", r.non_causal,
                "Count attention over the whole sequence for every token (PaLM App. B; DeepSeek's 43.73%) instead of causal attention "
                "(the default, as train step's MFU)");
  add_output_options(*cmd, r.output);
  cmd->callback([&run] { run = [] { run_train_run(r); }; });

  register_train_scaling(train, run);
}

}  // namespace chalk::cli
