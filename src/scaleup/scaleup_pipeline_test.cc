// A pipeline across scale-up domains, priced for cost as well as latency, and its
// stage-to-stage hop against the lecture's "probably 10 milliseconds" (1:15:12).
#include <gtest/gtest.h>

#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"
#include "chalk/scaleup/scaleup.h"

namespace chalk {
namespace {

ScaleupQuery pipeline_query(std::optional<DType> weights) {
  ScaleupQuery q;
  q.batch = 1;
  q.context = 8192;
  q.weights = weights;
  return q;
}

TEST(PipelineCost, Llama405bBf16OverTwoHgxH100BoxesByHand) {
  // Llama 3.1 405B in bf16 (812 GB) does not fit one HGX H100 (576 GB usable): two stages.
  // Per layer: attention 16384 x (16384 + 2 x 1024 + 16384) = 570,425,344, FFN 3 x 16384 x
  // 53248 = 2,617,245,696, norms 32,768: 3,187,703,808 parameters. The busiest stage holds
  // 63 layers (200,825,339,904) + embedding and LM head (2 x 128256 x 16384 = 4,202,692,608)
  // + the final norm (16,384) = 205,028,048,896 parameters, 410.056 GB in bf16; TP8 keeps
  // the 127 norms (2,080,768 parameters, 4.16 MB) on every rank: 7 more copies, 410.085 GB.
  // Room for KV: 576 - 410.085 = 165.915 GB. KV per sequence on a stage at 8192 tokens: 63
  // layers x 2 x 8 KV heads x 128 x 2 B = 258,048 B/token, 2.113929 GB: B = floor(165.944 /
  // 2.113929) = floor(78.49) = 78 sequences in flight (TP8 splits the 8 KV heads: no copies).
  const ModelSpec m = load_model("llama-3.1-405b");
  const SystemSpec h100 = load_system("h100-sxm");
  const ModelOnDomain r = place_on_domain(m, h100, pipeline_query(DType::bf16));
  ASSERT_FALSE(r.fits);
  EXPECT_FALSE(r.cheapest.has_value());  // no one-domain layout: the pipeline is the only way
  ASSERT_EQ(r.pipeline.stages, 2);
  EXPECT_EQ(r.pipeline.layers_per_stage, 63);
  ASSERT_TRUE(r.pipeline.cheapest.has_value());
  EXPECT_EQ(r.pipeline.cheapest_stage->name, "TP8");
  EXPECT_EQ(r.pipeline.cheapest_stage->replica_chips, 8);
  EXPECT_NEAR(to_gb(r.pipeline.cheapest->stage_memory.weights), 410.056097792 + 7 * 4161536e-9, 1e-6);
  EXPECT_EQ(r.pipeline.cheapest_batch, 78);
  const PipelineDecode& p = *r.pipeline.cheapest;

  // Two microbatches of 39 keep both boxes busy. Each stage boundary sends 39 x 16384 x 2
  // = 1,277,952 B over 400 Gb/s InfiniBand (50 GB/s x 0.73125 = 36.5625 GB/s achieved):
  // NCCL LL128 wins, 14.0 + 4.0 us + 1,277,952 / (36.5625e9 x 120/128) = 18 + 37.283 =
  // 55.283 us (LL 9.3 + 183.96 us, Simple 22.4 + 34.95 us). The sampled ids, 39 x 4 = 156
  // B, go back with LL: 9.3 + 156 / (36.5625e9 x 0.19) = 9.322 us.
  EXPECT_EQ(p.microbatches, 2);
  EXPECT_EQ(p.microbatch, 39);
  EXPECT_NEAR(to_us(p.t_hop), 18.0 + 1277952.0 / (36.5625e9 * 120.0 / 128.0) * 1e6, 1e-6);
  EXPECT_NEAR(to_us(p.t_return), 9.3 + 156.0 / (36.5625e9 * 0.19) * 1e6, 1e-6);

  // The stage's engine step on 39 sequences, t_s, is at least its HBM reads by hand: weights
  // as the engine prices them (vLLM's bf16 weights at min(0.87, 0.911) of 3.35 = 2.9145 TB/s:
  // engine/matmul_rate.h; KV 3.0 TB/s per H100: MinimumLatency.ByHandOnH100AndH200), 410.056
  // / 8 GB per chip of weights: 51.257 GB / 2.9145 = 17.587 ms + 39 x 2.113929 / 8 GB / 3.0 =
  // 3.435 ms -> 21.02 ms; plus 63 x 9 + 4 = 571 kernels x 6.3 us = 3.597 ms of launches; plus
  // the all-reduces.
  const double t_s = p.stage.t_step.value();
  EXPECT_GT(t_s, 21.02e-3 + 3.597e-3);
  EXPECT_LT(t_s, 40e-3);
  // TPOT = 2 t_s + hop + return; the cycle of a microbatch is max(TPOT, 2 t_s) = TPOT;
  // tok/s = 78 / TPOT over 16 chips; $/token = 16 x $2.35/h / tok/s (lecture 56:43-1:12:28).
  const double tpot = 2 * t_s + p.t_hop.value() + p.t_return.value();
  EXPECT_NEAR(p.t_pass.value(), tpot, 1e-15);
  EXPECT_NEAR(p.cycle.value(), tpot, 1e-15);
  EXPECT_NEAR(*r.cheapest_tokens_per_s_per_chip, 78.0 / tpot / 16.0, 1e-9);
  EXPECT_NEAR(to_usd_per_mtok(*r.cheapest_cost_per_token), 16 * 2.35 / 3600.0 / (78.0 / tpot) * 1e6, 1e-9);
  EXPECT_NEAR(p.stage_busy, 2 * t_s / tpot, 1e-12);
  // What that comes to (t_s = 27.5 ms): about 88 tok/s per chip and $7.4 per million
  // tokens (84 and $7.8 at t_s = 29.1 ms before vLLM's bf16 GEMMs streamed at their marginal
  // rate). Sixteen H100s as a pipeline are not two independent replicas: each box reads
  // only its half of the weights per step, so per chip it matches one domain holding all
  // of them at half the batch. (t_s was 32.0 ms, 76 tok/s and $8.6 with NCCL's ring for the
  // stage's 126 all-reduces of 39 x 16384 x 2 = 1,277,952 B: about 47 us each, where vLLM's
  // two-shot takes 12.9 + 1.75 x 1277952 / (0.47 x 450 GB/s) = 23.5 us: 3.0 ms less.)
  EXPECT_NEAR(*r.cheapest_tokens_per_s_per_chip, 88.4, 0.5);
  EXPECT_NEAR(to_usd_per_mtok(*r.cheapest_cost_per_token), 7.38, 0.06);
}

TEST(PipelineCost, EveryPricedPipelineCountsEveryDomain) {
  // Every system that needs a pipeline for the 5T MoE at fp8: its cheapest tokens count
  // stages x stage chips (never one domain's), its cost is that many chips' price over the
  // pipeline's tokens/s, and a pipeline never beats one domain's TPOT floor.
  const ModelSpec t5 = load_model(std::string(CHALK_SOURCE_DIR) + "/tests/data/moe-5t.json");
  int piped = 0;
  for (const auto& name : builtin_system_names()) {
    const SystemSpec s = load_system(name);
    const ModelOnDomain r = place_on_domain(t5, s, pipeline_query(DType::fp8));
    if (r.fits || !r.pipeline.cheapest) continue;
    ++piped;
    const PipelineDecode& p = *r.pipeline.cheapest;
    const double chips = static_cast<double>(r.pipeline.stages * r.pipeline.cheapest_stage->replica_chips);
    EXPECT_NEAR(*r.cheapest_tokens_per_s_per_chip, static_cast<double>(r.pipeline.cheapest_batch) / p.cycle.value() / chips, 1e-9) << name;
    if (s.price_per_chip) {
      EXPECT_NEAR(r.cheapest_cost_per_token->value(), s.price_per_chip->value() * chips / p.tokens_per_s.value(), 1e-18) << name;
    }
    EXPECT_EQ(p.stages, r.pipeline.stages) << name;
    EXPECT_GE(r.pipeline.tpot->value(), r.tpot_floor.value()) << name;
  }
  EXPECT_GE(piped, 5);  // A100, H100, H800, H200, B200 at least
}

TEST(LectureHop, RackToRackIsMicrosecondsInChalkNotTenMilliseconds) {
  // Lecture 1:15:06-1:15:33: "what is the latency cost per hop?" "...I can't say with a lot
  // of authority. I think it's probably 10 milliseconds." chalk's hop is the alpha-beta send
  // of pipeline.h over the system's scale-out NIC (GB200 NVL72: 400 Gb/s ConnectX-7, 50 GB/s,
  // 0.73125 achieved = 36.5625 GB/s; NCCL network latencies, collective.h scale_out_link).
  const SystemSpec nvl72 = load_system("gb200-nvl72");
  // One token of the 5T model (d_model 16,384, bf16): 32,768 B, LL: 6.6 + 2.7 us + 32,768 /
  // (36.5625e9 x 0.19) = 9.3 + 4.717 = 14.02 us: 713x under 10 ms.
  const Seconds one = stage_send_time(nvl72, bytes(16384.0 * 2));
  EXPECT_NEAR(to_us(one), 9.3 + 32768.0 / (36.5625e9 * 0.19) * 1e6, 1e-9);
  EXPECT_LT(to_ms(one) * 700, 10.0);
  // The lecture's microbatch of "2000-ish" sequences (1:09:00): 2000 x 32,768 = 65.536 MB,
  // Simple: 8.4 + 14.0 us + 65.536e6 / 36.5625e9 = 22.4 us + 1.79244 ms = 1.8148 ms.
  const Seconds big = stage_send_time(nvl72, bytes(2000.0 * 16384 * 2));
  EXPECT_NEAR(to_ms(big), 0.0224 + 65.536e6 / 36.5625e9 * 1e3, 1e-9);
  EXPECT_NEAR(to_ms(big), 1.8148, 1e-4);
  // chalk reaches 10 ms only at about 10e-3 x 36.5625e9 = 365 MB per send: a microbatch of
  // about 11,100 such sequences through one NIC. The lecture's figure is not chalk's physics;
  // chalk keeps its own number and says so (docs/scaleup.md, "The lecture's 10 ms hop").
  const double bytes_for_10ms = (10e-3 - 22.4e-6) * 36.5625e9;
  EXPECT_NEAR(to_ms(stage_send_time(nvl72, bytes(bytes_for_10ms))), 10.0, 1e-9);
  EXPECT_NEAR(bytes_for_10ms / 32768.0, 11133, 5);
  // Per token of the 5T model on ten HGX H100 boxes (src/scaleup/scaleup_test.cc), the
  // nine hops and the ids sent back add 0.133 ms to a TPOT of tens of milliseconds.
  const ModelOnDomain f8 = place_on_domain(load_model(std::string(CHALK_SOURCE_DIR) + "/tests/data/moe-5t.json"),
                                           load_system("h100-sxm"), pipeline_query(DType::fp8));
  ASSERT_EQ(f8.pipeline.stages, 10);
  EXPECT_NEAR(to_ms(*f8.pipeline.hop_latency), 9 * 0.014017 + 0.0093005, 1e-5);
  EXPECT_LT(f8.pipeline.hop_latency->value() / f8.pipeline.tpot->value(), 0.01);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(ScaleupYears, EveryBuiltInYearCitesAPageAndSaysWhatItDates) {
  // The chart's x axis (docs/scaleup.md "Years"): every built-in system states its year
  // with a public page, and whether the year is an announcement, a launch or first shipments.
  for (const auto& name : builtin_system_names()) {
    const SystemSpec s = load_system(name);
    ASSERT_TRUE(s.year.has_value()) << name;
    EXPECT_GE(*s.year, 2020) << name;
    EXPECT_LE(*s.year, 2027) << name;
    EXPECT_NE(s.year_source.find("https://"), std::string::npos) << name << ": " << s.year_source;
    const bool kind = s.year_source.rfind("announcement", 0) == 0 || s.year_source.rfind("shipping", 0) == 0 ||
                      s.year_source.rfind("launch", 0) == 0;
    EXPECT_TRUE(kind) << name << ": " << s.year_source;
  }
}

}  // namespace
}  // namespace chalk
