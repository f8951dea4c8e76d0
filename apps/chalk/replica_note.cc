// The note saying which replica size a command chose and why (replica_note_json / _text):
// the chosen point, the runner-up, and the rule, for the decode, serving and prefill rules.
// Split from deployment_describe.cc by concept.
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "chalk/io/io.h"
#include "deployment_options.h"
#include "table.h"

namespace chalk::cli {
namespace {
/// `stated_batch`: the point is at a batch the user chose (a speed floor's or -b's), not the memory-full one.
nlohmann::json replica_point_json(const ModePoint& p, bool stated_batch = false) {
  return {{"chips", p.n_chips},
          {"layout", p.layout.empty() ? nlohmann::json() : nlohmann::json(p.layout)},
          {"batch", p.batch},
          {"t_step_ms", to_ms(p.step.t_step)},
          {"tok_per_s_per_user", p.tokens_per_s_per_user.value()},
          {"tok_per_s_per_chip", p.tokens_per_s_per_chip.value()},
          {"cost_usd_per_mtok", p.cost_per_token ? nlohmann::json(to_usd_per_mtok(*p.cost_per_token)) : nlohmann::json()},
          // false when a smaller batch was cheaper: the memory-full one pads to a larger CUDA graph
          {"memory_full", !stated_batch && (p.memory_full_batch == 0 || p.batch == p.memory_full_batch)}};
}

/// `speed_floor` > 0: the point is the largest batch at that speed, not the memory-full one.
/// `at_batch` > 0: the batch asked (-b).
std::string replica_point_text(const ModePoint& p, double speed_floor = 0, int64_t at_batch = 0) {
  const std::string fills = speed_floor > 0 ? fmt::format("the largest at {} tok/s per user or more", fmt::format("{:g}", speed_floor))
                            : at_batch > 0 ? std::string("the batch asked, -b")
                            : p.memory_full_batch == 0 || p.batch == p.memory_full_batch
                                ? std::string("fills HBM")
                                : fmt::format("cheaper than the {} that fill HBM, which pad to a larger CUDA graph", p.memory_full_batch);
  // Decode figures, said so: prefill's replica line printed them bare (review 3 L13).
  std::string s = fmt::format("{} at batch {} ({}): decode {} tok/s per chip, {} tok/s per user", counted(p.n_chips, "chip"), p.batch, fills,
                              format_number(p.tokens_per_s_per_chip.value(), 4), format_number(p.tokens_per_s_per_user.value(), 3));
  if (p.cost_per_token) s += fmt::format(", ${}/Mtok", format_number(to_usd_per_mtok(*p.cost_per_token), 4));
  return s;
}

/// A prefill point (ReplicaRule::cheapest_prefill): its TTFT, prompt tokens per chip and cost.
nlohmann::json prefill_point_json(const PrefillReplicaPoint& p) {
  return {{"chips", p.n_chips},
          {"layout", p.layout.empty() ? nlohmann::json() : nlohmann::json(p.layout)},
          {"batch", p.batch},
          {"prompt_tokens", p.prompt},
          {"ttft_ms", to_ms(p.ttft)},
          {"tok_per_s_per_chip", p.tokens_per_s_per_chip.value()},
          {"cost_usd_per_mtok", p.cost_per_token ? nlohmann::json(to_usd_per_mtok(*p.cost_per_token)) : nlohmann::json()}};
}

std::string prefill_point_text(const PrefillReplicaPoint& p) {
  std::string s = fmt::format("{} ({}): prefill of batch {} at prompt {}, TTFT {} ms, {} prompt tok/s per chip", counted(p.n_chips, "chip"),
                              p.layout, p.batch, p.prompt, format_number(to_ms(p.ttft), 4), format_number(p.tokens_per_s_per_chip.value(), 4));
  if (p.cost_per_token) s += fmt::format(", ${}/Mtok in", format_number(to_usd_per_mtok(*p.cost_per_token), 4));
  return s;
}

std::string replica_rule_text(const ReplicaNote& n) {
  if (!n.fallback.empty()) return n.fallback;
  if (n.prefill) {
    std::string sizes;
    for (int64_t s : n.replica_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
    return fmt::format("the replica {} of {} chips at batch {} of {}-token prompts, each with its layouts that hold the largest "
                       "batch priced (a prefill's cost, not the decode cost floor of `chalk prices forward`)",
                       n.prefill->cost_per_token ? "cheapest per prompt token" : "with the most prompt tok/s per chip (no price)", sizes,
                       n.prefill->batch, n.prefill->prompt);
  }
  if (n.rule == ReplicaRule::smallest) {
    // Review 9 M2: this said "the fastest small-batch step", and it is the slowest (70B on
    // H100 at batch 1: 29.7 ms on 2 chips, 17.7 on 4, 11.7 on 8): the fewest chips, what
    // one replica of the model needs; a larger -n steps faster.
    constexpr const char* kWhat = ": the fewest chips, for latency per replica (a larger -n steps faster at small batch)";
    if (n.at_batch > 0) {
      // Review 10 M2: with -b, the smallest replica that holds the largest batch listed.
      return fmt::format("the smallest replica that holds batch {} at {} tokens, the largest of -b at the longest -s that a replica within "
                         "the scale-up domain holds{}", n.at_batch, n.context, kWhat);
    }
    if (!n.stated_layout.empty()) return fmt::format("the smallest replica that runs {} and holds the weights and one sequence{}", n.stated_layout, kWhat);
    return fmt::format("the smallest replica that holds the weights and one sequence{}", kWhat);
  }
  std::string sizes;
  for (int64_t s : n.replica_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
  // Without a price nothing is ranked by cost: the same search, named by what it compared
  // (tokens per chip, which is cost per token at any one price per chip) (issue 30, Gaudi 3).
  if (!n.choice.cost_per_token) {
    return fmt::format("the replica size with the most tok/s per chip at context {} of {} chips, each with its best layout at its "
                       "cheapest batch up to the one that fills its HBM (no price: not ranked by cost)",
                       n.context, sizes);
  }
  if (n.at_batch > 0) {
    // Issue 30 item 1: the page's cost headline and `prices forward -b` (cheapest_serving_replica).
    return fmt::format("the cheapest replica size at context {} of {} chips whose HBM holds batch {} (-b), each with its best "
                       "layout at that batch",
                       n.context, sizes, n.at_batch);
  }
  if (n.min_tok_per_s_per_user > 0) {
    // Review 3 M4: the headline at a speed a host sells, the floor `prices compare` assumes.
    return fmt::format("the cheapest replica size at context {} of {} chips that streams at least {} tok/s per user "
                       "(--min-tok-per-s-per-user; 0 prices the memory-full batch), each with its best layout at the largest "
                       "batch that does",
                       n.context, sizes, fmt::format("{:g}", n.min_tok_per_s_per_user));
  }
  return fmt::format("the cheapest replica size at context {} of {} chips, each with its best layout at its cheapest "
                     "batch up to the one that fills its HBM (the cost floor of `chalk serving modes`)",
                     n.context, sizes);
}
}  // namespace

nlohmann::json replica_note_json(const std::optional<ReplicaNote>& note) {
  if (!note) return nullptr;
  const ReplicaNote& n = *note;
  if (n.prefill) {
    return {{"rule", "cheapest_prefill"},
            {"why", n.pipeline.empty() ? replica_rule_text(n) : replica_rule_text(n) + "; " + n.pipeline},
            {"context_tokens", n.context},
            {"replica_sizes", n.replica_sizes},
            {"choice", prefill_point_json(*n.prefill)},
            {"runner_up", n.prefill_runner_up ? prefill_point_json(*n.prefill_runner_up) : nlohmann::json()},
            {"pp", n.pp},
            {"min_tok_per_s_per_user", nlohmann::json()}};
  }
  return {{"rule", n.rule != ReplicaRule::smallest && n.fallback.empty() ? "cheapest" : "smallest"},
          {"why", n.pipeline.empty() ? replica_rule_text(n) : replica_rule_text(n) + "; " + n.pipeline},
          {"context_tokens", n.context},
          {"replica_sizes", n.replica_sizes},
          {"choice", replica_point_json(n.choice, n.min_tok_per_s_per_user > 0 || n.at_batch > 0)},
          {"runner_up", n.runner_up ? replica_point_json(*n.runner_up, n.at_batch > 0) : nlohmann::json()},
          {"pp", n.pp},
          {"min_tok_per_s_per_user", n.min_tok_per_s_per_user > 0 ? nlohmann::json(n.min_tok_per_s_per_user) : nlohmann::json()}};
}

std::string replica_note_text(const std::optional<ReplicaNote>& note) {
  if (!note) return "";
  const ReplicaNote& n = *note;
  if (n.prefill) {
    std::string s = fmt::format("replica     {}: {}; -n sets the chips.\n", counted(n.prefill->n_chips, "chip"), replica_rule_text(n));
    s += "            chosen: " + prefill_point_text(*n.prefill) + "\n";
    if (n.prefill_runner_up) s += "            runner-up: " + prefill_point_text(*n.prefill_runner_up) + "\n";
    if (!n.pipeline.empty()) s += "            " + n.pipeline + "\n";
    return s;
  }
  // The rule is a sentence, and each point below it a labelled item (review 11a item 5: "-n sets
  // the chips chosen 8 chips at batch 64" read as one run-on sentence).
  std::string s = fmt::format("replica     {}: {}; -n sets the chips.\n", counted(n.choice.n_chips, "chip"), replica_rule_text(n));
  // A pipeline beside one replica on the same chips: each line names its layout (review 2 H1).
  const bool named = n.pp > 1 || !n.pipeline.empty();
  auto layout = [&](const ModePoint& p) { return named && !p.layout.empty() ? p.layout + ", " : std::string(); };
  s += "            chosen: " + layout(n.choice) + replica_point_text(n.choice, n.min_tok_per_s_per_user, n.at_batch) + "\n";
  if (n.runner_up) {
    // Beside a pipeline the one replica without stages is the runner-up whatever the rule (review 4 M2).
    const char* label = n.pp > 1                                ? "runner-up:"
                        : n.min_tok_per_s_per_user > 0              ? "without the speed floor (the cost floor, for offline batch work):"
                        : n.rule != ReplicaRule::smallest           ? "runner-up:"
                        : n.runner_up->cost_per_token               ? "cheapest:"
                                                                    : "most tok/s per chip:";
    s += fmt::format("            {} {}{}\n", label, layout(*n.runner_up), replica_point_text(*n.runner_up, 0, n.at_batch));
  }
  if (!n.pipeline.empty()) s += "            " + n.pipeline + "\n";
  return s;
}

}  // namespace chalk::cli
