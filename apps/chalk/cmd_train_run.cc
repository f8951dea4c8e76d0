// `chalk train run | chinchilla | equilibrium`: whole training runs, compute-optimal scaling
// and the lecture's pre-training/RL/serving equilibrium (training/run.h, scaling_laws.h,
// equilibrium.h; docs/training-runs.md).
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

namespace chalk::cli {
namespace {

// The default MFU when neither --mfu nor --step-time-s is given, and where it comes from.
constexpr double kDefaultMfu = 0.4373;
constexpr const char* kDefaultMfuSource =
    "default: DeepSeek-V3 pre-training, 43.73% of the bf16 peak (Zhao et al. 2025, ISCA'25 Table 4)";

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string money(double usd) {
  if (usd >= 1e9) return fmt::format("${:.2f}B", usd / 1e9);
  if (usd >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  return fmt::format("${:.0f}", usd);
}

// Runs `f`, renaming the library's field in an InputError to the flag that set it.
template <class F>
auto with_flags(const std::map<std::string, std::string>& flags, F f) {
  try {
    return f();
  } catch (const InputError& e) {
    std::string field = e.field();
    std::string message = std::string(e.what()).substr(field.size() + 2);
    for (const auto& [lib, flag] : flags) {
      if (field == lib) throw InputError(flag, message);
      // phases[i].<key> -> --phase[i] <key>
      if (field.rfind("phases[", 0) == 0 && field.size() > lib.size() && field.ends_with("." + lib)) {
        throw InputError("--phase" + field.substr(6, field.size() - lib.size() - 7) + "." + flag, message);
      }
    }
    throw;
  }
}

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
               {"sequence_tokens", "seq"},
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
    nlohmann::json j = {{"model", in.model.name},
                        {"hardware", in.system.name},
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
    std::cout << j.dump(2) << '\n';
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

// ---------------------------------------------------------------- train chinchilla

struct ChinchillaArgs {
  std::optional<double> flops, params, tokens;
  std::string method = "20x";
  OutputArgs output;
};

void run_chinchilla(const ChinchillaArgs& a) {
  if (a.tokens && !a.params) throw InputError("--params", "--tokens needs --params (the model it trains)");
  if (!a.flops && !a.params) throw InputError("--flops", "give a compute budget --flops, or a model --params (with --tokens)");
  const ChinchillaMethod chosen = parse_chinchilla_method(a.method, "--method");
  const std::map<std::string, std::string> flags = {{"flops", "--flops"}, {"params", "--params"}, {"tokens", "--tokens"}};
  nlohmann::json j;
  Table alloc;
  alloc.columns = {{"method", "method"},       {"params", "N", 4},   {"tokens", "D", 4}, {"tokens_per_param", "D/N", 3},
                   {"train_flops", "C = 6ND", 4}, {"loss", "loss", 4}, {"source", "source"}};
  const double budget = a.flops ? *a.flops : 0;
  if (a.flops) {
    for (ChinchillaMethod m : all_chinchilla_methods()) {
      const Allocation al = with_flags(flags, [&] { return chinchilla_optimal(m, budget); });
      alloc.add({std::string(to_string(m)), al.params, al.tokens, al.tokens_per_param, al.flops,
                 predicted_loss(loss_fit_for(m), al.params, al.tokens), std::string(source_of(m))});
    }
  }
  std::optional<OverTraining> ot;
  if (a.params) {
    ot = with_flags(flags, [&] {
      const double d = a.tokens ? *a.tokens : optimal_tokens_for_params(chosen, *a.params);
      return over_training(chosen, loss_fit_for(chosen), *a.params, d);
    });
  }
  if (a.output.csv) return print_csv(std::cout, alloc);
  if (a.output.json) {
    j["method"] = a.method;
    if (a.flops) j["train_flops"] = *a.flops, j["allocations"] = to_json(alloc);
    if (ot) {
      j["run"] = {{"params", ot->params},
                  {"tokens", ot->tokens},
                  {"train_flops", ot->flops},
                  {"chinchilla_tokens", ot->optimal_tokens},
                  {"over_training_factor", ot->factor},
                  {"loss", ot->loss},
                  {"loss_fit", loss_fit_for(chosen).name},
                  {"iso_loss_params", ot->iso_loss_optimal.params},
                  {"iso_loss_tokens", ot->iso_loss_optimal.tokens},
                  {"iso_loss_train_flops", ot->iso_loss_optimal.flops},
                  {"wasted_train_flops", ot->wasted_flops},
                  {"wasted_fraction", ot->wasted_fraction}};
    }
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << "chalk train chinchilla: compute-optimal N and D (C = 6 N D; loss L = E + A/N^a + B/D^b, nats/token; "
               "docs/training-runs.md)\n";
  if (a.flops) {
    std::cout << fmt::format("\nbudget      {:.3g} FLOPs\n\n", budget);
    print_table(std::cout, alloc);
    std::cout << "\nApproaches 1-2 and the 20x rule carry no loss; their loss column is Epoch's fit. Hoffmann's printed "
                 "Approach 3 constants give 50-150 tokens/param (rounding; Besiroglu et al. 2024).\n";
  }
  if (ot) {
    std::cout << fmt::format("\nrun         N = {}, D = {} ({:.1f} tokens/param), C = {:.3g} FLOPs\n", human_count(ot->params),
                             human_count(ot->tokens), ot->tokens / ot->params, ot->flops);
    std::cout << fmt::format("optimal     D_opt(N) = {} by {} -> over-training factor D / D_opt = {:.3g}x\n",
                             human_count(ot->optimal_tokens), a.method, ot->factor);
    std::cout << fmt::format("loss        {:.4f} ({} fit)\n", ot->loss, loss_fit_for(chosen).name);
    std::cout << fmt::format("same loss   compute-optimal N = {}, D = {}, C = {:.3g}: this run spends {:.3g} FLOPs "
                             "({:.1f}%) more for that loss\n",
                             human_count(ot->iso_loss_optimal.params), human_count(ot->iso_loss_optimal.tokens),
                             ot->iso_loss_optimal.flops, ot->wasted_flops, 100 * ot->wasted_fraction);
  }
}

// ---------------------------------------------------------------- train equilibrium

struct EquilibriumArgs {
  std::string model = "deepseek-v3", hardware = "gb200-nvl72";
  double serving_tok_per_s = 50e6, window_days = 365.25 / 6;
  int64_t serving_context = 4989, rl_seq = 32768, train_seq = 4096;
  double rl_trained_fraction = 0.2, mfu = kDefaultMfu;
  double pretraining_cost_ratio = 1, rl_cost_ratio = 1;
  int64_t decode_chips = 0, decode_batch = 0;
  std::string method = "20x";
  OutputArgs output;
};

void run_equilibrium(const EquilibriumArgs& a) {
  EquilibriumInputs in;
  in.model = load_model(a.model);
  in.system = load_system(a.hardware);
  in.serving_tokens_per_s = a.serving_tok_per_s;
  in.deployment_window = Seconds(a.window_days * 86400);
  in.serving_context = a.serving_context;
  in.rl_trained_fraction = a.rl_trained_fraction;
  in.rl_sequence_length = a.rl_seq;
  in.training_mfu = a.mfu;
  in.training_sequence_length = a.train_seq;
  in.pretraining_to_serving_cost = a.pretraining_cost_ratio;
  in.rl_to_serving_cost = a.rl_cost_ratio;
  in.decode_chips = a.decode_chips;
  in.decode_batch = a.decode_batch;
  in.chinchilla = parse_chinchilla_method(a.method, "--method");
  const std::map<std::string, std::string> flags = {
      {"serving_tokens_per_s", "--serving-tok-per-s"}, {"deployment_window", "--window-days"},
      {"rl_trained_fraction", "--rl-trained-fraction"}, {"rl_sequence_length", "--rl-seq"},
      {"training_mfu", "--mfu"}, {"training_sequence_length", "--seq"},
      {"pretraining_to_serving_cost", "--pretraining-cost-ratio"}, {"rl_to_serving_cost", "--rl-cost-ratio"},
      {"decode_context", "--serving-context"}, {"decode_chips", "--decode-chips"}, {"decode_batch", "--decode-batch"}};
  const Equilibrium e = with_flags(flags, [&] { return solve_equilibrium(in); });
  const double flops_only = lecture_flops_pretraining_tokens(e.serving_tokens, a.pretraining_cost_ratio);

  Table t;
  t.columns = {{"term", "term"},
               {"tokens", "tokens", 4},
               {"chip_seconds_per_token", "chip-s/token", 4},
               {"chip_hours", "chip-hours", 4},
               {"cost_usd", "USD", 4},
               {"how", "priced as"}};
  const auto price = in.system.price_per_chip;
  auto usd = [&](double chip_s) { return price ? Cell(chip_s * price->value()) : Cell{}; };
  t.add({std::string("serving"), e.serving_tokens, e.serving_decode.chip_seconds_per_token, e.serving_chip_seconds / 3600,
         usd(e.serving_chip_seconds),
         fmt::format("decode at context {}: {} x {:.0f} seq", e.serving_decode.context, e.serving_decode.layout,
                     e.serving_decode.batch)});
  t.add({std::string("RL rollouts"), e.rl_rollout_tokens,
         e.rl_decode.chip_seconds_per_token + a.rl_trained_fraction * e.rl_update_chip_seconds_per_token, e.rl_chip_seconds / 3600,
         usd(e.rl_chip_seconds),
         fmt::format("decode at context {} + {:.0f}% trained at {} tokens", e.rl_decode.context, 100 * a.rl_trained_fraction,
                     a.rl_seq)});
  t.add({std::string("pre-training"), e.pretraining_tokens, e.training_chip_seconds_per_token, e.pretraining_chip_seconds / 3600,
         usd(e.pretraining_chip_seconds), fmt::format("training at {:.1f}% MFU, {} tokens", 100 * a.mfu, a.train_seq)});
  if (a.output.csv) return print_csv(std::cout, t);
  auto decode_json = [](const DecodePrice& p) {
    return nlohmann::json{{"context_tokens", p.context},          {"layout", p.layout},
                          {"replica_chips", p.replica_chips},     {"batch", p.batch},
                          {"t_step_ms", to_ms(p.t_step)},         {"tok_per_s_per_chip", p.tokens_per_s_per_chip.value()},
                          {"chip_seconds_per_token", p.chip_seconds_per_token},
                          {"roofline_chip_seconds_per_token", p.roofline_chip_seconds_per_token},
                          {"mfu", p.mfu}};
  };
  if (a.output.json) {
    nlohmann::json j = {{"model", in.model.name},
                        {"hardware", in.system.name},
                        {"active_params", e.params},
                        {"serving_tok_per_s", a.serving_tok_per_s},
                        {"window_days", a.window_days},
                        {"rl_trained_fraction", a.rl_trained_fraction},
                        {"mfu", a.mfu},
                        {"mfu_source", a.mfu == kDefaultMfu ? kDefaultMfuSource : "given"},
                        {"pretraining_cost_ratio", a.pretraining_cost_ratio},
                        {"rl_cost_ratio", a.rl_cost_ratio},
                        {"serving_decode", decode_json(e.serving_decode)},
                        {"rl_decode", decode_json(e.rl_decode)},
                        {"terms", to_json(t)},
                        {"pretraining_tokens", e.pretraining_tokens},
                        {"pretraining_tokens_flops_only", flops_only},
                        {"rl_trained_tokens", e.rl_trained_tokens},
                        {"chinchilla_method", a.method},
                        {"chinchilla_tokens", e.chinchilla_tokens},
                        {"over_training_factor", e.over_training_factor},
                        {"over_training_factor_flops_only", flops_only / e.chinchilla_tokens},
                        {"cost_usd", e.total_cost ? nlohmann::json(e.total_cost->value()) : nlohmann::json()},
                        {"loss", e.loss},
                        {"inference_aware_params", e.inference_aware.params},
                        {"inference_aware_tokens", e.inference_aware.tokens},
                        {"chinchilla_at_loss_params", e.chinchilla_at_loss.params},
                        {"chinchilla_at_loss_tokens", e.chinchilla_at_loss.tokens}};
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("chalk train equilibrium: {} on {} (lecture 1:18:52-1:32:42; docs/training-runs.md)\n", in.model.name,
                           in.system.name);
  std::cout << fmt::format("assumption  serving {:.3g} tok/s for {:.1f} days = {:.3g} tokens; pre-training and RL each cost {} and {} x "
                           "serving\n",
                           a.serving_tok_per_s, a.window_days, e.serving_tokens, a.pretraining_cost_ratio, a.rl_cost_ratio);
  std::cout << fmt::format("decode      chalk's engine: best layout of {} chips by tok/s per chip ({:.0f} tok/s/chip at context {}, "
                           "{:.0f}% of peak; roofline {:.3g} chip-s/token)\n",
                           e.serving_decode.n_chips, e.serving_decode.tokens_per_s_per_chip.value(), e.serving_decode.context,
                           100 * e.serving_decode.mfu, e.serving_decode.roofline_chip_seconds_per_token);
  std::cout << fmt::format("training    MFU {:.2f}% ({})\n\n", 100 * a.mfu,
                           a.mfu == kDefaultMfu ? kDefaultMfuSource : "given");
  print_table(std::cout, t);
  std::cout << fmt::format("\nN           {} active matmul parameters; Chinchilla ({}) D_opt = {}\n", human_count(e.params), a.method,
                           human_count(e.chinchilla_tokens));
  std::cout << fmt::format("over-trained {:.3g}x: D_pre = {:.3g} tokens (FLOPs only, decode at training efficiency: D_serve/3 = "
                           "{:.3g}, {:.3g}x)\n",
                           e.over_training_factor, e.pretraining_tokens, flops_only, flops_only / e.chinchilla_tokens);
  std::cout << fmt::format("RL          {:.3g} rollout tokens, {:.3g} trained on\n", e.rl_rollout_tokens, e.rl_trained_tokens);
  if (e.total_cost) std::cout << fmt::format("cost        {} over the model's life at the catalog price\n", money(e.total_cost->value()));
  std::cout << fmt::format("Sardana     at the same loss {:.4f} (Epoch fit, far outside its data): cheapest lifetime FLOPs with "
                           "{:.3g} inference tokens is N = {}, D = {} ({:.0f} tokens/param); Chinchilla at that loss: N = {}, "
                           "D = {}\n",
                           e.loss, e.serving_tokens + e.rl_rollout_tokens, human_count(e.inference_aware.params),
                           human_count(e.inference_aware.tokens), e.inference_aware.tokens_per_param,
                           human_count(e.chinchilla_at_loss.params), human_count(e.chinchilla_at_loss.tokens));
}

}  // namespace

void register_train_run(CLI::App& train, Action& run) {
  static RunArgs r;
  auto* cmd = train.add_subcommand("run", "GPU-hours, days, dollars and energy of a whole training run (one or more phases)");
  cmd->add_option("-m,--model", r.model, "Built-in model name or config.json path")->capture_default_str();
  cmd->add_option("-H,--hardware", r.hardware, "Built-in system name or chalk-hardware/1 file")->capture_default_str();
  cmd->add_option("--tokens", r.tokens, "Training tokens D (one phase)");
  cmd->add_option("--flops", r.flops, "Training FLOPs C instead of tokens (one phase)");
  cmd->add_option("--chips", r.chips, "Chips training at once")->capture_default_str();
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

  static ChinchillaArgs c;
  auto* ch = train.add_subcommand("chinchilla", "Compute-optimal parameters and tokens, predicted loss, over-training");
  ch->add_option("--flops", c.flops, "Compute budget C in FLOPs: N_opt and D_opt by every method");
  ch->add_option("--params", c.params, "A model's parameters N (active for an MoE): D_opt(N), loss, over-training");
  ch->add_option("--tokens", c.tokens, "Tokens D the model is trained on (with --params)");
  ch->add_option("--method", c.method, "approach1, approach2, approach3, approach3-tex, epoch or 20x")->capture_default_str();
  add_output_options(*ch, c.output);
  ch->callback([&run] { run = [] { run_chinchilla(c); }; });

  static EquilibriumArgs e;
  auto* eq = train.add_subcommand("equilibrium",
                                  "The lecture's equilibrium: pre-training, RL and serving at equal cost -> over-training factor");
  eq->add_option("-m,--model", e.model, "Built-in model name or config.json path")->capture_default_str();
  eq->add_option("-H,--hardware", e.hardware, "Built-in system name or chalk-hardware/1 file")->capture_default_str();
  eq->add_option("--serving-tok-per-s", e.serving_tok_per_s, "Serving traffic of the model (lecture 1:30:37)")->capture_default_str();
  eq->add_option("--window-days", e.window_days, "Days the model is served (lecture 1:30:37: two months)")->capture_default_str();
  eq->add_option("--serving-context", e.serving_context, "Mean KV tokens per served output token (DeepSeek production 4,989)")
      ->capture_default_str();
  eq->add_option("--rl-trained-fraction", e.rl_trained_fraction, "Fraction of rollout tokens trained on (lecture 1:26:18)")
      ->capture_default_str();
  eq->add_option("--rl-seq", e.rl_seq, "RL rollout length in tokens (R1-Zero's maximum)")->capture_default_str();
  eq->add_option("--mfu", e.mfu, "Training MFU")->capture_default_str();
  eq->add_option("--seq", e.train_seq, "Pre-training sequence length")->capture_default_str();
  eq->add_option("--pretraining-cost-ratio", e.pretraining_cost_ratio, "Pre-training cost / serving cost (lecture: 1)")
      ->capture_default_str();
  eq->add_option("--rl-cost-ratio", e.rl_cost_ratio, "RL cost / serving cost (lecture: 1)")->capture_default_str();
  eq->add_option("--decode-chips", e.decode_chips, "Chips the decode layout search spreads over (0 = scale-up domain)")
      ->capture_default_str();
  eq->add_option("--decode-batch", e.decode_batch, "Cap on one decode replica's batch (0 = largest that fits)")->capture_default_str();
  eq->add_option("--method", e.method, "Chinchilla D_opt(N): approach1, approach2, approach3, approach3-tex, epoch or 20x")
      ->capture_default_str();
  add_output_options(*eq, e.output);
  eq->callback([&run] { run = [] { run_equilibrium(e); }; });
}

}  // namespace chalk::cli
