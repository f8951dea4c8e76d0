// InputError's message is one bounded line whatever it quotes (issue 28).
#include "chalk/base/error.h"

#include <string>

#include <gtest/gtest.h>

namespace chalk {
namespace {

TEST(Error, ExcerptQuotesAtMostItsLengthAndCountsTheRest) {
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt(std::string(100, 'a'), 10), "aaaaaaaaaa... (100 bytes)");
  EXPECT_EQ(excerpt(std::string("a\nb\0c", 5)), "a?b?c");  // newline and NUL shown as '?'
}

TEST(Error, InputErrorIsOneLineOfAtMost1024BytesKeepingFieldAndExpectation) {
  const std::string value(5'000'000, 'v');  // a 5 MB value quoted whole by mistake
  const InputError e("trace.csv: line 1", "got '" + value + "\nmore'; expected the header");
  const std::string w = e.what();
  EXPECT_LE(w.size(), 1024u);
  EXPECT_EQ(w.find('\n'), std::string::npos);
  EXPECT_EQ(w.rfind("trace.csv: line 1: got 'vvv", 0), 0u) << w.substr(0, 40);
  EXPECT_NE(w.find("bytes left out"), std::string::npos);
  EXPECT_EQ(w.substr(w.size() - 27), "?more'; expected the header");
  // A short message is kept as written.
  EXPECT_STREQ(InputError("--batch", "must be >= 1, got 0").what(), "--batch: must be >= 1, got 0");
}

}  // namespace
}  // namespace chalk
