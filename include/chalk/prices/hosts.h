// Open-model hosting offers as values: the "chalk-hosts/1" format (docs/file-formats.md,
// "Host sheets"), one file per catalog model under data/prices/hosts/, and its reader.
// Where the model is known exactly, a host's price and speed say what it must run
// (docs/prices.md, "Comparing hosts"; the comparison is in compare.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/base/units.h"

namespace chalk {

/// One provider's serverless offer of one model, each figure with its source and date.
struct HostOffer {
  std::string provider;      ///< "Groq", "Together", ...
  std::string served_model;  ///< the provider's own name for what it serves
  std::string price_date, price_source;
  UsdPerToken input, output;                   ///< standard (cache-miss) input; output
  std::optional<UsdPerToken> cache_read;       ///< a cached input token; empty: not stated
  /// Output tokens/s one request streams (advertised or benchmarked); empty: not stated.
  std::optional<TokensPerSecond> tok_per_s_per_user;
  std::optional<Seconds> ttft;                 ///< time to first token; empty: not stated
  std::string speed_date, speed_source;        ///< set when a speed or TTFT is
  /// The weights' format served, a chalk dtype name ("fp8", "bf16"); empty: not stated.
  std::string quantization, quantization_source;
  std::string hardware, hardware_source;          ///< empty: not stated
};

/// Every offer found for one catalog model.
struct HostSheet {
  std::string model;  ///< a built-in model name (`chalk models`)
  std::string notes;  ///< what was looked for and not found
  std::vector<HostOffer> offers;
};

/// Parses "chalk-hosts/1". Unknown keys are errors; every offer needs provider,
/// served_model, price_date, price_source and input and output prices > 0; a cache read,
/// speed or TTFT is > 0 when given; a speed or TTFT needs speed_date and speed_source, a
/// quantization (a dtype chalk knows) its quantization_source, a hardware its
/// hardware_source. Throws InputError
/// naming `where` and the field ("x.json: offers[1].output_usd_per_mtok").
HostSheet host_sheet_from_json(std::string_view json_text, const std::string& where);

/// Models with a built-in host sheet (data/prices/hosts/), sorted.
std::vector<std::string> builtin_host_sheet_models();

/// The built-in host sheet of a catalog model name (as `chalk models` spells it), or
/// empty when there is none.
std::optional<HostSheet> builtin_host_sheet(const std::string& model);

}  // namespace chalk
