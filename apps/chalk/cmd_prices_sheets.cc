// `chalk prices list` and `show`: the built-in API price sheets, and one sheet item by
// item. Shared options and helpers: prices_cli.h.
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "chalk/prices/prices.h"
#include "envelope.h"
#include "deployment_options.h"
#include "prices_cli.h"
#include "table.h"

namespace chalk::cli::prices_cli {
namespace {

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

}  // namespace

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
  t.set_count({"long_context_threshold_tokens"});  // "200K", not "200000" (review L2)
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
  print_table_or(std::cout, t, a.output.json, a.output.csv, "chalk prices list: built-in API price sheets (data/prices/, each citing its source), USD per 1M tokens", "prices list");
}

void run_show(const ShowArgs& a) {
  const PriceSheet s = load_price_sheet(a.sheet);
  const Table t = sheet_table(s);
  if (a.output.json) {
    // The sheet as its file says it (chalk-prices/1: a price file again), its table as the rows.
    print_json(std::cout, envelope("prices show", {{"sheet", nlohmann::json::parse(price_sheet_to_json(s))}, {"rows", to_json(t)}}, column_keys(t)));
    return;
  }
  if (a.output.csv) {
    print_csv(std::cout, t);
    return;
  }
  std::cout << fmt::format("chalk prices show: {} ({}), {}\nsource  {}\n", s.model, s.provider, s.date, s.source);
  if (!s.notes.empty()) std::cout << "notes   " << s.notes << '\n';
  std::cout << '\n';
  print_table(std::cout, t);
}

}  // namespace chalk::cli::prices_cli
