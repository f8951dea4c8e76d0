// `chalk prices forward`: the input and output prices a deployment implies, beside a
// provider's sheet. Shared options and helpers: prices_cli.h.
#include <iostream>
#include <variant>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"
#include "envelope.h"
#include "deployment_options.h"
#include "prices_cli.h"
#include "table.h"

namespace chalk::cli::prices_cli {

void run_forward(const ForwardArgs& a) {
  const Facility facility = facility_from(a.energy);
  std::optional<ReplicaNote> note;
  refuse_beyond_max_context(a.deployment, load_model(a.deployment.model), a.context, "--context");
  const Deployment d = resolve(a.deployment, a.context, &note);
  const std::optional<ChipPower> power = chip_power_from(a.energy, d.system);
  ForwardAssumptions fa;
  // With the replica chosen for the user, its batch too: the chosen replica's cheapest
  // (memory-full) batch, the figure the choice was made on (issue 30).
  fa.decode_batch = a.batch == 0 && note ? note->choice.batch : a.batch;
  fa.decode_context_tokens = a.context;
  fa.prompt_tokens = a.prompt;
  fa.prefill_batch = a.prefill_batch;
  fa.utilisation = a.utilisation;
  fa.gross_margin = a.margin;
  const ForwardPrices f = forward_prices(d, fa);
  if (!f.memory_fits && !a.deployment.allow_infeasible) {
    // A batch the replica cannot hold is not a price (issue 30, review 2 H3: --batch 1024 on
    // 8 H100, which hold 324, once led with $2.169/Mtok out, below the feasible $2.573).
    throw InputError("--batch", fmt::format("batch {} at context {} does not fit on {} x {} (at most {} sequences){}; "
                                            "--allow-infeasible prints the prices anyway",
                                            f.decode_batch, a.context, d.n_chips, d.system.chip.name,
                                            memory_plan(d, 0, a.context).max_batch,
                                            replica_that_holds(a.deployment, d, {{f.decode_batch, a.context}})));
  }
  // The roofline's prices, the lower bound beside the engine step's headline, at the same
  // decode and prefill batches as the headline: left at 0 the roofline would pick its own
  // cost-optimal batch (2314 where the engine step picked 1848 for deepseek-v3 on 8 H100),
  // and the row would print a bound for a batch it does not state.
  ForwardAssumptions at_same_batch = fa;
  at_same_batch.decode_batch = f.decode_batch;
  at_same_batch.prefill_batch = f.prefill_batch;
  const ForwardPrices lower = forward_prices(roofline_of(d), at_same_batch);
  // Energy per output token of the decode step, its chips busy back to back (power.h).
  const Cell energy = power ? Cell(energy_j_per_token(*power, facility, static_cast<double>(d.n_chips), f.decode.t_step, f.decode.t_compute,
                                                      f.decode.t_memory, static_cast<double>(f.decode.batch) * f.decode.tokens_per_sequence))
                            : Cell{};
  Table t;
  t.columns = {{"source", "source"},
               {"input_usd_per_mtok", "$/Mtok in", 4},
               {"output_usd_per_mtok", "$/Mtok out", 4},
               {"output_to_input_ratio", "out/in", 3},
               {"cache_read_usd_per_mtok", "$/Mtok hit", 4},
               {"cache_storage_usd_per_mtok_per_hour", "$/Mtok/h stored", 4},
               {"long_context_threshold_tokens", "step at"},
               {"energy_j_per_output_token", "J/out tok", 3}};
  t.set_count({"long_context_threshold_tokens"});  // "200K", not "200000" (review L2)
  t.add({fmt::format("chalk: {} on {} x {}", f.model, f.n_chips, f.system), mtok(f.input), mtok(f.output), f.output / f.input,
         mtok(f.cache_read), to_usd_per_mtok_per_hour(f.storage_hbm),
         f.long_context_threshold_tokens ? Cell(*f.long_context_threshold_tokens) : Cell{}, energy});
  if (!a.compare.empty()) {
    const PriceSheet s = load_price_sheet(a.compare);
    t.add({fmt::format("{}: {} ({})", s.provider, s.model, s.date), mtok(s.input), mtok(s.output), s.output / s.input,
           opt_mtok(s.cache.read), s.cache.storage ? Cell(to_usd_per_mtok_per_hour(*s.cache.storage)) : Cell{},
           s.long_context.empty() ? Cell{} : Cell(s.long_context.front().threshold_tokens), Cell{}});
  }
  if (a.output.csv) {
    print_csv(std::cout, t);
    return;
  }
  if (a.output.json) {
    auto j = describe_json(d);
    j["replica_choice"] = replica_note_json(note);
    j["forward"] = {{"decode_batch", f.decode_batch},
                    {"decode_context_tokens", a.context},
                    {"prompt_tokens", a.prompt},
                    {"prefill_batch", f.prefill_batch},
                    {"utilisation", a.utilisation},
                    {"gross_margin", a.margin},
                    {"markup", f.markup},
                    {"kv_bytes_per_token", f.kv_bytes_per_token.value()},
                    {"decode_t_step_ms", to_ms(f.decode.t_step)},
                    {"decode_t_step_roofline_ms", to_ms(lower.decode.t_step)},
                    {"output_cost_roofline_usd_per_mtok", mtok(lower.output_cost)},
                    {"decode_bound", to_string(f.decode.bound)},
                    {"prefill_bound", to_string(f.prefill.bound)},
                    {"input_cost_usd_per_mtok", mtok(f.input_cost)},
                    {"output_cost_usd_per_mtok", mtok(f.output_cost)},
                    {"memory_fits", f.memory_fits}};
    j["energy"] = energy_assumptions_json(power, facility);
    j["rows"] = to_json(t);  // the prices: implied, then the sheets compared
    print_json(std::cout, envelope("prices forward", std::move(j), column_keys(t)));
    return;
  }
  std::cout << "chalk prices forward: the prices a deployment implies (cost per token = n price t_step / B, x markup), "
            << view_name(d) << "\n" << describe_text(d) << replica_note_text(note);
  // The headline cost is the step's own (output_cost_usd_per_mtok, before the markup); the
  // roofline's, beside it, is its lower bound (docs/formulas.md, "Prices read backwards, and forward").
  std::cout << fmt::format("decode      batch {} at context {}: step {} ms, {}-bound, output cost ${}/Mtok{}{}\n", f.decode_batch, a.context,
                           format_number(to_ms(f.decode.t_step), 4), to_string(f.decode.bound), format_number(mtok(f.output_cost), 4),
                           f.memory_fits ? "" : " (DOES NOT FIT in HBM)",
                           d.mechanisms.enabled ? fmt::format("; roofline at achievable rates {} ms, output cost ${}/Mtok",
                                                              format_number(to_ms(lower.decode.t_step), 4), format_number(mtok(lower.output_cost), 4))
                                                : std::string());
  std::cout << fmt::format("prefill     {} x {} tokens: {} ms, {}-bound\n", f.prefill_batch, a.prompt, format_number(to_ms(f.prefill.t_step), 4), to_string(f.prefill.bound));
  std::cout << energy_assumptions_text(power, facility);
  if (const auto* j = std::get_if<double>(&energy)) {
    std::cout << fmt::format("            the decode step: {} J per output token, its chips busy back to back\n", format_number(*j, 3));
  }
  std::cout << fmt::format("markup      x{} = 1 / (utilisation {} x (1 - margin {}))\n\n", format_number(f.markup, 4),
                           format_number(a.utilisation, 3), format_number(a.margin, 3));
  print_table(std::cout, t);
}

}  // namespace chalk::cli::prices_cli
