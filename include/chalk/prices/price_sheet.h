// API price sheets as values (lecture 1:32:51; docs/sources/prices.md): the "chalk-prices/1"
// format (docs/prices.md), its reader and checks. What a sheet implies is in prices.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/base/units.h"

namespace chalk {

/// Dollars per token per second held: a cache storage price.
using UsdPerTokenSecond = Quantity<Dim{.time = -1, .usd = 1, .token = -1}>;
constexpr UsdPerTokenSecond usd_per_mtok_per_hour(double d) { return UsdPerTokenSecond(d / 1e6 / 3600.0); }
constexpr double to_usd_per_mtok_per_hour(UsdPerTokenSecond p) { return p.value() * 1e6 * 3600.0; }
constexpr double to_usd_per_gb_hour(UsdPerByteSecond p) { return p.value() * 1e9 * 3600.0; }
constexpr UsdPerByteSecond usd_per_gb_hour(double d) { return UsdPerByteSecond(d / 1e9 / 3600.0); }

// ---------------------------------------------------------------------------------------
// Price sheets

/// A price step on prompt length: a request whose input exceeds `threshold_tokens` is
/// billed whole at these prices (Google's and Anthropic's rule, docs/sources/prices.md 1.2, 2.1).
struct LongContextTier {
  int64_t threshold_tokens = 0;
  UsdPerToken input, output;
  std::optional<UsdPerToken> cache_read;
};

/// A cache write that holds the KV for `duration` (Anthropic: 5 minutes, 1 hour).
struct CacheWrite {
  Seconds duration;
  UsdPerToken price;
};

struct CachePrices {
  std::optional<UsdPerToken> read;           ///< a cached input token (a hit)
  std::vector<CacheWrite> writes;            ///< by ascending duration; empty: written at the input price
  std::optional<UsdPerTokenSecond> storage;  ///< per token per second held (Google: per 1M tokens per hour)
};

enum class ServiceTierKind { priority, fast, flex };
std::string_view to_string(ServiceTierKind k);

/// A faster or slower service at other prices (Anthropic fast mode, OpenAI priority and flex).
struct ServiceTier {
  ServiceTierKind kind = ServiceTierKind::priority;
  UsdPerToken input, output;
  std::optional<UsdPerToken> cache_read;
  std::optional<double> stated_speedup;                    ///< output speed vs standard, as stated
  std::optional<TokensPerSecond> stated_min_output_speed;  ///< per-request floor in an SLA
  std::string source;
};

struct BatchDiscount {
  double multiplier = 1;  ///< on input and output, in (0, 1]
  std::string source;
};

/// Cheaper prices in a daily window (DeepSeek, 2025).
struct OffPeak {
  std::string window;
  UsdPerToken input, output;
  std::optional<UsdPerToken> cache_read;
  std::string source;
};

/// One model's API prices at one date. Prices given in a file as multipliers are resolved
/// to prices on loading.
struct PriceSheet {
  std::string name;  ///< catalog key, e.g. "gemini-1.5-pro"
  std::string provider, model, date, source, notes;
  UsdPerToken input, output;                   ///< standard tier, below any long-context step
  std::vector<LongContextTier> long_context;   ///< by ascending threshold
  CachePrices cache;
  std::optional<BatchDiscount> batch;
  std::vector<ServiceTier> service_tiers;
  std::optional<OffPeak> off_peak;
};

/// Parses the "chalk-prices/1" format (docs/prices.md). Unknown keys are errors; every
/// price must be >= 0 (input and output > 0), thresholds > 0 and ascending, multipliers > 0.
/// Throws InputError naming `where` and the field ("x.json: long_context[0].threshold_tokens").
PriceSheet price_sheet_from_json(std::string_view json_text, const std::string& where);

/// Writes a sheet in "chalk-prices/1" (prices resolved; multipliers are not kept).
std::string price_sheet_to_json(const PriceSheet& s);

/// A built-in sheet name (`chalk prices list`) or a path to a chalk-prices file.
PriceSheet load_price_sheet(const std::string& name_or_path);

/// Names of the built-in sheets, sorted.
std::vector<std::string> builtin_price_sheet_names();

/// Checks a sheet built in code or from flags with the rules of price_sheet_from_json.
/// Throws InputError naming `where` and the field.
void validate(const PriceSheet& s, const std::string& where);

/// A sheet with its standard input and output prices replaced (`prices infer NAME
/// --input-usd-per-mtok X`). Every price the sheet derives from them keeps its ratio: cache
/// reads and writes, long-context and service tiers and off-peak prices follow the input
/// price, their output prices the output price. Providers state these as multiples of the
/// base price (Anthropic: 5-minute write 1.25x input, 1-hour write 2x, read 0.1x;
/// docs/sources/prices.md 1.1), so a sheet's absolute figures kept beside a new input price
/// would price a cache write at 3.75x a $1 input. `input`, `output` unset: unchanged.
/// Returns one line per derived price that moved, for the front end to print.
std::vector<std::string> override_base_prices(PriceSheet& s, std::optional<UsdPerToken> input, std::optional<UsdPerToken> output);

/// Prices that are valid but contradict what the lecture reads from them (1:32:51-2:03:48),
/// one remark each: a cache hit dearer than recomputing the prompt (read > input), a cache
/// write cheaper than the input it stores, a fast or priority tier cheaper than standard,
/// a flex or off-peak tier dearer than it. Empty for a sensible sheet.
std::vector<std::string> questionable_prices(const PriceSheet& s);

}  // namespace chalk
