#include "chalk/engine/overhead.h"

#include <gtest/gtest.h>

#include "chalk/engine/collective.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/engine/roofline.h"
#include "chalk/model/expert_skew.h"
#include "chalk_testing/engine_deploy.h"
#include "expert_activations.h"

namespace chalk {
namespace {

using chalk::testing::engine_deploy;

TEST(Overhead, ResolveLayoutDefaults) {
  const ModelSpec llama = load_model("llama-3.1-70b"), ds = load_model("deepseek-v3");
  const auto a = resolve_layout({}, llama, 8, 8);
  EXPECT_EQ(a.tp_attention, 8);
  EXPECT_EQ(a.tp_ffn, 8);
  EXPECT_EQ(a.ep, 1);
  // 72 chips of 8-chip domains: attention TP8 within a domain (9 data-parallel groups),
  // experts over all 72.
  const auto b = resolve_layout({}, ds, 72, 8);
  EXPECT_EQ(b.tp_attention, 8);
  EXPECT_EQ(b.ep, 72);
  EXPECT_EQ(b.tp_expert, 1);
  ParallelLayout mixed;
  mixed.tp_expert = 4;
  EXPECT_EQ(resolve_layout(mixed, ds, 8, 8).ep, 2);
}

TEST(Overhead, ResolveLayoutErrors) {
  const ModelSpec ds = load_model("deepseek-v3");
  ParallelLayout bad;
  bad.tp_attention = 3;
  EXPECT_THROW(resolve_layout(bad, ds, 8, 8), InputError);
  ParallelLayout mismatch;
  mismatch.ep = 2;
  mismatch.tp_expert = 2;
  EXPECT_THROW(resolve_layout(mismatch, ds, 8, 8), InputError);
  ParallelLayout negative;
  negative.ep = -1;
  EXPECT_THROW(resolve_layout(negative, ds, 8, 8), InputError);
  // More EP ranks than routed experts, and EP on a dense model, name what is wrong.
  const ModelSpec mixtral = load_model("mixtral-8x7b"), llama = load_model("llama-3.1-70b");
  ParallelLayout wide;
  wide.ep = 16;
  try {
    resolve_layout(wide, mixtral, 16, 8);
    ADD_FAILURE() << "EP16 of 8 experts accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("EP16 exceeds the 8 routed experts"), std::string::npos) << e.what();
  }
  ParallelLayout dense_ep;
  dense_ep.ep = 2;
  EXPECT_THROW(resolve_layout(dense_ep, llama, 8, 8), InputError);
  // Derived: Mixtral's 8 experts on 16 chips are EP8 x TP2; 12 chips EP6 x TP2; DeepSeek's
  // 256 on 72 chips EP72.
  EXPECT_EQ(resolve_layout({}, mixtral, 16, 8).ep, 8);
  EXPECT_EQ(resolve_layout({}, mixtral, 16, 8).tp_expert, 2);
  EXPECT_EQ(expert_parallel_degree(mixtral, 12), 6);
  EXPECT_EQ(expert_parallel_degree(ds, 72), 72);
  EXPECT_EQ(expert_parallel_degree(llama, 8), 1);
  // Expert TP splits each routed expert's columns, whole ones (review 6 M8): DeepSeek-V3's
  // 2048-wide experts on 1,120 chips were EP224 x TP5 (409.6 columns each); the largest EP
  // whose remaining chips divide 2048 is 140 (1120 / 8; 224 leaves 5, 160 leaves 7).
  // Mixtral's 14336-wide experts (2^11 x 7) on 24 chips: EP8 x TP3 leaves 4778.7, EP6 x TP4 3584.
  EXPECT_EQ(expert_parallel_degree(ds, 1120), 140);
  EXPECT_EQ(expert_parallel_degree(mixtral, 24), 6);
  ParallelLayout tp5;
  tp5.tp_attention = 1;
  tp5.tp_ffn = 1;
  tp5.ep = 224;
  tp5.tp_expert = 5;
  EXPECT_EQ(layout_split_problem(ds, tp5), "expert TP5 does not split the routed experts' width 2048");
  tp5.ep = 140;
  tp5.tp_expert = 8;
  EXPECT_EQ(layout_split_problem(ds, tp5), "");
}

TEST(Overhead, KernelsPerLayer) {
  const ModelSpec llama = load_model("llama-3.1-8b"), ds = load_model("deepseek-v3");
  EXPECT_EQ(kernels_per_layer(llama.groups.front()), 9);  // GQA 5 + dense FFN 4
  int64_t dense = 0, moe = 0;
  for (const auto& g : ds.groups) (g.ffn.kind == FfnKind::moe ? moe : dense) = kernels_per_layer(g);
  EXPECT_EQ(dense, 13);  // MLA 9 + dense FFN 4
  EXPECT_EQ(moe, 20);    // MLA 9 + MoE 8 + shared expert 3
}

TEST(Overhead, Tp4DecodeStepUsesTheEnginesAllReduce) {
  // Llama-3.1-70B on 4 x H100, TP4, 16 sequences: every layer all-reduces 16 x 8192 x 2 B =
  // 262144 B twice (after attention, after the FFN): 160 all-reduces. vLLM's one-shot
  // custom kernel takes 8.436 us each (collective_test: 6.45 + 3 x 262144 / 396e9), NCCL's
  // ring LL 15.949 us: 160 x 8.436 = 1.3497 ms against 160 x 15.949 = 2.5518 ms.
  Deployment vllm = engine_deploy("llama-3.1-70b", "h100-sxm", 4);
  ASSERT_EQ(vllm.mechanisms.layout.tp_attention, 4);
  ASSERT_EQ(vllm.mechanisms.tp_all_reduce.name, "vllm");  // the default engine
  StepShape s;
  s.decode_sequences = 16;
  s.context = 2048;
  const StepBreakdown a = engine_step(vllm, s);
  EXPECT_NEAR(to_ms(a.t_comm_total), 160 * 8.43594e-3, 1e-5);
  Deployment nccl = vllm;
  nccl.mechanisms.tp_all_reduce = engine_tp_all_reduce("nccl");
  const StepBreakdown b = engine_step(nccl, s);
  EXPECT_NEAR(to_ms(b.t_comm_total), 160 * 15.94877e-3, 1e-5);
  // The "nccl" and "trtllm" engines' GEMMs also keep DEEPGEMM-2's rate, not vLLM's
  // (WeightsStreamAtTheirKernelsMarginalRate): the operations' difference is set aside.
  EXPECT_NEAR(to_ms((b.t_step - a.t_step) - (b.t_operations - a.t_operations)), 160 * (15.94877e-3 - 8.43594e-3), 1e-5);
  // TensorRT-LLM: the same one-shot (16 <= 128 tokens) with the residual add and RMSNorm
  // inside it: 160 kernels fewer, 160 x 6.3 us = 1.008 ms less kernel floor.
  Deployment trt = vllm;
  trt.mechanisms.tp_all_reduce = engine_tp_all_reduce("trtllm");
  const StepBreakdown c = engine_step(trt, s);
  EXPECT_DOUBLE_EQ(a.kernels - c.kernels, 160);
  EXPECT_NEAR(to_ms((a.t_step - c.t_step) - (a.t_operations - c.t_operations)), 1.008, 1e-6);
  // A 2,048-token prefill all-reduces 2048 x 8192 x 2 = 32 MiB, above the 8 MiB the custom
  // kernel takes: NCCL's ring for every engine, and TensorRT-LLM's norm runs after it, so
  // its kernel count is vLLM's.
  StepShape p;
  p.prefill_sequences = 1;
  p.prompt = 2048;
  EXPECT_DOUBLE_EQ(engine_step(trt, p).kernels, engine_step(vllm, p).kernels);
  EXPECT_EQ(engine_step(trt, p).t_comm_total, engine_step(nccl, p).t_comm_total);
  // One chip has no all-reduce and nothing to fuse.
  Deployment one = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  one.mechanisms.tp_all_reduce = engine_tp_all_reduce("trtllm");
  EXPECT_DOUBLE_EQ(engine_step(one, s).kernels, 32 * 9 + 4);
}

TEST(Overhead, Llama8bBatch1OnOneH100) {
  const Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  StepShape s;
  s.decode_sequences = 1;
  s.context = 4096;
  const StepBreakdown r = engine_step(d, s);
  // Weights read: 16.06 GB less the input embedding (a gather of one row, 1.05 GB) = 15.0
  // GB, bf16 in vLLM (the default engine) at 3.35 TB/s x min(0.87, 0.911) = 5.150 ms
  // (WeightsStreamAtTheirKernelsMarginalRate). KV: 4096 x 131072 B = 0.537 GB at H100's own
  // 87% of 3.35 TB/s (STREAM Copy) = 0.1842 ms (0.179 at FLASHMLA-1's H800 3000/3350, which
  // the roofline does not use). Kernels: 32 x 9 + 4 = 292 x 6.3 us = 1.840 ms. No
  // collectives on one chip.
  EXPECT_NEAR(to_ms(r.t_weights), 5.150, 0.005);
  EXPECT_NEAR(to_ms(r.t_kv), 4096 * 131072.0 / (3.35e12 * 0.87) * 1e3, 1e-9);  // 0.18421 ms
  EXPECT_DOUBLE_EQ(r.kernels, 292);
  EXPECT_NEAR(to_ms(r.t_overhead), 1.840, 0.001);
  EXPECT_EQ(r.t_comm_total.value(), 0);
  EXPECT_NEAR(to_ms(r.t_step), 5.150 + 0.184 + 1.840, 0.01);
  EXPECT_EQ(r.governs, "weights");
}

TEST(Overhead, WeightsStreamAtTheirKernelsMarginalRate) {
  // Llama 3.1 8B at batch 1 on one H100 reads 32 x (41,943,040 attention + 176,160,768 FFN)
  // = 6,979,321,856 layer weights, 525,336,576 of LM head and 266,240 of norms: 7,504,924,672
  // x 2 B = 15.00985 GB in bf16.
  const Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  StepShape s;
  s.decode_sequences = 1;
  s.context = 4096;
  const StepBreakdown r = engine_step(d, s);
  EXPECT_NEAR(r.weight_bytes_per_chip.value(), 15.00985e9, 1e4);
  // vLLM (the default engine) runs them through torch's cuBLAS GEMM: the marginal slope 0.911
  // capped by H100's STREAM 0.87: 15.00985 GB / 2.9145 TB/s = 5.1501 ms.
  EXPECT_NEAR(to_ms(r.t_weights), 5.1501, 0.0005);
  // On a chip streaming faster than the slope the slope binds: 15.00985 / 3.05185 = 4.9183 ms.
  Deployment fast = d;
  fast.hbm_efficiency = 0.95;
  EXPECT_NEAR(to_ms(engine_step(fast, s).t_weights), 4.9183, 0.0005);
  // TensorRT-LLM's GEMMs are not the ones measured: DEEPGEMM-2's whole-kernel 2668 GB/s,
  // 15.00985 / 2.668 = 5.6259 ms.
  Deployment trt = d;
  trt.mechanisms.tp_all_reduce = engine_tp_all_reduce("trtllm");
  EXPECT_NEAR(to_ms(engine_step(trt, s).t_weights), 5.6259, 0.0005);
  // FP8 layers keep 2668 GB/s; the bf16 LM head and norms stream at 0.87: 6.979322 GB /
  // 2.668 TB/s + 1.051206 GB / 2.9145 TB/s = 2.61594 + 0.36068 = 2.9766 ms.
  const Deployment fp8 = engine_deploy("llama-3.1-8b", "h100-sxm", 1, {}, DType::fp8);
  EXPECT_NEAR(to_ms(engine_step(fp8, s).t_weights), 2.9766, 0.0005);
}

TEST(Overhead, DeepSeekR1MinLatencyIsOverheadBound) {
  // TRT-R1-B200-MINLAT-NOMTP's setting: 8 B200, attention TP8, experts TP4 x EP2, batch 1.
  ParallelLayout l;
  l.tp_attention = 8;
  l.tp_ffn = 8;
  l.ep = 2;
  l.tp_expert = 4;
  const Deployment d = engine_deploy("deepseek-r1", "b200", 8, l, DType::nvfp4);
  StepShape s;
  s.decode_sequences = 1;
  s.context = 2048;
  const StepBreakdown r = engine_step(d, s);
  // 58 MoE layers x 20 kernels + 3 dense layers x 13 + 4 = 1203 kernels x 6.3 us = 7.58 ms;
  // two all-reduces per layer of 14336 B on 8 ranks, each vLLM's one-shot custom kernel (the
  // default engine; 14336 B < 256 KiB): 6.45 + 7 x 14336 / (0.88 x 900 GB/s) = 6.577 us, so
  // 61 x 2 x 6.577 = 0.802 ms (NCCL's ring LL took 15.37 us each, 1.875 ms).
  EXPECT_DOUBLE_EQ(r.kernels, 1203);
  EXPECT_NEAR(to_ms(r.t_overhead), 7.579, 0.001);
  EXPECT_NEAR(to_ms(r.t_comm), 122 * (6.45 + 7 * 14336 / (0.88 * 900e9) * 1e6) * 1e-3, 1e-6);
  EXPECT_EQ(r.governs, "overhead");
  EXPECT_LT(r.t_operations, r.t_overhead);
}

TEST(Overhead, TpuPaysItsOwnFixedTimePerOp) {
  ParallelLayout tp64;
  tp64.tp_attention = 64;  // Pope et al. pad PaLM's 48 heads to 64 for this
  const Deployment d = engine_deploy("palm-540b", "tpu-v4", 64, tp64);
  StepShape s;
  s.decode_sequences = 64;
  s.context = 2048;
  const StepBreakdown r = engine_step(d, s);
  // An XLA program pays each fused op's fixed time (review 5 H1): tpu-v4.json's op_floor,
  // 7.7 us, over PaLM's 118 x (5 attention + 4 dense FFN) + 4 = 1,066 ops = 8.208 ms,
  // not the GPU kernel floor (6.3 us would give 6.716 ms).
  EXPECT_NEAR(to_us(op_floor(d.system, d.mechanisms.calibration)), 7.7, 1e-9);
  EXPECT_EQ(r.kernels, 1066);
  EXPECT_NEAR(to_ms(r.t_overhead), 8.208, 0.001);
  // A GPU without the field keeps the kernel floor: Llama 3.1 8B on one H100, 32 x 9 + 4 =
  // 292 kernels x 6.3 us = 1.840 ms (review 5: "1.84 ms" on h100-sxm).
  EXPECT_FALSE(load_system("h100-sxm").op_floor.has_value());
  // Llama 3.1 8B on one TPU v5p: the same 292 ops x 7.7 us = 2.248 ms, not 0.
  StepShape one;
  one.decode_sequences = 1;
  one.context = 1024;
  EXPECT_NEAR(to_ms(engine_step(engine_deploy("llama-3.1-8b", "tpu-v5p", 1), one).t_overhead), 2.248, 0.001);
  // 118 layers x 2 all-reduces x 44.5 us (collective_test) = 10.50 ms.
  EXPECT_NEAR(to_ms(r.t_comm), 10.50, 0.02);
  // Derived, the 48 published heads allow TP16 (the largest divisor of 64 that divides
  // 48): 4 data-parallel groups of 16 sequences, all-reduces of 16 x 18432 x 2 B over 16
  // chips: 5 us + 2 x 3 x (16^(1/3) - 1) = 9.12 hops + 2 x 15/16 x 589,824 B / 216 GB/s
  // = 19.24 us, x 236 = 4.54 ms.
  const Deployment derived = engine_deploy("palm-540b", "tpu-v4", 64);
  EXPECT_EQ(derived.mechanisms.layout.tp_attention, 16);
  EXPECT_NEAR(to_ms(engine_step(derived, s).t_comm), 4.54, 0.01);
}

TEST(Overhead, DerivedLayoutSplitsWholeHeads) {
  // 72 GB200 in one NVLink domain: DeepSeek-V3's 128 heads split 8 ways at most
  // (72 = 8 x 9); Llama 3.1 70B's 64 query / 8 KV heads too; on 8 chips, all 8.
  EXPECT_EQ(engine_deploy("deepseek-v3", "gb200-nvl72", 72).mechanisms.layout.tp_attention, 8);
  EXPECT_EQ(engine_deploy("llama-3.1-70b", "gb200-nvl72", 72).mechanisms.layout.tp_attention, 8);
  EXPECT_EQ(engine_deploy("llama-3.1-70b", "h100-sxm", 8).mechanisms.layout.tp_attention, 8);
  EXPECT_EQ(attention_split_problem(load_model("llama-3.1-70b"), 3), "TP3 does not divide the 64 attention heads");
  EXPECT_EQ(attention_split_problem(load_model("qwen3-30b-a3b"), 8), "");  // 32 heads, 4 KV heads replicated twice
  EXPECT_EQ(attention_split_problem(load_model("llama-3.1-70b"), 64), "");  // 64 heads; 8 KV heads on 8 ranks each
}

TEST(Overhead, StepNeverFallsAsBatchGrows) {
  ParallelLayout l;
  l.tp_attention = 1;
  l.ep = 72;
  l.overlap_micro_batches = true;
  const Deployment d = engine_deploy("deepseek-v3", "h100-sxm", 72, l, DType::fp8);
  Seconds last;
  for (double b : {1.0, 72.0, 720.0, 7200.0, 18432.0}) {
    StepShape s;
    s.decode_sequences = b;
    s.context = 2000;
    const Seconds t = engine_step(d, s).t_step;
    EXPECT_GE(t, last) << b;
    last = t;
  }
}

TEST(Overhead, DisabledLeavesThePlainRoofline) {
  const ModelSpec m = load_model("llama-3.1-70b");
  DeploymentOptions o;
  o.n_chips = 8;
  const Deployment plain = make_deployment(m, load_system("h100-sxm"), o);
  const DecodeStep r = decode_step(plain, 1, 2048);
  EXPECT_EQ(r.t_comm.value(), 0);
  EXPECT_EQ(r.t_overhead.value(), 0);
  EXPECT_DOUBLE_EQ(r.t_step.value(), std::max(r.t_compute, r.t_memory).value());
  o.mechanisms.enabled = true;
  const DecodeStep e = decode_step(make_deployment(m, load_system("h100-sxm"), o), 1, 2048);
  EXPECT_GT(e.t_comm.value(), 0);
  EXPECT_GT(e.t_overhead.value(), 0);
  EXPECT_GT(e.t_step, r.t_step);
}

// QA report: --weights int8 --compute int8 on B200 ran the engine's matmuls at bf16 (327 ms
// at B = 4096, as bf16) while the roofline used int8 (163 ms). Llama 3.1 70B on one B200,
// B = 4096, S = 128: int8 attention and FFN weights compute at 4500 TFLOP/s x 0.776 (int8
// not measured on B200: bf16's fraction) x 0.853 (the B200's sustained clock, b200.json); the
// head (bf16 embedding format) and the attention core stay where they were. So the step's
// compute falls by exactly
// 2 (N_attention + N_ffn) B (1 / (2250e12 x 0.776 x 0.853) - 1 / (4500e12 x 0.776 x 0.853)).
TEST(Overhead, Int8ComputeRunsAtTheInt8Rate) {
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  o.weights = DType::int8;
  const ModelSpec m = load_model("llama-3.1-70b");
  SystemSpec b200 = load_system("b200");
  b200.chip.sm_count = 0;  // the GEMMs' shape apart (dense_gemm.h): the rates alone
  o.compute = MatmulPrecision::int8;
  const Deployment int8 = make_deployment(m, b200, o);
  o.compute = MatmulPrecision::bf16;
  const Deployment bf16 = make_deployment(m, b200, o);
  const DecodeStep a = decode_step(int8, 4096, 128), b = decode_step(bf16, 4096, 128);
  const double matmul = 2 * (int8.params.attention + int8.params.dense_ffn) * 4096;
  const double saved = matmul / (2250e12 * 0.776 * 0.853) - matmul / (4500e12 * 0.776 * 0.853);
  EXPECT_NEAR(b.t_compute.value() - a.t_compute.value(), saved, saved * 1e-9);
  EXPECT_GT(saved, 0.15);  // 2 x 68.4e9 x 4096 = 560 PFLOP: 376 ms at bf16, 188 ms at int8
  // The roofline stays below the engine step with either class.
  EXPECT_LE(a.t_step_roofline, a.t_step);
  // int8 weights on a chip without an int8 rate (B300) are weight-only: bf16 math, and the
  // default class is bf16; asking for int8 there is refused.
  o.compute.reset();
  EXPECT_EQ(make_deployment(m, load_system("b300"), o).compute, MatmulPrecision::bf16);
  o.compute = MatmulPrecision::int8;
  EXPECT_THROW(make_deployment(m, load_system("b300"), o), InputError);
}

TEST(Overhead, BadShapeThrows) {
  const Deployment d = engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  StepShape s;
  s.decode_sequences = -1;
  EXPECT_THROW(engine_step(d, s), InputError);
  s.decode_sequences = 1;
  s.tokens_per_sequence = 0.5;
  EXPECT_THROW(engine_step(d, s), InputError);
}

TEST(Overhead, RoutedExpertsPayTheGroupedGemmTileCost) {
  // Qwen3-30B-A3B (48 MoE layers, d 2048, 128 experts of width 768, top-8) in bf16 on one
  // H100: every expert on the chip, so the busiest rank's assignments are all of them,
  // 4,096 prompt tokens x 8. Expert FLOPs 48 x 2 x (3 x 2048 x 768 = 4,718,592) x 32,768 =
  // 14,843,406,974,976 at 989.4 x 0.803 = 794.488 TFLOP/s: 18.6829 ms without the fixed
  // cost. With it the rate falls to 0.724757 of that (routed_expert_grouped_efficiency:
  // 2048 / 2548 and 768 / 1268, 2:1), so the compute time grows by 18.6829 x (1 / 0.724757
  // - 1) = 7.0953 ms; the FLOPs counted stay the same.
  Deployment d = engine_deploy("qwen3-30b-a3b", "h100-sxm", 1);
  StepShape s;
  s.prefill_sequences = 1;
  s.prompt = 4096;
  const StepBreakdown with = engine_step(d, s);
  for (auto& g : d.moe) g.d_model = 0;  // no shape: the fixed cost is left out
  const StepBreakdown without = engine_step(d, s);
  EXPECT_NEAR(to_ms(with.t_compute - without.t_compute), 7.0953, 0.001);
  EXPECT_DOUBLE_EQ(with.flops_per_chip.value(), without.flops_per_chip.value());
  // A decode step at batch 8 streams 8 x 8 = 64 expert slots' weights: far below the
  // ridge, so the slower compute side changes nothing on the step; what differs is the
  // top-k sum the shape brings (expert_activations.h, vLLM's path: 48 layers x 64 pairs x
  // 2 x 2048 x 9/8 = 14,155,776 bytes at 3.35 TB/s x 0.87).
  StepShape dec;
  dec.decode_sequences = 8;
  dec.context = 1024;
  const Deployment e = engine_deploy("qwen3-30b-a3b", "h100-sxm", 1);
  EXPECT_NEAR(engine_step(e, dec).t_operations.value() - engine_step(d, dec).t_operations.value(), 14155776 / 2.9145e12, 1e-12);
}

TEST(Overhead, EnginesMoveRoutedTokensIntoExpertOrderAndBack) {
  using detail::MoeTokenPath;
  // Which path (expert_activations.h): TensorRT-LLM copies, DeepEP's kernels under an
  // all-to-all, otherwise a gather by index and a separate top-k sum.
  EXPECT_EQ(detail::moe_token_path("trtllm-1.0", true), MoeTokenPath::copy_permute);
  EXPECT_EQ(detail::moe_token_path("sglang", true), MoeTokenPath::all_to_all_kernels);
  EXPECT_EQ(detail::moe_token_path("sglang", false), MoeTokenPath::index_gather);
  EXPECT_EQ(detail::moe_token_path("vllm", false), MoeTokenPath::index_gather);
  // Per pair, DeepSeek-R1 (d 7168, top-8) with NVFP4 experts: the copy at 0.5625 bytes an
  // element read and written (2 x 7168 x 0.5625 = 8,064) and the sum reading 8 bf16 rows and
  // writing one (2 x 7168 x 9/8 = 16,128).
  const double fp4 = detail::expert_input_bytes_per_element(MatmulPrecision::fp4);
  EXPECT_DOUBLE_EQ(fp4, 0.5625);
  EXPECT_DOUBLE_EQ(detail::moe_token_path_bytes_per_pair(MoeTokenPath::copy_permute, 7168, 8, fp4), 24192);
  EXPECT_DOUBLE_EQ(detail::moe_token_path_bytes_per_pair(MoeTokenPath::index_gather, 7168, 8, fp4), 16128);
  EXPECT_DOUBLE_EQ(detail::moe_token_path_bytes_per_pair(MoeTokenPath::all_to_all_kernels, 7168, 8, fp4), 0);
  // DeepSeek-V3 FP8 on 8 H200, DP attention, EP8, 2,048 decodes: the busiest rank's 2,134.3
  // pairs (uniform routing) x 58 MoE layers x (2 x 7168 x 1.03125 + 16,128 = 30,912 bytes)
  // = 3.8266 GB at the KV's rate, 4.8 TB/s x 0.84: 0.9491 ms more in TensorRT-LLM than under
  // SGLang's DeepEP, as memory time beside the weights (no FLOPs, no weight bytes).
  ParallelLayout l;
  l.tp_attention = 1;
  l.ep = 8;
  Deployment sglang = engine_deploy("deepseek-v3", "h200", 8, l, DType::fp8);
  Deployment trtllm = sglang;
  sglang.mechanisms.tp_all_reduce = engine_tp_all_reduce("sglang");
  trtllm.mechanisms.tp_all_reduce = engine_tp_all_reduce("trtllm");
  StepShape s;
  s.decode_sequences = 2048;
  s.context = 2048;
  const StepBreakdown a = engine_step(sglang, s), b = engine_step(trtllm, s);
  const double pairs = busiest_rank_assignments(16384, 256, 8, ExpertBalance::uniform);
  EXPECT_NEAR(pairs, 2134.3, 0.1);
  EXPECT_NEAR(to_ms(b.t_weights - a.t_weights), 58 * pairs * 30912 / (4.8e12 * 0.84) * 1e3, 1e-9);
  EXPECT_NEAR(to_ms(b.t_weights - a.t_weights), 0.9491, 0.0001);
  EXPECT_DOUBLE_EQ(b.weight_bytes_per_chip.value(), a.weight_bytes_per_chip.value());
  EXPECT_DOUBLE_EQ(b.flops_per_chip.value(), a.flops_per_chip.value());
}

}  // namespace
}  // namespace chalk
