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
  EXPECT_EQ(one.tpot.value(), one.stage.t_step.value());
  EXPECT_GT(two.tpot.value(), one.tpot.value());
  EXPECT_GT(four.tpot.value(), two.tpot.value());
  // ... but only by the hops and the per-stage floors: within 25% of one domain.
  EXPECT_LT(four.tpot.value(), 1.25 * one.tpot.value());
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
  EXPECT_DOUBLE_EQ(m1.tpot.value(), m4.tpot.value());  // same microbatch: same path through the stages
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
