// Pipelines in inference: the lecture's conclusions (47:12-1:18:33) as numbers.
#include "chalk/engine/pipeline.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

/// The busiest stage of `model` over `pp` stages on `chips` chips of `hw`, under the engine
/// step (mechanisms on) or the roofline.
Deployment stage(const char* model, const char* hw, int64_t pp, int64_t chips, bool engine = true, const char* weights = "") {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = engine;
  if (*weights) o.weights = parse_dtype(weights, "weights");
  return make_deployment(pipeline_stage_model(load_model(model), pp), load_system(hw), o);
}

PipelineShape shape(int64_t pp, int64_t m) {
  PipelineShape s;
  s.stages = pp;
  s.microbatches = m;
  return s;
}

TEST(PipelineStage, CutsEveryGroupAndKeepsKvExact) {
  const ModelSpec m = load_model("llama-3.1-70b");
  const ModelSpec s = pipeline_stage_model(m, 4);
  EXPECT_EQ(n_layers(s), 20);  // 80 layers / 4
  // KV per token: 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 B; a stage a quarter.
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence(m, 1, DType::bf16).value(), 327680.0);
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence(s, 1, DType::bf16).value(), 81920.0);
  EXPECT_EQ(pipeline_stage_model(m, 1).name, m.name);
  // 80 layers over 3 stages: the busiest holds ceil(80 / 3) = 27.
  EXPECT_EQ(n_layers(pipeline_stage_model(m, 3)), 27);
}

// Lecture 1:16:47-1:18:21: a token passes every stage in turn, so a pipeline adds no speed.
// Same chips per stage (8 x H100), same sequences per microbatch (8): one domain takes
// t(80 layers); two stages take 2 x t(40 layers) + one hop + the token-id return, and
// t(40 layers) is about half of t(80 layers) (weights and KV halve), never less.
TEST(PipelineDecode, AddsCapacityNotSpeed) {
  const PipelineDecode one = pipeline_decode(stage("llama-3.1-70b", "h100-sxm", 1, 8), shape(1, 1), 8, 4096);
  const PipelineDecode two = pipeline_decode(stage("llama-3.1-70b", "h100-sxm", 2, 8), shape(2, 2), 16, 4096);
  const PipelineDecode four = pipeline_decode(stage("llama-3.1-70b", "h100-sxm", 4, 8), shape(4, 4), 32, 4096);
  EXPECT_EQ(one.t_hop.value(), 0.0);
  EXPECT_EQ(one.t_pass.value(), one.stage.t_step.value());
  EXPECT_GT(two.t_pass.value(), one.t_pass.value());
  EXPECT_GT(four.t_pass.value(), two.t_pass.value());
  // ... but only by the hops and the per-stage floors: within 25% of one domain.
  EXPECT_LT(four.t_pass.value(), 1.25 * one.t_pass.value());
  // Every stage busy: the replica's tokens/s grows with the stages (capacity), per chip it
  // stays at one domain's (no free lunch): within 20% below, never above by more than rounding.
  EXPECT_NEAR(two.tokens_per_s.value() / one.tokens_per_s.value(), 2.0, 0.4);
  EXPECT_LT(two.tokens_per_s_per_chip.value(), 1.001 * one.tokens_per_s_per_chip.value());
  EXPECT_GT(two.tokens_per_s_per_chip.value(), 0.8 * one.tokens_per_s_per_chip.value());
}

// The throughput of one pipelined replica rises with microbatches in flight until every
// stage is busy (m = pp), while a token's latency does not fall.
TEST(PipelineDecode, ThroughputRisesWithMicrobatchesInFlight) {
  const Deployment st = stage("llama-3.1-70b", "h100-sxm", 4, 8);
  const PipelineDecode m1 = pipeline_decode(st, shape(4, 1), 8, 4096);
  const PipelineDecode m2 = pipeline_decode(st, shape(4, 2), 16, 4096);
  const PipelineDecode m4 = pipeline_decode(st, shape(4, 4), 32, 4096);
  EXPECT_EQ(m1.microbatch, 8);
  EXPECT_EQ(m4.microbatch, 8);
  EXPECT_GT(m2.tokens_per_s.value(), 1.9 * m1.tokens_per_s.value());
  EXPECT_GT(m4.tokens_per_s.value(), 1.9 * m2.tokens_per_s.value());
  EXPECT_DOUBLE_EQ(m1.t_pass.value(), m4.t_pass.value());  // same microbatch: same path through the stages
  // One microbatch leaves each stage idle (pp - 1) / pp of the time, plus the hops.
  EXPECT_LT(m1.stage_busy, 0.25);
  EXPECT_GT(m1.stage_busy, 0.2);
  EXPECT_GT(m4.stage_busy, 0.9);
}

// KV per domain stays the same: pp stages with pp microbatches of b sequences each hold
// pp x b sequences over L / pp layers: b sequences over L layers, one domain's KV at b.
// Llama 3.1 70B at 4096 tokens: 8 x 4096 x 327,680 B = 10.737 GB either way.
TEST(PipelineDecode, KvPerDomainStaysTheSame) {
  const PipelineDecode one = pipeline_decode(stage("llama-3.1-70b", "h100-sxm", 1, 8, false), shape(1, 1), 8, 4096);
  const PipelineDecode four = pipeline_decode(stage("llama-3.1-70b", "h100-sxm", 4, 8, false), shape(4, 4), 32, 4096);
  EXPECT_NEAR(one.stage_memory.kv_cache.value(), 8.0 * 4096 * 327680, 1.0);
  EXPECT_NEAR(four.stage_memory.kv_cache.value(), one.stage_memory.kv_cache.value(), 1.0);
  // The weights per domain fall to a quarter (plus the embedding and LM head each stage keeps).
  EXPECT_LT(four.stage_memory.weights.value(), 0.30 * one.stage_memory.weights.value());
}

// A pipeline pays when the model does not fit one domain: Llama 3.1 405B in bf16 is
// 2 x 405.8e9 = 812 GB, over 8 x 80 GB x 0.9 = 576 GB usable of one H100 domain; two stages
// hold 203B parameters (406 GB) each.
TEST(PipelineDecode, PaysWhenTheModelDoesNotFitOneDomain) {
  const PipelineDecode one = pipeline_decode(stage("llama-3.1-405b", "h100-sxm", 1, 8, true, "bf16"), shape(1, 1), 8, 4096);
  const PipelineDecode two = pipeline_decode(stage("llama-3.1-405b", "h100-sxm", 2, 8, true, "bf16"), shape(2, 2), 16, 4096);
  EXPECT_FALSE(one.stage_memory.weights_fit);
  EXPECT_TRUE(two.stage_memory.weights_fit);
  EXPECT_TRUE(two.stage_memory.fits);
  EXPECT_GT(one.stage_memory.weights.value(), 800e9);
  EXPECT_LT(two.stage_memory.weights.value(), 420e9);
}

// The stage-to-stage send: microbatch x d_model x 2 bytes over scale-out, no faster than its
// bytes at the link's stated per-direction bandwidth.
TEST(PipelineDecode, HopIsTheActivationsOverScaleOut) {
  const Deployment st = stage("llama-3.1-70b", "h100-sxm", 2, 8);
  const PipelineDecode r = pipeline_decode(st, shape(2, 2), 64, 4096);
  EXPECT_DOUBLE_EQ(r.hop_bytes.value(), 32.0 * 8192 * 2);  // 524,288 B
  EXPECT_DOUBLE_EQ(r.t_hop.value(), stage_send_time(st.system, r.hop_bytes).value());
  EXPECT_GE(r.t_hop.value(), r.hop_bytes.value() / st.system.scale_out_bandwidth_per_direction.value());
  EXPECT_GT(r.t_hop.value(), r.t_return.value());
  EXPECT_GT(r.t_return.value(), 0.0);
}

// Review 6 L9: 3 stages of 2 H100 (Llama 3.1 70B, `decode --pp 3 -n 6`) sit in one 8-GPU
// NVLink domain, so NCCL's send takes NVLink. Batch 8 in 3 microbatches of 3: hop = 3 x 8192
// x 2 = 49,152 B. Over NVLink (450 GB/s x 0.8 achieved) the LL protocol is fastest: 6.6 + 0.6
// us + 49,152 / (360e9 x 0.19) s = 7.2 + 0.719 = 7.919 us (LL128: 15.9 + 0.146; Simple: 11.8 +
// 0.137). The same stages across domains (2 stages of 8) send over the NIC as before.
TEST(PipelineDecode, StagesInOneDomainSendOverScaleUp) {
  const Deployment st = stage("llama-3.1-70b", "h100-sxm", 3, 2);
  EXPECT_TRUE(stages_within_domain(st, 3));
  EXPECT_FALSE(stages_within_domain(st, 5));  // 10 chips: two domains
  const PipelineDecode r = pipeline_decode(st, shape(3, 3), 8, 4096);
  EXPECT_DOUBLE_EQ(r.hop_bytes.value(), 49152.0);
  EXPECT_NEAR(r.t_hop.value() * 1e6, 7.2 + 49152.0 / (450e9 * 0.8 * 0.19) * 1e6, 1e-9);
  EXPECT_NEAR(r.t_hop.value() * 1e6, 7.919, 1e-3);
  EXPECT_LT(r.t_hop.value(), stage_send_time(st.system, r.hop_bytes).value());  // the NIC's: 16.4 us
  // The roofline: the bytes at NVLink's full 450 GB/s, 0.109 us.
  const PipelineDecode lower = pipeline_decode(stage("llama-3.1-70b", "h100-sxm", 3, 2, false), shape(3, 3), 8, 4096);
  EXPECT_DOUBLE_EQ(lower.t_hop.value(), 49152.0 / 450e9);
  const Deployment across = stage("llama-3.1-70b", "h100-sxm", 2, 8);
  EXPECT_FALSE(stages_within_domain(across, 2));
}

// QA: with more microbatches than stages the stages are the queue. Llama 3.1 405B over
// 2 stages x 8 H100, 64 sequences in 8 microbatches of 8: a token's pass is 2 t_s + hop +
// return (about 51 ms), but a stage runs 8 microbatches of t_s (about 25.7 ms) between two
// steps of one microbatch, so one user waits 8 t_s (about 206 ms) per token: the TPOT a
// user sees is the cycle, and tok/s per user is its inverse (docs/output-schema.md).
TEST(PipelineDecode, MoreMicrobatchesThanStagesQueueTheUser) {
  const Deployment st = stage("llama-3.1-405b", "h100-sxm", 2, 8);
  const PipelineDecode r = pipeline_decode(st, shape(2, 8), 64, 4096);
  const double t_s = r.stage.t_step.value();
  EXPECT_EQ(r.microbatch, 8);
  EXPECT_NEAR(r.t_pass.value(), 2 * t_s + r.t_hop.value() + r.t_return.value(), 1e-15);
  EXPECT_LT(r.t_pass.value(), 3 * t_s);           // the pass: about 2 stage steps
  EXPECT_DOUBLE_EQ(r.cycle.value(), 8 * t_s);     // the queue: 8 stage steps
  EXPECT_DOUBLE_EQ(r.tokens_per_s_per_user.value() * r.cycle.value(), 1.0);
  EXPECT_DOUBLE_EQ(r.stage_busy, 1.0);
  // At m = pp the pass governs, as before: cycle = t_pass.
  const PipelineDecode m2 = pipeline_decode(st, shape(2, 2), 16, 4096);
  EXPECT_DOUBLE_EQ(m2.cycle.value(), m2.t_pass.value());
}

// The pipeline's roofline (the stage deployment with mechanisms off) is a true lower bound:
// each stage step at its roofline, each send its bytes over the link's full per-direction
// rate with no protocol latency (hop_wire_time). Llama 3.1 70B, 2 x 8 H100, 64 sequences in
// 2 microbatches of 32: hop = 32 x 8192 x 2 B = 524,288 B over H100's scale-out rate.
TEST(PipelineDecode, RooflineIsALowerBound) {
  const Deployment eng = stage("llama-3.1-70b", "h100-sxm", 2, 8);
  const Deployment roof = stage("llama-3.1-70b", "h100-sxm", 2, 8, false);
  const PipelineDecode lower = pipeline_decode(roof, shape(2, 2), 64, 4096);
  EXPECT_DOUBLE_EQ(lower.t_hop.value(), 524288.0 / roof.system.scale_out_bandwidth_per_direction.value());
  EXPECT_LT(lower.t_hop.value(), stage_send_time(roof.system, lower.hop_bytes).value());
  for (int64_t m : {1, 2, 8}) {
    for (int64_t b : {1, 16, 256}) {
      EXPECT_LE(pipeline_decode(roof, shape(2, m), b, 4096).cycle.value(), pipeline_decode(eng, shape(2, m), b, 4096).cycle.value()) << m << " " << b;
      EXPECT_LE(pipeline_prefill(roof, shape(2, m), b, 2048).ttft.value(), pipeline_prefill(eng, shape(2, m), b, 2048).ttft.value()) << m << " " << b;
    }
  }
}

TEST(PipelinePrefill, ALonePromptIsNeverFasterAndMicrobatchesShortenTheFill) {
  const PipelinePrefill one = pipeline_prefill(stage("llama-3.1-70b", "h100-sxm", 1, 8), shape(1, 1), 1, 8192);
  const PipelinePrefill two = pipeline_prefill(stage("llama-3.1-70b", "h100-sxm", 2, 8), shape(2, 1), 1, 8192);
  EXPECT_GT(two.ttft.value(), one.ttft.value());
  const Deployment st = stage("llama-3.1-70b", "h100-sxm", 4, 8);
  const PipelinePrefill p1 = pipeline_prefill(st, shape(4, 1), 4, 8192);
  const PipelinePrefill p4 = pipeline_prefill(st, shape(4, 4), 4, 8192);
  EXPECT_EQ(p4.microbatch, 1);
  // Fill: (4 + 4 - 1) stage steps + 3 hops.
  EXPECT_NEAR(p4.ttft.value(), 7 * p4.stage.t_step.value() + 3 * p4.t_hop.value(), 1e-12);
  // Microbatches shorten the batch's fill (7 stage steps of 1 prompt against 4 of 4
  // prompts, about 16); a steady stream of batches keeps every stage busy either way, so
  // tokens/s stays within the weight-read saving of the larger chunk.
  EXPECT_LT(p4.ttft.value(), 0.6 * p1.ttft.value());
  EXPECT_NEAR(p4.tokens_per_s.value() / p1.tokens_per_s.value(), 1.0, 0.05);
}

TEST(Pipeline, BadInputsNameTheField) {
  const ModelSpec m = load_model("llama-3.1-70b");
  auto field = [](auto f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  EXPECT_EQ(field([&] { pipeline_stage_model(m, 0); }), "pp");
  EXPECT_EQ(field([&] { pipeline_stage_model(m, 81); }), "pp");
  const Deployment st = stage("llama-3.1-70b", "h100-sxm", 2, 8);
  EXPECT_EQ(field([&] { pipeline_decode(st, shape(2, 0), 8, 4096); }), "microbatches");
  EXPECT_EQ(field([&] { pipeline_decode(st, shape(0, 1), 8, 4096); }), "pp");
  EXPECT_EQ(field([&] { pipeline_decode(st, shape(2, 1), 0, 4096); }), "batch");
  EXPECT_EQ(field([&] { pipeline_prefill(st, shape(2, 1), 1, 0); }), "prompt");
  Deployment no_out = st;
  no_out.system.scale_out_bandwidth_per_direction = BytesPerSecond(0);
  EXPECT_EQ(field([&] { pipeline_decode(no_out, shape(2, 1), 8, 4096); }), "hardware");
  EXPECT_NO_THROW(pipeline_decode(no_out, shape(1, 1), 8, 4096));
}

}  // namespace
}  // namespace chalk
