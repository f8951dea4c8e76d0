// Traffic for the request simulator (docs/simulator.md, "Traffic"): arrival processes
// (Poisson, gamma with a stated burstiness, or a trace), request-length distributions, and
// the strict trace CSV reader. Pure functions, deterministic for a given seed: the random
// numbers come from std::mt19937_64 through chalk's own transforms (the standard
// library's distributions differ between implementations).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chalk::sim {

/// A run of tokens that other requests share: the first `tokens` tokens of the token
/// stream named `id` (a system prompt, a few-shot template, a conversation's history).
/// Two requests whose token sequences start with the same segments (same ids, same
/// lengths or one a prefix of the other) start with the same tokens; the prefix cache
/// (docs/simulator.md, "Prefix caching") sees only these identities, never token values.
struct PrefixSegment {
  uint64_t id = 0;
  int64_t tokens = 0;  ///< >= 1
};

/// One request: when it arrives and how long its prompt and its answer are.
struct Request {
  double arrival_s = 0;        ///< seconds from the start of the run
  int64_t input_tokens = 1;    ///< prompt tokens (>= 1)
  int64_t output_tokens = 1;   ///< tokens generated, the first included (>= 1)
  /// What the request's token sequence (the prompt, then the answer) starts with, in
  /// order; the tokens after the segments are the request's own. The segments may run past
  /// the prompt into the answer: a conversation's stream continues with the model's answer,
  /// which the next turn resends. Empty (the default): no structure, nothing shared.
  std::vector<PrefixSegment> prefix{};
  /// The LoRA adapter it names (sim/lora.h), 0..N-1; -1 (the default): the base model.
  int32_t adapter = -1;
};

/// The latest time the simulator's clock takes: 2^33 s (272 years). A double holds a time
/// t to within t x 2^-52, so at 2^33 s it resolves 2^-19 s (1.9 us); beyond it a decode
/// step of a few ms is rounded away and TTFT, TPOT and latency read 0 (issue 28: a trace in
/// epoch microseconds). Arrivals past it are refused, naming the field.
inline constexpr double max_clock_s = 8589934592.0;

/// The sentence errors use for max_clock_s ("simulation clock's reach of 8589934592 s (...)").
std::string clock_limit_text();

/// How request lengths are drawn.
struct LengthDist {
  enum class Kind { fixed, uniform, lognormal };
  Kind kind = Kind::fixed;
  int64_t value = 1;   ///< fixed: the length; lognormal: the mean (tokens)
  int64_t min = 1;     ///< uniform: lowest; lognormal: draws are clamped to [min, max]
  int64_t max = 0;     ///< uniform: highest; lognormal: cap (0 = 64 x the mean)
  double sigma = 0;    ///< lognormal: standard deviation of ln(length)
};

/// Parses "2048", "uniform:MIN:MAX" or "lognormal:MEAN:SIGMA[:MAX]" (tokens; SIGMA of the
/// natural log). `field` names the input in errors. Throws InputError naming the field, the
/// text and the expected form; lengths must be 1..10,000,000.
LengthDist parse_length(std::string_view text, const std::string& field);

/// The arrival process.
enum class Arrivals {
  poisson,  ///< exponential gaps, CV 1
  gamma,    ///< gamma gaps with a stated coefficient of variation (burstiness): shape 1/CV^2
};

/// Synthetic traffic.
struct TrafficSpec {
  Arrivals arrivals = Arrivals::poisson;
  double rate_per_s = 1;   ///< mean arrivals per second (> 0)
  double cv = 1;           ///< gamma: coefficient of variation of the gaps (> 0; 1 = Poisson)
  int64_t requests = 1000; ///< how many (1..10,000,000)
  uint64_t seed = 1;
  LengthDist input{LengthDist::Kind::fixed, 1024};
  LengthDist output{LengthDist::Kind::fixed, 128};
};

/// Draws `requests` requests: gaps exponential with mean 1/rate (Poisson) or gamma with
/// shape k = 1/CV^2 and scale 1/(rate k) (mean 1/rate, CV as stated: Marsaglia and Tsang
/// 2000, "A Simple Method for Generating Gamma Variables"); lengths from their
/// distributions (lognormal: mu = ln(mean) - sigma^2/2, so the mean is as stated before
/// clamping). The first request arrives after one gap. Throws InputError for a rate or CV
/// that is not positive and finite, a count outside 1..10,000,000, bad lengths, or a rate so
/// low that the arrivals pass max_clock_s ("rate").
std::vector<Request> generate_traffic(const TrafficSpec& spec);

/// Token structure laid over synthetic traffic (docs/simulator.md, "Prefix caching"):
/// shared system prompts and multi-turn conversations. `--input` then draws the tokens a
/// request adds of its own (the user's new message).
struct PrefixTraffic {
  /// --shared-prefix TOKENS:GROUPS[:S]: each request (each conversation) starts with one of
  /// `groups` system prompts of `tokens` tokens, group g drawn with probability
  /// proportional to 1/(g+1)^S (S = 0: uniform; Zipf's law with exponent S otherwise).
  int64_t system_tokens = 0, groups = 0;
  double zipf_s = 0;
  /// --sessions N:TURNS: N conversations open at once, each of `turns` turns; arrival k
  /// (in order) is turn floor(k / N) mod TURNS of conversation slot k mod N, a slot opening
  /// a new conversation when its last one ends. A turn's prompt is the system prompt, the
  /// previous turn's prompt and answer, then its own new tokens (OpenAI chat completions
  /// resend the whole history: each request carries its messages).
  int64_t sessions = 0, turns = 0;
  bool enabled() const { return groups > 0 || sessions > 0; }
};

/// Parses --shared-prefix "TOKENS:GROUPS[:S]" (TOKENS 1..10,000,000, GROUPS 1..1,000,000,
/// S in [0, 10]). Throws InputError naming `field`, the text and the expected form.
PrefixTraffic parse_shared_prefix(std::string_view text, const std::string& field, PrefixTraffic into = {});
/// Parses --sessions "N:TURNS" (N 1..1,000,000, TURNS 1..10,000). Throws as parse_shared_prefix.
PrefixTraffic parse_sessions(std::string_view text, const std::string& field, PrefixTraffic into = {});

/// Lays `p` over `requests` (in arrival order, as generate_traffic draws them), drawing
/// the groups from `seed` (its own stream: arrivals and lengths are those without it).
/// A request's input_tokens become system tokens + its history + its drawn tokens, its
/// prefix [system prompt g, conversation stream c] (the stream spans the history, the new
/// tokens and the answer). Throws InputError("input") when a prompt passes 10,000,000 tokens.
void apply_prefix_traffic(std::vector<Request>& requests, const PrefixTraffic& p, uint64_t seed);

/// Reads a trace CSV: a header line `arrival_s,input_tokens,output_tokens`, then one
/// request per line, arrival times non-decreasing and >= 0, token counts integers >= 1.
/// The header may add `,prefix_id,prefix_tokens,session_id` (each may be empty on a line):
/// the prompt starts with shared prompt prefix_id of prefix_tokens tokens (1..input_tokens),
/// then, with a session_id, the conversation's stream (the rest of the prompt and the
/// answer: the next turn of the session resends them); Request::prefix. Either header may end
/// with `,adapter`: the LoRA adapter each request names (0..99999, empty = the base model;
/// Request::adapter, sim/lora.h; its prefix keyed by it, lora_key_prefix).
/// Lines starting with '#' and a final empty line are skipped; a time past max_clock_s is
/// refused (epoch milli- or microseconds read as seconds). `source` names the file in
/// errors. Throws InputError with the line number, the column, the text and what was
/// expected ("trace.csv: line 7: input_tokens: expected an integer >= 1, got 'ten'").
std::vector<Request> parse_trace_csv(std::string_view text, const std::string& source);

}  // namespace chalk::sim
