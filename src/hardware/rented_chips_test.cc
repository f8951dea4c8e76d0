// The chips people rent (issue 30 item 9): every figure equals its datasheet's, written
// here by hand from the source each data/hardware file names.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "chalk/base/units.h"
#include "chalk/hardware/hardware.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

/// One chip's datasheet figures: dense peaks in TFLOP/s (0 = not supported), memory in GB
/// and TB/s, the scale-up domain, its per-direction GB/s and wiring, scale-out GB/s per
/// direction (0 = not stated), TDP in W, price in $/chip-hour (nullopt = none found).
struct Datasheet {
  const char* name;
  double bf16, fp8, int8, hbm_gb, hbm_tb_per_s;
  int64_t domain;
  double up_gb_per_s;
  const char* topology;
  double out_gb_per_s, watts;
  std::optional<double> usd_per_hour;
};

const Datasheet kRented[] = {
    // A100 datasheet: BF16 312 dense (624 sparse), INT8 624 dense; 40 GB HBM2 at 1,555 GB/s;
    // NVLink3 600 GB/s bidirectional; 400 W. AWS p4d Capacity Block $14.75/h / 8 GPUs.
    {"a100-40gb", 312, 0, 624, 40, 1.555, 8, 300, "switch", 25, 400, 14.75 / 8},
    // H100 PCIe datasheet: BF16 1,513 / FP8 3,026 / INT8 3,026 sparse, half dense; 80 GB
    // HBM2e at 2.0 TB/s; PCIe Gen5 128 GB/s bidirectional; 350 W. RunPod $2.79/h.
    {"h100-pcie", 756.5, 1513, 1513, 80, 2.0, 8, 64, "pcie", 50, 350, 2.79},
    // H100 NVL: BF16 1,671 / FP8 3,341 sparse, half dense; 94 GB at 3.9 TB/s; NVLink
    // bridge 600 GB/s between two cards; 350-400 W. RunPod $3.07/h.
    {"h100-nvl", 835.5, 1670.5, 1670.5, 94, 3.9, 2, 300, "full-mesh", 0, 400, 3.07},
    // L4: BF16 242 / FP8 485 / INT8 485 sparse, half dense; 24 GB GDDR6 at 300 GB/s; PCIe
    // Gen4 x16; 72 W. RunPod $0.78/h on demand.
    {"l4", 121, 242.5, 242.5, 24, 0.3, 8, 32, "pcie", 0, 72, 0.78},
    // A10G: 24 GB GDDR6 at 600 GB/s; the A10's BF16 125 / INT8 250 dense as an upper
    // bound; 300 W as nvidia-smi reports on G5; g5.xlarge $1.006/h.
    {"a10g", 125, 0, 250, 24, 0.6, 8, 32, "pcie", 0, 300, 1.006},
    // Gaudi 3 (Hot Chips 2024): BF16 and FP8 matrix 1,835; 128 GB HBM2e at 3.67 TB/s;
    // 21 x 200 GbE to 7 peers = 525 GB/s, 3 x 200 GbE out = 75 GB/s; 900 W air.
    {"gaudi-3", 1835, 1835, 0, 128, 3.67, 8, 525, "full-mesh", 75, 900, std::nullopt},
};

TEST(RentedChips, EveryFigureEqualsItsDatasheet) {
  for (const Datasheet& d : kRented) {
    SCOPED_TRACE(d.name);
    const SystemSpec s = load_system(d.name);
    EXPECT_DOUBLE_EQ(to_tflop_per_s(s.chip.peak_for(MatmulPrecision::bf16)), d.bf16);
    EXPECT_DOUBLE_EQ(to_tflop_per_s(s.chip.peak_for(MatmulPrecision::fp8)), d.fp8);
    EXPECT_DOUBLE_EQ(to_tflop_per_s(s.chip.peak_for(MatmulPrecision::int8)), d.int8);
    EXPECT_DOUBLE_EQ(to_gb(s.chip.hbm_capacity), d.hbm_gb);
    EXPECT_DOUBLE_EQ(to_gb_per_s(s.chip.hbm_bandwidth) / 1000.0, d.hbm_tb_per_s);
    EXPECT_EQ(s.scale_up_domain, d.domain);
    EXPECT_DOUBLE_EQ(to_gb_per_s(s.scale_up_bandwidth_per_direction), d.up_gb_per_s);
    ASSERT_TRUE(s.scale_up_topology.has_value());
    EXPECT_EQ(std::string(to_string(*s.scale_up_topology)), d.topology);
    EXPECT_DOUBLE_EQ(to_gb_per_s(s.scale_out_bandwidth_per_direction), d.out_gb_per_s);
    EXPECT_EQ(s.power_w_per_chip.value_or(0), d.watts);
    ASSERT_EQ(s.price_per_chip.has_value(), d.usd_per_hour.has_value());
    if (d.usd_per_hour) {
      EXPECT_NEAR(to_usd_per_hour(*s.price_per_chip), *d.usd_per_hour, 1e-9);
    }
    EXPECT_EQ(to_string(s.status), "shipping");
    EXPECT_FALSE(s.chip_source.empty());
    EXPECT_FALSE(s.scale_up_source.empty());
  }
}

TEST(RentedChips, NamesPeopleTypeResolve) {
  EXPECT_EQ(resolve_system_name("A100-40GB"), "a100-40gb");
  EXPECT_EQ(resolve_system_name("a100-sxm4-40gb"), "a100-40gb");
  EXPECT_EQ(resolve_system_name("H100PCIe"), "h100-pcie");
  EXPECT_EQ(resolve_system_name("h100nvl"), "h100-nvl");
  EXPECT_EQ(resolve_system_name("Gaudi3"), "gaudi-3");
  EXPECT_EQ(resolve_system_name("HL-325L"), "gaudi-3");
  EXPECT_EQ(resolve_system_name("nvidia-l4"), "l4");
  EXPECT_EQ(resolve_system_name("NVIDIA-A10G"), "a10g");
  // The A10 is another card (150 W, its own tensor rate): not an alias of the A10G.
  EXPECT_FALSE(resolve_system_name("a10").has_value());
}

// The names README and the vendors' pages use (review 5 L2: "-H trainium2" was refused):
// spaces as dashes, the vendor dropped, then the alias table.
TEST(RentedChips, MarketingNamesResolve) {
  EXPECT_EQ(resolve_system_name("trainium2"), "trn2");
  EXPECT_EQ(resolve_system_name("AWS Trainium2"), "trn2");
  EXPECT_EQ(resolve_system_name("trn2u.48xlarge"), "trn2-ultraserver");
  EXPECT_EQ(resolve_system_name("Intel Gaudi 3"), "gaudi-3");
  EXPECT_EQ(resolve_system_name("TPU v5p"), "tpu-v5p");
  EXPECT_EQ(resolve_system_name("Google TPU v6e"), "tpu-v6e");
  EXPECT_EQ(resolve_system_name("tpu7x"), "tpu-ironwood");
  EXPECT_EQ(resolve_system_name("AMD Instinct MI325X"), "mi325x");
  EXPECT_EQ(resolve_system_name("NVIDIA GB200 NVL72"), "gb200-nvl72");
  EXPECT_EQ(load_system("AWS Trainium2").name, "trn2");
  // "Cloud TPU" and a vendor alone name no chip.
  EXPECT_FALSE(resolve_system_name("Cloud TPU").has_value());
  EXPECT_FALSE(resolve_system_name("nvidia").has_value());
}

TEST(RentedChips, DerivedFiguresByHand) {
  // FLOPs per byte = bf16 dense / memory bandwidth; sweep = capacity / bandwidth.
  // A100 40GB: 312 / 1.555 = 200.6; 40 / 1.555 = 25.7 ms. L4: 121 / 0.3 = 403.3; 80 ms.
  // Gaudi 3: 1835 / 3.67 = 500; 128 / 3.67 = 34.9 ms. H100 NVL: 835.5 / 3.9 = 214.2.
  const auto fpb = [](const char* n) { return flops_per_byte(load_system(n).chip, MatmulPrecision::bf16).value(); };
  const auto sweep_ms = [](const char* n) {
    const SystemSpec s = load_system(n);
    return to_ms(hbm_sweep_time(s.chip.hbm_capacity, s.chip.hbm_bandwidth));
  };
  EXPECT_NEAR(fpb("a100-40gb"), 200.64, 0.01);
  EXPECT_NEAR(sweep_ms("a100-40gb"), 25.72, 0.01);
  EXPECT_NEAR(fpb("l4"), 403.33, 0.01);
  EXPECT_NEAR(sweep_ms("l4"), 80.0, 1e-9);
  EXPECT_NEAR(fpb("gaudi-3"), 500.0, 0.01);
  EXPECT_NEAR(sweep_ms("gaudi-3"), 34.88, 0.01);
  EXPECT_NEAR(fpb("h100-nvl"), 214.23, 0.01);
}

}  // namespace
}  // namespace chalk
