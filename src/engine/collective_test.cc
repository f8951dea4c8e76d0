#include "chalk/engine/collective.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

TEST(Collective, RingSteps) {
  EXPECT_DOUBLE_EQ(ring_steps(8, 2, 0), 14);  // all-reduce on a switch: 2 (n - 1)
  EXPECT_DOUBLE_EQ(ring_steps(8, 1, 0), 7);
  EXPECT_DOUBLE_EQ(ring_steps(64, 2, 3), 18);  // 4 x 4 x 4 torus: 2 x 3 x (4 - 1)
  EXPECT_DOUBLE_EQ(ring_steps(1, 2, 0), 0);
}

TEST(Collective, SmallAllReduceIsLatencyBound) {
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  // DeepSeek-V3 hidden 7168 x bf16 at batch 1: 14336 B. Ring LL at 4 ranks: 6.6 + 6 x 0.6 =
  // 10.2 us + 2 (3/4) 14336 / (0.19 x 0.8 x 450 GB/s) = 0.314 us.
  const auto t4 = all_reduce(bytes(14336), 4, nvlink);
  EXPECT_EQ(t4.protocol, "ring-LL");
  EXPECT_NEAR(to_us(t4.time), 10.514, 0.001);
  // At 8 ranks ring LL gives 6.6 + 14 x 0.6 + 2 (7/8) 14336 / 68.4e9 = 15.37 us, below the
  // 25.6 us that nccl-tests measures at its fastest on 8 H100 (h100-sxm.json
  // small_all_reduce_s: 1.75 x 1024 / 0.07 GB/s): the floor binds.
  const auto t8 = all_reduce(bytes(14336), 8, nvlink);
  EXPECT_EQ(t8.protocol, "floor");
  EXPECT_NEAR(to_us(t8.time), 25.6, 1e-9);
}

TEST(Collective, SmallAllReduceFloorOnA100WhereTheEngineRunsNccl) {
  // FT-GPT175B: d_model 12288 in fp16, TP8 on 8 A100-SXM4 (NVLink3 300 GB/s x 0.66 = 198
  // GB/s). One decode token is 24576 B; NCCL's ring LL would take 6.6 + 14 x 0.6 = 15.0 us +
  // 1.75 x 24576 / (0.19 x 198e9) = 1.143 us = 16.14 us (LL128: 40.6 + 0.23 us). nccl-tests
  // on 8 A100 (NCCL 2.18.5) takes at least 41.9 us at any size (32 KB: 1.75 x 32768 /
  // 1.37e9), and 42-45 us from 1 KB to 256 KB: a100-80gb.json small_all_reduce_s.
  const LinkModel nvlink = scale_up_link(load_system("a100-80gb"));
  EXPECT_NEAR(nvlink.all_reduce_floor_s, 41.9e-6, 1e-15);
  const TpAllReduce nccl = engine_tp_all_reduce("fastertransformer");
  const auto one = tp_all_reduce(bytes(24576), 1, 8, nvlink, nccl);
  EXPECT_EQ(one.protocol, "floor");
  EXPECT_NEAR(to_us(one.time), 41.9, 1e-9);
  // 16 tokens, 393216 B: LL 15.0 + 1.75 x 393216 / 37.62e9 = 15.0 + 18.29 = 33.29 us, still
  // under the floor (measured at 256 KB: 45.4 us).
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(393216), 16, 8, nvlink, nccl).time), 41.9, 1e-9);
  // 4 MiB: LL128 40.6 + 1.75 x 4194304 / (0.9375 x 198e9) = 40.6 + 39.54 = 80.14 us, above
  // it (measured: 1.75 x 4 MiB / 71.43 GB/s = 102.8 us).
  const auto big = all_reduce(bytes(4194304), 8, nvlink);
  EXPECT_EQ(big.protocol, "ring-LL128");
  EXPECT_NEAR(to_us(big.time), 80.14, 0.01);
  // Below 8 ranks no figure is measured: TP4 keeps LL, 6.6 + 6 x 0.6 + 1.5 x 24576 / 37.62e9
  // = 10.2 + 0.980 = 11.18 us.
  EXPECT_NEAR(to_us(all_reduce(bytes(24576), 4, nvlink).time), 11.18, 0.01);
  // vLLM's own one-shot kernel is not NCCL: 6.45 + 7 x 24576 / (0.88 x 300e9) = 7.102 us.
  const auto vllm = tp_all_reduce(bytes(24576), 1, 8, nvlink, engine_tp_all_reduce("vllm"));
  EXPECT_EQ(vllm.protocol, "one-shot");
  EXPECT_NEAR(to_us(vllm.time), 7.102, 0.001);
  // vLLM's ROCm kernel on MI300X, priced by RCCL's ring for want of its own latency, does not
  // pay RCCL's floor (44.8 us): LL 15.0 + 1.75 x 24576 / (0.19 x 0.706 x 448e9) = 15.72 us; an
  // engine that runs RCCL does.
  const LinkModel mesh = scale_up_link(load_system("mi300x"));
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(24576), 1, 8, mesh, engine_tp_all_reduce("vllm")).time), 15.72, 0.01);
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(24576), 1, 8, mesh, nccl).time), 44.8, 1e-9);
  // A system whose file states none (B200) keeps NCCL's LL: 15.0 + 1.75 x 24576 / (0.19 x
  // 0.8 x 900e9) = 15.31 us.
  EXPECT_NEAR(to_us(all_reduce(bytes(24576), 8, scale_up_link(load_system("b200"))).time), 15.31, 0.01);
}

TEST(Collective, ReproducesAzureNcclH100) {
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  // AZURE-NCCL-H100: 1 MB at 43.7 GB/s busBW -> 2 (7/8) 1048576 / 43.7e9 = 42.0 us (the LL
  // calibration point); 16 MB at 234 GB/s -> 125.5 us, which LL128 gives unfitted:
  // 14 + 14 x 1.9 + 1.75 x 16777216 / (0.9375 x 360e9) = 127.6 us.
  EXPECT_NEAR(to_us(all_reduce(bytes(1048576), 8, nvlink).time), 42.0, 0.5);
  const auto t16 = all_reduce(bytes(16777216), 8, nvlink);
  EXPECT_EQ(t16.protocol, "ring-LL128");
  EXPECT_NEAR(to_us(t16.time), 127.6, 0.2);
  EXPECT_NEAR(to_us(t16.time) / 125.5, 1.0, 0.02);
  // 8 GiB: ring Simple at 0.8 x 450 = 360 GB/s busBW (8 x H200 ring measured 367); the
  // measured 479 is NVLS, not modelled.
  const double m = 8.0 * 1073741824;
  const auto t8g = all_reduce(bytes(m), 8, nvlink);
  EXPECT_EQ(t8g.protocol, "ring-Simple");
  EXPECT_NEAR(1.75 * m / t8g.time.value() / 1e9, 360, 1);
}

TEST(Collective, ReproducesRcclOnMi300xFromItsOwnLine) {
  // mi300x.json states RCCL's large-message line (Azure fork ND_MI300X_v5_results.md, fitted
  // on 8 MB-8 GB): 0.706 of 448 GB/s = 316.288 GB/s, 69 us a call replacing Simple's
  // 8.4 + 14 x 3.4 us.
  const LinkModel fabric = scale_up_link(load_system("mi300x"));
  EXPECT_DOUBLE_EQ(fabric.bandwidth.value(), 448e9 * 0.706);
  EXPECT_NEAR(to_us(fabric.protocols.back().base_latency), 69.0, 1e-9);
  EXPECT_EQ(fabric.protocols.back().step_latency.value(), 0.0);
  // 1 GiB: Simple, 69 + 1.75 x 1073741824 / 316.288e9 = 69 + 5940.94 = 6009.94 us (measured:
  // 1.75 x 1073741824 / 313.92e9 = 5985.8 us); LL128 would take 40.6 + 6337.0 = 6377.6.
  const auto t1g = all_reduce(bytes(1073741824), 8, fabric);
  EXPECT_EQ(t1g.protocol, "ring-Simple");
  EXPECT_NEAR(to_us(t1g.time), 6009.94, 0.01);
  // 64 MiB: LL128 (NCCL's 14 + 14 x 1.9 us kept) 40.6 + 117440512 / (0.9375 x 316.288e9) =
  // 436.66 us, under the line's 440.31 (measured 440.9).
  const auto t64 = all_reduce(bytes(67108864), 8, fabric);
  EXPECT_EQ(t64.protocol, "ring-LL128");
  EXPECT_NEAR(to_us(t64.time), 436.66, 0.01);
  // The other collectives pay the same call time: all-gather of 1 GiB, 69 + 7/8 x 1073741824 /
  // 316.288e9 = 3039.47 us (Simple; LL128 14 + 7 x 1.9 + 3168.5 = 3195.8); all-to-all of 64 MiB
  // a rank, LL128 14 + 1.9 + 58720256 / (0.9375 x 316.288e9) = 213.93 us (Simple 254.65).
  EXPECT_NEAR(to_us(all_gather(bytes(1073741824), 8, fabric).time), 3039.47, 0.01);
  EXPECT_NEAR(to_us(all_to_all(bytes(67108864), 8, fabric).time), 213.93, 0.01);
  // A system that states neither keeps NCCL's ring on NVLink at 0.8 (H100: 360 GB/s, Simple
  // 8.4 us + 3.4 us a step).
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  EXPECT_DOUBLE_EQ(nvlink.bandwidth.value(), 360e9);
  EXPECT_NEAR(to_us(nvlink.protocols.back().base_latency), 8.4, 1e-9);
  EXPECT_NEAR(to_us(nvlink.protocols.back().step_latency), 3.4, 1e-9);
  // A stated fraction alone moves the bandwidth, not the latencies.
  SystemSpec h100 = load_system("h100-sxm");
  h100.collective_efficiency = 0.5;
  const LinkModel half = scale_up_link(h100);
  EXPECT_DOUBLE_EQ(half.bandwidth.value(), 225e9);
  EXPECT_NEAR(to_us(half.protocols.back().step_latency), 3.4, 1e-9);
}

TEST(Collective, VllmCustomAllReduceOneShotAndTwoShot) {
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  const TpAllReduce vllm = engine_tp_all_reduce("vllm");
  // Llama-3.1-70B decode at batch 16 on TP4: 16 x 8192 x 2 B = 262144 B < 512 KiB, so
  // one-shot: 6.45 us + 3 x 262144 / (0.88 x 450e9) = 6.45 + 1.986 = 8.436 us, where NCCL's
  // ring LL takes 6.6 + 6 x 0.6 + 1.5 x 262144 / (0.19 x 360e9) = 10.2 + 5.749 = 15.949 us.
  const auto one = tp_all_reduce(bytes(262144), 16, 4, nvlink, vllm);
  EXPECT_EQ(one.protocol, "one-shot");
  EXPECT_NEAR(to_us(one.time), 8.436, 0.001);
  EXPECT_NEAR(to_us(all_reduce(bytes(262144), 4, nvlink).time), 15.949, 0.001);
  // Batch 64, 1 MiB, is not below 512 KiB: two-shot, 2 x 6.45 + 1.5 x 1048576 / (0.47 x
  // 450e9) = 12.9 + 7.437 = 20.337 us (PR #24532 measured ca_2stage 18 us, ca_1stage 14).
  const auto two = tp_all_reduce(bytes(1048576), 64, 4, nvlink, vllm);
  EXPECT_EQ(two.protocol, "two-shot");
  EXPECT_NEAR(to_us(two.time), 20.337, 0.001);
  // TP8 switches at 256 KiB: 262143 B one-shot (6.45 + 7 x 262143 / 396e9 = 11.084 us),
  // 262144 B two-shot (12.9 + 1.75 x 262144 / 211.5e9 = 15.069 us).
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(262143), 16, 8, nvlink, vllm).time), 11.084, 0.001);
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 8, nvlink, vllm).protocol, "two-shot");
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(262144), 16, 8, nvlink, vllm).time), 15.069, 0.001);
  // TP2 is one-shot at any size below 8 MiB: 4 MiB in 6.45 + 4194304 / 396e9 = 17.042 us.
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(4194304), 256, 2, nvlink, vllm).time), 17.042, 0.001);
  // 8 MiB and above, TP3 (not 2, 4, 6, 8), TPU ICI and the scale-out network: NCCL.
  EXPECT_EQ(tp_all_reduce(bytes(8388608), 512, 4, nvlink, vllm).time, all_reduce(bytes(8388608), 4, nvlink).time);
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 3, nvlink, vllm).time, all_reduce(bytes(262144), 3, nvlink).time);
  const LinkModel ici = scale_up_link(load_system("tpu-v4"));
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 4, ici, vllm).protocol, "ici");
  // AMD's Infinity Fabric mesh keeps RCCL's ring (no measured latency of the custom kernels
  // there); B200's NVLink 5 doubles the rate: one-shot 6.45 + 3 x 262144 / (0.88 x 900e9) =
  // 7.443 us.
  const LinkModel mesh = scale_up_link(load_system("mi300x"));
  EXPECT_FALSE(mesh.peer_to_peer);
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 4, mesh, vllm).time, all_reduce(bytes(262144), 4, mesh).time);
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(262144), 16, 4, scale_up_link(load_system("b200")), vllm).time), 7.443, 0.001);
  const LinkModel ib = scale_out_link(load_system("h100-sxm"));
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 4, ib, vllm).time, all_reduce(bytes(262144), 4, ib).time);
  // "nccl" (an engine without custom kernels) is the ring; one rank costs nothing.
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 4, nvlink, engine_tp_all_reduce("other")).time, all_reduce(bytes(262144), 4, nvlink).time);
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 1, nvlink, vllm).time.value(), 0);
  EXPECT_THROW(tp_all_reduce(bytes(262144), -1, 4, nvlink, vllm), InputError);
  EXPECT_THROW(tp_all_reduce(bytes(-1), 16, 4, nvlink, vllm), InputError);
}

TEST(Collective, StageLatencyOfAProfileReplacesTheMeasuredOne) {
  // An engine profile's allreduce_latency_s (chalk calibrate) replaces the 6.45 us stage:
  // at 15 us the TP4 one-shot of 262144 B above is 15 + 1.986 = 16.986 us, the two-shot of
  // 1 MiB 2 x 15 + 7.437 = 37.437 us; NCCL's ring (TP3) keeps its own 15.949-style latencies.
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  const TpAllReduce vllm = engine_tp_all_reduce("vllm");
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(262144), 16, 4, nvlink, vllm, microseconds(15)).time), 16.986, 0.001);
  EXPECT_NEAR(to_us(tp_all_reduce(bytes(1048576), 64, 4, nvlink, vllm, microseconds(15)).time), 37.437, 0.001);
  EXPECT_EQ(tp_all_reduce(bytes(262144), 16, 3, nvlink, vllm, microseconds(15)).time, all_reduce(bytes(262144), 3, nvlink).time);
  try {
    tp_all_reduce(bytes(262144), 16, 4, nvlink, vllm, microseconds(-1));
    FAIL() << "a negative stage latency was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "allreduce_latency_s: must be a finite number of seconds >= 0, got -1e-06");
  }
}

TEST(Collective, TensorRtLlmOneShotByTokens) {
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  const TpAllReduce trt = engine_tp_all_reduce("trtllm");
  EXPECT_TRUE(trt.fused_norm);
  // One-shot up to 128 tokens whatever the bytes: 128 x 8192 x 2 = 2 MiB on TP4 in
  // 6.45 + 3 x 2097152 / 396e9 = 22.337 us; 129 tokens two-shot: 12.9 + 1.5 x 2113536 /
  // 211.5e9 = 27.889 us.
  const auto at128 = tp_all_reduce(bytes(2097152), 128, 4, nvlink, trt);
  EXPECT_EQ(at128.protocol, "one-shot");
  EXPECT_NEAR(to_us(at128.time), 22.337, 0.001);
  const auto at129 = tp_all_reduce(bytes(2113536), 129, 4, nvlink, trt);
  EXPECT_EQ(at129.protocol, "two-shot");
  EXPECT_NEAR(to_us(at129.time), 27.889, 0.001);
}

TEST(Collective, TpuTorus) {
  const LinkModel ici = scale_up_link(load_system("tpu-v4"));
  EXPECT_EQ(ici.torus_dimensions, 3);
  // PaLM 540B decode at batch 64: 64 x 18432 x 2 B = 2.36 MB over 64 chips: 5 us + 18 hops
  // x 1 us + 2 (63/64) 2359296 / (0.8 x 270 GB/s) = 21.5 us -> 44.5 us.
  EXPECT_NEAR(to_us(all_reduce(bytes(2359296), 64, ici).time), 44.5, 0.1);
  EXPECT_THROW(scale_out_link(load_system("tpu-v4")), InputError);  // no scale-out stated
}

TEST(Collective, OtherCollectivesAndErrors) {
  const LinkModel nvlink = scale_up_link(load_system("h100-sxm"));
  EXPECT_EQ(all_reduce(bytes(1e6), 1, nvlink).time.value(), 0);
  EXPECT_EQ(all_gather(bytes(1e6), 1, nvlink).time.value(), 0);
  // An all-gather moves half an all-reduce's bytes in half its steps.
  EXPECT_LT(all_gather(bytes(1e9), 8, nvlink).time, all_reduce(bytes(1e9), 8, nvlink).time);
  // All-to-all: one step, (n-1)/n of the buffer: Simple 8.4 + 3.4 + 0.875 x 1e9 / 360e9.
  EXPECT_NEAR(to_us(all_to_all(bytes(1e9), 8, nvlink).time), 11.8 + 2430.6, 0.5);
  EXPECT_THROW(all_reduce(bytes(-1), 8, nvlink), InputError);
  const LinkModel ib = scale_out_link(load_system("h100-sxm"));
  EXPECT_NEAR(to_gb_per_s(ib.bandwidth), 36.5625, 1e-9);  // 50 GB/s x 39/50 x 15/16
}

// The time-only variants (no protocol name) give the very same numbers, on NVLink, on the
// scale-out network and on a TPU torus, at latency- and bandwidth-bound sizes.
TEST(Collective, TimeOnlyVariantsMatch) {
  for (const LinkModel& l : {scale_up_link(load_system("h100-sxm")), scale_up_link(load_system("a100-80gb")), scale_out_link(load_system("h100-sxm")),
                             scale_up_link(load_system("tpu-v5p"))}) {
    for (double m : {0.0, 4096.0, 1.835e6, 1e9}) {
      for (int64_t n : {1, 2, 8, 64}) {
        EXPECT_EQ(all_reduce_time(Bytes(m), n, l).value(), all_reduce(Bytes(m), n, l).time.value());
        EXPECT_EQ(all_gather_time(Bytes(m), n, l).value(), all_gather(Bytes(m), n, l).time.value());
        EXPECT_EQ(all_to_all_time(Bytes(m), n, l).value(), all_to_all(Bytes(m), n, l).time.value());
      }
    }
  }
  EXPECT_THROW(all_reduce_time(Bytes(-1), 8, scale_up_link(load_system("h100-sxm"))), InputError);
}

}  // namespace
}  // namespace chalk
