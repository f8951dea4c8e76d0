#include "chalk/base/units.h"

#include <gtest/gtest.h>

namespace chalk {
namespace {

TEST(Units, BandwidthTimesTimeIsBytes) {
  // 3.35 TB/s for 24 ms moves 80.4 GB (H100's HBM in one sweep, lecture 22:44).
  const Bytes b = terabytes_per_second(3.35) * milliseconds(24);
  EXPECT_NEAR(to_gb(b), 80.4, 1e-9);
}

TEST(Units, SameDimensionDivisionIsAPlainNumber) {
  const double ratio = gigabytes(288) / gigabytes(144);
  EXPECT_DOUBLE_EQ(ratio, 2.0);
}

TEST(Units, FlopsPerByteOfH100) {
  // 989.4 TFLOP/s / 3.35 TB/s = 295.3 FLOPs per byte (lecture 18:00).
  const FlopsPerByte r = teraflops_per_second(989.4) / terabytes_per_second(3.35);
  EXPECT_NEAR(r.value(), 295.34, 0.01);
}

TEST(Units, CostPerMillionTokens) {
  // $2.35 per chip-hour, 8 chips, 20 ms step, 256 tokens: 8 x 2.35/3600 x 0.02 / 256 per token
  // = 4.08e-7 $/token = $0.408 per million tokens.
  const UsdPerToken c = usd_per_hour(2.35) * 8.0 * milliseconds(20) / tokens(256);
  EXPECT_NEAR(to_usd_per_mtok(c), 0.40799, 1e-4);
}

}  // namespace
}  // namespace chalk
