// Token structure over synthetic traffic (traffic.h, PrefixTraffic): the flags' forms and
// errors, system prompts and conversations laid over drawn requests.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "chalk/base/error.h"
#include "chalk/sim/traffic.h"

namespace chalk::sim {
namespace {

std::string field_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "(no error)";
}

TEST(PrefixTraffic, ParsesTheFlagsAndNamesThemInErrors) {
  const PrefixTraffic p = parse_shared_prefix("2000:8:1.2", "--shared-prefix");
  EXPECT_EQ(p.system_tokens, 2000);
  EXPECT_EQ(p.groups, 8);
  EXPECT_DOUBLE_EQ(p.zipf_s, 1.2);
  const PrefixTraffic s = parse_sessions("16:5", "--sessions", p);
  EXPECT_EQ(s.sessions, 16);
  EXPECT_EQ(s.turns, 5);
  EXPECT_EQ(s.groups, 8);  // kept
  for (const char* bad : {"2000", "2000:0", "0:4", "2000:4:-1", "2000:4:x", "a:b", "1:2:3:4"}) {
    EXPECT_EQ(field_of([&] { parse_shared_prefix(bad, "--shared-prefix"); }), "--shared-prefix") << bad;
  }
  for (const char* bad : {"16", "0:5", "16:0", "16:5:1", "x:5"}) {
    EXPECT_EQ(field_of([&] { parse_sessions(bad, "--sessions"); }), "--sessions") << bad;
  }
}

TEST(PrefixTraffic, SessionsInterleaveAndResendTheirHistory) {
  // Two conversations open at once, two turns each, a 100-token system prompt of one group;
  // each request draws 30 new tokens and answers 5. Arrival k: slot k mod 2, turn floor(k/2)
  // mod 2: 0 and 1 open conversations 0 and 1 (prompt 100 + 30 = 130), 2 and 3 are their
  // second turns (100 + 30 + 5 + 30 = 165); 4 opens conversation 2 in slot 0.
  std::vector<Request> r(5, Request{0, 30, 5});
  PrefixTraffic p;
  p.system_tokens = 100;
  p.groups = 1;
  p.sessions = 2;
  p.turns = 2;
  apply_prefix_traffic(r, p, 1);
  const std::vector<int64_t> in = {r[0].input_tokens, r[1].input_tokens, r[2].input_tokens, r[3].input_tokens, r[4].input_tokens};
  EXPECT_EQ(in, (std::vector<int64_t>{130, 130, 165, 165, 130}));
  // The system prompt first, then the conversation's stream: its history, new tokens and answer.
  ASSERT_EQ(r[2].prefix.size(), 2u);
  EXPECT_EQ(r[2].prefix[0].id, r[1].prefix[0].id);
  EXPECT_EQ(r[2].prefix[0].tokens, 100);
  EXPECT_EQ(r[2].prefix[1].id, r[0].prefix[1].id);   // the same conversation
  EXPECT_NE(r[3].prefix[1].id, r[2].prefix[1].id);
  EXPECT_NE(r[4].prefix[1].id, r[0].prefix[1].id);   // a new one in slot 0
  EXPECT_EQ(r[0].prefix[1].tokens, 35);               // 30 new + 5 answer
  EXPECT_EQ(r[2].prefix[1].tokens, 35 + 30 + 5);
}

TEST(PrefixTraffic, ZipfGroupsFavourTheFirst) {
  // Zipf exponent 10 over 4 groups: P(group 0) = 1 / (1 + 2^-10 + 3^-10 + 4^-10) = 0.99901;
  // uniform (S = 0): each group 1/4. 2,000 draws from seed 3.
  std::vector<Request> r(2000, Request{0, 10, 1});
  PrefixTraffic p = parse_shared_prefix("64:4:10", "--shared-prefix");
  apply_prefix_traffic(r, p, 3);
  int first = 0;
  for (const auto& q : r) first += q.prefix[0].id == r[0].prefix[0].id ? 1 : 0;
  EXPECT_GE(first, 1990);  // expected 1998 of 2000, standard deviation 1.4
  EXPECT_EQ(r[0].input_tokens, 74);
  std::vector<Request> u(2000, Request{0, 10, 1});
  apply_prefix_traffic(u, parse_shared_prefix("64:4", "--shared-prefix"), 3);
  std::set<uint64_t> ids;
  int zero = 0;
  for (const auto& q : u) ids.insert(q.prefix[0].id), zero += q.prefix[0].id == u[0].prefix[0].id ? 1 : 0;
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_NEAR(zero, 500, 100);  // 500 expected, standard deviation sqrt(2000 x 1/4 x 3/4) = 19
}

TEST(PrefixTraffic, TraceColumnsNameSharedPromptsAndSessions) {
  // Line 2: shared prompt 7 (100 of its 150 tokens), session 3: the stream covers the other
  // 50 prompt tokens and the 10 answer tokens = 60. Line 3: session 3's next turn, no shared
  // prompt: 200 + 5 = 205. Line 4: nothing shared. The old header still reads.
  const auto r = parse_trace_csv(
      "arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens,session_id\n0,150,10,7,100,3\n1,200,5,,,3\n2,50,5,,,\n", "t.csv");
  ASSERT_EQ(r.size(), 3u);
  ASSERT_EQ(r[0].prefix.size(), 2u);
  EXPECT_EQ(r[0].prefix[0].tokens, 100);
  EXPECT_EQ(r[0].prefix[1].tokens, 60);
  ASSERT_EQ(r[1].prefix.size(), 1u);
  EXPECT_EQ(r[1].prefix[0].id, r[0].prefix[1].id);
  EXPECT_EQ(r[1].prefix[0].tokens, 205);
  EXPECT_TRUE(r[2].prefix.empty());
  EXPECT_TRUE(parse_trace_csv("arrival_s,input_tokens,output_tokens\n0,1,1\n", "t.csv")[0].prefix.empty());
  const std::string head = "arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens,session_id\n";
  for (const auto& [line, what] : {std::pair{"0,150,10,7,,3", "line 2: prefix_tokens: expected a length with prefix_id"},
                                   std::pair{"0,150,10,7,151,", "line 2: prefix_tokens: expected an integer 1..input_tokens (150)"},
                                   std::pair{"0,150,10,-1,5,", "line 2: prefix_id: expected an integer >= 0"},
                                   std::pair{"0,150,10,,,x", "line 2: session_id: expected an integer >= 0"},
                                   std::pair{"0,150,10", "line 2: expected 6 fields"}}) {
    try {
      parse_trace_csv(head + line + "\n", "t.csv");
      ADD_FAILURE() << line;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace chalk::sim
