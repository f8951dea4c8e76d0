// Traffic: arrival statistics, length distributions, the strict trace reader.
#include "chalk/sim/traffic.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "chalk/base/error.h"

namespace chalk::sim {
namespace {

void sim_gap_stats(const std::vector<Request>& r, double& mean, double& cv) {
  double s = 0, s2 = 0, prev = 0;
  for (const auto& q : r) {
    const double g = q.arrival_s - prev;
    prev = q.arrival_s;
    s += g;
    s2 += g * g;
  }
  const double n = static_cast<double>(r.size());
  mean = s / n;
  cv = std::sqrt(s2 / n - mean * mean) / mean;
}

TEST(Traffic, PoissonAndGammaGapsHaveTheStatedMeanAndCv) {
  TrafficSpec t;
  t.rate_per_s = 20;
  t.requests = 200000;
  double mean = 0, cv = 0;
  sim_gap_stats(generate_traffic(t), mean, cv);
  EXPECT_NEAR(mean, 0.05, 0.01 * 0.05);
  EXPECT_NEAR(cv, 1, 0.02);
  t.arrivals = Arrivals::gamma;
  for (const double want : {0.5, 3.0}) {
    t.cv = want;
    sim_gap_stats(generate_traffic(t), mean, cv);
    EXPECT_NEAR(mean, 0.05, 0.02 * 0.05) << want;
    EXPECT_NEAR(cv, want, 0.05 * want) << want;
  }
}

TEST(Traffic, LengthsFollowTheirDistributions) {
  TrafficSpec t;
  t.requests = 100000;
  t.input = parse_length("uniform:100:300", "input");
  t.output = parse_length("lognormal:200:1.0", "output");
  const auto r = generate_traffic(t);
  double in = 0, out = 0;
  int64_t lo = 1 << 30, hi = 0;
  for (const auto& q : r) {
    in += static_cast<double>(q.input_tokens);
    out += static_cast<double>(q.output_tokens);
    lo = std::min(lo, q.input_tokens);
    hi = std::max(hi, q.input_tokens);
  }
  EXPECT_NEAR(in / 1e5, 200, 1);  // uniform mean (100 + 300) / 2
  EXPECT_EQ(lo, 100);
  EXPECT_EQ(hi, 300);
  EXPECT_NEAR(out / 1e5, 200, 200 * 0.03);  // lognormal mean as stated (cap 64 x mean barely bites)
  // Same seed, same traffic.
  EXPECT_EQ(generate_traffic(t)[999].output_tokens, r[999].output_tokens);
}

TEST(Traffic, BadLengthsAndRatesNameTheField) {
  EXPECT_THROW(parse_length("uniform:300:100", "input"), InputError);
  EXPECT_THROW(parse_length("lognormal:100", "input"), InputError);
  EXPECT_THROW(parse_length("12k", "output"), InputError);
  EXPECT_THROW(parse_length("0", "output"), InputError);
  TrafficSpec t;
  t.rate_per_s = 0;
  EXPECT_THROW(generate_traffic(t), InputError);
  t.rate_per_s = 1;
  t.arrivals = Arrivals::gamma;
  t.cv = -1;
  EXPECT_THROW(generate_traffic(t), InputError);
}

TEST(Trace, ReadsAValidTrace) {
  const auto r = parse_trace_csv("arrival_s,input_tokens,output_tokens\n# comment\n0.0,100,10\r\n0.5,2048,1\n", "t.csv");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].input_tokens, 2048);
  EXPECT_EQ(r[1].arrival_s, 0.5);
}

TEST(Trace, AByteOrderMarkAtTheStartIsNotPartOfTheHeader) {
  // EF BB BF, as spreadsheet programs save UTF-8 CSV: the header still reads.
  const auto r = parse_trace_csv("\xEF\xBB\xBF" "arrival_s,input_tokens,output_tokens\n0.25,512,64\n", "t.csv");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].input_tokens, 512);
  EXPECT_EQ(r[0].arrival_s, 0.25);
}

TEST(Trace, ErrorsNameTheLineAndTheColumn) {
  auto message = [](const char* text) {
    try {
      parse_trace_csv(text, "t.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string h = "arrival_s,input_tokens,output_tokens\n";
  EXPECT_EQ(message((h + "0,10,5\n1,ten,5\n").c_str()),
            "t.csv: line 3: input_tokens: expected an integer 1..10000000, got 'ten'");
  EXPECT_EQ(message((h + "0,10,5\n1,10\n").c_str()),
            "t.csv: line 3: expected 3 fields (arrival_s,input_tokens,output_tokens), got 2: '1,10'");
  EXPECT_EQ(message((h + "2,10,5\n1,10,5\n").c_str()),
            "t.csv: line 3: arrival_s: expected times in non-decreasing order, got 1 after 2");
  EXPECT_EQ(message((h + "0,10,0\n").c_str()), "t.csv: line 2: output_tokens: expected an integer 1..10000000, got '0'");
  EXPECT_EQ(message((h + "-1,10,5\n").c_str()), "t.csv: line 2: arrival_s: expected seconds >= 0, got '-1'");
  EXPECT_EQ(message("time,in,out\n"), "t.csv: line 1: expected the header 'arrival_s,input_tokens,output_tokens', got 'time,in,out'");
  EXPECT_EQ(message(""), "t.csv: empty trace; expected the header 'arrival_s,input_tokens,output_tokens'");
  EXPECT_EQ(message(h.c_str()), "t.csv: no requests after the header");
  EXPECT_EQ(message((h + "0,10,5\n\n1,10,5\n").c_str()),
            "t.csv: line 3: expected 3 fields (arrival_s,input_tokens,output_tokens), got 1: ''");
}

// Issue 28: a tiny cv once made 1/cv^2 overflow to inf, the acceptance test compare NaN, and
// the sampler loop for ever. Below cv 1e-3 the gaps are the normal limit 1 + cv N(0,1) (in
// units of the mean gap): at cv 1e-155 every gap is 1/rate to the last digit a double holds.
TEST(Traffic, TinyGammaCvGivesClockworkArrivalsInsteadOfAHang) {
  TrafficSpec t;
  t.arrivals = Arrivals::gamma;
  t.rate_per_s = 4;
  t.requests = 1000;
  for (const double cv : {1e-155, 1e-300, 1e-9}) {
    t.cv = cv;
    const auto r = generate_traffic(t);
    ASSERT_EQ(r.size(), 1000u);
    // 1000 gaps of 1/4 s, each within 10 standard deviations (0.25 x cv x 10) of it.
    EXPECT_NEAR(r.back().arrival_s, 1000 * 0.25, 1e-6) << cv;
    double prev = 0, worst = 0;
    for (const auto& q : r) {
      worst = std::max(worst, std::abs(q.arrival_s - prev - 0.25));
      prev = q.arrival_s;
    }
    EXPECT_LE(worst, 0.25 * cv * 10 + 1e-13) << cv;  // 1e-13: the rounding of t += gap
  }
  // Just either side of the switch the stated cv still comes out (2% at 200,000 gaps).
  t.requests = 200000;
  for (const double cv : {0.9e-3, 1.1e-3}) {
    t.cv = cv;
    double mean = 0, got_cv = 0;
    sim_gap_stats(generate_traffic(t), mean, got_cv);
    EXPECT_NEAR(got_cv, cv, 0.02 * cv) << cv;
  }
}

// Issue 28: --rate 1e-300 put arrivals at 1e300 s, where a step of milliseconds is below a
// double's resolution, and TTFT, TPOT and latency read 0. The clock reaches 2^33 s
// (resolution 2^33 x 2^-52 = 1.9 us); beyond it the rate is an error naming the field.
TEST(Traffic, ArrivalsBeyondTheClockResolutionAreAnError) {
  EXPECT_DOUBLE_EQ(max_clock_s, std::ldexp(1.0, 33));
  EXPECT_LE(std::nextafter(max_clock_s, 1e300) - max_clock_s, 2e-6);
  TrafficSpec t;
  t.requests = 10;
  for (const double rate : {1e-300, 1e-9}) {  // 10 requests over 1e301 s, and over 1e10 s
    t.rate_per_s = rate;
    try {
      generate_traffic(t);
      ADD_FAILURE() << rate;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "rate");
      EXPECT_NE(std::string(e.what()).find("simulation clock's reach of 8589934592 s"), std::string::npos) << e.what();
    }
  }
  t.rate_per_s = 1e-8;  // 10 requests over about 1e9 s: within reach
  EXPECT_EQ(generate_traffic(t).size(), 10u);
}

TEST(Traffic, TraceTimesInEpochMicrosecondsAreRefusedNotZeroed) {
  const std::string us = "arrival_s,input_tokens,output_tokens\n1733443200000000,100,10\n1733443200500000,100,10\n";
  try {
    parse_trace_csv(us, "t.csv");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "t.csv: line 2");
    EXPECT_NE(std::string(e.what()).find("arrival_s: 1733443200000000 s is beyond"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("epoch milli- or microseconds?"), std::string::npos) << e.what();
  }
  // Epoch seconds (1.7e9 s) are within reach: resolved to 2^-22 s = 0.24 us.
  EXPECT_EQ(parse_trace_csv("arrival_s,input_tokens,output_tokens\n1733443200.25,100,10\n", "t.csv").size(), 1u);
}

// Issue 28: a 100 MB header once gave a 100 MB error line. The quoted text is an excerpt.
TEST(Traffic, TraceErrorsQuoteAnExcerptNotTheWholeLine) {
  const std::string header(1 << 20, 'x');
  try {
    parse_trace_csv(header + "\n", "big.csv");
    ADD_FAILURE();
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_LT(w.size(), 200u) << w.size();
    EXPECT_NE(w.find("'xxxxxxxxxx"), std::string::npos) << w;
    EXPECT_NE(w.find("... (1048576 bytes)"), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace chalk::sim
