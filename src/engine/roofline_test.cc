// The decode and prefill rooflines: the lecture's numbers, properties, measurements.
#include "chalk/engine/roofline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

Deployment deploy(const char* model, const char* hw, int64_t chips, DeploymentOptions o = {}) {
  o.n_chips = chips;
  return make_deployment(load_model(model), load_system(hw), o);
}

DeploymentOptions with_chips(int64_t n) {
  DeploymentOptions o;
  o.n_chips = n;
  return o;
}

DecodeLevers levers(int64_t tokens_per_sequence, double accepted, int64_t sparse_top_k) {
  DecodeLevers l;
  l.tokens_per_sequence = tokens_per_sequence;
  l.accepted_tokens_per_step = accepted;
  l.sparse_attention_top_k = sparse_top_k;
  return l;
}

DeploymentOptions at_peak() {
  DeploymentOptions o;
  o.matmul_efficiency = 1.0;
  o.hbm_efficiency = 1.0;
  return o;
}

TEST(Lecture, DenseBalanceBatchOnH100IsAbout295) {
  // Lecture 15:53-19:52: B* = N_total b_w F / (2 N_active W); dense bf16 on H100:
  // 2 x 989.4 / (2 x 3.35) = 295.3.
  EXPECT_NEAR(lecture_balance_batch(70e9, 70e9, 2, teraflops_per_second(989.4), terabytes_per_second(3.35)), 295.34, 0.01);
  // The step function agrees: Llama 3.1 70B bf16 on 8 H100 at peak, no KV (context 0),
  // turns compute-bound between B = 295 and 296. (B* = bytes read / W x F / FLOPs per
  // token = 2 x 69,503,033,344 / (2 x 69,501,714,432) x 295.34 = 295.35.)
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8, at_peak());
  EXPECT_EQ(decode_step(d, 295, 0).bound, Bound::weights);
  EXPECT_EQ(decode_step(d, 296, 0).bound, Bound::compute);
}

TEST(Lecture, DeepSeekBalanceBatchScalesWithSparsity) {
  // DeepSeek-V3 in fp8 on H100: b_w = 1 and F_fp8 = 2 F_bf16, so B* = (671 / 37) x 295.3
  // = 5,356: "it only depends on sparsity" (lecture 25:53).
  const double b = lecture_balance_batch(671e9, 37e9, 1, teraflops_per_second(1978.9), terabytes_per_second(3.35));
  EXPECT_NEAR(b, 671.0 / 37.0 * 295.34, 0.5);
}

TEST(Decode, Llama70bOnH100ByHand) {
  // 8 H100, bf16, eff 80.3% matmul and 87% HBM, batch 1, context 2048:
  // weights read = 141,107,412,992 B - 2,101,346,304 B input table = 139,006,066,688 B
  // t_weights = 139.006e9 / (8 x 3.35e12 x 0.87) = 5.9632 ms
  // t_kv = 2048 x 327,680 / 23.316e12 = 0.02878 ms
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  const DecodeStep s = decode_step(d, 1, 2048);
  EXPECT_NEAR(to_ms(s.t_weights), 139006066688.0 / (8 * 3.35e12 * 0.87) * 1e3, 1e-9);
  EXPECT_NEAR(to_ms(s.t_kv), 2048 * 327680.0 / (8 * 3.35e12 * 0.87) * 1e3, 1e-9);
  EXPECT_EQ(s.bound, Bound::weights);
  // Cost: 8 x $2.35/h x t_step / 1 token.
  EXPECT_NEAR(to_usd_per_mtok(*s.cost_per_token), 8 * 2.35 / 3600 * s.t_step.value() * 1e6, 1e-9);
}

TEST(Properties, StepTimeNeverFallsAsBatchGrows) {
  for (auto [model, hw] : {std::pair{"deepseek-v3", "gb200-nvl72"}, std::pair{"llama-3.1-70b", "h200"},
                           std::pair{"mixtral-8x7b", "h100-sxm"}, std::pair{"gpt-oss-120b", "b200"},
                           std::pair{"qwen3-235b-a22b", "mi300x"}}) {
    const Deployment d = make_deployment(load_model(model), load_system(hw), with_chips(load_system(hw).scale_up_domain));
    for (int64_t s : {0, 4096, 131072}) {
      double last = 0;
      for (int64_t b = 1; b <= 65536; b = b < 64 ? b + 1 : b * 2) {
        const double t = decode_step(d, b, s).t_step.value();
        EXPECT_GE(t, last) << model << " b=" << b << " s=" << s;
        last = t;
      }
    }
  }
}

TEST(Decode, PerSequenceTermsAreTheSlopes) {
  // The plain roofline is linear in B: the per-sequence terms are B = 1's.
  const Deployment plain = deploy("llama-3.1-70b", "h100-sxm", 8);
  EXPECT_NEAR(per_sequence_terms(plain, 4096).t_compute / decode_step(plain, 1, 4096).t_compute, 1.0, 1e-9);
  EXPECT_NEAR(per_sequence_terms(plain, 4096).t_kv / decode_step(plain, 1, 4096).t_kv, 1.0, 1e-9);
  // DeepSeek-V3 on GB200 NVL72, data-parallel attention: a sequence's latent, 61 x 576 x 2 B
  // x 4096 = 287,834,112 B, is read by one rank at B = 1 (39.11 us at 8 TB/s x 0.92, GB200's
  // own HBM figure) but is a 72nd of a chip's reads per sequence at scale: 3,997,696 B,
  // 0.54317 us.
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment dp = deploy("deepseek-v3", "gb200-nvl72", 72, o);
  const double hbm = 8.0e12 * 0.92;
  EXPECT_NEAR(decode_step(dp, 1, 4096).t_kv.value(), 287834112.0 / hbm, 1e-9);
  EXPECT_NEAR(per_sequence_terms(dp, 4096).t_kv.value(), 3997696.0 / hbm, 1e-12);
}

TEST(Memory, DataParallelGroupsHoldWholeSequences) {
  // Qwen3-235B-A22B on 8 H200, data-parallel attention, 131,072 tokens: each rank has room
  // for 2 sequences' KV, so 16 fit; at 17 one rank would hold 3 (the step already charges
  // it). The total over all chips used to say 17 fit.
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = deploy("qwen3-235b-a22b", "h200", 8, o);
  EXPECT_EQ(memory_plan(d, 0, 131072).max_batch, 16);
  EXPECT_TRUE(memory_plan(d, 16, 131072).fits);
  EXPECT_FALSE(memory_plan(d, 17, 131072).fits);
  EXPECT_EQ(memory_plan(d, 0, 131072).max_batch % 8, 0);
}

TEST(Properties, CostPerTokenNeverRisesWhileMemoryBound) {
  for (auto [model, hw] : {std::pair{"deepseek-v3", "gb200-nvl72"}, std::pair{"llama-3.1-70b", "h200"},
                           std::pair{"mixtral-8x7b", "h100-sxm"}, std::pair{"kimi-k2-instruct", "gb300-nvl72"}}) {
    const Deployment d = make_deployment(load_model(model), load_system(hw), with_chips(load_system(hw).scale_up_domain));
    for (int64_t s : {0, 1024, 32768}) {
      double last = 1e300;
      for (int64_t b = 1; b <= 65536; b = b < 256 ? b + 1 : b * 2) {
        const DecodeStep step = decode_step(d, b, s);
        if (step.bound == Bound::compute) break;
        const double per_token = step.t_step.value() / static_cast<double>(b);
        EXPECT_LE(per_token, last * (1 + 1e-12)) << model << " b=" << b << " s=" << s;
        last = per_token;
      }
    }
  }
}

TEST(Properties, OneExpertMoeEqualsTheDenseModel) {
  // An MoE with E = k = 1 experts as wide as the dense MLP is the dense model plus a
  // d_model x 1 router.
  const ModelSpec dense = load_model("llama-3.1-8b");
  ModelSpec moe = dense;
  moe.groups[0].ffn.kind = FfnKind::moe;
  moe.groups[0].ffn.n_experts = 1;
  moe.groups[0].ffn.top_k = 1;
  EXPECT_DOUBLE_EQ(count_params(moe).total() - count_params(dense).total(), 32.0 * 4096);
  const SystemSpec h100 = load_system("h100-sxm");
  const Deployment a = make_deployment(dense, h100, with_chips(8));
  const Deployment b = make_deployment(moe, h100, with_chips(8));
  for (int64_t batch : {1, 16, 512, 8192}) {
    const double ta = decode_step(a, batch, 4096).t_step.value(), tb = decode_step(b, batch, 4096).t_step.value();
    EXPECT_NEAR(tb / ta, 1.0, 1e-4) << batch;
  }
}

TEST(Prefill, MlaUpProjectsTheCachedLatents) {
  // DeepSeek-V3 on 8 H100, 8 prompts of 1,024 after a cached prefix of 31,744. MLA caches
  // 512-wide latents; prefill attention over per-head K (nope 128) and V (128) needs each
  // cached latent up-projected: 2 x 512 x 128 x (128 + 128) = 33,554,432 FLOPs per cached
  // token and layer. The absorbed form would instead cost 2 x 128 x (576 + 512) - 2 x 128 x
  // (192 + 128) = 196,608 more per query and cached token: x 1,024 = 201.3 MFLOP, so the
  // up-projection is the engine's choice here, and the absorbed form below 171 new tokens.
  const ModelSpec m = load_model("deepseek-v3");
  const AttentionSpec& a = m.groups.front().attention;
  EXPECT_DOUBLE_EQ(mla_prefix_flops(a, 1024, 31744), 31744 * 33554432.0);
  EXPECT_DOUBLE_EQ(mla_prefix_flops(a, 100, 31744), 31744 * 100 * 196608.0);
  EXPECT_DOUBLE_EQ(mla_prefix_flops(a, 1024, 0), 0.0);
  const Deployment d = deploy("deepseek-v3", "h100-sxm", 8);
  const PrefillStep s = prefill_step(d, 8, 1024, 31744);
  // The rest: 2 N_active x 1,024 + 61 layers x 2 x 128 x (192 + 128) = 81,920 per attended
  // token x (1,024 x 31,744 + 1,024 x 1,025 / 2) per sequence, less the LM head (129,280 x
  // 7,168) on all but each prompt's last token: 1,023 x 2 x 926.7M.
  const double rest = 2 * d.params.active_matmul() * 1024 + 61 * 81920.0 * (1024.0 * 31744 + 1024.0 * 1025 / 2) -
                      1023 * 2 * d.params.lm_head;
  EXPECT_DOUBLE_EQ(d.params.lm_head, 129280.0 * 7168);
  const double extra = 61 * 31744 * 33554432.0;  // 6.497e13 per sequence
  EXPECT_NEAR(s.flops.value(), 8 * (rest + extra), 8 * (rest + extra) * 1e-12);
  // It was 21% low without the up-projection: extra / rest = 0.27.
  EXPECT_NEAR(extra / rest, 0.27, 0.02);
  // No cached prefix, no extra; a GQA model, none either.
  EXPECT_DOUBLE_EQ(mla_prefix_flops(load_model("llama-3.1-70b").groups.front().attention, 1024, 31744), 0.0);
}

TEST(Properties, PrefillIsComputeBoundForLongPrompts) {
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  EXPECT_EQ(prefill_step(d, 1, 8192).bound, Bound::compute);
  EXPECT_EQ(prefill_step(d, 1, 16).bound, Bound::weights);
  // TTFT grows faster than linearly (attention) for long prompts.
  const double t32k = prefill_step(d, 1, 32768).ttft.value(), t64k = prefill_step(d, 1, 65536).ttft.value();
  EXPECT_GT(t64k / t32k, 2.0);
}

TEST(Levers, SpeculativeDecodingKeepsAcceptedTokens) {
  // Leviathan et al. eq. 1: draft 3 at acceptance 0.8 keeps (1 - 0.8^4) / 0.2 = 2.952.
  EXPECT_NEAR(expected_accepted_tokens(3, 0.8), 2.952, 1e-12);
  EXPECT_DOUBLE_EQ(expected_accepted_tokens(0, 0.5), 1.0);
  EXPECT_THROW(expected_accepted_tokens(2, 1.5), InputError);
  // Memory-bound at batch 1: verifying 4 tokens costs about one step, so tokens/s per user
  // rises by about the accepted count.
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  const DecodeStep plain = decode_step(d, 1, 4096);
  const DecodeStep spec = decode_step(d, 1, 4096, levers(4, 2.952, 0));
  EXPECT_NEAR(spec.tokens_per_s_per_user.value() / plain.tokens_per_s_per_user.value(), 2.952, 0.01);
}

TEST(Levers, SparseAttentionCapsTheKvRead) {
  // DeepSeek Sparse Attention's top-2048 at a 128k context reads 2048 tokens of KV:
  // 64 x 2048 x 70,272 B.
  const Deployment d = deploy("deepseek-v3", "gb200-nvl72", 72);
  const DecodeStep s = decode_step(d, 64, 131072, levers(1, 1, 2048));
  EXPECT_DOUBLE_EQ(s.kv_bytes_read.value(), 64.0 * 2048 * 70272);
  EXPECT_LT(s.t_step, decode_step(d, 64, 131072).t_step);
}

TEST(Memory, MaxBatchAtContext) {
  // Llama 3.1 70B bf16 on 8 H100: 640 GB HBM - 64 GB reserve - 141.1 GB weights = 434.9 GB
  // of KV; at 4096 tokens a sequence holds 4096 x 327,680 B = 1.342 GB: 324 sequences.
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  const MemoryPlan p = memory_plan(d, 1, 4096);
  EXPECT_EQ(p.max_batch, static_cast<int64_t>((640e9 - 64e9 - 141107412992.0) / (4096 * 327680.0)));
  EXPECT_TRUE(p.weights_fit);
  // DeepSeek-V3 (fp8 body, bf16 embeddings: 673 GB) does not fit on one 8 x H100 node's 640 GB.
  EXPECT_FALSE(memory_plan(deploy("deepseek-v3", "h100-sxm", 8), 1, 4096).weights_fit);
}

TEST(Errors, BadStepInputs) {
  const Deployment d = deploy("llama-3.1-8b", "h100-sxm", 1);
  EXPECT_THROW(decode_step(d, 0, 10), InputError);
  EXPECT_THROW(decode_step(d, 1, -1), InputError);
  EXPECT_THROW(prefill_step(d, 1, 0), InputError);
  EXPECT_THROW(deploy("llama-3.1-8b", "h100-sxm", 0), InputError);
  DeploymentOptions o;
  o.compute = MatmulPrecision::fp4;
  EXPECT_THROW(deploy("llama-3.1-8b", "h100-sxm", 8, o), InputError);
}

// Published measurements a single-domain roofline covers (data/measurements/measurements.csv).
// A roofline at 100% of peak is a lower bound: no run can beat it. The default
// efficiencies' errors are printed for the record (docs/accuracy.md tracks them).
TEST(Measurements, RooflineAtPeakIsALowerBound) {
  struct Row {
    const char* id;
    double measured_s, predicted_s, peak_s;
  };
  std::vector<Row> rows;
  {
    // POPE-2: PaLM 540B int8 weights, 64 TPU v4, batch 64, context 2048 (+ up to 64
    // generated: mean 2080), 1.82 s for 64 steps = 28.4 ms per step.
    DeploymentOptions o;
    o.weights = DType::int8;
    DeploymentOptions p = at_peak();
    p.weights = DType::int8;
    rows.push_back({"POPE-2", 1.82 / 64, decode_step(deploy("palm-540b", "tpu-v4", 64, o), 64, 2080).t_step.value(),
                    decode_step(deploy("palm-540b", "tpu-v4", 64, p), 64, 2080).t_step.value()});
  }
  {
    // POPE-3: PaLM 540B bf16 prefill of 512 sequences x 2048 tokens on 64 TPU v4: 85.2 s.
    rows.push_back({"POPE-3", 85.2, prefill_step(deploy("palm-540b", "tpu-v4", 64), 512, 2048).t_step.value(),
                    prefill_step(deploy("palm-540b", "tpu-v4", 64, at_peak()), 512, 2048).t_step.value()});
  }
  {
    // FT-GPT175B-B1: GPT-3 fp16 on 8 A100, batch 1: prefill 128 then 8 decode steps, 488.86 ms.
    auto total = [](const Deployment& d) {
      double t = prefill_step(d, 1, 128).t_step.value();
      for (int i = 0; i < 8; ++i) t += decode_step(d, 1, 128 + i).t_step.value();
      return t;
    };
    rows.push_back({"FT-GPT175B-B1", 0.48886, total(deploy("gpt-3-175b", "a100-80gb", 8)),
                    total(deploy("gpt-3-175b", "a100-80gb", 8, at_peak()))});
  }
  for (const auto& r : rows) {
    std::printf("%-16s measured %10.4f s  predicted %10.4f s (%+6.1f%%)  at peak %10.4f s\n", r.id, r.measured_s,
                r.predicted_s, 100 * (r.predicted_s / r.measured_s - 1), r.peak_s);
    EXPECT_LE(r.peak_s, r.measured_s) << r.id;
    EXPECT_LE(r.peak_s, r.predicted_s) << r.id;
  }
  // POPE-3 is a large compute-bound prefill: MAMF-style efficiency should land within 10%.
  EXPECT_NEAR(rows[1].predicted_s / rows[1].measured_s, 1.0, 0.10);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(Memory, MechanismsLayoutsStoreTheirReplicas) {
  // DeepSeek-V3 on 72 GB200 with attention TP72 (which engines refuse: 72 does not divide
  // the 128 heads; chalk computes it when asked): the MLA latent is one head, so each of
  // the 72 tensor-parallel ranks holds every sequence's latent: 72 x 70,272 B x 4096 =
  // 20.72 GB per sequence instead of 0.288 GB.
  DeploymentOptions mech = with_chips(72);
  mech.mechanisms.enabled = true;
  mech.mechanisms.layout.tp_attention = 72;
  const Deployment plain = deploy("deepseek-v3", "gb200-nvl72", 72);
  const Deployment engine = make_deployment(load_model("deepseek-v3"), load_system("gb200-nvl72"), mech);
  const MemoryPlan a = memory_plan(plain, 1, 4096), b = memory_plan(engine, 1, 4096);
  EXPECT_DOUBLE_EQ(b.kv_cache.value(), 72 * a.kv_cache.value());
  // Weights: everything split 72 ways but routers and norms, which every chip holds:
  // 71 extra copies of (router + norms) x 2 B.
  const ParamCounts p = count_params(load_model("deepseek-v3"));
  EXPECT_NEAR(b.weights.value(), a.weights.value() + 71 * (p.router + p.norms) * 2, 1.0);
  // Max batch at 4096: (13,392 - 1,339.2 GB reserve - weights) / 20.72 GB, against
  // 39,535 under even sharding ((13,392 - 1,339.2 - 673.2) / 0.2878; 673.2 GB of weights
  // counts DeepSeek's fp32 scale per 128 x 128 FP8 block, 0.16 GB: one sequence fewer).
  EXPECT_EQ(b.max_batch, static_cast<int64_t>((b.hbm_total - b.reserve - b.weights).value() / (72 * 70272.0 * 4096)));
  EXPECT_LT(b.max_batch, 600);
  EXPECT_EQ(a.max_batch, 39535);
  // The derived layout, TP8 x 9 groups, keeps 8 copies.
  DeploymentOptions derived = with_chips(72);
  derived.mechanisms.enabled = true;
  const MemoryPlan e = memory_plan(make_deployment(load_model("deepseek-v3"), load_system("gb200-nvl72"), derived), 1, 4096);
  EXPECT_DOUBLE_EQ(e.kv_cache.value(), 8 * a.kv_cache.value());
  // Data-parallel attention (--tp 1) stores the latent once but copies the attention
  // weights, embedding and head to every chip.
  mech.mechanisms.layout.tp_attention = 1;
  const MemoryPlan c = memory_plan(make_deployment(load_model("deepseek-v3"), load_system("gb200-nvl72"), mech), 1, 4096);
  EXPECT_DOUBLE_EQ(c.kv_cache.value(), a.kv_cache.value());
  EXPECT_GT(c.weights.value(), a.weights.value() + 71 * p.attention * 1.0);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(Prefill, Nvfp4OnBlackwellRunsAtTheMeasuredFp4Fraction) {
  // Llama-3.1-70B with NVFP4 weights: the compute class is fp4 (the FFN's format). B200
  // states fp4 at 43.6% (the median of six published FP4 GEMMs on B200 over the tile model:
  // GemmShape.Fp4FractionIsTheMedianOfThePublishedB200Gemms) and its sustained clock, 0.853
  // (b200.json, flashinfer PR #2899): 9,000 x 0.436 x 0.853 = 3,347.172 TFLOP/s, where the bf16
  // fraction it once fell back to gave 9,000 x 0.776 x 0.853 = 5,957. GB200 takes the B200
  // die's fraction on its own 10,000 peak and states no sustained clock: 4,360. B300 states no
  // fp4 fraction: its bf16 one, 14,000 x 0.776 = 10,864.
  DeploymentOptions o;
  o.weights = DType::nvfp4;
  const Deployment b200 = deploy("llama-3.1-70b", "b200", 1, o);
  EXPECT_EQ(b200.compute, MatmulPrecision::fp4);
  EXPECT_NEAR(b200.flops_effective.value(), 3347.172e12, 1e9);
  const PrefillStep s = prefill_step(b200, 1, 8192);
  EXPECT_NEAR(s.t_compute.value(), s.flops.value() / 3347.172e12, 1e-12);
  EXPECT_NEAR(deploy("llama-3.1-70b", "gb200-nvl72", 1, o).flops_effective.value(), 4360e12, 1e9);
  EXPECT_NEAR(deploy("llama-3.1-70b", "b300", 1, o).flops_effective.value(), 10864e12, 1e9);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

// An expert placement on a dense model would change nothing and say nothing: refused, as the
// measurement column eplb is on a dense row. A MoE model takes it; uniform is always fine.
TEST(Deployment, ExpertPlacementNeedsRoutedExperts) {
  DeploymentOptions o;
  o.mechanisms.expert_balance = ExpertBalance::learned;
  try {
    deploy("llama-3.1-8b", "h100-sxm", 1, o);
    FAIL() << "no error for --eplb no on a dense model";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--eplb: 'no' places routed experts; llama-3.1-8b has none");
  }
  o.mechanisms.expert_balance = ExpertBalance::eplb;
  EXPECT_EQ(deploy("qwen3-30b-a3b", "h100-sxm", 1, o).mechanisms.expert_balance, ExpertBalance::eplb);
  o.mechanisms.expert_balance = ExpertBalance::uniform;
  EXPECT_NO_THROW(deploy("llama-3.1-8b", "h100-sxm", 1, o));
}

}  // namespace
}  // namespace chalk
