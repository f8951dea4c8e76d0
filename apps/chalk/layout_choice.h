// How a command that answers a latency question picks the layout of its replica when the
// user states none (issue 29 / issue 30 item 1): prefill by the least TTFT, simulate by the
// best latency at the stated traffic that is not overloaded; the layout search's decode
// throughput ranking (engine/default_layout.h) is only the tie-break and the order shown.
// Defined in deployment_describe.cc (one unity batch fewer than a file of its own).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chalk/engine/roofline.h"

namespace chalk::cli {

/// One candidate layout measured for the command's question.
struct LayoutScore {
  double value = 0;      ///< the measure, in LayoutChooser::unit; lower is better
  bool usable = true;    ///< false: overloaded at the stated traffic (ranked after every usable one)
  std::string summary;   ///< a few words for people ("TTFT 794 ms", "OVERLOADED, TTFT p50 23 s")
};

/// The question a command asks of each candidate layout.
struct LayoutChooser {
  std::string objective;  ///< e.g. "least TTFT at a 32768-token prompt"
  std::string unit;       ///< the unit of LayoutScore::value: "ms" (JSON score_ms)
  std::function<LayoutScore(const Deployment&)> score;
};

/// What was chosen and what came second ("layout_choice" in JSON, docs/output-schema.md).
struct LayoutNote {
  std::string objective, unit;
  std::string layout;  ///< describe_layout of the choice
  LayoutScore choice;
  std::optional<std::string> runner_up_layout;
  std::optional<LayoutScore> runner_up;
  int64_t candidates = 0;  ///< fitting single-replica layouts compared
};

/// The candidate that answers `chooser` best among `candidates` (deployments of the same
/// model on the same chips, in the layout search's throughput order): usable ones first,
/// then the least value; ties keep the earlier. Fills *note. `candidates` must be non-empty.
std::size_t choose_layout(const std::vector<Deployment>& candidates, const LayoutChooser& chooser, LayoutNote* note);

/// The "layout_choice" object (docs/output-schema.md): objective, layouts_compared, chosen
/// and next_best ({layout, score_ms, overloaded}; next_best null with one candidate); null
/// when the layout was stated or fewer than two layouts fit (nothing compared).
nlohmann::json layout_note_json(const std::optional<LayoutNote>& note);

/// "layout      ...\n" for people; empty when there is no note.
std::string layout_note_text(const std::optional<LayoutNote>& note);

}  // namespace chalk::cli
