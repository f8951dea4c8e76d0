// Where the catalog's rental prices come from, and a warning when a choice between chips
// reads prices from more than one source (review 5 M3: the H100's $2.35 is SemiAnalysis's
// rental index of March 2026, the H200's and GB200's $4.54 and the B200's $6.03 Spheron's
// on-demand list of the same month; a comparison across them carries the sources' spread
// as well as the chips').
#pragma once

#include <string>
#include <vector>

#include "chalk/hardware/hardware.h"

namespace chalk {

/// The source a price was read from, as a short key: the reference tag a source ends with
/// ("... Mar 2026 [compux]" -> "[compux]"), or else its text up to the first comma, " (" or
/// ": " and at most its first three words ("RunPod on-demand L4 $0.78/h ..." -> "RunPod
/// on-demand L4"). "" for an empty source.
std::string price_source_key(const std::string& price_source);

/// One line when the priced systems of `systems` (price_per_chip set) read their prices from
/// more than one source (price_source_key): how many, each source's chips at their $/chip-hour,
/// and how to compare on one (a hardware file of one's own, -H FILE). "" when one source or
/// fewer prices. Pure; never throws.
std::string mixed_price_sources_warning(const std::vector<SystemSpec>& systems);

}  // namespace chalk
