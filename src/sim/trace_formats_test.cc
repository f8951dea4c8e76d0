// Published traces read in their own formats (trace_formats.h), from the fixtures under
// tests/data/traces/ (their sources in its README.md), and a real Mooncake excerpt replayed
// whole through the simulator with its block hashes as shared prefixes.
#include "chalk/sim/trace_formats.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstring>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {
namespace {

std::string trace_fixture(const std::string& name) { return read_file(std::string(CHALK_SOURCE_DIR) + "/tests/data/traces/" + name); }

std::string trace_error(const std::string& text) {
  try {
    read_trace(text, "t");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TraceFormats, CivilDatesCountDaysAsTheCalendarDoes) {
  EXPECT_EQ(civil_to_unix_s(1970, 1, 1, 0, 0, 0), 0);
  // 2000-03-01: 30 years of 365 days + 7 leap days (72, 76, ..., 96) = 10,957 days to
  // 2000-01-01, + 31 (January) + 29 (February of a leap year divisible by 400) = 11,017.
  EXPECT_EQ(civil_to_unix_s(2000, 3, 1, 0, 0, 0), 11017 * 86400);
  // 2023-11-16 18:17:03 UTC: 1,700,158,623 (date -u -d '2023-11-16 18:17:03' +%s).
  EXPECT_EQ(civil_to_unix_s(2023, 11, 16, 18, 17, 3), 1700158623);
}

TEST(TraceFormats, AzureFractionsReadAsFromCharsReadsThem) {
  // The fraction is read as digits / 10^k up to 15 digits (one correctly rounded division of
  // two exact doubles) and through from_chars beyond: either way the double from_chars gives
  // for "0.digits". The first row is at .0, so each arrival is its own fraction exactly
  // (rows in time order: none reordered).
  const std::string text =
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2024-05-10 00:00:00.000000+00:00,10,5\n"
      "2024-05-10 00:00:00.123456+00:00,10,5\n"
      "2024-05-10 00:00:00.3000001,10,5\n"
      "2024-05-10 00:00:00.70000000000000001,10,5\n"
      "2024-05-10 00:00:00.999999999999999,10,5\n";
  const Trace t = read_trace(text, "azure.csv");
  ASSERT_EQ(t.requests.size(), 5u);
  auto chars = [](const char* s) {
    double v = 0;
    std::from_chars(s, s + std::strlen(s), v);
    return v;
  };
  EXPECT_EQ(t.requests[0].arrival_s, 0.0);
  EXPECT_EQ(t.requests[1].arrival_s, chars("0.123456"));
  EXPECT_EQ(t.requests[2].arrival_s, chars("0.3000001"));             // 7 digits (Azure 2023)
  EXPECT_EQ(t.requests[3].arrival_s, chars("0.70000000000000001"));   // 17: from_chars
  EXPECT_EQ(t.requests[4].arrival_s, chars("0.999999999999999"));     // 15: the last by division
  EXPECT_NE(t.requests[1].arrival_s, chars("0.123457"));              // the digits do count
}

TEST(TraceFormats, Azure2023ExcerptReadsWithTimesFromItsFirstRequest) {
  const Trace t = read_trace(trace_fixture("azure-2023-code-head.csv"), "azure.csv");
  EXPECT_EQ(t.format, TraceFormat::azure);
  ASSERT_EQ(t.requests.size(), 6u);
  EXPECT_EQ(t.rows_skipped, 0);
  EXPECT_DOUBLE_EQ(t.requests[0].arrival_s, 0.0);
  // 18:17:04.0319600 - 18:17:03.9799600 = 0.052 s; the last 04.5191470 - 03.9799600 = 0.539187 s.
  EXPECT_NEAR(t.requests[1].arrival_s, 0.052, 1e-9);
  EXPECT_NEAR(t.requests[5].arrival_s, 0.539187, 1e-9);
  EXPECT_EQ(t.requests[0].input_tokens, 4808);
  EXPECT_EQ(t.requests[0].output_tokens, 10);
  EXPECT_EQ(t.requests[5].input_tokens, 374);
  EXPECT_TRUE(t.requests[0].prefix.empty());
  // 18 h 17 min 3.97996 s after midnight = 65,823.97996 s.
  ASSERT_TRUE(t.start_of_day_s.has_value());
  EXPECT_NEAR(*t.start_of_day_s, 65823.97996, 1e-6);
}

TEST(TraceFormats, Azure2024LayoutSkipsFailedRowsAndSortsByTime) {
  const Trace t = read_trace(trace_fixture("azure-2024-layout.csv"), "azure24.csv");
  // 4 rows: one with 0 generated tokens skipped, one (00:00:01) before a later-written
  // 00:00:00.509930 sorted after it.
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(t.rows_skipped, 1);
  EXPECT_EQ(t.rows_reordered, 1);
  EXPECT_EQ(t.requests[1].input_tokens, 4096);
  EXPECT_NEAR(t.requests[1].arrival_s, 0.5, 1e-9);
  EXPECT_NEAR(t.requests[2].arrival_s, 1.0 - 0.009930, 1e-9);
  EXPECT_NEAR(*t.start_of_day_s, 0.009930, 1e-9);
  // A zone other than UTC moves the instant, not the clock time of day: 01:00+01:00 is 00:00 UTC.
  const Trace z = read_trace("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 01:00:00+01:00,8,8\n2024-05-10 00:00:02Z,8,8\n", "z");
  EXPECT_NEAR(z.requests[1].arrival_s, 2.0, 1e-9);
  EXPECT_NEAR(*z.start_of_day_s, 3600.0, 1e-9);
}

TEST(TraceFormats, BurstGptColumnsByNameFailedRowsSkipped) {
  const Trace t = read_trace(trace_fixture("burstgpt-layout.csv"), "burst.csv");
  EXPECT_EQ(t.format, TraceFormat::burstgpt);
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(t.rows_skipped, 1);  // 118,GPT-4,417,0: a failure, 0 response tokens
  EXPECT_DOUBLE_EQ(t.requests[1].arrival_s, 40.0);     // 45 - 5
  EXPECT_DOUBLE_EQ(t.requests[2].arrival_s, 86515.0);  // 86,520 - 5: the second day
  EXPECT_EQ(t.requests[1].input_tokens, 1087);
  EXPECT_EQ(t.requests[1].output_tokens, 230);
  EXPECT_DOUBLE_EQ(*t.start_of_day_s, 5.0);
  // The 8-column release: Session ID and Elapsed time between, found by name.
  const Trace e = read_trace("Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                             "7,ab-12,1.5,ChatGPT,100,20,120,Conversation log\n",
                             "b3");
  ASSERT_EQ(e.requests.size(), 1u);
  EXPECT_EQ(e.requests[0].input_tokens, 100);
  EXPECT_EQ(e.requests[0].output_tokens, 20);
}

TEST(TraceFormats, MooncakeBlocksBecomeSharedPrefixesOf512Tokens) {
  const Trace t = read_trace(trace_fixture("mooncake-synthetic-2543-2549.jsonl"), "mc.jsonl");
  EXPECT_EQ(t.format, TraceFormat::mooncake);
  ASSERT_EQ(t.requests.size(), 7u);
  EXPECT_FALSE(t.start_of_day_s.has_value());
  // Milliseconds from the first: (669,761 - 666,635) ms = 3.126 s.
  EXPECT_NEAR(t.requests[6].arrival_s, 3.126, 1e-9);
  // 5,407 tokens: 11 ids, ten of 512 and the last 5,407 - 5,120 = 287.
  const Request& a = t.requests[0];
  ASSERT_EQ(a.prefix.size(), 11u);
  EXPECT_EQ(a.prefix[0].tokens, 512);
  EXPECT_EQ(a.prefix[10].tokens, 287);
  // The last request starts with the same ten blocks, then its own (5,409: 289 tokens).
  const Request& b = t.requests[6];
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b.prefix[static_cast<std::size_t>(i)].id, a.prefix[static_cast<std::size_t>(i)].id);
  EXPECT_NE(b.prefix[10].id, a.prefix[10].id);
  EXPECT_EQ(b.prefix[10].tokens, 289);
}

TEST(TraceFormats, MooncakeExcerptReplayedWholeHitsItsSharedBlocks) {
  // The excerpt through one vLLM replica of llama-3.1-8b on an H100, its prefix cache fed by
  // the hash ids. The only blocks shared are the first ten of the first and last requests
  // (ids 13406-13415), and the last arrives 3.126 s after the first, whose 5,407-token
  // prefill and 8 output tokens end well within that (one replica of an 8B model prefills
  // thousands of tokens in tens of ms), its blocks staying cached (nothing evicts them: the
  // 7 prompts' 43,083 tokens are a fraction of the replica's KV). So the last request finds
  // 10 x 512 = 5,120 tokens cached (320 whole 16-token vLLM blocks, below its 5,409 - 1), every
  // other request none: the cached fraction is 5,120 / (5,407 + 1,419 + 3,183 + 4,796 +
  // 16,084 + 6,785 + 5,409 = 43,083) = 0.118840.
  const Trace t = read_trace(trace_fixture("mooncake-synthetic-2543-2549.jsonl"), "mc.jsonl");
  DeploymentOptions o;
  o.n_chips = 1;
  o.mechanisms.enabled = true;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  const SimRun run = simulate(d, t.requests, SimOptions{});
  EXPECT_TRUE(run.prefix_caching);
  ASSERT_EQ(run.requests.size(), 7u);
  int64_t cached = 0, prompt = 0, finished = 0, out = 0;
  for (const auto& r : run.requests) {
    cached += r.cached_tokens;
    prompt += r.input_tokens;
    out += r.output_tokens;
    finished += r.rejected ? 0 : 1;
  }
  EXPECT_EQ(finished, 7);
  EXPECT_EQ(run.requests[6].cached_tokens, 5120);
  EXPECT_EQ(cached, 5120);
  EXPECT_EQ(prompt, 43083);
  EXPECT_NEAR(static_cast<double>(cached) / static_cast<double>(prompt), 0.118840, 1e-6);
  // Output tokens: 8 + 768 + 29 + 326 + 14 + 67 + 2 = 1,214.
  EXPECT_EQ(out, 1214);
  EXPECT_EQ(run.kv_blocks_leaked, 0);
}

TEST(TraceFormats, EachErrorNamesTheLineTheColumnAndWhatWasExpected) {
  const std::string az = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  EXPECT_EQ(trace_error(az + "2023-11-16 18:17,1,1\n"), "t: line 2: TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM]', got '2023-11-16 18:17'");
  EXPECT_EQ(trace_error(az + "2023-11-16 18:17:03,-4,1\n"), "t: line 2: ContextTokens: expected an integer 0..10000000, got '-4'");
  EXPECT_EQ(trace_error(az + "2023-11-16 18:17:03,4\n"), "t: line 2: expected 3 fields (TIMESTAMP,ContextTokens,GeneratedTokens), got 2: '2023-11-16 18:17:03,4'");
  EXPECT_EQ(trace_error(az + "2023-11-16 18:17:03,4,0\n"), "t: no requests left after skipping 1 rows with 0 prompt or 0 generated tokens");
  EXPECT_EQ(trace_error(az), "t: no requests after the header");
  const std::string bg = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
  EXPECT_EQ(trace_error(bg + "x,ChatGPT,1,1,2,API log\n"), "t: line 2: Timestamp: expected seconds >= 0 from the first day's 0:00:00, got 'x'");
  EXPECT_EQ(trace_error(bg + "1,ChatGPT,1,1,2\n"), "t: line 2: expected 6 fields as the header names, got 5: '1,ChatGPT,1,1,2'");
  EXPECT_EQ(trace_error(bg + "1,ChatGPT,1,ten,2,API log\n"), "t: line 2: Response tokens: expected an integer 0..10000000, got 'ten'");
  EXPECT_EQ(trace_error("{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1]}\n"),
            "t: line 1: hash_ids: expected ceil(input_length 600 / 512) = 2 block ids, got 1");
  EXPECT_EQ(trace_error("{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 1}\n"),
            "t: line 1: hash_ids: missing; expected timestamp, input_length, output_length and hash_ids");
  EXPECT_EQ(trace_error("{\"timestamp\": -1, \"input_length\": 6, \"output_length\": 1, \"hash_ids\": [1]}\n"),
            "t: line 1: timestamp: expected milliseconds >= 0 from the trace's start, got -1");
  EXPECT_EQ(trace_error("{\"timestamp\": 0, \"input_length\": 6.5, \"output_length\": 1, \"hash_ids\": [1]}\n"),
            "t: line 1: input_length: expected an integer 0..10000000, got 6.5");
  EXPECT_EQ(trace_error("{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 1, \"hash_ids\": [\"a\"]}\n"),
            "t: line 1: hash_ids: expected integers >= 0, got \"a\"");
  EXPECT_EQ(trace_error("{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 1, \"hash_ids\": [1]}\n{oops\n"),
            "t: line 2: expected one JSON object a line, got '{oops'");
  // Anything else is chalk's CSV, with its own errors.
  EXPECT_EQ(trace_error("time,in,out\n"), "t: line 1: expected the header 'arrival_s,input_tokens,output_tokens', got 'time,in,out'");
  EXPECT_EQ(read_trace("arrival_s,input_tokens,output_tokens\n0,1,1\n", "t").format, TraceFormat::chalk);
}

}  // namespace
}  // namespace chalk::sim
