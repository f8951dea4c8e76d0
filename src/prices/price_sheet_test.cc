// Price sheets: the built-in catalog against docs/sources/prices.md, the format's round trip,
// and every bad-input path naming its field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"

namespace chalk {
namespace {

constexpr double kRel = 1e-9;

double sheet_mtok(UsdPerToken p) { return to_usd_per_mtok(p); }

/// The InputError's field for parsing `text`, or "" when it parses.
std::string error_field(const std::string& text) {
  try {
    price_sheet_from_json(text, "x.json");
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

std::string error_message(const std::string& text) {
  try {
    price_sheet_from_json(text, "x.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// A minimal valid sheet, edited by each bad-input test.
nlohmann::json minimal() {
  return nlohmann::json::parse(R"({
    "format": "chalk-prices/1", "name": "x", "provider": "P", "model": "M", "date": "2025-01", "source": "S",
    "input_usd_per_mtok": 1.0, "output_usd_per_mtok": 4.0,
    "long_context": [{"threshold_tokens": 128000, "input_multiplier": 2, "output_multiplier": 2}],
    "cache": {"read_usd_per_mtok": 0.25, "writes": [{"duration_s": 300, "usd_per_mtok": 1.25}],
              "storage_usd_per_mtok_per_hour": 4.5},
    "batch": {"multiplier": 0.5},
    "service_tiers": [{"name": "fast", "multiplier": 6, "stated_speedup": 2.5}],
    "off_peak": {"window": "night", "multiplier": 0.5}
  })");
}

TEST(PriceSheet, MinimalSheetParses) {
  const PriceSheet s = price_sheet_from_json(minimal().dump(), "x.json");
  // Multipliers resolve to prices: tier 2 x 1.0 in, 2 x 4.0 out; fast 6 x 4.0 = 24 out.
  EXPECT_NEAR(sheet_mtok(s.long_context.at(0).output), 8.0, 8.0 * kRel);
  EXPECT_NEAR(sheet_mtok(s.service_tiers.at(0).output), 24.0, 24.0 * kRel);
  EXPECT_NEAR(sheet_mtok(*s.service_tiers.at(0).cache_read), 1.5, 1.5 * kRel);  // 6 x 0.25
  EXPECT_NEAR(sheet_mtok(s.off_peak->output), 2.0, 2.0 * kRel);
}

TEST(PriceSheet, EveryBuiltInSheetHasItsSourceDateAndName) {
  const auto names = builtin_price_sheet_names();
  // The sheets the issue asks for, all present.
  for (const char* want : {"gemini-1.5-pro", "gemini-1.5-pro-launch", "gemini-1.5-flash", "gemini-2.5-pro", "gemini-2.5-flash",
                           "claude-opus-4.6", "claude-sonnet-4", "claude-sonnet-4.5", "claude-haiku-4.5", "gpt-4o", "gpt-4.1",
                           "gpt-5", "o3", "deepseek-v3", "deepseek-r1"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const auto& n : names) {
    const PriceSheet s = load_price_sheet(n);
    EXPECT_EQ(s.name, n);
    EXPECT_NE(s.source.find("docs/sources/prices.md"), std::string::npos) << n << ": source must cite docs/sources/prices.md";
    EXPECT_FALSE(s.date.empty()) << n;
  }
}

TEST(PriceSheet, GeminiOnePointFiveProMatchesPricesMd) {
  // prices.md 2.2, post-cut: 1.25 / 2.50 in, 5.00 / 10.00 out at 128K; cache 0.3125 / 0.625;
  // storage $4.50 per 1M tokens per hour.
  const PriceSheet s = load_price_sheet("gemini-1.5-pro");
  EXPECT_NEAR(sheet_mtok(s.input), 1.25, 1.25 * kRel);
  EXPECT_NEAR(sheet_mtok(s.output), 5.0, 5.0 * kRel);
  ASSERT_EQ(s.long_context.size(), 1u);
  EXPECT_EQ(s.long_context[0].threshold_tokens, 128000);
  EXPECT_NEAR(sheet_mtok(s.long_context[0].input), 2.5, 2.5 * kRel);
  EXPECT_NEAR(sheet_mtok(s.long_context[0].output), 10.0, 10.0 * kRel);
  EXPECT_NEAR(sheet_mtok(*s.long_context[0].cache_read), 0.625, 0.625 * kRel);
  EXPECT_NEAR(sheet_mtok(*s.cache.read), 0.3125, 0.3125 * kRel);
  EXPECT_NEAR(to_usd_per_mtok_per_hour(*s.cache.storage), 4.5, 4.5 * kRel);
  EXPECT_EQ(load_price_sheet("gemini-1.5-pro-launch").date, "2024-05");
}

TEST(PriceSheet, SonnetLongContextTierIsTwiceInputOneAndAHalfOutput) {
  // prices.md 1.2: Sonnet 4/4.5 above 200K: $6 in / $22.50 out, hit $0.60 (cache x2).
  for (const char* n : {"claude-sonnet-4", "claude-sonnet-4.5"}) {
    const PriceSheet s = load_price_sheet(n);
    ASSERT_EQ(s.long_context.size(), 1u) << n;
    EXPECT_EQ(s.long_context[0].threshold_tokens, 200000);
    EXPECT_NEAR(sheet_mtok(s.long_context[0].input), 6.0, 6.0 * kRel);
    EXPECT_NEAR(sheet_mtok(s.long_context[0].output), 22.5, 22.5 * kRel);
    EXPECT_NEAR(sheet_mtok(*s.long_context[0].cache_read), 0.6, 0.6 * kRel);
  }
}

TEST(PriceSheet, OpusFastModeIsSixTimesWithAStatedSpeedup) {
  // prices.md 1.2: Opus 4.6 fast = 6x: $30 in / $150 out, output up to ~2.5x faster.
  const PriceSheet s = load_price_sheet("claude-opus-4.6");
  ASSERT_EQ(s.service_tiers.size(), 1u);
  EXPECT_EQ(s.service_tiers[0].kind, ServiceTierKind::fast);
  EXPECT_NEAR(sheet_mtok(s.service_tiers[0].input), 30.0, 30.0 * kRel);
  EXPECT_NEAR(sheet_mtok(s.service_tiers[0].output), 150.0, 150.0 * kRel);
  EXPECT_DOUBLE_EQ(*s.service_tiers[0].stated_speedup, 2.5);
  ASSERT_EQ(s.cache.writes.size(), 2u);
  EXPECT_DOUBLE_EQ(s.cache.writes[0].duration.value(), 300);
  EXPECT_NEAR(sheet_mtok(s.cache.writes[1].price), 10.0, 10.0 * kRel);
}

TEST(PriceSheet, O3HasPriorityAndFlex) {
  // prices.md 3.2: o3 priority $3.50 / $0.875 / $14.00 (>80 tok/s); flex $1.00 / $0.25 / $4.00.
  const PriceSheet s = load_price_sheet("o3");
  ASSERT_EQ(s.service_tiers.size(), 2u);
  for (const auto& t : s.service_tiers) {
    if (t.kind == ServiceTierKind::priority) {
      EXPECT_NEAR(sheet_mtok(t.output), 14.0, 14.0 * kRel);
      EXPECT_DOUBLE_EQ(t.stated_min_output_speed->value(), 80);
    } else {
      EXPECT_EQ(t.kind, ServiceTierKind::flex);
      EXPECT_NEAR(sheet_mtok(t.output), 4.0, 4.0 * kRel);
    }
  }
}

TEST(PriceSheet, DeepSeekOffPeak) {
  // prices.md 4: off-peak V3 50% off (0.135 / 0.55 from 0.27 / 1.10); R1 75% off (0.55 from 2.19).
  const PriceSheet v3 = load_price_sheet("deepseek-v3");
  EXPECT_NEAR(v3.off_peak->output / v3.output, 0.5, 1e-9);
  const PriceSheet r1 = load_price_sheet("deepseek-r1");
  EXPECT_NEAR(r1.off_peak->output / r1.output, 0.55 / 2.19, 1e-9);
}

TEST(PriceSheet, JsonRoundTrip) {
  for (const auto& n : builtin_price_sheet_names()) {
    const PriceSheet a = load_price_sheet(n);
    const PriceSheet b = price_sheet_from_json(price_sheet_to_json(a), "round trip");
    EXPECT_EQ(a.name, b.name);
    EXPECT_NEAR(sheet_mtok(a.output), sheet_mtok(b.output), sheet_mtok(a.output) * 1e-10) << n;
    ASSERT_EQ(a.long_context.size(), b.long_context.size());
    for (size_t i = 0; i < a.long_context.size(); ++i) {
      EXPECT_EQ(a.long_context[i].threshold_tokens, b.long_context[i].threshold_tokens);
      EXPECT_NEAR(sheet_mtok(a.long_context[i].output), sheet_mtok(b.long_context[i].output), 1e-9);
    }
    EXPECT_EQ(a.cache.writes.size(), b.cache.writes.size());
    EXPECT_EQ(a.service_tiers.size(), b.service_tiers.size());
    EXPECT_EQ(a.off_peak.has_value(), b.off_peak.has_value());
    EXPECT_EQ(a.batch.has_value(), b.batch.has_value());
  }
}

TEST(PriceSheetErrors, MissingFieldIsNamed) {
  auto j = minimal();
  j.erase("output_usd_per_mtok");
  EXPECT_EQ(error_field(j.dump()), "x.json: output_usd_per_mtok");
  EXPECT_NE(error_message(j.dump()).find("missing required field"), std::string::npos);
  j = minimal();
  j.erase("source");
  EXPECT_EQ(error_field(j.dump()), "x.json: source");
  j = minimal();
  j["long_context"][0].erase("threshold_tokens");
  EXPECT_EQ(error_field(j.dump()), "x.json: long_context[0].threshold_tokens");
}

TEST(PriceSheetErrors, NegativePricesAreNamed) {
  auto j = minimal();
  j["input_usd_per_mtok"] = -1.25;
  EXPECT_EQ(error_field(j.dump()), "x.json: input_usd_per_mtok");
  EXPECT_NE(error_message(j.dump()).find("got -1.25"), std::string::npos) << error_message(j.dump());
  j = minimal();
  j["cache"]["read_usd_per_mtok"] = -0.1;
  EXPECT_EQ(error_field(j.dump()), "x.json: cache.read_usd_per_mtok");
  j = minimal();
  j["cache"]["storage_usd_per_mtok_per_hour"] = -4.5;
  EXPECT_EQ(error_field(j.dump()), "x.json: cache.storage_usd_per_mtok_per_hour");
  j = minimal();
  j["output_usd_per_mtok"] = 0;  // a zero output price cannot be read backwards
  EXPECT_EQ(error_field(j.dump()), "x.json: output_usd_per_mtok");
  j = minimal();
  j["long_context"][0]["output_multiplier"] = -2;
  EXPECT_EQ(error_field(j.dump()), "x.json: long_context[0].output_multiplier");
}

TEST(PriceSheetErrors, LongContextThresholdMustBePositive) {
  for (int bad : {0, -200000}) {
    auto j = minimal();
    j["long_context"][0]["threshold_tokens"] = bad;
    EXPECT_EQ(error_field(j.dump()), "x.json: long_context[0].threshold_tokens") << bad;
    EXPECT_NE(error_message(j.dump()).find("got " + std::to_string(bad)), std::string::npos);
  }
  auto j = minimal();
  j["long_context"].push_back({{"threshold_tokens", 64000}, {"input_multiplier", 3}, {"output_multiplier", 3}});
  EXPECT_EQ(error_field(j.dump()), "x.json: long_context[1].threshold_tokens");  // not ascending
  j = minimal();
  j["long_context"][0]["threshold_tokens"] = 128000.5;
  EXPECT_EQ(error_field(j.dump()), "x.json: long_context[0].threshold_tokens");
}

TEST(PriceSheetErrors, UnknownFieldsAreErrors) {
  auto j = minimal();
  j["inptu_usd_per_mtok"] = 1.0;
  EXPECT_EQ(error_field(j.dump()), "x.json: inptu_usd_per_mtok");
  EXPECT_NE(error_message(j.dump()).find("unknown field"), std::string::npos);
  j = minimal();
  j["cache"]["reads_usd_per_mtok"] = 0.1;
  EXPECT_EQ(error_field(j.dump()), "x.json: cache.reads_usd_per_mtok");
  j = minimal();
  j["service_tiers"][0]["speedup"] = 2;
  EXPECT_EQ(error_field(j.dump()), "x.json: service_tiers[0].speedup");
}

TEST(PriceSheetErrors, OtherBadValues) {
  auto j = minimal();
  j["format"] = "chalk-prices/2";
  EXPECT_EQ(error_field(j.dump()), "x.json: format");
  j = minimal();
  j["long_context"][0]["input_usd_per_mtok"] = 2.0;  // and input_multiplier: ambiguous
  EXPECT_EQ(error_field(j.dump()), "x.json: long_context[0].input_multiplier");
  j = minimal();
  j["service_tiers"][0]["name"] = "turbo";
  EXPECT_EQ(error_field(j.dump()), "x.json: service_tiers[0].name");
  j = minimal();
  j["batch"]["multiplier"] = 1.5;
  EXPECT_EQ(error_field(j.dump()), "x.json: batch.multiplier");
  j = minimal();
  j["cache"]["writes"].push_back({{"duration_s", 60}, {"usd_per_mtok", 1.1}});
  EXPECT_EQ(error_field(j.dump()), "x.json: cache.writes[1].duration_s");
  j = minimal();
  j["input_usd_per_mtok"] = "1.25";
  EXPECT_EQ(error_field(j.dump()), "x.json: input_usd_per_mtok");
  EXPECT_EQ(error_field("{\"format\": "), "x.json");
  try {
    load_price_sheet("gemini-9");
    ADD_FAILURE() << "no error for an unknown sheet";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "sheet");
    EXPECT_NE(std::string(e.what()).find("gemini-1.5-pro"), std::string::npos);
  }
}

TEST(PriceSheetErrors, ValidateCatchesSheetsBuiltInCode) {
  PriceSheet s = load_price_sheet("gemini-1.5-pro");
  s.long_context[0].threshold_tokens = 0;
  try {
    validate(s, "flags");
    ADD_FAILURE() << "threshold 0 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "flags: long_context[0].threshold_tokens");
  }
}

// A long-context tier is a price step up. One at or below the base (or the tier below)
// gives price inference a step of <= 0: a KV size of inf or a negative one.
TEST(PriceSheetErrors, LongContextTierMustRaiseThePrice) {
  auto sheet = minimal();
  sheet["long_context"][0] = {{"threshold_tokens", 128000}, {"input_usd_per_mtok", 1.0}, {"output_usd_per_mtok", 8.0}};
  EXPECT_EQ(error_message(sheet.dump()),
            "x.json: long_context[0].input_usd_per_mtok: a long-context tier must price input above the tier below (1), got 1");
  sheet["long_context"][0]["input_usd_per_mtok"] = 0.5;
  EXPECT_EQ(error_field(sheet.dump()), "x.json: long_context[0].input_usd_per_mtok");
  sheet["long_context"][0] = {{"threshold_tokens", 128000}, {"input_usd_per_mtok", 2.0}, {"output_usd_per_mtok", 3.0}};
  EXPECT_EQ(error_message(sheet.dump()),
            "x.json: long_context[0].output_usd_per_mtok: a long-context tier must not price output below the tier below (4), got 3");
  // A second tier steps up from the first (2 in), not from the base.
  sheet["long_context"][0]["output_usd_per_mtok"] = 8.0;
  sheet["long_context"][1] = {{"threshold_tokens", 256000}, {"input_multiplier", 1.5}, {"output_multiplier", 1.5}};  // 1.5 in
  EXPECT_EQ(error_field(sheet.dump()), "x.json: long_context[1].input_usd_per_mtok");
  sheet["long_context"][1] = {{"threshold_tokens", 256000}, {"input_usd_per_mtok", 3.0}, {"output_usd_per_mtok", 8.0}};
  EXPECT_EQ(error_field(sheet.dump()), "");
}

// 1e400 escaped as nlohmann's out_of_range (exit 3); now the field is named.
TEST(PriceSheetErrors, NumberOutOfRangeNamesTheField) {
  std::string text = minimal().dump();
  text.replace(text.find("\"output_usd_per_mtok\":4.0"), 25, "\"output_usd_per_mtok\":1e400");
  EXPECT_EQ(error_message(text), "x.json: output_usd_per_mtok: number out of range of a double (|x| > 1.8e308)");
  auto sheet = minimal();
  sheet["long_context"][0]["threshold_tokens"] = INT64_MAX;
  EXPECT_EQ(error_message(sheet.dump()), "x.json: long_context[0].threshold_tokens: must be in 1..1073741824, got 9223372036854775807");
}

// `prices show --json` wrote null for prices below ~1e-297 USD/Mtok: rounding to 12
// significant digits scaled by 10^(11 - log10 x) = inf, and inf / inf = NaN. The rounding
// now goes through decimal text; the written sheet reads back with the same prices.
TEST(PriceSheet, TinyAndHugePricesRoundTrip) {
  for (double p : {1e-300, 2.5e-7, 3.0, 1.2345678901234567e5, 1e300}) {
    auto sheet = minimal();
    sheet.erase("long_context");
    sheet["input_usd_per_mtok"] = p;
    sheet["output_usd_per_mtok"] = p;
    const std::string written = price_sheet_to_json(price_sheet_from_json(sheet.dump(), "x.json"));
    EXPECT_EQ(written.find("null"), std::string::npos) << written;
    const PriceSheet back = price_sheet_from_json(written, "back.json");
    EXPECT_NEAR(sheet_mtok(back.input), p, p * 1e-11) << p;  // 12 significant digits kept
  }
}

}  // namespace
}  // namespace chalk
