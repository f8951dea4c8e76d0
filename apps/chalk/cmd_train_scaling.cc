// `chalk train chinchilla | equilibrium`: compute-optimal scaling and the lecture's
// pre-training/RL/serving equilibrium (training/scaling_laws.h, equilibrium.h;
// docs/training-runs.md).
#include <cmath>
#include <iostream>
#include <map>
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
  if (a.output.csv && a.flops && a.params)
    throw InputError("--csv", "prints one table: give --flops (the allocations) or --params (the run), not both (--json holds both)");
  // C = 6 N D must stay a finite FLOP count (the library would name its internal budget).
  if (a.params && a.tokens && !std::isfinite(6 * *a.params * *a.tokens))
    throw InputError("--tokens", fmt::format("6 x --params x --tokens must be a finite FLOP count, got 6 x {} x {}", *a.params, *a.tokens));
  if (a.params && !a.tokens && *a.params > 0) {
    const double d = with_flags({{"params", "--params"}}, [&] { return optimal_tokens_for_params(chosen, *a.params); });
    if (!std::isfinite(6 * *a.params * d))
      throw InputError("--params", fmt::format("{} parameters need {:.3g} tokens by {}: 6 N D is not a finite FLOP count", *a.params, d, a.method));
  }
  const std::map<std::string, std::string> flags = {{"flops", "--flops"}, {"params", "--params"}, {"tokens", "--tokens"}};
  nlohmann::json j;
  Table alloc;
  alloc.columns = {{"method", "method"},       {"params", "N", 3, 1, true, 1},   {"tokens", "D", 3, 1, true, 1}, {"tokens_per_param", "D/N", 3},
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
  Table run;  // the run's figures as one row: the CSV, and the text's answer under --quiet
  if (ot) {
    run.columns = {{"method", "method"}, {"params", "N"}, {"tokens", "D"}, {"train_flops", "C"}, {"chinchilla_tokens", "D_opt"},
                   {"over_training_factor", "D/D_opt"}, {"loss", "loss"}, {"iso_loss_params", "N same loss"},
                   {"iso_loss_tokens", "D same loss"}, {"iso_loss_train_flops", "C same loss"},
                   {"wasted_train_flops", "wasted C"}, {"wasted_fraction", "wasted"}};
    run.add({a.method, ot->params, ot->tokens, ot->flops, ot->optimal_tokens, ot->factor, ot->loss, ot->iso_loss_optimal.params,
             ot->iso_loss_optimal.tokens, ot->iso_loss_optimal.flops, ot->wasted_flops, ot->wasted_fraction});
  }
  if (a.output.csv && ot) return print_csv(std::cout, run);
  if (a.output.csv) return print_csv(std::cout, alloc);
  if (a.output.json) {
    j["method"] = a.method;
    if (a.flops) j["train_flops"] = *a.flops;
    j["rows"] = a.flops ? to_json(alloc) : nlohmann::json::array();  // each fit's allocation of --flops (none without it)
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
    print_json(std::cout, envelope("train chinchilla", std::move(j), column_keys(alloc)));
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
  // --quiet keeps the tables alone: the run's lines below are text, so its answer (the
  // over-training factor, the FLOPs wasted) comes as the run's table (review 6 M7: -q with
  // --params printed nothing).
  if (ot && quiet_tables()) print_table(std::cout, run);
  if (ot) {
    std::cout << fmt::format("\nrun         N = {}, D = {} ({:.1f} tokens/param), C = {:.3g} FLOPs\n", human_count(ot->params),
                             human_count(ot->tokens), ot->tokens / ot->params, ot->flops);
    std::cout << fmt::format("optimal     D_opt(N) = {} by {} -> over-training factor D / D_opt = {:.3g}x\n",
                             human_count(ot->optimal_tokens), a.method, ot->factor);
    std::cout << fmt::format("loss        {:.4f} ({} fit)\n", ot->loss, loss_fit_for(chosen).name);
    // wasted_fraction is the share of this run's FLOPs, not the excess over the optimum
    // (review 3 L19: "(81.9%) more" read as 1.8x where the run spends 5.5x): say both.
    std::cout << fmt::format("same loss   compute-optimal N = {}, D = {}, C = {:.3g}: this run spends {:.3g} FLOPs "
                             "more for that loss ({:.1f}% of its FLOPs; {:.3g}x the optimum's)\n",
                             human_count(ot->iso_loss_optimal.params), human_count(ot->iso_loss_optimal.tokens),
                             ot->iso_loss_optimal.flops, ot->wasted_flops, 100 * ot->wasted_fraction,
                             ot->flops / ot->iso_loss_optimal.flops);
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
  in.deployment_window = serving_window(a.window_days, a.serving_tok_per_s);
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
      {"training_mfu", "--mfu"}, {"training_sequence_length", "--seq-len"},
      {"pretraining_to_serving_cost", "--pretraining-cost-ratio"}, {"rl_to_serving_cost", "--rl-cost-ratio"},
      {"decode_context", "--serving-context"}, {"decode_chips", "--decode-chips"}, {"decode_batch", "--decode-batch"}};
  const Equilibrium e = with_flags(flags, [&] { return solve_equilibrium(in); });
  const double flops_only = lecture_flops_pretraining_tokens(e.serving_tokens, a.pretraining_cost_ratio);
  std::vector<std::string> warnings;
  warn_context(warnings, in.model, a.train_seq, "pre-training sequence length");
  warn_context(warnings, in.model, e.serving_decode.context, "serving context");
  warn_context(warnings, in.model, a.rl_seq, "RL rollout length");

  Table t;
  t.columns = {{"term", "term"},
               {"tokens", "tokens", 4},
               {"chip_seconds_per_token", "chip-s/token", 4},
               {"chip_hours", "chip-hours", 4},
               {"cost_usd", "USD", 4},
               {"how", "priced as"}};
  t.set_count({"tokens", "chip_hours", "cost_usd"});  // 263T tokens, 8.63M chip-hours, 39.2M USD (review 2 L1)
  // CSV holds one table: the factor the command exists for rides on each row, in JSON too so
  // `columns` is the CSV header (review 3 L3); JSON also has it at the top level.
  if (a.output.csv || a.output.json) t.columns.push_back({"over_training_factor", "over-trained"});
  const auto price = in.system.price_per_chip;
  auto usd = [&](double chip_s) { return price ? Cell(chip_s * price->value()) : Cell{}; };
  t.add({std::string("serving"), e.serving_tokens, e.serving_decode.chip_seconds_per_token, e.serving_chip_seconds / 3600,
         usd(e.serving_chip_seconds),
         fmt::format("decode at context {}: {} x {:.0f} seq", e.serving_decode.context, e.serving_decode.layout,
                     e.serving_decode.batch), e.over_training_factor});
  t.add({std::string("RL rollouts"), e.rl_rollout_tokens,
         e.rl_decode.chip_seconds_per_token + a.rl_trained_fraction * e.rl_update_chip_seconds_per_token, e.rl_chip_seconds / 3600,
         usd(e.rl_chip_seconds),
         fmt::format("decode at context {} + {:.0f}% trained at {} tokens", e.rl_decode.context, 100 * a.rl_trained_fraction,
                     a.rl_seq), e.over_training_factor});
  t.add({std::string("pre-training"), e.pretraining_tokens, e.training_chip_seconds_per_token, e.pretraining_chip_seconds / 3600,
         usd(e.pretraining_chip_seconds), fmt::format("training at {:.2f}% MFU, {} tokens", 100 * a.mfu, a.train_seq), e.over_training_factor});
  if (a.output.csv) return print_csv(std::cout, t, warnings);
  auto decode_json = [](const DecodePrice& p) {
    return nlohmann::json{{"context_tokens", p.context},          {"layout", p.layout},
                          {"replica_chips", p.replica_chips},     {"batch", std::llround(p.batch)},
                          {"t_step_ms", to_ms(p.t_step)},         {"tok_per_s_per_chip", p.tokens_per_s_per_chip.value()},
                          {"chip_seconds_per_token", p.chip_seconds_per_token},
                          {"roofline_chip_seconds_per_token", p.roofline_chip_seconds_per_token},
                          {"decode_mfu", p.mfu}};
  };
  if (a.output.json) {
    nlohmann::json j = {{"model", model_json(in.model, in.system)},
                        {"hardware", hardware_json(in.system)},
                        {"params_active_matmul", e.params},
                        {"serving_tok_per_s", a.serving_tok_per_s},
                        {"window_days", a.window_days},
                        {"rl_trained_fraction", a.rl_trained_fraction},
                        {"mfu", a.mfu},
                        {"mfu_source", a.mfu == kDefaultMfu ? kDefaultMfuSource : "given"},
                        {"mfu_definition", mfu_definition(true, "bf16")},
                        {"pretraining_cost_ratio", a.pretraining_cost_ratio},
                        {"rl_cost_ratio", a.rl_cost_ratio},
                        {"serving_decode", decode_json(e.serving_decode)},
                        {"rl_decode", decode_json(e.rl_decode)},
                        {"rows", to_json(t)},  // the terms
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
                        {"chinchilla_at_loss_tokens", e.chinchilla_at_loss.tokens},
                        {"warnings", warnings}};
    print_json(std::cout, envelope("train equilibrium", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk train equilibrium: {} on {} (lecture 1:18:52-1:32:42; docs/training-runs.md)\n", in.model.name,
                           in.system.name);
  std::cout << fmt::format("assumption  serving {:.3g} tok/s for {:.1f} days = {:.3g} tokens; pre-training and RL each cost {} and {} x "
                           "serving\n",
                           a.serving_tok_per_s, a.window_days, e.serving_tokens, a.pretraining_cost_ratio, a.rl_cost_ratio);
  std::cout << fmt::format("decode      chalk's engine: best layout of {} chips by tok/s per chip ({:.0f} tok/s/chip at context {}, "
                           "decode MFU {:.0f}%: decode FLOPs over the peak of the compute dtype; roofline {:.3g} chip-s/token)\n",
                           e.serving_decode.n_chips, e.serving_decode.tokens_per_s_per_chip.value(), e.serving_decode.context,
                           100 * e.serving_decode.mfu, e.serving_decode.roofline_chip_seconds_per_token);
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  std::cout << fmt::format("training    MFU {:.2f}% ({}; {})\n\n", 100 * a.mfu,
                           a.mfu == kDefaultMfu ? kDefaultMfuSource : "given", mfu_definition(true, "bf16"));
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

void register_train_scaling(CLI::App& train, Action& run) {
  static thread_local ChinchillaArgs c;
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  c = ChinchillaArgs{};
  auto* ch = train.add_subcommand("chinchilla", "Compute-optimal parameters and tokens, predicted loss, over-training");
  ch->add_option("--flops", c.flops, "Compute budget C in FLOPs: N_opt and D_opt by every method");
  ch->add_option("--params", c.params, "A model's parameters N (active for an MoE): D_opt(N), loss, over-training");
  ch->add_option("--tokens", c.tokens, "Tokens D the model is trained on (with --params)");
  ch->add_option("--method", c.method, "approach1, approach2, approach3, approach3-tex, epoch or 20x")->capture_default_str();
  add_output_options(*ch, c.output);
  ch->callback([&run] { run = [] { run_chinchilla(c); }; });

  static thread_local EquilibriumArgs e;
  e = EquilibriumArgs{};
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
  eq->add_option("--mfu", e.mfu, "Training MFU against the bf16 peak, causal attention FLOPs as train step counts them")
      ->capture_default_str();
  eq->add_option("-s,--seq-len,--seq", e.train_seq, "Pre-training sequence length")->capture_default_str();
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
