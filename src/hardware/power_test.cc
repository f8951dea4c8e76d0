// A chip's power at a step's utilisation and the facility around it (power.h), against
// hand-derived values; every bad input.
#include "chalk/hardware/power.h"

#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

// H100 SXM, 700 W TDP (catalog): idle 700 x 115/700 = 115 W, HBM-bound 0.6 x 700 = 420 W,
// compute-bound 700 W.
ChipPower h100() { return *chip_power(load_system("h100-sxm")); }

TEST(ChipPower, FromTheCatalogTdp) {
  const ChipPower p = h100();
  EXPECT_NEAR(p.idle_w, 115.0, 1e-9);
  EXPECT_NEAR(p.memory_busy_w, 420.0, 1e-9);
  EXPECT_DOUBLE_EQ(p.compute_busy_w, 700.0);
  EXPECT_NE(p.source.find("700 W"), std::string::npos);
  // A stated TDP replaces the catalog's: B200 at 1,000 W -> idle 164.29 W, HBM-bound 600 W.
  const ChipPower b = *chip_power(load_system("h100-sxm"), 1000.0);
  EXPECT_NEAR(b.idle_w, 1000.0 * 115 / 700, 1e-9);
  EXPECT_NEAR(b.memory_busy_w, 600.0, 1e-9);
}

TEST(ChipPower, NoneWithoutATdp) {
  EXPECT_FALSE(chip_power(load_system("h100-sxm"), 0.0).has_value());  // 0 W: no energy figures, as train run
  SystemSpec s = load_system("h100-sxm");
  s.power_w_per_chip.reset();
  EXPECT_FALSE(chip_power(s).has_value());
}

TEST(ChipPower, StepPowerInterpolatesByBusyFractions) {
  const ChipPower p = h100();
  // A decode step of 10 ms: tensor cores busy 1 ms (f_c = 0.1), HBM 8 ms (f_m = 0.8):
  // 115 + (700 - 115) 0.1 + (420 - 115) 0.8 = 115 + 58.5 + 244 = 417.5 W; x 10 ms = 4.175 J.
  EXPECT_NEAR(step_power_w(p, milliseconds(10), milliseconds(1), milliseconds(8)), 417.5, 1e-9);
  EXPECT_NEAR(step_energy_j(p, milliseconds(10), milliseconds(1), milliseconds(8)), 4.175, 1e-12);
  // Nothing busy (a launch-bound step): the idle 115 W. Fully compute-bound: the TDP.
  EXPECT_NEAR(step_power_w(p, milliseconds(10), Seconds(0), Seconds(0)), 115.0, 1e-9);
  EXPECT_NEAR(step_power_w(p, milliseconds(10), milliseconds(10), Seconds(0)), 700.0, 1e-9);
  // Both busy: 115 + 585 x 0.9 + 305 x 0.5 = 794 W, held at the 700 W power limit.
  EXPECT_NEAR(step_power_w(p, milliseconds(10), milliseconds(9), milliseconds(5)), 700.0, 1e-9);
  // A step of 0 s draws nothing beyond idle and has no energy.
  EXPECT_NEAR(step_power_w(p, Seconds(0), Seconds(0), Seconds(0)), 115.0, 1e-9);
  EXPECT_EQ(step_energy_j(p, Seconds(0), Seconds(0), Seconds(0)), 0.0);
}

TEST(Facility, AddsTheHostAndMultipliesByPue) {
  // (1,000 J of chips + 350 W x 8 chips x 10 s) x 1.2 = (1,000 + 28,000) x 1.2 = 34,800 J.
  EXPECT_NEAR(facility_energy_j(1000, Facility{350, 1.2}, 8, 10), 34800.0, 1e-9);
  // Chips only (the defaults): the chips' energy.
  EXPECT_DOUBLE_EQ(facility_energy_j(1000, Facility{}, 8, 10), 1000.0);
}

TEST(Facility, EnergyPerToken) {
  // 8 H100 on the 10 ms step above (4.175 J each), 64 tokens: 8 x 4.175 / 64 = 0.521875 J.
  EXPECT_NEAR(energy_j_per_token(h100(), Facility{}, 8, milliseconds(10), milliseconds(1), milliseconds(8), 64), 0.521875, 1e-12);
  // With 350 W of host per chip and PUE 1.5: (33.4 + 350 x 8 x 0.01) x 1.5 / 64 = 1.439063 J.
  EXPECT_NEAR(energy_j_per_token(h100(), Facility{350, 1.5}, 8, milliseconds(10), milliseconds(1), milliseconds(8), 64),
              (33.4 + 28.0) * 1.5 / 64, 1e-12);
  EXPECT_EQ(energy_j_per_token(h100(), Facility{}, 8, milliseconds(10), milliseconds(1), milliseconds(8), 0), 0.0);
}

void expect_field(const std::function<void()>& f, const std::string& field, const std::string& says) {
  try {
    f();
    ADD_FAILURE() << "no error for " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), field);
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Facility, BadInputsNameTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  expect_field([] { validate_pue(0.9); }, "pue", "got 0.9");
  expect_field([&] { validate_pue(nan); }, "pue", ">= 1");
  expect_field([&] { validate_pue(inf); }, "pue", ">= 1");
  expect_field([] { validate(Facility{-1, 1}); }, "host_w_per_chip", "got -1");
  expect_field([&] { validate(Facility{nan, 1}); }, "host_w_per_chip", "[0, 1e+06]");
  expect_field([] { validate(Facility{0, 0.5}); }, "pue", "got 0.5");
  expect_field([] { chip_power(load_system("h100-sxm"), -700.0); }, "chip_power_w", "got -700");
  expect_field([&] { chip_power(load_system("h100-sxm"), inf); }, "chip_power_w", "[0, 1e+06] W");
  expect_field([&] { chip_power(load_system("h100-sxm"), nan); }, "chip_power_w", "got nan");
  EXPECT_NO_THROW(validate(Facility{350, 1.09}));
}

}  // namespace
}  // namespace chalk
