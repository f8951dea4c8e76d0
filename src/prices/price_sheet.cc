// Price sheets: the "chalk-prices/1" format (docs/prices.md), the built-in catalog
// (data/prices/) and validation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/prices/prices.h"
#include "chalk/io/embedded.h"
#include "chalk/io/json_util.h"

namespace chalk {
namespace {

using detail::json;
using detail::Obj;

/// A long-context threshold beyond any context window (2^30 tokens; the largest offered is 10M).
constexpr int64_t kMaxThresholdTokens = int64_t{1} << 30;

std::string sheet_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string sheet_stem(std::string_view path) {
  const auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(base.substr(0, base.rfind('.')));
}

/// A price or a multiplier of a base price: exactly one of `<stem>_usd_per_mtok` and
/// `<stem>_multiplier` (when `multiplier_key` is given).
std::optional<UsdPerToken> price_or_multiple(const Obj& o, const std::string& stem, std::optional<UsdPerToken> base,
                                             bool required, const char* multiplier_key = nullptr) {
  const std::string price_key = stem + "_usd_per_mtok";
  const std::string mult_key = multiplier_key ? multiplier_key : stem + "_multiplier";
  const bool has_price = o.has(price_key.c_str());
  const bool has_mult = o.has(mult_key.c_str());
  if (has_price && has_mult) {
    throw InputError(o.field(mult_key.c_str()), "give either " + price_key + " or " + mult_key + ", not both");
  }
  if (has_price) return usd_per_million_tokens(o.number(price_key.c_str()));
  if (has_mult) {
    const double m = o.number(mult_key.c_str());
    if (!(m > 0)) throw InputError(o.field(mult_key.c_str()), "must be a positive multiplier, got " + sheet_num(m));
    if (!base) throw InputError(o.field(mult_key.c_str()), "multiplies a base price the sheet does not give");
    return *base * m;
  }
  if (required) throw InputError(o.field(price_key.c_str()), "missing required field (or give " + mult_key + ")");
  return std::nullopt;
}

const json& array_at(const Obj& o, const char* key) {
  const json& v = o.raw(key);
  if (!v.is_array()) throw InputError(o.field(key), "expected a list, got " + std::string(v.type_name()));
  return v;
}

std::string index_path(const Obj& o, const char* key, size_t i) { return o.field(key) + "[" + std::to_string(i) + "]."; }

ServiceTierKind parse_tier_kind(const std::string& s, const std::string& field) {
  if (s == "priority") return ServiceTierKind::priority;
  if (s == "fast") return ServiceTierKind::fast;
  if (s == "flex") return ServiceTierKind::flex;
  throw InputError(field, "unknown service tier '" + s + "'; expected one of: priority, fast, flex");
}

/// x to 12 significant digits (hides binary noise such as 2.4999999999999998e-7 from
/// USD/token -> USD/Mtok), through decimal text: exact at every magnitude a double has.
/// Scaling by 10^(11 - log10 x) instead overflows to inf for x below 1e-297 and wrote
/// NaN, printed by nlohmann as null.
double round_sig(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  return std::strtod(buf, nullptr);
}

double mtok(UsdPerToken p) { return round_sig(to_usd_per_mtok(p)); }

/// data/prices/<sub>/...: another format (hosts/, "chalk-hosts/1", hosts.h), not a sheet.
bool in_subfolder(std::string_view path) { return path.find('/', std::string_view("prices/").size()) != std::string_view::npos; }

}  // namespace

std::string_view to_string(ServiceTierKind k) {
  switch (k) {
    case ServiceTierKind::priority: return "priority";
    case ServiceTierKind::fast: return "fast";
    case ServiceTierKind::flex: return "flex";
  }
  return "?";
}

PriceSheet price_sheet_from_json(std::string_view text, const std::string& where) {
  const auto j = detail::parse_json(text, where);
  const Obj c(j, where + ": ");
  c.only({"format", "name", "provider", "model", "date", "source", "notes", "input_usd_per_mtok", "output_usd_per_mtok",
          "long_context", "cache", "batch", "service_tiers", "off_peak"});
  const std::string format = c.string("format");
  if (format != "chalk-prices/1") throw InputError(c.field("format"), "unknown format '" + format + "'; expected chalk-prices/1");
  PriceSheet s;
  s.name = c.string("name");
  s.provider = c.string("provider");
  s.model = c.string("model");
  s.date = c.string("date");
  s.source = c.string("source");
  s.notes = c.opt_string("notes").value_or("");
  s.input = usd_per_million_tokens(c.number("input_usd_per_mtok"));
  s.output = usd_per_million_tokens(c.number("output_usd_per_mtok"));

  std::optional<UsdPerToken> base_read;
  std::optional<Obj> cache = c.opt_object("cache");
  if (cache) {
    cache->only({"read_usd_per_mtok", "writes", "storage_usd_per_mtok_per_hour"});
    if (auto r = cache->opt_number("read_usd_per_mtok")) s.cache.read = base_read = usd_per_million_tokens(*r);
    if (cache->has("writes")) {
      const json& w = array_at(*cache, "writes");
      for (size_t i = 0; i < w.size(); ++i) {
        const Obj o(w[i], index_path(*cache, "writes", i));
        o.only({"duration_s", "usd_per_mtok"});
        s.cache.writes.push_back({seconds(o.number("duration_s")), usd_per_million_tokens(o.number("usd_per_mtok"))});
      }
    }
    if (auto st = cache->opt_number("storage_usd_per_mtok_per_hour")) s.cache.storage = usd_per_mtok_per_hour(*st);
  }

  if (c.has("long_context")) {
    const json& tiers = array_at(c, "long_context");
    for (size_t i = 0; i < tiers.size(); ++i) {
      const Obj o(tiers[i], index_path(c, "long_context", i));
      o.only({"threshold_tokens", "input_usd_per_mtok", "input_multiplier", "output_usd_per_mtok", "output_multiplier",
              "cache_read_usd_per_mtok", "cache_multiplier"});
      LongContextTier t;
      t.threshold_tokens = o.integer_in("threshold_tokens", 1, kMaxThresholdTokens);
      t.input = *price_or_multiple(o, "input", s.input, true);
      t.output = *price_or_multiple(o, "output", s.output, true);
      t.cache_read = price_or_multiple(o, "cache_read", base_read, false, "cache_multiplier");
      const UsdPerToken below_input = i == 0 ? s.input : s.long_context.back().input;
      const UsdPerToken below_output = i == 0 ? s.output : s.long_context.back().output;
      // A long-context tier is a price step up: input strictly dearer than the tier below
      // (price inference reads the KV size from that step; a step of 0 or less has none),
      // output no cheaper.
      // (A negative base is validate()'s to name.)
      if (below_input.value() > 0 && !(t.input > below_input)) {
        throw InputError(o.field("input_usd_per_mtok"), "a long-context tier must price input above the tier below (" +
                                                              sheet_num(to_usd_per_mtok(below_input)) + "), got " + sheet_num(to_usd_per_mtok(t.input)));
      }
      if (below_output.value() > 0 && t.output < below_output) {
        throw InputError(o.field("output_usd_per_mtok"), "a long-context tier must not price output below the tier below (" +
                                                               sheet_num(to_usd_per_mtok(below_output)) + "), got " + sheet_num(to_usd_per_mtok(t.output)));
      }
      s.long_context.push_back(t);
    }
  }

  if (auto b = c.opt_object("batch")) {
    b->only({"multiplier", "source"});
    s.batch = BatchDiscount{b->number("multiplier"), b->opt_string("source").value_or("")};
  }

  if (c.has("service_tiers")) {
    const json& tiers = array_at(c, "service_tiers");
    for (size_t i = 0; i < tiers.size(); ++i) {
      const Obj o(tiers[i], index_path(c, "service_tiers", i));
      o.only({"name", "multiplier", "input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok", "stated_speedup",
              "stated_min_output_tok_per_s", "source"});
      ServiceTier t;
      t.kind = parse_tier_kind(o.string("name"), o.field("name"));
      if (o.has("multiplier")) {
        if (o.has("input_usd_per_mtok") || o.has("output_usd_per_mtok") || o.has("cache_read_usd_per_mtok")) {
          throw InputError(o.field("multiplier"), "give either multiplier or the tier's prices, not both");
        }
        const double m = o.number("multiplier");
        if (!(m > 0)) throw InputError(o.field("multiplier"), "must be a positive multiplier, got " + sheet_num(m));
        t.input = s.input * m;
        t.output = s.output * m;
        if (base_read) t.cache_read = *base_read * m;
      } else {
        t.input = usd_per_million_tokens(o.number("input_usd_per_mtok"));
        t.output = usd_per_million_tokens(o.number("output_usd_per_mtok"));
        if (auto r = o.opt_number("cache_read_usd_per_mtok")) t.cache_read = usd_per_million_tokens(*r);
      }
      t.stated_speedup = o.opt_number("stated_speedup");
      if (auto v = o.opt_number("stated_min_output_tok_per_s")) t.stated_min_output_speed = TokensPerSecond(*v);
      t.source = o.opt_string("source").value_or("");
      s.service_tiers.push_back(t);
    }
  }

  if (auto o = c.opt_object("off_peak")) {
    o->only({"window", "multiplier", "input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok", "source"});
    OffPeak p;
    p.window = o->string("window");
    if (o->has("multiplier")) {
      if (o->has("input_usd_per_mtok") || o->has("output_usd_per_mtok") || o->has("cache_read_usd_per_mtok")) {
        throw InputError(o->field("multiplier"), "give either multiplier or the off-peak prices, not both");
      }
      const double m = o->number("multiplier");
      if (!(m > 0)) throw InputError(o->field("multiplier"), "must be a positive multiplier, got " + sheet_num(m));
      p.input = s.input * m;
      p.output = s.output * m;
      if (base_read) p.cache_read = *base_read * m;
    } else {
      p.input = usd_per_million_tokens(o->number("input_usd_per_mtok"));
      p.output = usd_per_million_tokens(o->number("output_usd_per_mtok"));
      if (auto r = o->opt_number("cache_read_usd_per_mtok")) p.cache_read = usd_per_million_tokens(*r);
    }
    p.source = o->opt_string("source").value_or("");
    s.off_peak = p;
  }
  validate(s, where);
  return s;
}

void validate(const PriceSheet& s, const std::string& where) {
  auto field = [&](const std::string& f) { return where + ": " + f; };
  auto positive = [&](UsdPerToken p, const std::string& f) {
    const double v = to_usd_per_mtok(p);
    if (!std::isfinite(v) || !(v > 0)) throw InputError(field(f), "must be a positive price in USD per 1M tokens, got " + sheet_num(v));
  };
  auto non_negative = [&](std::optional<UsdPerToken> p, const std::string& f) {
    if (!p) return;
    const double v = to_usd_per_mtok(*p);
    if (!std::isfinite(v) || !(v >= 0)) throw InputError(field(f), "must be a price >= 0 USD per 1M tokens, got " + sheet_num(v));
  };
  auto text = [&](const std::string& v, const std::string& f) {
    if (v.empty()) throw InputError(field(f), "must not be empty");
  };
  text(s.name, "name");
  text(s.provider, "provider");
  text(s.model, "model");
  text(s.date, "date");
  text(s.source, "source");
  positive(s.input, "input_usd_per_mtok");
  positive(s.output, "output_usd_per_mtok");
  int64_t previous = 0;
  for (size_t i = 0; i < s.long_context.size(); ++i) {
    const auto& t = s.long_context[i];
    const std::string p = "long_context[" + std::to_string(i) + "].";
    if (t.threshold_tokens <= 0 || t.threshold_tokens > kMaxThresholdTokens) {
      throw InputError(field(p + "threshold_tokens"), "must be a number of prompt tokens in 1.." + std::to_string(kMaxThresholdTokens) +
                                                          ", got " + std::to_string(t.threshold_tokens));
    }
    if (t.threshold_tokens <= previous) {
      throw InputError(field(p + "threshold_tokens"), "thresholds must ascend; " + std::to_string(t.threshold_tokens) +
                                                          " follows " + std::to_string(previous));
    }
    previous = t.threshold_tokens;
    positive(t.input, p + "input_usd_per_mtok");
    positive(t.output, p + "output_usd_per_mtok");
    non_negative(t.cache_read, p + "cache_read_usd_per_mtok");
  }
  non_negative(s.cache.read, "cache.read_usd_per_mtok");
  double previous_s = 0;
  for (size_t i = 0; i < s.cache.writes.size(); ++i) {
    const auto& w = s.cache.writes[i];
    const std::string p = "cache.writes[" + std::to_string(i) + "].";
    if (!std::isfinite(w.duration.value()) || !(w.duration.value() > 0)) {
      throw InputError(field(p + "duration_s"), "must be a positive number of seconds, got " + sheet_num(w.duration.value()));
    }
    if (w.duration.value() <= previous_s) {
      throw InputError(field(p + "duration_s"), "durations must ascend; " + sheet_num(w.duration.value()) + " follows " + sheet_num(previous_s));
    }
    previous_s = w.duration.value();
    non_negative(w.price, p + "usd_per_mtok");
  }
  if (s.cache.storage) {
    const double v = to_usd_per_mtok_per_hour(*s.cache.storage);
    if (!std::isfinite(v) || !(v >= 0)) {
      throw InputError(field("cache.storage_usd_per_mtok_per_hour"), "must be >= 0 USD per 1M tokens per hour, got " + sheet_num(v));
    }
  }
  if (s.batch && !(s.batch->multiplier > 0 && s.batch->multiplier <= 1)) {
    throw InputError(field("batch.multiplier"), "must be a discount multiplier in (0, 1], got " + sheet_num(s.batch->multiplier));
  }
  for (size_t i = 0; i < s.service_tiers.size(); ++i) {
    const auto& t = s.service_tiers[i];
    const std::string p = "service_tiers[" + std::to_string(i) + "].";
    positive(t.input, p + "input_usd_per_mtok");
    positive(t.output, p + "output_usd_per_mtok");
    non_negative(t.cache_read, p + "cache_read_usd_per_mtok");
    if (t.stated_speedup && !(*t.stated_speedup > 0)) {
      throw InputError(field(p + "stated_speedup"), "must be a positive speed ratio, got " + sheet_num(*t.stated_speedup));
    }
    if (t.stated_min_output_speed && !(t.stated_min_output_speed->value() > 0)) {
      throw InputError(field(p + "stated_min_output_tok_per_s"), "must be positive, got " + sheet_num(t.stated_min_output_speed->value()));
    }
  }
  if (s.off_peak) {
    text(s.off_peak->window, "off_peak.window");
    positive(s.off_peak->input, "off_peak.input_usd_per_mtok");
    positive(s.off_peak->output, "off_peak.output_usd_per_mtok");
    non_negative(s.off_peak->cache_read, "off_peak.cache_read_usd_per_mtok");
  }
}

std::string price_sheet_to_json(const PriceSheet& s) {
  json j = json::object();
  j["format"] = "chalk-prices/1";
  j["name"] = s.name;
  j["provider"] = s.provider;
  j["model"] = s.model;
  j["date"] = s.date;
  j["source"] = s.source;
  if (!s.notes.empty()) j["notes"] = s.notes;
  j["input_usd_per_mtok"] = mtok(s.input);
  j["output_usd_per_mtok"] = mtok(s.output);
  if (!s.long_context.empty()) {
    json arr = json::array();
    for (const auto& t : s.long_context) {
      json o = {{"threshold_tokens", t.threshold_tokens}, {"input_usd_per_mtok", mtok(t.input)}, {"output_usd_per_mtok", mtok(t.output)}};
      if (t.cache_read) o["cache_read_usd_per_mtok"] = mtok(*t.cache_read);
      arr.push_back(o);
    }
    j["long_context"] = arr;
  }
  if (s.cache.read || !s.cache.writes.empty() || s.cache.storage) {
    json cache = json::object();
    if (s.cache.read) cache["read_usd_per_mtok"] = mtok(*s.cache.read);
    if (!s.cache.writes.empty()) {
      json arr = json::array();
      for (const auto& w : s.cache.writes) arr.push_back({{"duration_s", round_sig(w.duration.value())}, {"usd_per_mtok", mtok(w.price)}});
      cache["writes"] = arr;
    }
    if (s.cache.storage) cache["storage_usd_per_mtok_per_hour"] = round_sig(to_usd_per_mtok_per_hour(*s.cache.storage));
    j["cache"] = cache;
  }
  if (s.batch) {
    j["batch"] = {{"multiplier", s.batch->multiplier}};
    if (!s.batch->source.empty()) j["batch"]["source"] = s.batch->source;
  }
  if (!s.service_tiers.empty()) {
    json arr = json::array();
    for (const auto& t : s.service_tiers) {
      json o = {{"name", std::string(to_string(t.kind))}, {"input_usd_per_mtok", mtok(t.input)}, {"output_usd_per_mtok", mtok(t.output)}};
      if (t.cache_read) o["cache_read_usd_per_mtok"] = mtok(*t.cache_read);
      if (t.stated_speedup) o["stated_speedup"] = *t.stated_speedup;
      if (t.stated_min_output_speed) o["stated_min_output_tok_per_s"] = t.stated_min_output_speed->value();
      if (!t.source.empty()) o["source"] = t.source;
      arr.push_back(o);
    }
    j["service_tiers"] = arr;
  }
  if (s.off_peak) {
    json o = {{"window", s.off_peak->window}, {"input_usd_per_mtok", mtok(s.off_peak->input)}, {"output_usd_per_mtok", mtok(s.off_peak->output)}};
    if (s.off_peak->cache_read) o["cache_read_usd_per_mtok"] = mtok(*s.off_peak->cache_read);
    if (!s.off_peak->source.empty()) o["source"] = s.off_peak->source;
    j["off_peak"] = o;
  }
  return j.dump(2) + "\n";
}

std::vector<std::string> builtin_price_sheet_names() {
  std::vector<std::string> out;
  for (auto p : detail::embedded_files("prices/")) {
    if (in_subfolder(p)) continue;
    out.push_back(sheet_stem(p));
  }
  std::sort(out.begin(), out.end());
  return out;
}

PriceSheet load_price_sheet(const std::string& name_or_path) {
  for (auto p : detail::embedded_files("prices/")) {
    if (!in_subfolder(p) && sheet_stem(p) == name_or_path) return price_sheet_from_json(*detail::embedded_file(p), "built-in prices " + name_or_path);
  }
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || name_or_path.find(".json") != std::string::npos ||
      std::filesystem::exists(name_or_path, ec)) {
    return price_sheet_from_json(read_file(name_or_path), name_or_path);
  }
  std::string list;
  for (const auto& n : builtin_price_sheet_names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError("sheet", "unknown price sheet '" + name_or_path + "'; expected a path or one of: " + list);
}

}  // namespace chalk
