// `chalk prices infer`: a price sheet read backwards (lecture 1:32:51-2:03:48), from a
// built-in sheet, a file or prices given as flags, under assumptions given as VALUE or
// LOW:VALUE:HIGH. Shared options and helpers: prices_cli.h.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/prices/explain.h"
#include "chalk/prices/prices.h"
#include "envelope.h"
#include "deployment_options.h"
#include "explain_cli.h"
#include "prices_cli.h"
#include "table.h"

namespace chalk::cli::prices_cli {
namespace {

/// A figure as the page writes it (web/app/app.js, the prices view: toPrecision(4), then
/// en-US grouping): four significant figures, thousands separated by commas, no exponent and
/// no trailing zeros, so 128,000 tokens, 3,600 s and a batch of 378 read as counts and
/// durations (review 8 L4: "128.0K", "3.600K", "378.0"); "-" where not finite.
std::string infer_page_figure(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) return "0";
  const double r = std::stod(fmt::format("{:.3e}", v));  // four significant figures
  const int digits = std::max(0, 3 - static_cast<int>(std::floor(std::log10(std::fabs(r)))));
  std::string text = fmt::format("{:.{}f}", std::fabs(r), digits);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  const std::size_t point = std::min(text.find('.'), text.size());
  for (std::size_t at = point; at > 3; at -= 3) text.insert(at - 3, ",");
  return (r < 0 ? "-" : "") + text;
}

/// "VALUE" (a point) or "LOW:VALUE:HIGH", each a positive number.
Estimate<double> parse_estimate(const std::string& text, const std::string& flag) {
  std::vector<double> v;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    const std::string item = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    double x = 0;
    try {
      x = parse_number(item, flag);
    } catch (const InputError&) {
      throw InputError(flag, "expected VALUE or LOW:VALUE:HIGH (finite numbers), got '" + text.substr(0, 60) + "'");
    }
    v.push_back(x);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (v.size() == 1) return {v[0], v[0], v[0]};
  if (v.size() == 3) return {v[1], v[0], v[2]};
  throw InputError(flag, "expected VALUE or LOW:VALUE:HIGH, got '" + text + "'");
}

template <class Q>
void set_estimate(Estimate<Q>& e, const std::string& text, const std::string& flag, double scale = 1) {
  if (text.empty()) return;
  const auto d = parse_estimate(text, flag);
  e = {Q(d.value * scale), Q(d.low * scale), Q(d.high * scale)};
}
void set_estimate(Estimate<double>& e, const std::string& text, const std::string& flag) {
  if (!text.empty()) e = parse_estimate(text, flag);
}

void positive(const std::optional<double>& v, const std::string& flag) {
  if (v && !(*v > 0 && std::isfinite(*v))) throw InputError(flag, "must be a positive number, got " + format_number(*v, 4));
}
void non_negative(const std::optional<double>& v, const std::string& flag) {
  if (v && !(*v >= 0 && std::isfinite(*v))) throw InputError(flag, "must be a number >= 0, got " + format_number(*v, 4));
}

/// The sheet the flags give, and what the reader should know about it: the derived prices
/// an --input or --output override moved, then prices that contradict the lecture's reading.
struct FlagSheet {
  PriceSheet sheet;
  std::vector<std::string> warnings;
};

FlagSheet sheet_from_args(const InferArgs& a) {
  const PriceFlags& f = a.prices;
  positive(f.input, "--input-usd-per-mtok");
  positive(f.output, "--output-usd-per-mtok");
  non_negative(f.cache_read, "--cache-read-usd-per-mtok");
  non_negative(f.storage, "--cache-storage-usd-per-mtok-per-hour");
  non_negative(f.write_5min, "--cache-write-5min-usd-per-mtok");
  non_negative(f.write_1h, "--cache-write-1h-usd-per-mtok");
  if (f.threshold && *f.threshold <= 0) {
    throw InputError("--long-context-threshold-tokens", "must be a positive number of prompt tokens, got " + std::to_string(*f.threshold));
  }
  // A long-context tier is a price step up (validate(PriceSheet)): input dearer, output no cheaper.
  if (f.lc_input_multiplier && !(*f.lc_input_multiplier > 1 && std::isfinite(*f.lc_input_multiplier))) {
    throw InputError("--long-context-input-multiplier", "must be above 1 (a long-context tier raises the price), got " +
                                                            format_number(*f.lc_input_multiplier, 4));
  }
  if (f.lc_output_multiplier && !(*f.lc_output_multiplier >= 1 && std::isfinite(*f.lc_output_multiplier))) {
    throw InputError("--long-context-output-multiplier", "must be at least 1 (a long-context tier never lowers the price), got " +
                                                             format_number(*f.lc_output_multiplier, 4));
  }
  positive(f.fast, "--fast-multiplier");
  positive(f.fast_speedup, "--fast-speedup");
  positive(f.priority, "--priority-multiplier");
  positive(f.flex, "--flex-multiplier");
  positive(f.off_peak, "--off-peak-multiplier");
  if (f.batch && !(*f.batch > 0 && *f.batch <= 1)) throw InputError("--batch-multiplier", "must be in (0, 1], got " + format_number(*f.batch, 4));

  PriceSheet s;
  if (!a.sheet.empty()) {
    s = load_price_sheet(a.sheet);
  } else {
    if (!f.input) throw InputError("--input-usd-per-mtok", "required without a sheet NAME");
    if (!f.output) throw InputError("--output-usd-per-mtok", "required without a sheet NAME");
    s.name = "command-line";
    s.provider = s.model = "(given as flags)";
    s.date = "undated";
    s.source = "command-line flags";
  }
  std::vector<std::string> warnings;
  const auto given = [](const std::optional<double>& v) { return v ? std::optional(usd_per_million_tokens(*v)) : std::nullopt; };
  if (a.sheet.empty()) {
    if (f.input) s.input = usd_per_million_tokens(*f.input);
    if (f.output) s.output = usd_per_million_tokens(*f.output);
  } else {
    // The sheet's cache, long-context and tier prices are multiples of its base prices
    // (docs/sources/prices.md 1.1): they follow an override; the flags below set them outright.
    for (auto& m : override_base_prices(s, given(f.input), given(f.output))) warnings.push_back("with the overridden base price, " + std::move(m));
  }
  if (f.cache_read) s.cache.read = usd_per_million_tokens(*f.cache_read);
  if (f.storage) s.cache.storage = usd_per_mtok_per_hour(*f.storage);
  if (f.write_5min || f.write_1h) {
    s.cache.writes.clear();
    if (f.write_5min) s.cache.writes.push_back({seconds(300), usd_per_million_tokens(*f.write_5min)});
    if (f.write_1h) s.cache.writes.push_back({seconds(3600), usd_per_million_tokens(*f.write_1h)});
  }
  if (f.threshold) {
    LongContextTier t;
    t.threshold_tokens = *f.threshold;
    t.input = s.input * f.lc_input_multiplier.value_or(2.0);
    t.output = s.output * f.lc_output_multiplier.value_or(1.5);
    s.long_context = {t};
  } else if (f.lc_input_multiplier || f.lc_output_multiplier) {
    throw InputError("--long-context-threshold-tokens", "required with a long-context multiplier");
  }
  if (f.batch) s.batch = BatchDiscount{*f.batch, "command line"};
  auto tier = [&](ServiceTierKind k, const std::optional<double>& m, std::optional<double> speedup) {
    if (!m) return;
    std::erase_if(s.service_tiers, [&](const ServiceTier& t) { return t.kind == k; });
    ServiceTier t;
    t.kind = k;
    t.input = s.input * *m;
    t.output = s.output * *m;
    if (s.cache.read) t.cache_read = *s.cache.read * *m;
    t.stated_speedup = speedup;
    t.source = "command line";
    s.service_tiers.push_back(t);
  };
  if (f.fast_speedup && !f.fast) throw InputError("--fast-speedup", "needs --fast-multiplier");
  tier(ServiceTierKind::fast, f.fast, f.fast_speedup);
  tier(ServiceTierKind::priority, f.priority, std::nullopt);
  tier(ServiceTierKind::flex, f.flex, std::nullopt);
  if (f.off_peak) s.off_peak = OffPeak{"command line", s.input * *f.off_peak, s.output * *f.off_peak, std::nullopt, "command line"};
  validate(s, a.sheet.empty() ? "command line" : a.sheet);
  for (auto& q : questionable_prices(s)) warnings.push_back(std::move(q));
  return {s, warnings};
}

InferenceAssumptions assumptions_from_args(const AssumptionFlags& f) {
  InferenceAssumptions a;
  set_estimate(a.active_params, f.active_params, "--active-params");
  set_estimate(a.flops_per_byte, f.flops_per_byte, "--flops-per-byte");
  set_estimate(a.attention_flops_per_kv_byte, f.attention, "--attention-flops-per-kv-byte");
  set_estimate(a.weight_bytes, f.weights_gb, "--weights-gb", 1e9);
  set_estimate(a.decode_context_tokens, f.decode_context, "--decode-context");
  set_estimate(a.kv_bytes_per_token, f.kv_bytes_per_token, "--kv-bytes-per-token");
  set_estimate(a.tier_costs.hbm_share_of_chip_price, f.hbm_share, "--hbm-share-of-chip-price");
  set_estimate(a.tier_costs.dram, f.dram, "--dram-usd-per-gb-hour", 1e-9 / 3600);
  set_estimate(a.tier_costs.flash, f.flash, "--flash-usd-per-gb-hour", 1e-9 / 3600);
  set_estimate(a.tier_costs.disk, f.disk, "--disk-usd-per-gb-hour", 1e-9 / 3600);
  if (f.step_budget_ms) a.step_budget = milliseconds(*f.step_budget_ms);
  if (f.storage_duration_s) a.storage_duration = seconds(*f.storage_duration_s);
  a.base_batch = f.base_batch;
  validate(a);
  return a;
}

std::string range_text(const Estimate<double>& e, int sig = 3) {
  if (e.low == e.high) return readable(e.value, sig);
  return fmt::format("{} ({}..{})", readable(e.value, sig), readable(e.low, sig), readable(e.high, sig));
}

}  // namespace

void run_infer(const InferArgs& a) {
  const FlagSheet fs = sheet_from_args(a);
  const PriceSheet& s = fs.sheet;
  const InferenceAssumptions as = assumptions_from_args(a.assumptions);
  // The sheet is read against the smallest replica that holds the model: the inference
  // bounds what a provider's hardware must do, it prices no deployment of chalk's own.
  DeploymentArgs smallest = a.deployment;
  smallest.replica_rule = ReplicaRule::smallest;
  const Deployment d = resolve(smallest);
  const PriceInference p = infer_prices(s, as, d);
  Table t;
  t.columns = {{"inference", "inf"},      {"subject", "subject"}, {"quantity", "quantity"}, {"value", "value", 4},
               {"low", "low", 4},         {"high", "high", 4},     {"note", "note"}};
  t.set_priority({"inference", "subject", "quantity"}, 0);
  t.set_priority({"note"}, 2);
  Table words = t;  // the table people read: each quantity in words (JSON and CSV keep the keys)
  words.columns[2].key = "quantity_words";
  for (const auto& f : inference_figures(p)) {
    t.add({f.inference, f.subject, f.quantity, f.figure.value, f.figure.low, f.figure.high, f.note});
    words.add({f.inference, f.subject, quantity_words(f.quantity), infer_page_figure(f.figure.value), infer_page_figure(f.figure.low),
               infer_page_figure(f.figure.high), f.note});
  }
  auto est = [](const auto& e) { return nlohmann::json{{"value", e.value.value()}, {"low", e.low.value()}, {"high", e.high.value()}}; };
  auto est_d = [](const Estimate<double>& e) { return nlohmann::json{{"value", e.value}, {"low", e.low}, {"high", e.high}}; };
  if (a.output.csv) {
    print_csv(std::cout, t, fs.warnings);
    return;
  }
  if (a.output.json) {
    nlohmann::json j;
    j["sheet"] = {{"name", s.name}, {"provider", s.provider}, {"model", s.model}, {"date", s.date}, {"source", s.source}};
    j["assumptions"] = {{"active_params", est_d(as.active_params)},
                        {"flops_per_byte", est(as.flops_per_byte)},
                        {"attention_flops_per_kv_byte", est(as.attention_flops_per_kv_byte)},
                        {"weights_bytes", est(as.weight_bytes)},
                        {"decode_context_tokens", est_d(as.decode_context_tokens)},
                        {"kv_bytes_per_token_without_step", est(as.kv_bytes_per_token)},
                        {"step_budget_ms", to_ms(as.step_budget)},
                        {"storage_duration_s", as.storage_duration.value()},
                        {"hbm_share_of_chip_price", est_d(as.tier_costs.hbm_share_of_chip_price)}};
    j["deployment"] = describe_json(d);
    j["model"] = j["deployment"]["model"];  // the stand-in's, as every command's (the sheet's model: sheet.model)
    j["hardware"] = j["deployment"]["hardware"];
    j["kv_bytes_per_token"] = est(p.kv_bytes_per_token);
    j["kv_from_price_step"] = p.kv_from_step;
    j["output_costs_more_than_input"] = p.phases.output_costs_more;
    nlohmann::json storage = nlohmann::json::array();
    for (const auto& st : p.storage) {
      storage.push_back({{"basis", st.basis}, {"hold_s", st.duration.value()}, {"tier_by_cost", st.tier_by_cost},
                         {"tier_by_duration", st.tier_by_duration}});
    }
    j["memory_tiers"] = storage;
    j["warnings"] = fs.warnings;
    j["rows"] = to_json(t);  // the inferred figures
    if (a.explain) j["explanations"] = explanations_json(explain_price_inference(p, as));
    print_json(std::cout, envelope("prices infer", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk prices infer: {} ({}, {}), read backwards (lecture 1:32:51-2:03:48)\n", s.model, s.provider, s.date);
  // The findings first, then what they rest on, then the 40 quantities.
  const auto& kv = p.kv_bytes_per_token;
  std::cout << fmt::format("(a) KV      {} bytes per token {}\n", range_text({kv.value.value(), kv.low.value(), kv.high.value()}),
                           p.kv_from_step ? fmt::format("from the price step at {} tokens", readable(static_cast<double>(p.step->threshold_tokens), 3))
                                          : "assumed (no price step)");
  std::cout << fmt::format("(b) phases  output/input = {}: {}\n", format_number(p.phases.output_to_input_ratio, 3),
                           p.phases.output_costs_more ? "output tokens cost more than input tokens; decode is memory-bound, prefill compute-bound"
                                                      : "output is NOT dearer than input, against a memory-bound decode");
  // Every lettered section of the table has its line here, (a) to (f) (review L5).
  if (p.cache_read) {
    std::cout << fmt::format("(c) cache   a cached read costs {} of an input token; fetching its KV from HBM costs {} of recomputing it\n",
                             format_number(p.cache_read->read_to_input_ratio, 3), range_text(p.cache_read->hbm_fetch_to_recompute_cost));
  }
  for (const auto& st : p.storage) {
    std::cout << fmt::format("(d) {}: by cost {}; by duration ({} s) {}\n", st.basis, st.tier_by_cost.empty() ? "no tier" : st.tier_by_cost,
                             readable(st.duration.value(), 4), st.tier_by_duration.empty() ? "no tier" : st.tier_by_duration);
  }
  for (const auto& m : p.multiples) {
    std::cout << fmt::format("(e) {}: {}x the standard output price implies a decode batch of {} ({}x the tokens/s per user of batch {})\n",
                             m.tier, format_number(m.multiple, 3), range_text(m.batch), range_text(m.speedup), m.base_batch);
  }
  std::cout << fmt::format("(f) context the step budget of {} ms reads at most {} tokens of KV per sequence{}\n",
                           format_number(to_ms(p.ceiling.step_budget), 3), readable(p.ceiling.bandwidth_ceiling_tokens.value, 3),
                           p.ceiling.capacity_ceiling_tokens ? "; HBM holds " + readable(p.ceiling.capacity_ceiling_tokens->value, 3) + " beside the weights"
                                                             : std::string("; the weights alone fill HBM"));
  const auto& n = as.active_params;
  const auto& at = as.attention_flops_per_kv_byte;
  std::cout << fmt::format("assumptions N_active {} ({}..{}); F/W {} FLOP/B; attention {} FLOP per KV byte; decode weights {} GB; "
                           "decode context {}; step budget {} ms\n",
                           human_count(n.value), human_count(n.low), human_count(n.high),
                           range_text({as.flops_per_byte.value.value(), as.flops_per_byte.low.value(), as.flops_per_byte.high.value()}),
                           range_text({at.value.value(), at.low.value(), at.high.value()}),
                           range_text({to_gb(as.weight_bytes.value), to_gb(as.weight_bytes.low), to_gb(as.weight_bytes.high)}),
                           range_text(as.decode_context_tokens), format_number(to_ms(as.step_budget), 3));
  // "8 B200 (GB200) chips of the gb200-nvl72 system" (review 2 L8: "8 x gb200-nvl72" read as
  // eight racks; review 6 L10: "8 x B200 (GB200), gb200-nvl72" read garbled).
  std::cout << fmt::format("stand-in    {} on {} {} of the {} system (its chip, memory tiers and the model of (e)); change with "
                           "--model/--hardware\n",
                           d.model.name, d.n_chips, d.system.chip.name + (d.n_chips == 1 ? " chip" : " chips"), d.system.name);
  for (const auto& w : fs.warnings) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
  print_table(std::cout, words);
  if (a.explain) std::cout << "\nHow the central figures are computed:\n" << explanations_text(explain_price_inference(p, as));
}

}  // namespace chalk::cli::prices_cli
