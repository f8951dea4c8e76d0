// CUDA graphs (cuda_graphs.h) inside the engine step (overhead.h): each engine's captured
// sizes, padding up to the next, eager launches above the largest or under --enforce-eager.
#include "chalk/engine/cuda_graphs.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"
#include "chalk_testing/engine_deploy.h"

namespace chalk {
namespace {

using chalk::testing::engine_deploy;

TEST(CudaGraphs, EnginesCaptureSizes) {
  // vLLM @09f030ea: m = min(1024 x 1 x 2, 512, 8192) = 512; [1, 2, 4] + 8..248 by 8 (31) +
  // 256..512 by 16 (17) = 51 sizes.
  const auto v = vllm_capture_sizes(1024, 8192);
  ASSERT_EQ(v.size(), 51u);
  EXPECT_EQ(v[3], 8);
  EXPECT_EQ(v[33], 248);
  EXPECT_EQ(v[34], 256);
  EXPECT_EQ(v[35], 272);
  EXPECT_EQ(v.back(), 512);
  // max_num_seqs 64: m = 128, [1, 2, 4] + 8..128 = 19 sizes; a 300-token budget caps m at 300.
  EXPECT_EQ(vllm_capture_sizes(64, 8192).size(), 19u);
  EXPECT_EQ(vllm_capture_sizes(64, 8192).back(), 128);
  EXPECT_EQ(vllm_capture_sizes(1024, 300).back(), 288);
  // V0: 1, 2, 4, 8..256; max_num_seqs 100 rounds up to the captured 104.
  EXPECT_EQ(vllm_v0_capture_sizes(256).size(), 35u);
  EXPECT_EQ(vllm_v0_capture_sizes(100).back(), 104);
  // SGLang: [1, 2, 4, 8, 12] + 16..256 by 8 (31) + 272..496 by 16 (15) + 512 = 52 sizes.
  const auto s = sglang_capture_sizes(512);
  ASSERT_EQ(s.size(), 52u);
  EXPECT_EQ(s[4], 12);
  EXPECT_EQ(s[36], 272);
  EXPECT_EQ(s.back(), 512);
  EXPECT_EQ(sglang_capture_sizes(256).back(), 256);
  // TensorRT-LLM without padding: 1..32, 64, 128 (34); to 1536: + 256, 512, 1024, 1536.
  EXPECT_EQ(trtllm_capture_sizes(128, false).size(), 34u);
  EXPECT_EQ(trtllm_capture_sizes(1536, false).size(), 38u);
  EXPECT_EQ(trtllm_capture_sizes(128, true).size(), 19u);  // 1, 2, 4, 8..128 by 8
  // Per engine and release.
  EXPECT_EQ(engine_cuda_graphs("vllm").sizes.back(), 512);
  EXPECT_FALSE(engine_cuda_graphs("vllm").decode_only);
  EXPECT_EQ(engine_cuda_graphs("vllm-0.10").sizes.back(), 512);
  EXPECT_EQ(engine_cuda_graphs("vllm-0.4").sizes.back(), 256);  // V0, max_num_seqs 256
  EXPECT_FALSE(engine_cuda_graphs("vllm-0.4").per_token);  // V0 counts decode sequences
  EXPECT_TRUE(engine_cuda_graphs("trtllm").decode_only);
  EXPECT_EQ(engine_cuda_graphs("vllm", 64).sizes.back(), 128);
  EXPECT_EQ(engine_cuda_graphs("sglang").max_below_tp4, 256);
  EXPECT_FALSE(engine_cuda_graphs("trtllm").padding);
  EXPECT_TRUE(engine_cuda_graphs("trtllm-0.20").sizes.empty());  // TensorRT engine from C++: not modelled
  EXPECT_TRUE(engine_cuda_graphs("deepseek").sizes.empty());
}

TEST(CudaGraphs, GraphBatchPadsUpOrRunsEager) {
  const CudaGraphs v = engine_cuda_graphs("vllm");
  EXPECT_EQ(graph_batch(v, 100, 1, false), 104);
  EXPECT_EQ(graph_batch(v, 99.2, 1, false), 104);  // a fractional mean rounds up
  EXPECT_EQ(graph_batch(v, 512, 1, false), 512);
  EXPECT_EQ(graph_batch(v, 513, 1, false), 0);  // above the largest: eager
  EXPECT_EQ(graph_batch(v, 300, 1, true), 304);  // vLLM replays mixed steps piecewise
  const CudaGraphs s = engine_cuda_graphs("sglang");
  EXPECT_EQ(graph_batch(s, 300, 1, false), 0);    // cuda_graph_max_bs 256 below TP 4
  EXPECT_EQ(graph_batch(s, 300, 4, false), 304);  // 512 at TP 4
  EXPECT_EQ(graph_batch(s, 10, 4, true), 12);     // decodes beside prefill (an average of SGLang's separate steps)
  const CudaGraphs t = engine_cuda_graphs("trtllm");
  EXPECT_EQ(graph_batch(t, 64, 8, false), 64);
  EXPECT_EQ(graph_batch(t, 100, 8, false), 0);  // not captured, no padding: eager
  EXPECT_EQ(graph_batch(t, 64, 8, true), 0);    // context requests in the iteration: eager
  CudaGraphs eager = v;
  eager.eager = true;
  EXPECT_EQ(graph_batch(eager, 8, 1, false), 0);
  EXPECT_EQ(graph_batch(CudaGraphs{}, 100, 1, false), 100);  // none modelled: unpadded
}

TEST(CudaGraphs, BadCapsAreInputErrors) {
  EXPECT_THROW(vllm_capture_sizes(0, 8192), InputError);
  EXPECT_THROW(vllm_capture_sizes(1024, 0), InputError);
  EXPECT_THROW(sglang_capture_sizes(-1), InputError);
  EXPECT_THROW(trtllm_capture_sizes(0, false), InputError);
  try {
    engine_cuda_graphs("vllm", -5);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("max_sequences"), std::string::npos);
  }
}

TEST(CudaGraphs, BatchBetweenCapturedSizesPaysThePaddedMatmuls) {
  // Llama 3.1 8B on one H100, vLLM: batch 100 replays the graph of 104 tokens. The matmuls
  // see 4 more tokens: attention projections 32 x (2 x 4096^2 + 2 x 4096 x 1024) = 1.342e9
  // and FFN 32 x 3 x 4096 x 14336 = 5.637e9 parameters, 2 x 6.979e9 x 4 = 5.583e10 FLOPs
  // more, at 989.4 TFLOP/s x the deployment's matmul efficiency (0.803): +0.0703 ms of
  // t_compute. Every matmul stays memory-bound (the projections' 2 x 1.342e9 x 104 = 0.28
  // TFLOP take 0.35 ms against 2.7 GB of weights at 2.67 TB/s = 1.0 ms), so t_step is the
  // unpadded step's.
  // The GEMMs' tiles apart (dense_gemm.h: 64-row tiles pad 100 and 104 rows alike to 128).
  Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  d.system.chip.sm_count = 0;
  Deployment bare = d;
  bare.mechanisms.graphs = CudaGraphs{};
  EXPECT_NEAR(d.params.attention, 1.342177e9, 1e3);
  EXPECT_NEAR(d.params.dense_ffn, 5.637144e9, 1e3);
  const auto padded = engine_step(d, StepShape{100, 1024});
  const auto plain = engine_step(bare, StepShape{100, 1024});
  EXPECT_EQ(padded.graph_batch, 104);
  EXPECT_FALSE(padded.eager);
  EXPECT_EQ(padded.t_launch.value(), 0);
  const double rate = 989.4e12 * d.matmul_efficiency;
  EXPECT_NEAR(d.matmul_efficiency, 0.803, 0.001);
  EXPECT_NEAR(padded.t_compute.value() - plain.t_compute.value(), 2 * (1.342177e9 + 5.637144e9) * 4 / rate, 1e-9);
  EXPECT_NEAR(padded.t_step.value(), plain.t_step.value(), 1e-12);
  // A captured size pads nothing.
  EXPECT_NEAR(engine_step(d, StepShape{104, 1024}).t_compute.value(), engine_step(bare, StepShape{104, 1024}).t_compute.value(), 1e-12);
  // decode_step reports the graph.
  EXPECT_EQ(decode_step(d, 100, 1024).graph_batch, 104);
}

TEST(CudaGraphs, EagerAboveTheLargestHidesLaunchesBehindALongStep) {
  // Batch 600 > 512: eager, unpadded. The host launches 32 x (5 + 4) + 4 = 292 kernels x
  // 8.4 ms / 292 = 8.4 ms, while the GPU step (2 x 8e9 x 600 FLOPs at ~795 TFLOP/s alone
  // ~12 ms) is longer: the launches hide, the step is the GPU's.
  const Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  Deployment bare = d;
  bare.mechanisms.graphs = CudaGraphs{};
  const auto r = engine_step(d, StepShape{600, 128});
  EXPECT_TRUE(r.eager);
  EXPECT_EQ(r.graph_batch, 0);
  EXPECT_EQ(r.kernels, 292);
  EXPECT_NEAR(r.t_launch.value(), 8.4e-3, 1e-12);
  const auto plain = engine_step(bare, StepShape{600, 128});
  EXPECT_GT(plain.t_step.value(), 8.4e-3);
  EXPECT_DOUBLE_EQ(r.t_step.value(), plain.t_step.value());
  EXPECT_NE(r.governs, "launch");
}

TEST(CudaGraphs, EnforceEagerMakesASmallStepLaunchBound) {
  // Batch 1 under --enforce-eager: the GPU step (5.67 ms of operations + 292 x 6.3 us of
  // kernel floor = 7.51 ms) is shorter than the host's 292 launches, 8.4 ms: the step is
  // 8.4 ms, governed by launch (the source's eager step, by construction).
  Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  const auto graphed = engine_step(d, StepShape{1, 1024});
  EXPECT_EQ(graphed.graph_batch, 1);
  EXPECT_LT(graphed.t_step.value(), 8.4e-3);
  d.mechanisms.graphs.eager = true;
  const auto r = engine_step(d, StepShape{1, 1024});
  EXPECT_TRUE(r.eager);
  EXPECT_NEAR(r.t_step.value(), 8.4e-3, 1e-12);
  EXPECT_EQ(r.governs, "launch");
  EXPECT_NEAR(decode_step(d, 1, 1024).t_launch.value(), 8.4e-3, 1e-12);
}

TEST(CudaGraphs, SglangRunsPrefillEagerly) {
  // SGLang captures decode batches: a lone 128-token prefill is launched by the host,
  // t_launch = 292 kernels x 28.8 us; vLLM replays it as the piecewise graph of 128 tokens.
  Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  StepShape prefill;
  prefill.prefill_sequences = 1;
  prefill.prompt = 128;
  EXPECT_EQ(engine_step(d, prefill).graph_batch, 128);
  EXPECT_FALSE(engine_step(d, prefill).eager);
  d.mechanisms.graphs = engine_cuda_graphs("sglang");
  const auto r = engine_step(d, prefill);
  EXPECT_TRUE(r.eager);
  EXPECT_NEAR(r.t_launch.value(), 8.4e-3, 1e-12);
}

}  // namespace
}  // namespace chalk
