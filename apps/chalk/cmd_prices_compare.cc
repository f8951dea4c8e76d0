// `chalk prices compare`: every host's offer of one open model (data/prices/hosts/) beside
// chalk's cost on each system at the host's speed (chalk/prices/compare.h; docs/prices.md,
// "Comparing hosts"). The table, --csv and --json's rows show each offer's cheapest system;
// --json's rows carry every system in systems[].
#include <algorithm>
#include <cassert>
#include <cmath>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/hardware/price_sources.h"
#include "chalk/io/io.h"
#include "chalk/prices/compare.h"
#include "envelope.h"
#include "deployment_options.h"
#include "prices_cli.h"
#include "table.h"

namespace chalk::cli::prices_cli {
namespace {

std::vector<std::string> compare_system_names(const std::string& text, bool given) {
  return !given && text.empty() ? builtin_system_names() : hardware_list(text);
}

/// A host's price in $/Mtok to 12 significant digits (0.64, not 0.6399999999999999).
double price_mtok(UsdPerToken p) { return std::stod(fmt::format("{:.12g}", mtok(p))); }

Table compare_table() {
  Table t;
  t.columns = {{"provider", "provider", 3, 0},
               // The format the costs assume: a host's stated quantization (review 3 L16: an FP8
               // offer was cheaper than the bf16 rows with nothing in the table to say why).
               {"weights_dtype", "weights", 3, 1},
               {"host_tok_per_s_per_user", "host tok/s", 4, 1},
               {"assumed_tok_per_s_per_user", "assumed tok/s", 4, 2},
               {"input_usd_per_mtok", "$/M in", 3, 2},
               {"output_usd_per_mtok", "$/M out", 3, 2},
               {"cache_read_usd_per_mtok", "$/M hit", 3, 2},
               {"blended_usd_per_mtok", "$/M blend", 3, 0},
               {"system", "cheapest system", 3, 0},
               {"chips", "chips", 3, 1},
               {"layout", "layout", 3, 2},
               {"batch", "batch", 3, 1},
               {"tok_per_s_per_user", "tok/s", 4, 2},
               {"input_cost_usd_per_mtok", "cost in", 3, 2},
               {"output_cost_usd_per_mtok", "cost out", 3, 2},
               {"cache_read_cost_usd_per_mtok", "cost hit", 3, 2},
               {"blended_cost_usd_per_mtok", "cost blend", 3, 0},
               {"margin_at_full_utilization", "margin", 3, 0},
               {"break_even_utilization", "break-even util", 3, 0},
               {"input_break_even_utilization", "b-e util in", 3, 2},
               {"output_break_even_utilization", "b-e util out", 3, 2},
               {"break_even_batch", "b-e batch", 3, 1},
               {"why_not", "why not", 3, 2},
               // The sources and the rest --json gives each row (review 7 M8): --csv carries
               // them too, the people's table stops at why_not (kPeopleColumns).
               {"served_model", "served model", 3, 3},
               {"quantization", "quantization", 3, 3},
               {"hardware_stated", "hardware stated", 3, 3},
               {"price_date", "price date", 3, 3},
               {"price_source", "price source", 3, 3},
               {"speed_assumed", "speed assumed", 3, 3},
               {"speed_date", "speed date", 3, 3},
               {"speed_source", "speed source", 3, 3},
               {"host_ttft_ms", "host TTFT ms", 4, 3},
               {"cheapest_system", "cheapest system", 3, 3},
               {"speed_reachable", "speed reachable", 3, 3},
               {"max_batch_at_context", "max batch", 3, 3},
               {"fastest_tok_per_s_per_user", "fastest tok/s", 4, 3}};
  return t;
}

/// The "system" column's index in compare_table() (the offer's eight cells precede it).
constexpr size_t kSystemColumn = 8;
/// The columns the people's table shows, provider to why_not; the rest are for programs.
constexpr size_t kPeopleColumns = 23;

/// A yes/no cell: table.h reads a yes/no column as a boolean (true/false in CSV and JSON).
Cell yes_no(bool b) { return std::string(b ? "yes" : "no"); }
Cell text_or_empty(const std::string& s) { return s.empty() ? Cell{} : Cell(s); }

std::vector<Cell> row_of(const OfferComparison& oc, const SystemCost& r) {
  const HostOffer& o = oc.offer;
  std::vector<Cell> row = {o.provider,
                           oc.weights_dtype,
                           o.tok_per_s_per_user ? Cell(o.tok_per_s_per_user->value()) : Cell{},
                           oc.speed_assumed ? Cell(oc.speed.value()) : Cell{},
                           price_mtok(o.input),
                           price_mtok(o.output),
                           o.cache_read ? Cell(price_mtok(*o.cache_read)) : Cell{},
                           price_mtok(oc.blended_price),
                           r.system};
  assert(row.size() == kSystemColumn + 1 && compare_table().columns[kSystemColumn].key == "system");
  if (!r.unreachable.empty()) {
    row.resize(kPeopleColumns);
    row.back() = r.unreachable;
  } else {
    row.insert(row.end(), {Cell(r.n_chips), Cell(r.layout), Cell(r.batch), Cell(r.tok_per_s_per_user.value()),
                           Cell(mtok(r.input_cost)), Cell(mtok(r.output_cost)), Cell(mtok(r.cache_read_cost)),
                           Cell(mtok(r.blended_cost)), Cell(r.margin_at_full_utilization), Cell(r.break_even_utilization),
                           Cell(r.input_break_even_utilization), Cell(r.output_break_even_utilization),
                           r.break_even_batch ? Cell(*r.break_even_batch) : Cell{}, Cell{}});
  }
  assert(row.size() == kPeopleColumns && compare_table().columns[kPeopleColumns - 1].key == "why_not");
  row.insert(row.end(), {o.served_model, text_or_empty(o.quantization), text_or_empty(o.hardware), o.price_date, o.price_source,
                         yes_no(oc.speed_assumed), text_or_empty(o.speed_date), text_or_empty(o.speed_source),
                         o.ttft ? Cell(to_ms(*o.ttft)) : Cell{},
                         oc.cheapest ? Cell(oc.systems[*oc.cheapest].system) : Cell{}, yes_no(!r.speed_out_of_reach),
                         r.unreachable.empty() ? Cell(r.max_batch) : Cell{},
                         !r.unreachable.empty() && r.fastest_tok_per_s_per_user ? Cell(*r.fastest_tok_per_s_per_user) : Cell{}});
  assert(row.size() == compare_table().columns.size());
  return row;
}

/// A row's JSON: every column's key (null where the cell is empty), the yes/no cells as
/// booleans.
nlohmann::json row_json(const Table& t, std::vector<Cell> cells) {
  Table one = t;
  one.rows = {std::move(cells)};
  nlohmann::json row = to_json(one)[0];
  for (const char* k : {"speed_assumed", "speed_reachable"}) {
    if (!row[k].is_boolean()) row[k] = row[k] == "yes";  // to_json may have read yes/no already
  }
  return row;
}

/// The row the table shows for an offer: its cheapest system, else why none is reachable.
const SystemCost* shown(const OfferComparison& oc) {
  if (oc.cheapest) return &oc.systems[*oc.cheapest];
  for (const auto& r : oc.systems) {
    if (r.speed_out_of_reach) return &r;
  }
  for (const auto& r : oc.systems) {
    if (r.unreachable != "no public price per chip-hour") return &r;
  }
  return oc.systems.empty() ? nullptr : &oc.systems.front();
}

/// Why an offer has no cheapest system, for its "why_not": the speed when some system fits
/// the model but none reaches it, the fastest of them named.
std::string offer_why_not(const OfferComparison& oc) {
  const SystemCost* fastest = nullptr;
  for (const auto& r : oc.systems) {
    if (r.fastest_tok_per_s_per_user && (!fastest || *r.fastest_tok_per_s_per_user > *fastest->fastest_tok_per_s_per_user)) fastest = &r;
  }
  if (fastest) {
    // The fastest system's own reason (review 5 M8: "beyond every GPU's step" was said of an
    // L4 alone, whose weights did not fit one server): its speed and what governs it.
    const std::string& why = fastest->unreachable;
    const size_t at = why.find("the fastest is ");
    return fmt::format("no layout on any system priced reaches {} tok/s per user{}; the fastest is {} on {}{}; faster chips or "
                       "speculative decoding (not assumed here) would be needed",
                       readable(oc.speed.value(), 4), oc.speed_assumed ? " (assumed: the sheet states no speed)" : "",
                       format_number(*fastest->fastest_tok_per_s_per_user, 4), fastest->system,
                       at == std::string::npos ? std::string(" (batch 1)") : " " + why.substr(why.find(' ', at + 15) + 1));
  }
  // No system reaches any speed: say each priced system's own reason (the weights do not
  // fit one scale-up domain, say), not only that none is priced.
  std::string reasons;
  for (const auto& r : oc.systems) {
    if (r.unreachable.empty() || r.unreachable == "no public price per chip-hour") continue;
    reasons += (reasons.empty() ? "" : "; ") + (oc.systems.size() > 1 ? r.system + ": " : std::string()) + r.unreachable;
  }
  if (!reasons.empty()) return reasons;
  return "no system given has a public price per chip-hour";
}

/// The keys of an offer's row that are the host's, not a system's: systems[] leaves them out.
constexpr const char* kOfferKeys[] = {"provider", "weights_dtype", "host_tok_per_s_per_user", "assumed_tok_per_s_per_user",
                                      "input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok", "blended_usd_per_mtok",
                                      "served_model", "quantization", "hardware_stated", "price_date", "price_source", "speed_assumed",
                                      "speed_date", "speed_source", "host_ttft_ms", "cheapest_system"};

/// An offer's row: every key `columns` names (null where it has no value, review 7 M8), its
/// shown system's figures (the cheapest, else the one that says why none is) beside the
/// host's, so `columns` is the CSV's header in its order (review 3 M2) and the row the CSV's;
/// systems[] holds every system's.
nlohmann::json offer_json(const OfferComparison& oc, const Table& t) {
  SystemCost none;  // no system given: the host's cells, and why
  none.unreachable = "no system given";
  const SystemCost* s = shown(oc);
  nlohmann::json j = row_json(t, row_of(oc, s ? *s : none));
  j["why_not"] = oc.cheapest ? nlohmann::json() : nlohmann::json(offer_why_not(oc));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : oc.systems) {
    nlohmann::json row = without_nulls(nlohmann::json::array({row_json(t, row_of(oc, r))}))[0];
    for (const char* k : kOfferKeys) row.erase(k);
    rows.push_back(row);
  }
  j["systems"] = rows;
  return j;
}

}  // namespace

void run_compare(const CompareArgs& a) {
  const ModelSpec m = load_model(a.model);
  const auto sheet = builtin_host_sheet(m.name);
  if (!sheet) {
    throw InputError("--model", "no host sheet for '" + m.name + "' (data/prices/hosts/); models with one: " + host_models_list());
  }
  std::vector<SystemSpec> systems;
  for (const auto& n : compare_system_names(a.hardware, a.hardware_given)) systems.push_back(load_system(n));
  DeploymentOptions base;
  if (!a.weights.empty()) base.weights = parse_dtype(a.weights, "--weights");
  base.kv = parse_dtype(a.kv, "--kv-dtype");
  base.mechanisms.enabled = true;
  CompareWorkload w;
  w.input_tokens = a.input;
  w.output_tokens = a.output;
  w.prefix_hit_rate = a.prefix_hit_rate;
  if (!(a.speed > 0) || !std::isfinite(a.speed)) {
    throw InputError("--speed", "must be > 0 tok/s per user, got " + fmt::format("{:g}", a.speed));
  }
  w.assumed_speed = TokensPerSecond(a.speed);
  if (w.input_tokens < 1) throw InputError("--input", "must be >= 1 token, got " + std::to_string(w.input_tokens));
  if (w.output_tokens < 1) throw InputError("--output", "must be >= 1 token, got " + std::to_string(w.output_tokens));
  if (!(w.prefix_hit_rate >= 0 && w.prefix_hit_rate <= 1)) {
    throw InputError("--prefix-hit-rate", "must be a fraction in [0, 1], got " + fmt::format("{:g}", w.prefix_hit_rate));
  }
  // simulate rejects every such request (vLLM refuses a prompt + max_tokens over
  // max_model_len); here the one request shape is the whole workload, so refuse it.
  if (m.max_context > 0 && w.input_tokens + w.output_tokens > m.max_context) {
    throw InputError("--input", fmt::format("{} input + {} output tokens exceed {}'s max_position_embeddings {} (vLLM refuses a "
                                            "prompt + max_tokens over max_model_len)",
                                            w.input_tokens, w.output_tokens, m.name, m.max_context));
  }
  const HostComparison h = compare_hosts(m, *sheet, systems, base, w);
  // The cheapest system is a choice between chips whose prices may come from different
  // sources (review 5 M3): say so beside it.
  std::vector<std::string> warnings;
  if (std::string mixed = mixed_price_sources_warning(systems); !mixed.empty()) warnings.push_back(std::move(mixed));

  Table t = compare_table();
  if (a.output_format.csv) {
    // One row set (review 10 L3: the CSV printed 20 rows, one per offer and system, beside
    // the JSON's and the table's 10): each offer's row as --json's rows carry it, its shown
    // system's figures; every system's are the JSON rows' systems[].
    const auto why = std::find_if(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.key == "why_not"; }) - t.columns.begin();
    SystemCost none;  // no system given: the host's cells, and why
    none.unreachable = "no system given";
    for (const auto& oc : h.offers) {
      const SystemCost* s = shown(oc);
      std::vector<Cell> row = row_of(oc, s ? *s : none);
      if (why < static_cast<std::ptrdiff_t>(row.size())) row[why] = oc.cheapest ? Cell{} : Cell(offer_why_not(oc));
      t.add(std::move(row));
    }
    print_csv(std::cout, t, warnings);
    return;
  }
  if (a.output_format.json) {
    nlohmann::json j;
    j["model"] = model_json(m, systems.front());
    j["workload"] = {{"input_tokens", w.input_tokens},
                     {"output_tokens", w.output_tokens},
                     {"prefix_hit_rate", w.prefix_hit_rate},
                    {"assumed_tok_per_s_per_user", w.assumed_speed.value()},
                     {"context_tokens", h.context}};
    j["notes"] = h.notes;
    j["warnings"] = warnings;
    j["rows"] = nlohmann::json::array();  // one per host offer, each with its systems[]
    for (const auto& oc : h.offers) j["rows"].push_back(offer_json(oc, t));
    print_json(std::cout, envelope("prices compare", std::move(j), column_keys(t)));
    return;
  }
  std::string footnotes;
  // People read the weights' format beside the provider, where the host states one
  // ("DeepInfra (fp8)"), so the host's speed keeps its column at 100 columns.
  t.columns.resize(kPeopleColumns);
  t.columns.erase(t.columns.begin() + 1);
  for (const auto& oc : h.offers) {
    const SystemCost* r = shown(oc);
    if (!r) continue;
    std::vector<Cell> row = row_of(oc, *r);
    row.resize(kPeopleColumns);
    // People read the speed compared at in one column, marked when the sheet states none.
    // --speed 1e12 reads 1.000T, not 1e+12; 50 stays 50.
    if (oc.speed_assumed) row[2] = (oc.speed.value() >= 1e5 ? readable(oc.speed.value(), 4) : fmt::format("{:g}", oc.speed.value())) + " assumed";
    if (!oc.cheapest) {
      row[kSystemColumn] = std::string(r->speed_out_of_reach ? "none reaches it"
                           : r->unreachable == "no public price per chip-hour" ? "none priced"
                                                                                : "none holds it");
      row.back() = offer_why_not(oc);
      footnotes += fmt::format("{}: {}\n", oc.offer.provider, offer_why_not(oc));
    }
    if (oc.weights_dtype != "checkpoint") row[0] = fmt::format("{} ({})", oc.offer.provider, oc.weights_dtype);
    row.erase(row.begin() + 1);
    t.add(std::move(row));
  }
  std::cout << fmt::format(
      "chalk prices compare: hosts of {} beside chalk's cost at their speed (engine step)\n"
      "workload    {} input ({}% cache hits) + {} output tokens per request, decode context {}\n"
      "each row    a host's offer, and the cheapest of {} systems at its tok/s per user\n"
      "            (none stated: {} tok/s assumed, --speed), at full utilization, no margin\n"
      "margin      1 - cost / price; break-even util = cost / price (blended $/Mtok)\n"
      "b-e batch   the batch whose output cost equals the host's output price\n"
      "weights     the checkpoint's formats, or the host's stated quantization beside its name\n\n",
      m.name, w.input_tokens, format_number(100 * w.prefix_hit_rate, 3), w.output_tokens, h.context, systems.size(),
      w.assumed_speed.value() >= 1e5 ? readable(w.assumed_speed.value(), 4) : fmt::format("{:g}", w.assumed_speed.value()));
  print_table(std::cout, t);
  if (!footnotes.empty()) std::cout << "\n" << footnotes;
  if (!warnings.empty()) std::cout << "\n";
  for (const auto& x : warnings) std::cout << "warning     " << x << '\n';
  std::cout << "\n--json carries every system (each row's systems[]); sources and dates: --csv, --json or data/prices/hosts/" << m.name << ".json\n";
}

}  // namespace chalk::cli::prices_cli
