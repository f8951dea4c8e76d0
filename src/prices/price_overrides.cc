// A sheet's base prices replaced with its derived prices kept in ratio, and the remarks on
// prices that are valid but contradict the lecture's reading of them (price_sheet.h).
#include <cstdio>

#include "chalk/prices/price_sheet.h"

namespace chalk {
namespace {

std::string usd_text(UsdPerToken p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "$%.4g/Mtok", to_usd_per_mtok(p));
  return buf;
}

std::string ratio_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3gx", x);
  return buf;
}

}  // namespace

std::vector<std::string> override_base_prices(PriceSheet& s, std::optional<UsdPerToken> input, std::optional<UsdPerToken> output) {
  std::vector<std::string> moved;
  const double in = input && s.input.value() > 0 ? input->value() / s.input.value() : 1.0;
  const double out = output && s.output.value() > 0 ? output->value() / s.output.value() : 1.0;
  auto scale = [&](UsdPerToken& p, double f, const std::string& what, const char* base) {
    if (f == 1.0) return;
    const UsdPerToken was = p;
    p = UsdPerToken(p.value() * f);
    moved.push_back(what + " " + usd_text(was) + " -> " + usd_text(p) + " (kept at the sheet's " + ratio_text(was.value() / (base[0] == 'i' ? s.input : s.output).value()) +
                    " of " + base + ")");
  };
  auto scale_opt = [&](std::optional<UsdPerToken>& p, double f, const std::string& what) {
    if (p) scale(*p, f, what, "input");
  };
  scale_opt(s.cache.read, in, "cache read");
  for (auto& w : s.cache.writes) scale(w.price, in, "cache write (" + std::to_string(static_cast<int64_t>(w.duration.value())) + " s)", "input");
  for (auto& t : s.long_context) {
    const std::string at = "long-context (> " + std::to_string(t.threshold_tokens) + " tokens) ";
    scale(t.input, in, at + "input", "input");
    scale(t.output, out, at + "output", "output");
    scale_opt(t.cache_read, in, at + "cache read");
  }
  for (auto& t : s.service_tiers) {
    const std::string at = std::string(to_string(t.kind)) + " tier ";
    scale(t.input, in, at + "input", "input");
    scale(t.output, out, at + "output", "output");
    scale_opt(t.cache_read, in, at + "cache read");
  }
  if (s.off_peak) {
    scale(s.off_peak->input, in, "off-peak input", "input");
    scale(s.off_peak->output, out, "off-peak output", "output");
    scale_opt(s.off_peak->cache_read, in, "off-peak cache read");
  }
  if (input) s.input = *input;
  if (output) s.output = *output;
  return moved;
}

std::vector<std::string> questionable_prices(const PriceSheet& s) {
  std::vector<std::string> out;
  if (s.cache.read && *s.cache.read > s.input) {
    out.push_back("a cache hit (" + usd_text(*s.cache.read) + ") costs more than an uncached input token (" + usd_text(s.input) +
                  "): reading stored KV should cost less than recomputing it (lecture 1:32:51-2:03:48: hits at about 0.1x input say the KV is fetched)");
  }
  for (const auto& w : s.cache.writes) {
    if (w.price < s.input) {
      out.push_back("a " + std::to_string(static_cast<int64_t>(w.duration.value())) + " s cache write (" + usd_text(w.price) +
                    ") costs less than the input it stores (" + usd_text(s.input) + "): a write is a prefill plus the storage");
    }
  }
  for (const auto& t : s.service_tiers) {
    const double m = t.output.value() / s.output.value();
    const bool faster = t.kind == ServiceTierKind::fast || t.kind == ServiceTierKind::priority;
    if (faster ? m < 1 : m > 1) {
      out.push_back("the " + std::string(to_string(t.kind)) + " tier's output is " + ratio_text(m) + " the standard price: " +
                    (faster ? "a faster service runs smaller batches, which cost more per token (lecture opening question)"
                            : "a slower service batches more, which costs less per token"));
    }
  }
  if (s.off_peak && s.off_peak->output > s.output) {
    out.push_back("off-peak output (" + usd_text(s.off_peak->output) + ") costs more than the standard price (" + usd_text(s.output) +
                  "): idle chips at night are cheaper, not dearer");
  }
  return out;
}

}  // namespace chalk
