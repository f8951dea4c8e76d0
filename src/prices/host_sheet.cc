// Host sheets: the "chalk-hosts/1" format (docs/file-formats.md, "Host sheets") and the
// built-in catalog under data/prices/hosts/.
#include <algorithm>
#include <cstdio>

#include "chalk/base/dtype.h"
#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "chalk/io/json_util.h"
#include "chalk/prices/hosts.h"

namespace chalk {
namespace {

using detail::json;
using detail::Obj;

constexpr std::string_view kHostsDir = "prices/hosts/";

std::string host_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

double host_positive(const Obj& o, const char* key) {
  const double v = o.number(key);
  if (!(v > 0)) throw InputError(o.field(key), "must be > 0, got " + host_num(v));
  return v;
}

std::optional<double> opt_positive(const Obj& o, const char* key) {
  if (!o.opt_number(key)) return std::nullopt;
  return host_positive(o, key);
}

/// A non-empty string, or empty when absent; `needs` (a source) must then be given too.
std::string stated(const Obj& o, const char* key, const char* needs, std::string* need_value) {
  const std::string v = o.opt_string(key).value_or("");
  if (!v.empty()) {
    *need_value = o.opt_string(needs).value_or("");
    if (need_value->empty()) throw InputError(o.field(needs), std::string("missing: every ") + key + " needs its source");
  }
  return v;
}

HostOffer offer_from(const Obj& o) {
  o.only({"provider", "served_model", "price_date", "price_source", "input_usd_per_mtok", "output_usd_per_mtok",
          "cache_read_usd_per_mtok", "output_tok_per_s_per_user", "ttft_s", "speed_date", "speed_source", "quantization",
          "quantization_source", "hardware", "hardware_source"});
  HostOffer f;
  f.provider = o.string("provider");
  f.served_model = o.string("served_model");
  f.price_date = o.string("price_date");
  f.price_source = o.string("price_source");
  if (f.provider.empty()) throw InputError(o.field("provider"), "must not be empty");
  if (f.price_source.empty()) throw InputError(o.field("price_source"), "must not be empty: every price needs its source");
  f.input = usd_per_million_tokens(host_positive(o, "input_usd_per_mtok"));
  f.output = usd_per_million_tokens(host_positive(o, "output_usd_per_mtok"));
  if (auto r = opt_positive(o, "cache_read_usd_per_mtok")) f.cache_read = usd_per_million_tokens(*r);
  if (auto v = opt_positive(o, "output_tok_per_s_per_user")) f.tok_per_s_per_user = TokensPerSecond(*v);
  if (auto t = opt_positive(o, "ttft_s")) f.ttft = seconds(*t);
  if (f.tok_per_s_per_user || f.ttft) {
    f.speed_date = o.opt_string("speed_date").value_or("");
    f.speed_source = o.opt_string("speed_source").value_or("");
    if (f.speed_date.empty()) throw InputError(o.field("speed_date"), "missing: a speed or TTFT needs its date");
    if (f.speed_source.empty()) throw InputError(o.field("speed_source"), "missing: a speed or TTFT needs its source");
  } else if (o.has("speed_date") || o.has("speed_source")) {
    throw InputError(o.field(o.has("speed_date") ? "speed_date" : "speed_source"),
                     "given without output_tok_per_s_per_user or ttft_s");
  }
  f.quantization = stated(o, "quantization", "quantization_source", &f.quantization_source);
  if (!f.quantization.empty()) parse_dtype(f.quantization, o.field("quantization"));  // a format chalk can price
  f.hardware = stated(o, "hardware", "hardware_source", &f.hardware_source);
  return f;
}

std::string host_stem(std::string_view path) {
  const auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(base.substr(0, base.rfind('.')));
}

}  // namespace

HostSheet host_sheet_from_json(std::string_view text, const std::string& where) {
  const auto j = detail::parse_json(text, where);
  const Obj c(j, where + ": ");
  c.only({"format", "model", "notes", "offers"});
  const std::string format = c.string("format");
  if (format != "chalk-hosts/1") throw InputError(c.field("format"), "unknown format '" + format + "'; expected chalk-hosts/1");
  HostSheet s;
  s.model = c.string("model");
  s.notes = c.opt_string("notes").value_or("");
  const json& offers = c.raw("offers");
  if (!offers.is_array() || offers.empty()) throw InputError(c.field("offers"), "expected a non-empty list of offers");
  for (size_t i = 0; i < offers.size(); ++i) {
    s.offers.push_back(offer_from(Obj(offers[i], c.field("offers") + "[" + std::to_string(i) + "].")));
  }
  return s;
}

std::vector<std::string> builtin_host_sheet_models() {
  std::vector<std::string> out;
  for (auto p : detail::embedded_files(kHostsDir)) out.push_back(host_stem(p));
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<HostSheet> builtin_host_sheet(const std::string& model) {
  const auto text = detail::embedded_file(std::string(kHostsDir) + model + ".json");
  if (!text) return std::nullopt;
  return host_sheet_from_json(*text, "built-in hosts " + model);
}

}  // namespace chalk
