// `chalk prices`: API price sheets, what they reveal about the systems behind them
// (lecture 1:32:51-2:03:48), and the prices a deployment implies. See docs/prices.md.
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "chalk/error.h"
#include "chalk/prices.h"
#include "commands.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct ListArgs {
  OutputArgs output;
};

struct ShowArgs {
  std::string sheet;
  OutputArgs output;
};

/// Prices given as flags: a whole sheet when no NAME is given, else overrides of its fields.
struct PriceFlags {
  std::optional<double> input, output, cache_read, storage, write_5min, write_1h;
  std::optional<int64_t> threshold;
  std::optional<double> lc_input_multiplier, lc_output_multiplier;
  std::optional<double> batch, fast, fast_speedup, priority, flex, off_peak;
};

/// Assumptions as "VALUE" or "LOW:VALUE:HIGH".
struct AssumptionFlags {
  std::string active_params, flops_per_byte, attention, weights_gb, decode_context, kv_bytes_per_token, hbm_share;
  std::string dram, flash, disk;
  std::optional<double> step_budget_ms, storage_duration_s;
  int64_t base_batch = 0;
};

struct InferArgs {
  std::string sheet;
  PriceFlags prices;
  AssumptionFlags assumptions;
  DeploymentArgs deployment;
  OutputArgs output;
};

struct ForwardArgs {
  DeploymentArgs deployment;
  int64_t batch = 0, context = 4096, prompt = 4096;
  double utilisation = 0.5, margin = 0.5;
  std::string compare;
  OutputArgs output;
};

double mtok(UsdPerToken p) { return to_usd_per_mtok(p); }
Cell opt_mtok(const std::optional<UsdPerToken>& p) { return p ? Cell(mtok(*p)) : Cell{}; }

/// "VALUE" (a point) or "LOW:VALUE:HIGH", each a positive number.
Estimate<double> parse_estimate(const std::string& text, const std::string& flag) {
  std::vector<double> v;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    const std::string item = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (...) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !std::isfinite(x)) {
      throw InputError(flag, "expected VALUE or LOW:VALUE:HIGH (numbers), got '" + text + "'");
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

PriceSheet sheet_from_args(const InferArgs& a) {
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
  positive(f.lc_input_multiplier, "--long-context-input-multiplier");
  positive(f.lc_output_multiplier, "--long-context-output-multiplier");
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
  if (f.input) s.input = usd_per_million_tokens(*f.input);
  if (f.output) s.output = usd_per_million_tokens(*f.output);
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
  return s;
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

void emit(const Table& t, const OutputArgs& o, const std::string& title) {
  if (o.csv) print_csv(std::cout, t);
  else if (o.json) std::cout << to_json(t).dump(2) << '\n';
  else {
    std::cout << title << "\n\n";
    print_table(std::cout, t);
  }
}

void run_list(const ListArgs& a) {
  Table t;
  t.columns = {{"name", "sheet"},
               {"provider", "provider"},
               {"date", "date"},
               {"input_usd_per_mtok", "$/Mtok in", 4},
               {"output_usd_per_mtok", "$/Mtok out", 4},
               {"output_to_input_ratio", "out/in", 3},
               {"cache_read_usd_per_mtok", "$/Mtok hit", 4},
               {"long_context_threshold_tokens", "step at"},
               {"cache_storage_usd_per_mtok_per_hour", "$/Mtok/h stored", 3},
               {"tiers", "tiers"}};
  for (const auto& n : builtin_price_sheet_names()) {
    const PriceSheet s = load_price_sheet(n);
    std::string tiers;
    auto add = [&](const std::string& x) { tiers += (tiers.empty() ? "" : ",") + x; };
    for (const auto& w : s.cache.writes) add(fmt::format("write-{}s", w.duration.value()));
    if (s.batch) add("batch");
    for (const auto& st : s.service_tiers) add(std::string(to_string(st.kind)));
    if (s.off_peak) add("off-peak");
    t.add({s.name, s.provider, s.date, mtok(s.input), mtok(s.output), s.output / s.input, opt_mtok(s.cache.read),
           s.long_context.empty() ? Cell{} : Cell(s.long_context.front().threshold_tokens),
           s.cache.storage ? Cell(to_usd_per_mtok_per_hour(*s.cache.storage)) : Cell{}, tiers.empty() ? Cell{} : Cell(tiers)});
  }
  emit(t, a.output, "chalk prices list: built-in API price sheets (reference/prices.md), USD per 1M tokens");
}

Table sheet_table(const PriceSheet& s) {
  Table t;
  t.columns = {{"item", "item"},
               {"condition", "condition"},
               {"input_usd_per_mtok", "$/Mtok in", 4},
               {"output_usd_per_mtok", "$/Mtok out", 4},
               {"cache_read_usd_per_mtok", "$/Mtok hit", 4},
               {"multiplier", "x standard out", 3},
               {"source", "source"}};
  t.add({"standard", "", mtok(s.input), mtok(s.output), opt_mtok(s.cache.read), 1.0, ""});
  for (const auto& lc : s.long_context) {
    t.add({"long context", fmt::format("prompt > {} tokens", lc.threshold_tokens), mtok(lc.input), mtok(lc.output),
           opt_mtok(lc.cache_read), lc.output / s.output, ""});
  }
  for (const auto& w : s.cache.writes) {
    t.add({"cache write", fmt::format("held {} s", w.duration.value()), mtok(w.price), Cell{}, Cell{}, Cell{}, ""});
  }
  if (s.cache.storage) {
    t.add({"cache storage", fmt::format("{} $/Mtok per hour", format_number(to_usd_per_mtok_per_hour(*s.cache.storage), 4)), Cell{},
           Cell{}, Cell{}, Cell{}, ""});
  }
  if (s.batch) t.add({"batch", "", mtok(s.input * s.batch->multiplier), mtok(s.output * s.batch->multiplier), Cell{}, s.batch->multiplier, s.batch->source});
  for (const auto& st : s.service_tiers) {
    std::string cond;
    if (st.stated_speedup) cond = fmt::format("stated {}x faster", format_number(*st.stated_speedup, 3));
    if (st.stated_min_output_speed) cond = fmt::format("SLA > {} tok/s", format_number(st.stated_min_output_speed->value(), 4));
    t.add({std::string(to_string(st.kind)), cond, mtok(st.input), mtok(st.output), opt_mtok(st.cache_read), st.output / s.output, st.source});
  }
  if (s.off_peak) {
    t.add({"off-peak", s.off_peak->window, mtok(s.off_peak->input), mtok(s.off_peak->output), opt_mtok(s.off_peak->cache_read),
           s.off_peak->output / s.output, s.off_peak->source});
  }
  return t;
}

void run_show(const ShowArgs& a) {
  const PriceSheet s = load_price_sheet(a.sheet);
  if (a.output.json) {
    std::cout << price_sheet_to_json(s);
    return;
  }
  const Table t = sheet_table(s);
  if (a.output.csv) {
    print_csv(std::cout, t);
    return;
  }
  std::cout << fmt::format("chalk prices show: {} ({}), {}\nsource  {}\n", s.model, s.provider, s.date, s.source);
  if (!s.notes.empty()) std::cout << "notes   " << s.notes << '\n';
  std::cout << '\n';
  print_table(std::cout, t);
}

std::string range_text(const Estimate<double>& e, int sig = 3) {
  if (e.low == e.high) return format_number(e.value, sig);
  return fmt::format("{} ({}..{})", format_number(e.value, sig), format_number(e.low, sig), format_number(e.high, sig));
}

void run_infer(const InferArgs& a) {
  const PriceSheet s = sheet_from_args(a);
  const InferenceAssumptions as = assumptions_from_args(a.assumptions);
  const Deployment d = resolve(a.deployment);
  const PriceInference p = infer_prices(s, as, d);
  Table t;
  t.columns = {{"inference", "inf"},      {"subject", "subject"}, {"quantity", "quantity"}, {"value", "value", 4},
               {"low", "low", 4},         {"high", "high", 4},     {"note", "note"}};
  for (const auto& f : inference_figures(p)) t.add({f.inference, f.subject, f.quantity, f.figure.value, f.figure.low, f.figure.high, f.note});
  auto est = [](const auto& e) { return nlohmann::json{{"value", e.value.value()}, {"low", e.low.value()}, {"high", e.high.value()}}; };
  auto est_d = [](const Estimate<double>& e) { return nlohmann::json{{"value", e.value}, {"low", e.low}, {"high", e.high}}; };
  if (a.output.csv) {
    print_csv(std::cout, t);
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
    j["kv_bytes_per_token"] = est(p.kv_bytes_per_token);
    j["kv_from_price_step"] = p.kv_from_step;
    j["output_costs_more_than_input"] = p.phases.output_costs_more;
    nlohmann::json storage = nlohmann::json::array();
    for (const auto& st : p.storage) {
      storage.push_back({{"basis", st.basis}, {"hold_s", st.duration.value()}, {"tier_by_cost", st.tier_by_cost},
                         {"tier_by_duration", st.tier_by_duration}});
    }
    j["memory_tiers"] = storage;
    j["figures"] = to_json(t);
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("chalk prices infer: {} ({}, {}), read backwards (lecture 1:32:51-2:03:48)\n", s.model, s.provider, s.date);
  const auto& n = as.active_params;
  const auto& at = as.attention_flops_per_kv_byte;
  std::cout << fmt::format("assumptions N_active {} ({}..{}); F/W {} FLOP/B; attention {} FLOP per KV byte; decode weights {} GB; "
                           "decode context {}; step budget {} ms\n",
                           human_count(n.value), human_count(n.low), human_count(n.high),
                           range_text({as.flops_per_byte.value.value(), as.flops_per_byte.low.value(), as.flops_per_byte.high.value()}),
                           range_text({at.value.value(), at.low.value(), at.high.value()}),
                           range_text({to_gb(as.weight_bytes.value), to_gb(as.weight_bytes.low), to_gb(as.weight_bytes.high)}),
                           range_text(as.decode_context_tokens), format_number(to_ms(as.step_budget), 3));
  std::cout << fmt::format("stand-in    {} on {} x {} (chip, tiers and the model of (e)); change with --model/--hardware\n", d.model.name,
                           d.n_chips, d.system.name);
  const auto& kv = p.kv_bytes_per_token;
  std::cout << fmt::format("(a) KV      {} bytes per token {}\n", range_text({kv.value.value(), kv.low.value(), kv.high.value()}),
                           p.kv_from_step ? fmt::format("from the price step at {} tokens", p.step->threshold_tokens) : "assumed (no price step)");
  std::cout << fmt::format("(b) phases  output/input = {}: {}\n", format_number(p.phases.output_to_input_ratio, 3),
                           p.phases.output_costs_more ? "output tokens cost more than input tokens; decode is memory-bound, prefill compute-bound"
                                                      : "output is NOT dearer than input, against a memory-bound decode");
  for (const auto& st : p.storage) {
    std::cout << fmt::format("(d) {}: by cost {}; by duration ({} s) {}\n", st.basis, st.tier_by_cost.empty() ? "no tier" : st.tier_by_cost,
                             st.duration.value(), st.tier_by_duration.empty() ? "no tier" : st.tier_by_duration);
  }
  std::cout << '\n';
  print_table(std::cout, t);
}

void run_forward(const ForwardArgs& a) {
  const Deployment d = resolve(a.deployment);
  ForwardAssumptions fa;
  fa.decode_batch = a.batch;
  fa.decode_context_tokens = a.context;
  fa.prompt_tokens = a.prompt;
  fa.utilisation = a.utilisation;
  fa.gross_margin = a.margin;
  const ForwardPrices f = forward_prices(d, fa);
  Table t;
  t.columns = {{"source", "source"},
               {"input_usd_per_mtok", "$/Mtok in", 4},
               {"output_usd_per_mtok", "$/Mtok out", 4},
               {"output_to_input_ratio", "out/in", 3},
               {"cache_read_usd_per_mtok", "$/Mtok hit", 4},
               {"cache_storage_usd_per_mtok_per_hour", "$/Mtok/h stored", 4},
               {"long_context_threshold_tokens", "step at"}};
  t.add({fmt::format("chalk: {} on {} x {}", f.model, f.n_chips, f.system), mtok(f.input), mtok(f.output), f.output / f.input,
         mtok(f.cache_read), to_usd_per_mtok_per_hour(f.storage_hbm),
         f.long_context_threshold_tokens ? Cell(*f.long_context_threshold_tokens) : Cell{}});
  if (!a.compare.empty()) {
    const PriceSheet s = load_price_sheet(a.compare);
    t.add({fmt::format("{}: {} ({})", s.provider, s.model, s.date), mtok(s.input), mtok(s.output), s.output / s.input,
           opt_mtok(s.cache.read), s.cache.storage ? Cell(to_usd_per_mtok_per_hour(*s.cache.storage)) : Cell{},
           s.long_context.empty() ? Cell{} : Cell(s.long_context.front().threshold_tokens)});
  }
  if (a.output.csv) {
    print_csv(std::cout, t);
    return;
  }
  if (a.output.json) {
    auto j = describe_json(d);
    j["forward"] = {{"decode_batch", f.decode_batch},
                    {"decode_context_tokens", a.context},
                    {"prompt_tokens", a.prompt},
                    {"utilisation", a.utilisation},
                    {"gross_margin", a.margin},
                    {"markup", f.markup},
                    {"kv_bytes_per_token", f.kv_bytes_per_token.value()},
                    {"decode_t_step_ms", to_ms(f.decode.t_step)},
                    {"decode_bound", to_string(f.decode.bound)},
                    {"prefill_bound", to_string(f.prefill.bound)},
                    {"input_cost_usd_per_mtok", mtok(f.input_cost)},
                    {"output_cost_usd_per_mtok", mtok(f.output_cost)},
                    {"memory_fits", f.memory_fits}};
    j["prices"] = to_json(t);
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << "chalk prices forward: the prices a deployment implies (cost per token = n price t_step / B, x markup)\n" << describe_text(d);
  std::cout << fmt::format("decode      batch {} at context {}: step {} ms, {}-bound{}\n", f.decode_batch, a.context,
                           format_number(to_ms(f.decode.t_step), 4), to_string(f.decode.bound),
                           f.memory_fits ? "" : " (DOES NOT FIT in HBM)");
  std::cout << fmt::format("prefill     {} tokens: {} ms, {}-bound\n", a.prompt, format_number(to_ms(f.prefill.t_step), 4), to_string(f.prefill.bound));
  std::cout << fmt::format("markup      x{} = 1 / (utilisation {} x (1 - margin {}))\n\n", format_number(f.markup, 4),
                           format_number(a.utilisation, 3), format_number(a.margin, 3));
  print_table(std::cout, t);
}

}  // namespace

void register_prices(CLI::App& app, Action& run) {
  static ListArgs list;
  static ShowArgs show;
  static InferArgs infer;
  static ForwardArgs forward;
  auto* prices = app.add_subcommand("prices", "API price sheets, what they reveal about the systems behind them, and forward prices");
  prices->require_subcommand(1);

  auto* l = prices->add_subcommand("list", "List the built-in price sheets (reference/prices.md)");
  add_output_options(*l, list.output);
  l->callback([&run] { run = [] { run_list(list); }; });

  auto* s = prices->add_subcommand("show", "Show one price sheet: a built-in NAME or a path to a chalk-prices file");
  s->add_option("sheet", show.sheet, "Built-in sheet name (see `chalk prices list`) or path")->required();
  add_output_options(*s, show.output);
  s->callback([&run] { run = [] { run_show(show); }; });

  auto* i = prices->add_subcommand("infer",
                                   "Read a sheet backwards: KV bytes per token (a), phase bounds (b), cache hits (c), memory tiers (d),\n"
                                   "fast/priority/flex multiples as batches (e), the context ceiling (f). Assumptions take VALUE or LOW:VALUE:HIGH");
  i->add_option("sheet", infer.sheet, "Built-in sheet name or path; omit to give the prices as flags");
  auto& pf = infer.prices;
  i->add_option("--input-usd-per-mtok", pf.input, "Input price, USD per 1M tokens");
  i->add_option("--output-usd-per-mtok", pf.output, "Output price, USD per 1M tokens");
  i->add_option("--cache-read-usd-per-mtok", pf.cache_read, "Cache read (hit) price");
  i->add_option("--cache-storage-usd-per-mtok-per-hour", pf.storage, "Cache storage price per 1M tokens per hour");
  i->add_option("--cache-write-5min-usd-per-mtok", pf.write_5min, "Price of a cache write held 5 minutes");
  i->add_option("--cache-write-1h-usd-per-mtok", pf.write_1h, "Price of a cache write held 1 hour");
  i->add_option("--long-context-threshold-tokens", pf.threshold, "Prompt length above which the long-context tier applies");
  i->add_option("--long-context-input-multiplier", pf.lc_input_multiplier, "Long-context input multiplier (default 2)");
  i->add_option("--long-context-output-multiplier", pf.lc_output_multiplier, "Long-context output multiplier (default 1.5)");
  i->add_option("--batch-multiplier", pf.batch, "Batch API price multiplier, (0, 1]");
  i->add_option("--fast-multiplier", pf.fast, "Fast-mode price multiplier");
  i->add_option("--fast-speedup", pf.fast_speedup, "Fast-mode stated speedup");
  i->add_option("--priority-multiplier", pf.priority, "Priority-tier price multiplier");
  i->add_option("--flex-multiplier", pf.flex, "Flex-tier price multiplier");
  i->add_option("--off-peak-multiplier", pf.off_peak, "Off-peak price multiplier");
  auto& af = infer.assumptions;
  i->add_option("--active-params", af.active_params, "N_active (default 25e9:50e9:100e9; lecture 1:35:47)");
  i->add_option("--flops-per-byte", af.flops_per_byte, "Chip F/W, FLOP/s per byte/s of HBM (default 200:300:600)");
  i->add_option("--attention-flops-per-kv-byte", af.attention,
                "Attention FLOPs per KV byte attended; 0 drops them as the lecture does (default 0:0:16; GQA bf16: 2 x q heads per KV head)");
  i->add_option("--weights-gb", af.weights_gb, "Weight GB one decode step reads (default 100:500:2000)");
  i->add_option("--decode-context", af.decode_context, "Mean context of a decode step, tokens (default 1024:4096:16384)");
  i->add_option("--kv-bytes-per-token", af.kv_bytes_per_token, "KV bytes per token when the sheet has no price step (default 1000:1667:4000)");
  i->add_option("--hbm-share-of-chip-price", af.hbm_share, "Share of the chip price charged to HBM capacity (default 0.25:1:1)");
  i->add_option("--dram-usd-per-gb-hour", af.dram, "DRAM cost per GB-hour (default $2.5-$10/GB over 4 years)");
  i->add_option("--flash-usd-per-gb-hour", af.flash, "Flash cost per GB-hour (default $0.05-$0.20/GB over 4 years)");
  i->add_option("--disk-usd-per-gb-hour", af.disk, "Disk cost per GB-hour (default $0.015-$0.03/GB over 4 years)");
  i->add_option("--step-budget-ms", af.step_budget_ms, "Decode step-time budget for the context ceiling (default 20)");
  i->add_option("--storage-duration-s", af.storage_duration_s, "Hold time for a per-hour storage price (default 3600)");
  i->add_option("--base-batch", af.base_batch, "Base decode batch for (e) (default 0 = cost-optimal)");
  add_deployment_options(*i, infer.deployment);
  add_output_options(*i, infer.output);
  i->callback([&run] { run = [] { run_infer(infer); }; });

  auto* f = prices->add_subcommand("forward", "The input and output prices a model on a system implies, beside a provider's sheet");
  add_deployment_options(*f, forward.deployment);
  f->add_option("-b,--batch", forward.batch, "Decode batch (default 0 = cost-optimal)")->capture_default_str();
  f->add_option("-s,--context", forward.context, "Decode context, tokens")->capture_default_str();
  f->add_option("--prompt", forward.prompt, "Prompt tokens of the prefill that prices input")->capture_default_str();
  f->add_option("--utilisation", forward.utilisation, "Billable fraction of chip time (0, 1]")->capture_default_str();
  f->add_option("--margin", forward.margin, "Gross margin [0, 1): price = cost / (utilisation (1 - margin))")->capture_default_str();
  f->add_option("--compare", forward.compare, "A price sheet to set beside (name or path)");
  add_output_options(*f, forward.output);
  f->callback([&run] { run = [] { run_forward(forward); }; });
}

}  // namespace chalk::cli
