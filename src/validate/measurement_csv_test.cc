#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/validate/validate.h"

namespace chalk {
namespace {

std::string header() {
  std::string h;
  for (const auto& c : measurement_columns()) h += (h.empty() ? "" : ",") + c;
  return h + "\n";
}

std::string row(const std::string& id, const std::string& value = "1") {
  // 21 fields: id, kind, ..., value at column 15.
  std::string r = id + ",decode,M,\"a, b\",H,8,-,bf16,bf16,TP8,1,1024,2048,m," + value + ",s,-,src,loc,A,\"say \"\"hi\"\"\"";
  return r + "\n";
}

TEST(MeasurementCsv, BuiltinRows) {
  const auto rows = builtin_measurements();
  ASSERT_EQ(rows.size(), 53u);  // reference/measurements.csv: 53 rows under the header
  EXPECT_EQ(rows.front().id, "POPE-1");
  EXPECT_EQ(rows.front().line, 2);
  // A quoted field keeps its commas.
  EXPECT_EQ(rows.front().model_shape.substr(0, 40), "PaLM 540B dense: 118 layers, d_model 184");
  EXPECT_EQ(rows.back().id, "FT-GPT175B-B16");
  EXPECT_EQ(rows.back().value, "3706.23");
}

TEST(MeasurementCsv, QuotesNewlinesAndDoubledQuotes) {
  const std::string text = header() + row("A") + "B,decode,M,\"two\nlines\",H,8,-,bf16,bf16,TP8,1,1024,2048,m,2,s,-,src,loc,A,-\n" + row("C");
  const auto rows = parse_measurements(text, "t.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].model_shape, "a, b");
  EXPECT_EQ(rows[0].notes, "say \"hi\"");
  EXPECT_EQ(rows[1].model_shape, "two\nlines");
  EXPECT_EQ(rows[1].line, 3);
  EXPECT_EQ(rows[2].line, 5);  // after the two-line row
}

void expect_error(const std::string& text, const std::string& what) {
  try {
    parse_measurements(text, "t.csv");
    FAIL() << "no error for " << what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(MeasurementCsv, Errors) {
  expect_error("", "empty file");
  expect_error("id,kind\n", "header: missing column 'model'");
  expect_error("id,kind,modle" + header().substr(13), "column 3 is 'modle', expected 'model'");
  expect_error(header().substr(0, header().size() - 1) + ",extra\n", "unexpected column 'extra'");
  expect_error(header() + "A,decode,M\n", "line 2: expected 21 fields, got 3");
  expect_error(header() + row("A") + row("A"), "line 3: id: repeated id 'A'");
  expect_error(header() + row(""), "line 2: id: empty id");
  expect_error(header() + "A,\"open\n", "line 2: unterminated quoted field");
}

}  // namespace
}  // namespace chalk
