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
                           "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-ironwood", "rubin-nvl144",
                           // issue 17: the chips people rent today, and the announced Rubins
                           "l40s", "h20", "b300", "mi325x", "trn2", "trn2-ultraserver", "rubin-nvl576"}) {
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

TEST(HardwareCatalog, NewSystemsCarryDensePeaksNotSparse) {
  auto tf = [](const char* n, MatmulPrecision p) { return to_tflop_per_s(load_system(n).chip.peak_for(p)); };
  // L40S datasheet: FP8 733 dense / 1,466 sparse; BF16 362.05 dense / 733 sparse.
  EXPECT_DOUBLE_EQ(tf("l40s", MatmulPrecision::fp8), 733.0);
  EXPECT_DOUBLE_EQ(tf("l40s", MatmulPrecision::bf16), 362.05);
  // Trainium2: 1,299 FP8 dense (2,563 is the sparse figure); 667 BF16.
  EXPECT_DOUBLE_EQ(tf("trn2", MatmulPrecision::fp8), 1299.0);
  EXPECT_DOUBLE_EQ(tf("trn2-ultraserver", MatmulPrecision::bf16), 667.0);
  // H20: 148 BF16 dense, about 15% of H100's 989.4.
  EXPECT_DOUBLE_EQ(tf("h20", MatmulPrecision::bf16), 148.0);
  // B300 NVFP4 14,000 dense (18,000 sparse) per aiconfigurator; no FP4 on MI325X (CDNA3).
  EXPECT_DOUBLE_EQ(tf("b300", MatmulPrecision::fp4), 14000.0);
  EXPECT_FALSE(load_system("mi325x").chip.supports(MatmulPrecision::fp4));
  // Rubin Ultra NVL576: 5 EF FP8 training / 144 packages = 34.7 PF per package.
  EXPECT_NEAR(tf("rubin-nvl576", MatmulPrecision::fp8) * 144, 5.0e6, 0.01e6);
}

TEST(HardwareCatalog, DerivedFiguresOfTheNewSystemsByHand) {
  // F / W in FLOPs per byte (bf16 dense peak / HBM bandwidth) and the HBM sweep
  // capacity / bandwidth in ms (GB / (TB/s) = ms), each worked by hand:
  struct Row {
    const char* name;
    double flop_per_byte, sweep_ms;
  };
  for (const Row& r : {
           Row{"l40s", 419.039, 55.556},          // 362.05 / 0.864; 48 GB / 0.864 TB/s (GDDR6)
           Row{"h20", 37.0, 24.0},                // 148 / 4.0; 96 / 4.0: compute-starved, bandwidth-rich
           Row{"b300", 292.208, 35.065},          // 2250 / 7.7; 270 / 7.7
           Row{"gb300-nvl72", 312.5, 34.875},     // 2500 / 8.0; 279 / 8.0
           Row{"mi325x", 217.9, 42.667},          // 1307.4 / 6.0; 256 / 6.0
           Row{"mi355x", 314.575, 36.0},          // 2516.6 / 8.0; 288 / 8.0
           Row{"tpu-v5p", 166.004, 36.890},       // 459 / 2.765; 102.0 (95 GiB) / 2.765
           Row{"tpu-v6e", 560.440, 19.536},       // 918 / 1.638; 32 / 1.638
           Row{"tpu-ironwood", 312.602, 27.940},  // 2307 / 7.38; 206.2 (192 GiB) / 7.38
           Row{"trn2", 230.0, 35.545},            // 667 / 2.9; 103.08 (96 GiB) / 2.9
           Row{"trn2-ultraserver", 230.0, 35.545},
           Row{"rubin-nvl576", 544.201, 31.348},  // 17360 / 31.9; 1000 / 31.9
       }) {
    const SystemSpec s = load_system(r.name);
    EXPECT_NEAR(flops_per_byte(s.chip, MatmulPrecision::bf16).value(), r.flop_per_byte, 0.001) << r.name;
    EXPECT_NEAR(to_ms(hbm_sweep_time(s.chip.hbm_capacity, s.chip.hbm_bandwidth)), r.sweep_ms, 0.001) << r.name;
  }
}

TEST(HardwareCatalog, ScaleUpTopologyPowerAndStatus) {
  // Trn2 UltraServer: 4 instances of a 4x4 torus joined in rings = 4 x 4 x 4 = 64 chips;
  // 1,280 GB/s per chip (1,024 intra + 256 inter) both directions -> 640 per direction.
  auto topology = [](const SystemSpec& s) { return s.scale_up_topology ? std::string(to_string(*s.scale_up_topology)) : "none"; };
  const SystemSpec us = load_system("trn2-ultraserver");
  EXPECT_EQ(us.scale_up_domain, 64);
  EXPECT_EQ(topology(us), "3d-torus");
  EXPECT_EQ(us.scale_up_torus_dims, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_DOUBLE_EQ(to_gb_per_s(us.scale_up_bandwidth_per_direction), 640.0);
  // EFAv3 3,200 Gb/s per 16 chips = 200 Gb/s = 25 GB/s per chip per direction.
  EXPECT_DOUBLE_EQ(to_gb_per_s(us.scale_out_bandwidth_per_direction), 25.0);
  const SystemSpec v5p = load_system("tpu-v5p");
  EXPECT_EQ(topology(v5p), "3d-torus");
  EXPECT_EQ(v5p.scale_up_torus_dims, (std::vector<int64_t>{16, 20, 28}));  // 8,960 chips
  EXPECT_EQ(topology(load_system("tpu-v6e")), "2d-torus");
  EXPECT_EQ(topology(load_system("l40s")), "pcie");
  EXPECT_EQ(topology(load_system("mi325x")), "full-mesh");
  EXPECT_EQ(topology(load_system("b300")), "switch");
  // Power per chip from the datasheets: L40S 350 W, H20 400 W, B300 1,100 W, GB300 1,400 W.
  EXPECT_EQ(load_system("l40s").power_w_per_chip.value_or(0), 350.0);
  EXPECT_EQ(load_system("h20").power_w_per_chip.value_or(0), 400.0);
  EXPECT_EQ(load_system("b300").power_w_per_chip.value_or(0), 1100.0);
  EXPECT_EQ(load_system("gb300-nvl72").power_w_per_chip.value_or(0), 1400.0);
  EXPECT_FALSE(load_system("trn2").power_w_per_chip.has_value());  // not published
  // Only the keynote Rubins are announced; every other entry is a shipping product.
  for (const auto& n : builtin_system_names()) {
    const bool announced = n == "rubin-nvl144" || n == "rubin-nvl576";
    EXPECT_EQ(to_string(load_system(n).status), announced ? "announced" : "shipping") << n;
  }
}

TEST(HardwareCatalog, AmdInstinctGemmRatesAreSustainedOnRepresentativeInputs) {
  // AMD's maximum achievable GEMM rates (docs/formulas.md, "AMD Instinct GEMM rate on
  // representative inputs"). MI325X, measured with normal-distribution inputs for 30 s a
  // shape (ROCm TAF blog, 2026-10-06): BF16 831.40 / 1307.4 = 0.6359, FP8 1408.06 / 2614.9
  // = 0.5385. MI300X FP8: its trig_float (low-toggle) maximum 1223.6 x the MI325X's
  // normal / trig_float ratio 1408.06 / 1527.7 = 0.9217 -> 1127.8 / 2614.9 = 0.4313; BF16
  // stays stas00's MAMF, 668.4 / 1300 = 0.514 (AMD's BF16 moves 1% with the inputs).
  const SystemSpec mi325x = load_system("mi325x"), mi300x = load_system("mi300x");
  EXPECT_NEAR(mi325x.efficiency.matmul_for(MatmulPrecision::bf16), 831.40 / 1307.4, 5e-4);
  EXPECT_NEAR(mi325x.efficiency.matmul_for(MatmulPrecision::fp8), 1408.06 / 2614.9, 5e-4);
  EXPECT_NEAR(mi300x.efficiency.matmul_for(MatmulPrecision::fp8), 1223.6 * (1408.06 / 1527.7) / 2614.9, 5e-4);
  EXPECT_NEAR(mi300x.efficiency.matmul_for(MatmulPrecision::bf16), 0.514, 1e-9);
  // The same die at 1,000 W (MI325X) sustains a higher clock than at 750 W (MI300X).
  EXPECT_GT(mi325x.efficiency.matmul_for(MatmulPrecision::fp8), mi300x.efficiency.matmul_for(MatmulPrecision::fp8));
}

TEST(HardwareCatalog, RackSystemsStateTheirGpusPerHost) {
  // Each rack file states its GPUs under one host OS (its compute tray or blade): GB200 and GB300
  // NVL72 trays hold 4 GPUs, Vera Rubin NVL144 trays 4 packages (72 / 18 trays), Rubin Ultra
  // NVL576 blades 2 packages (8 dies / 4 per package). Unstated, chips_per_host assumes an
  // 8-GPU HGX board, which a launch file would then ask one pod for.
  for (const auto& [n, chips] : std::vector<std::pair<const char*, int64_t>>{{"gb200-nvl72", 4}, {"gb300-nvl72", 4}, {"rubin-nvl144", 4}, {"rubin-nvl576", 2}}) {
    const SystemSpec s = load_system(n);
    EXPECT_EQ(s.host_chips, chips) << n;
    EXPECT_EQ(chips_per_host(s), chips) << n;
    EXPECT_FALSE(s.host_chips_source.empty()) << n;
  }
  EXPECT_EQ(load_system("h100-sxm").host_chips, 0);  // unstated: the HGX board's 8
  EXPECT_EQ(chips_per_host(load_system("h100-sxm")), 8);
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
    EXPECT_EQ(std::string(e.what()), "h.json: chip.hbm_tb_per_s: must be in [1e-06, 10000], got 0");
  }
  EXPECT_THROW(load_system("/nonexistent/dir/x.json"), InputError);
}

/// The error of hardware file `base` read as `name` with its first `from` replaced by `to`:
/// "no error" when it reads, "pattern not found: ..." when `from` is not in it.
std::string edited_file_error(const std::string& base, const std::string& name, const std::string& from, const std::string& to) {
  std::string text = base;
  const auto pos = text.find(from);
  if (pos == std::string::npos) return "pattern not found: " + from;
  text.replace(pos, from.size(), to);
  try {
    system_from_json(text, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HardwareFile, OptionalStatusTopologyAndPowerAreChecked) {
  const std::string base = read_file(std::string(CHALK_SOURCE_DIR) + "/data/hardware/tpu-v5p.json");
  const auto error_of = [&](const std::string& from, const std::string& to) { return edited_file_error(base, "v.json", from, to); };
  EXPECT_EQ(error_of("\"date\"", "\"status\": \"rumoured\", \"date\""),
            "v.json: status: unknown status 'rumoured'; expected shipping or announced");
  EXPECT_EQ(error_of("\"3d-torus\"", "\"hypercube\""),
            "v.json: scale_up.topology: unknown topology 'hypercube'; expected switch, full-mesh, 2d-torus, 3d-torus or pcie");
  EXPECT_EQ(error_of("\"3d-torus\"", "\"switch\""), "v.json: scale_up.torus_dims: only a 2d-torus or 3d-torus topology has torus dimensions");
  EXPECT_EQ(error_of("\"3d-torus\"", "\"2d-torus\""), "v.json: scale_up.torus_dims: a 2d-torus has 2 dimensions, got 3");
  // 16 x 20 x 27 = 8,640, not the 8,960 chips of the pod.
  EXPECT_EQ(error_of("28\n", "27\n"), "v.json: scale_up.torus_dims: dimensions multiply to 8640, expected domain_chips 8960");
  EXPECT_EQ(error_of("28\n", "\"28\"\n"), "v.json: scale_up.torus_dims: expected a list of integers, got \"28\"");
  EXPECT_EQ(error_of("16,\n", "0,\n"), "v.json: scale_up.torus_dims: each dimension must be in 1..1048576, got 0");
  EXPECT_EQ(error_of("\"price\"", "\"power\": {\"watts_per_chip\": -5, \"source\": \"x\"}, \"price\""),
            "v.json: power.watts_per_chip: must be in [1e-06, 1e+06], got -5");
  EXPECT_EQ(error_of("\"price\"", "\"power\": {\"watts\": 5, \"source\": \"x\"}, \"price\"").rfind("v.json: power.watts: unknown field", 0), 0u);
  // op_floor: a fixed time per op in (0, 1000] us, with its kind and source (review 5 H1).
  EXPECT_EQ(error_of("\"us\": 7.7", "\"us\": 0"), "v.json: op_floor.us: must be in [1e-06, 1000], got 0");
  EXPECT_EQ(error_of("\"us\": 7.7", "\"us\": 5000"), "v.json: op_floor.us: must be in [1e-06, 1000], got 5000");
  EXPECT_EQ(error_of("\"kind\": \"XLA fused op\",", "").rfind("v.json: op_floor.kind", 0), 0u);
  EXPECT_NEAR(system_from_json(base, "v.json").op_floor->value(), 7.7e-6, 1e-15);
  // The untouched file reads, with its torus.
  EXPECT_EQ(error_of("\"DCN\"", "\"DCN\""), "no error");
}

TEST(HardwareFile, CollectiveLineIsOptionalAndChecked) {
  // scale_up.collective_efficiency in (0, 1] and collective_latency_s in (0, 0.01] s, each
  // with its source; absent: 0 and none (NVLink's 0.8 and NCCL's latencies, collective.h).
  const SystemSpec h100 = load_system("h100-sxm");
  EXPECT_EQ(h100.collective_efficiency, 0.0);
  EXPECT_FALSE(h100.collective_latency.has_value());
  const SystemSpec mi300x = load_system("mi300x");
  EXPECT_DOUBLE_EQ(mi300x.collective_efficiency, 0.706);
  ASSERT_TRUE(mi300x.collective_latency.has_value());
  EXPECT_NEAR(mi300x.collective_latency->value(), 69e-6, 1e-15);
  EXPECT_FALSE(mi300x.collective_efficiency_source.empty());
  // A100 (NVLink3, NCCL): ~200 GB/s bus bandwidth of 300 (nccl-tests #149) and Calculon's
  // 0.65: 0.66 with NCCL's own latencies, on both memory sizes of the same baseboard.
  for (const char* name : {"a100-80gb", "a100-40gb"}) {
    const SystemSpec a100 = load_system(name);
    EXPECT_DOUBLE_EQ(a100.collective_efficiency, 0.66) << name;
    EXPECT_FALSE(a100.collective_latency.has_value()) << name;
    EXPECT_FALSE(a100.collective_efficiency_source.empty()) << name;
  }
  const std::string base = read_file(std::string(CHALK_SOURCE_DIR) + "/data/hardware/mi300x.json");
  const auto error_of = [&](const std::string& from, const std::string& to) { return edited_file_error(base, "m.json", from, to); };
  EXPECT_EQ(error_of("\"collective_efficiency\": 0.706", "\"collective_efficiency\": 1.5"),
            "m.json: scale_up.collective_efficiency: must be a fraction in (0, 1] of gb_per_s_per_direction, got 1.5");
  EXPECT_EQ(error_of("\"collective_efficiency\": 0.706", "\"collective_efficiency\": 0"),
            "m.json: scale_up.collective_efficiency: must be a fraction in (0, 1] of gb_per_s_per_direction, got 0");
  EXPECT_EQ(error_of("\"collective_latency_s\": 6.9e-05", "\"collective_latency_s\": -1"),
            "m.json: scale_up.collective_latency_s: must be a time in (0, 0.01] s, got -1");
  EXPECT_EQ(error_of("\"collective_latency_s\": 6.9e-05", "\"collective_latency_s\": 0.5"),
            "m.json: scale_up.collective_latency_s: must be a time in (0, 0.01] s, got 0.5");
  EXPECT_EQ(error_of("\"collective_efficiency_source\"", "\"efficiency_source\"").rfind("m.json: scale_up.", 0), 0u);
  // scale_up.small_all_reduce_s: RCCL's least all-reduce time on 8 MI300X, 1.75 x 1024 B /
  // 0.04 GB/s = 44.8 us, in (0, 0.01] s with its source.
  EXPECT_NEAR(mi300x.small_all_reduce->value(), 44.8e-6, 1e-15);
  EXPECT_FALSE(mi300x.small_all_reduce_source.empty());
  EXPECT_FALSE(load_system("b200").small_all_reduce.has_value());
  EXPECT_EQ(error_of("\"small_all_reduce_s\": 4.48e-05", "\"small_all_reduce_s\": 0"),
            "m.json: scale_up.small_all_reduce_s: must be a time in (0, 0.01] s, got 0");
  EXPECT_EQ(error_of("\"small_all_reduce_s\": 4.48e-05", "\"small_all_reduce_s\": 0.02"),
            "m.json: scale_up.small_all_reduce_s: must be a time in (0, 0.01] s, got 0.02");
  EXPECT_EQ(error_of("\"small_all_reduce_source\"", "\"small_source\"").rfind("m.json: scale_up.", 0), 0u);
  EXPECT_EQ(error_of("\"collective_efficiency\": 0.706", "\"collective_efficiency\": 0.706"), "no error");
}

TEST(HardwareFile, YearIsOptionalAndChecked) {
  // Every built-in system states the year it first shipped and where that comes from.
  EXPECT_EQ(load_system("h100-sxm").year, 2022);
  EXPECT_EQ(load_system("gb200-nvl72").year, 2025);
  for (const auto& n : builtin_system_names()) {
    const SystemSpec s = load_system(n);
    if (s.year) {
      EXPECT_FALSE(s.year_source.empty()) << n;
    }
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
