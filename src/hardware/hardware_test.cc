// The built-in hardware catalog and the lecture's hardware numbers.
#include "chalk/hardware/hardware.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

TEST(HardwareCatalog, HasTheRequiredSystems) {
  const auto names = builtin_system_names();
  for (const char* want : {"a100-80gb", "h100-sxm", "h200", "b200", "gb200-nvl72", "gb300-nvl72", "mi300x", "mi355x",
                           "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-ironwood", "rubin-nvl144"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const auto& n : names) {
    const SystemSpec s = load_system(n);
    EXPECT_FALSE(s.source.empty()) << n;
    EXPECT_FALSE(s.date.empty()) << n;
    EXPECT_FALSE(s.efficiency.matmul_source.empty()) << n;
  }
}

TEST(HardwareCatalog, DensePeaksNotSparse) {
  // H100 SXM bf16: 989.4 dense (1978.9 is the 2:4-sparse figure).
  EXPECT_DOUBLE_EQ(to_tflop_per_s(load_system("h100-sxm").chip.peak_for(MatmulPrecision::bf16)), 989.4);
  EXPECT_DOUBLE_EQ(to_tflop_per_s(load_system("gb200-nvl72").chip.peak_for(MatmulPrecision::fp4)), 10000.0);
  EXPECT_FALSE(load_system("a100-80gb").chip.supports(MatmulPrecision::fp8));
}

TEST(Lecture, H100FlopsPerByteIsAbout295) {
  // Lecture 18:00: F / W ~ 300 on every generation. H100: 989.4e12 / 3.35e12 = 295.3.
  EXPECT_NEAR(flops_per_byte(load_system("h100-sxm").chip, MatmulPrecision::bf16).value(), 295.34, 0.01);
  // A100 312 / 2.039 = 153; B200 2250 / 8 = 281: "a few hundred".
  EXPECT_NEAR(flops_per_byte(load_system("b200").chip, MatmulPrecision::bf16).value(), 281.25, 0.01);
}

TEST(Lecture, RubinHbmSweepIsAbout14ms) {
  // Lecture 22:44: 288 GB / 20 TB/s ~ 14 ms (the lecture rounds it to ~20 ms).
  EXPECT_NEAR(to_ms(hbm_sweep_time(gigabytes(288), terabytes_per_second(20))), 14.4, 1e-9);
  // The catalog's Rubin carries the CES-2026 22 TB/s: 13.1 ms. H100: 80 / 3.35 = 23.9 ms.
  const SystemSpec rubin = load_system("rubin-nvl144");
  EXPECT_NEAR(to_ms(hbm_sweep_time(rubin.chip.hbm_capacity, rubin.chip.hbm_bandwidth)), 13.09, 0.01);
  const SystemSpec h100 = load_system("h100-sxm");
  EXPECT_NEAR(to_ms(hbm_sweep_time(h100.chip.hbm_capacity, h100.chip.hbm_bandwidth)), 23.88, 0.01);
}

TEST(HardwareFile, ErrorsNameTheField) {
  const std::string path = std::string(CHALK_SOURCE_DIR) + "/data/hardware/h100-sxm.json";
  std::string text = read_file(path);
  const auto pos = text.find("\"hbm_tb_per_s\": 3.35");
  ASSERT_NE(pos, std::string::npos);
  std::string bad = text;
  bad.replace(pos, 20, "\"hbm_tb_per_s\": 0");
  try {
    system_from_json(bad, "h.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "h.json: chip.hbm_tb_per_s: must be positive, got 0.000000");
  }
  EXPECT_THROW(load_system("/nonexistent/dir/x.json"), InputError);
}

TEST(HardwareFile, YearIsOptionalAndChecked) {
  // Every built-in system states the year it first shipped and where that comes from.
  EXPECT_EQ(load_system("h100-sxm").year, 2022);
  EXPECT_EQ(load_system("gb200-nvl72").year, 2025);
  for (const auto& n : builtin_system_names()) {
    const SystemSpec s = load_system(n);
    if (s.year) EXPECT_FALSE(s.year_source.empty()) << n;
  }
  const std::string text = read_file(std::string(CHALK_SOURCE_DIR) + "/data/hardware/h100-sxm.json");
  const auto pos = text.find("\"year\": 2022");
  ASSERT_NE(pos, std::string::npos);
  // A file without the two keys (issue 17's new systems, a user's chip) still loads.
  std::string no_year = text;
  const auto end = no_year.find('\n', no_year.find("\"year_source\"", pos));
  no_year.erase(pos, end + 1 - pos);
  EXPECT_FALSE(system_from_json(no_year, "h.json").year.has_value());
  std::string bad = text;
  bad.replace(pos, 12, "\"year\": 1066");
  try {
    system_from_json(bad, "h.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "h.json: year: must be a calendar year in 1990..2100, got 1066");
  }
}

}  // namespace
}  // namespace chalk
