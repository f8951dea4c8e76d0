// Published production traces in their own formats (docs/file-formats.md, "Published
// traces"): the Azure LLM inference traces of 2023 and 2024, BurstGPT, and Mooncake's JSONL
// traces with their block hashes, read beside chalk's own trace CSV (traffic.h), the format
// detected from the first line. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/sim/traffic.h"

namespace chalk::sim {

/// Tokens per block of a Mooncake trace's hash_ids: each id names one 512-token block of the
/// prompt, chained (a block's id covers the blocks before it). Source: kvcache-ai/Mooncake
/// FAST25-release/README.md and the FAST'25 paper's appendix (commit 3b5a594); checked on
/// every row of FAST25-release/traces/conversation_trace.jsonl (12,031 rows) and
/// synthetic_trace.jsonl (3,993): len(hash_ids) = ceil(input_length / 512) on all.
inline constexpr int64_t kMooncakeBlockTokens = 512;

enum class TraceFormat {
  chalk,     ///< arrival_s,input_tokens,output_tokens[,prefix_id,prefix_tokens,session_id] (parse_trace_csv)
  azure,     ///< TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference traces 2023 and 2024)
  burstgpt,  ///< Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type (BurstGPT)
  mooncake,  ///< one JSON object a line: timestamp (ms), input_length, output_length, hash_ids
};

/// "chalk CSV", "Azure LLM inference trace", "BurstGPT", "Mooncake JSONL".
std::string trace_format_name(TraceFormat f);

/// A trace as read: its requests in arrival order, times in seconds from its first request.
struct Trace {
  TraceFormat format = TraceFormat::chalk;
  std::vector<Request> requests;
  /// Rows left out because they state 0 prompt or 0 generated tokens: BurstGPT's failed
  /// requests (its README: "some failure that Response tokens are 0s"); the same rule in
  /// the Azure and Mooncake formats. Never in chalk's CSV, which refuses them.
  int64_t rows_skipped = 0;
  /// Rows that were out of time order (the published formats are sorted by the reader,
  /// stably; chalk's CSV refuses disorder).
  int64_t rows_reordered = 0;
  /// Seconds after midnight, on the trace's own clock, of the first request: Azure from its
  /// TIMESTAMP as written (2024: +00:00, UTC), BurstGPT its Timestamp mod 86,400 (seconds
  /// from 0:00:00 of the first day, its README). nullopt where the format has no time of
  /// day (chalk's CSV, Mooncake's milliseconds from the trace's start).
  std::optional<double> start_of_day_s;
};

/// Reads a trace, its format detected from the first line (after a UTF-8 byte order mark):
/// '{' starts a Mooncake JSONL trace; `TIMESTAMP,ContextTokens,GeneratedTokens` an Azure
/// trace; a header starting `Timestamp,` that names `Request tokens` and `Response tokens` a
/// BurstGPT trace (its columns found by name, so the 8-column release with `Session ID` and
/// `Elapsed time` reads too; those two are not used); anything else chalk's CSV
/// (parse_trace_csv, whose errors it keeps). Published formats: arrivals are made relative
/// to the earliest request and sorted; token counts must be integers 0..10,000,000 (0: the
/// row is skipped, Trace::rows_skipped); a Mooncake row's hash_ids must number
/// ceil(input_length / 512), each id a shared 512-token block (the last block the rest of
/// the prompt): Request::prefix, which the prefix cache reads as shared prefixes. Throws
/// InputError naming the file, the line, the column, the text and what was expected, as
/// parse_trace_csv does; a trace with no request left, or over 10,000,000 rows, is refused.
Trace read_trace(std::string_view text, const std::string& source);

/// Seconds since 1970-01-01 00:00:00 of a civil date and time (proleptic Gregorian; the
/// days-from-civil algorithm of H. Hinnant, "chrono-Compatible Low-Level Date Algorithms",
/// 2013). Exposed for its test.
int64_t civil_to_unix_s(int64_t year, int month, int day, int hour, int minute, int second);

}  // namespace chalk::sim
