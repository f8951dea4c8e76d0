// The scale-up story, checked by hand and against the lecture (36:27-47:12, 1:16-1:18).
#include "chalk/scaleup/scaleup.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

const std::string kData = std::string(CHALK_SOURCE_DIR) + "/tests/data/";

// DeepSeek-V3's MLA KV cache in bf16: (512 + 64) x 61 layers x 2 bytes = 70,272 bytes per
// token; at 8192 tokens 575,668,224 bytes per sequence; 16 sequences 9.2107 GB.
constexpr double kDsKvPerSequence = 576.0 * 61 * 2 * 8192;

ScaleupQuery query(int64_t batch, int64_t context, std::optional<DType> weights = DType::fp8) {
  ScaleupQuery q;
  q.batch = batch;
  q.context = context;
  q.weights = weights;
  return q;
}

TEST(LargestModel, ByHandOnH100AndGb200) {
  const ModelSpec ds = load_model("deepseek-v3");
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence(ds, 8192, DType::bf16).value(), kDsKvPerSequence);
  const ScaleupQuery q = query(16, 8192);  // fp8 weights, 16 x 8192 tokens of KV, MoE 16x
  const double kv_room = 16 * kDsKvPerSequence;  // 9.2107 GB

  // HGX H100: 8 x 80 GB = 640 GB; usable 0.9 x 640 = 576 GB; at 1 byte per weight
  // N = (576e9 - 9.2107e9) = 566.79B. Floor: (N + one sequence's KV) / (8 x 3.35 TB/s x 0.87)
  // = 567.37e9 / 23.316e12 = 24.33 ms; the MoE reads N / 16 = 35.42B: 36.00e9 / 23.316e12 = 1.544 ms.
  const LargestModel h = largest_model(load_system("h100-sxm"), q, bytes(kDsKvPerSequence));
  EXPECT_DOUBLE_EQ(to_gb(h.domain_hbm), 640.0);
  EXPECT_NEAR(h.params_total, 576e9 - kv_room, 1e3);
  EXPECT_NEAR(h.params_total / 1e9, 566.79, 0.01);
  EXPECT_NEAR(h.moe_params_active / 1e9, 35.424, 0.001);
  const double w_h100 = 8 * 3.35e12 * 0.87;
  EXPECT_NEAR(h.dense_tpot_floor.value(), (576e9 - kv_room + kDsKvPerSequence) / w_h100, 1e-12);
  EXPECT_NEAR(to_ms(h.dense_tpot_floor), 24.33, 0.01);
  EXPECT_NEAR(to_ms(h.moe_tpot_floor), 1.544, 0.001);

  // GB200 NVL72: 72 x 186 GB = 13,392 GB; usable 12,052.8 GB; N = 12,043.6B at fp8: the
  // lecture's "scale-up on the order of 10, 20 terabytes, which is enough for a 5T model"
  // (45:44). Floor: 12,044.2e9 / (72 x 8 TB/s x 0.92 = 529.92 TB/s) = 22.73 ms.
  const LargestModel g = largest_model(load_system("gb200-nvl72"), q, bytes(kDsKvPerSequence));
  EXPECT_DOUBLE_EQ(to_gb(g.domain_hbm), 13392.0);
  EXPECT_NEAR(g.params_total / 1e9, 12043.59, 0.01);
  EXPECT_GT(g.params_total, 5e12);
  EXPECT_NEAR(to_ms(g.dense_tpot_floor), 22.729, 0.001);

  // bf16 halves it; a KV batch that fills the domain leaves no room for weights.
  ScaleupQuery bf16 = q;
  bf16.weights = DType::bf16;
  EXPECT_NEAR(largest_model(load_system("h100-sxm"), bf16, bytes(kDsKvPerSequence)).params_total, (576e9 - kv_room) / 2, 1e3);
  EXPECT_EQ(largest_model(load_system("h100-sxm"), query(2000, 8192), bytes(kDsKvPerSequence)).params_total, 0.0);
}

TEST(LargestModel, DenseFloorIsTheHbmSweep) {
  // A dense model that fills the domain reads all of usable HBM per token, so its floor is
  // the batching window of lecture 22:44 scaled by (1 - reserve) / efficiency, whatever the
  // domain size: H100 23.88 ms x 0.9 / 0.87 = 24.70 ms with no KV.
  for (const char* name : {"h100-sxm", "gb200-nvl72", "tpu-v5p"}) {
    const SystemSpec s = load_system(name);
    const LargestModel l = largest_model(s, query(0, 1), bytes(0));
    EXPECT_NEAR(l.dense_tpot_floor.value(), hbm_sweep_time(s.chip.hbm_capacity, s.chip.hbm_bandwidth).value() * 0.9 / s.efficiency.hbm,
                1e-12)
        << name;
  }
}

TEST(PipelineStages, FewestDomainsThatHoldTheModel) {
  EXPECT_EQ(pipeline_stages_needed(gigabytes(500), gigabytes(0), gigabytes(576)), 1);
  EXPECT_EQ(pipeline_stages_needed(gigabytes(576), gigabytes(0), gigabytes(576)), 1);
  EXPECT_EQ(pipeline_stages_needed(gigabytes(5024), gigabytes(9), gigabytes(576)), 9);  // 5033 / 576 = 8.74
  EXPECT_THROW(pipeline_stages_needed(gigabytes(1), gigabytes(0), gigabytes(0)), InputError);
}

TEST(MinimumLatency, ByHandOnH100AndH200) {
  // Llama 3.1 70B, weights fp8 (embedding and LM head stay bf16), batch 1 at 8192 tokens;
  // the fastest layout of one HGX box is TP8 on all 8 chips. Per token:
  //   weights read: 80 x (attention 8192 x (8192 + 2 x 1024 + 8192) = 150.99M + FFN
  //     3 x 8192 x 28672 = 704.64M) = 68.451B at 1 B, LM head 128256 x 8192 x 2 B = 2.1013 GB,
  //     norms 161 x 8192 x 2 B = 2.6 MB: 70.5550 GB, 8.81938 GB per chip (the input embedding
  //     is a lookup, not a read);
  //   KV read: 8192 x 327,680 B = 2.68435 GB, 0.335544 GB per chip;
  //   kernels: 80 x (5 attention + 4 FFN) + 4 = 724 x 6.3 us = 4.5612 ms (overhead.h);
  //   all-reduces: 2 per layer x 80, vLLM's one-shot custom kernel over 8 on NVLink (16,384 B
  //     < 256 KiB): 6.45 us + 7 x 16,384 B / (0.88 x 450 GB/s) = 0.2896 us -> 6.7396 us x 160
  //     = 1.07834 ms (collective.h tp_all_reduce; NCCL's ring LL took 15.419 us, 2.4671 ms).
  // H100: weights at 3.35 TB/s x 2668/3350 = 2.668 TB/s: 3.30561 ms; KV at 3.0 TB/s:
  //   0.111848 ms; TPOT = 3.30561 + 0.11185 + 4.5612 + 1.07834 = 9.0570 ms.
  // H200: weights at 4.8 x 2668/3350 = 3.82281 TB/s: 2.30704 ms; KV at 4.8 x 0.84 (H200's
  //   own STREAM figure) = 4.032 TB/s: 0.083221 ms; TPOT = 2.30704 + 0.08322 + 4.5612 +
  //   1.07834 = 8.0298 ms (8.0246 when KV streamed at FLASHMLA-1's H800 3000/3350).
  const ModelSpec m = load_model("llama-3.1-70b");
  const ScaleupQuery q = query(1, 8192);
  const ModelOnDomain h100 = place_on_domain(m, load_system("h100-sxm"), q);
  ASSERT_TRUE(h100.fits);
  EXPECT_EQ(h100.fastest->name, "TP8");
  EXPECT_NEAR(to_ms(h100.fastest->step.t_overhead), 4.5612, 1e-9);
  EXPECT_NEAR(to_ms(h100.fastest->step.t_comm), 1.07834, 1e-4);
  EXPECT_NEAR(to_ms(*h100.pipeline.tpot), 9.0570, 9.0570 * 5e-4);
  const ModelOnDomain h200 = place_on_domain(m, load_system("h200"), q);
  ASSERT_TRUE(h200.fits);
  EXPECT_EQ(h200.fastest->name, "TP8");
  EXPECT_NEAR(to_ms(*h200.pipeline.tpot), 8.0298, 8.0298 * 5e-4);
  // The roofline floor is the memory part alone: 8.81938 / 3.35e12 / 0.87 + ... on H100
  // (weights and KV at 8 x 3.35 TB/s x 0.87): (70.5550 + 2.68435) GB / 23.316 TB/s = 3.141 ms.
  EXPECT_NEAR(to_ms(h100.tpot_floor), (70.5550 + 2.68435) / 23.316, 2e-3);
  EXPECT_GT(h100.pipeline.tpot->value(), h100.tpot_floor.value());
  EXPECT_EQ(h100.pipeline.stages, 1);
  EXPECT_EQ(h100.pipeline.hop_latency->value(), 0.0);
}

ModelSpec model_file(const char* name) { return load_model(kData + name); }
SystemSpec nvl576() { return load_system(kData + "rubin-ultra-nvl576.json"); }

TEST(Lecture, Nvl72HoldsAFiveTrillionModel) {
  // Lecture 45:44: "a scale-up on the order of 10, 20 terabytes, which is enough for a 5T
  // model". GB200 NVL72 has 72 x 186 = 13.4 TB, GB300 NVL72 72 x 279 = 20.1 TB; the 5T MoE
  // at fp8 (5.024T parameters, embeddings bf16: 5,027.6 GB) fits either with 16 x 8192
  // tokens of its KV beside it (8192 x 128 layers x 2 x 8 x 128 x 2 B = 4.29 GB each), and
  // no 8-chip box.
  const ModelSpec m = model_file("moe-5t.json");
  EXPECT_NEAR(count_params(m).total() / 1e12, 5.024, 0.001);
  const ScaleupQuery q = query(16, 8192);
  for (const char* name : {"gb200-nvl72", "gb300-nvl72"}) {
    const SystemSpec s = load_system(name);
    const LargestModel l = largest_model(s, q, kv_bytes_per_sequence(m, 8192, DType::bf16));
    EXPECT_GT(to_gb(l.domain_hbm), 10e3) << name;
    EXPECT_LT(to_gb(l.domain_hbm), 21e3) << name;
    EXPECT_GT(l.params_total, 5.024e12) << name;
    const ModelOnDomain r = place_on_domain(m, s, q);
    EXPECT_TRUE(r.fits) << name;
    EXPECT_NEAR(to_gb(r.weights), 5027.6, 0.1);
    EXPECT_EQ(r.pipeline.stages, 1);
    // Lecture 1:18:00: the latency floor is "scale-up size times memory bandwidth per GPU":
    // 5,027.6 GB / (72 x 8 TB/s x 0.92 = 529.92 TB/s) = 9.49 ms. (The roofline's floor reads
    // the busiest chip: one whole 604M-parameter expert per layer, which here costs the same.)
    EXPECT_NEAR(to_ms(r.tpot_floor), 5027.6 / 529.92, 0.02 * 9.49) << name;
  }
  for (const char* name : {"h100-sxm", "h200", "b200", "mi355x"}) {
    EXPECT_FALSE(place_on_domain(m, load_system(name), q).fits) << name;
  }
}

TEST(Lecture, WhereTrillionParameterModelsFirstFit) {
  // The 1.8T MoE of the rumored GPT-4 shape and the 5T MoE at fp8 against NVL8 (HGX H100,
  // 2022), NVL72 (GB200, 2025) and NVL576 (Rubin Ultra, announced for 2027), batch 1 at 8192.
  const ScaleupQuery q = query(1, 8192);
  const SystemSpec nvl8 = load_system("h100-sxm"), nvl72 = load_system("gb200-nvl72"), big = nvl576();
  EXPECT_EQ(big.scale_up_domain, 144);  // 576 dies in 144 four-die packages
  EXPECT_EQ(big.year, 2027);

  // 1.8T: 1,783.7 GB of weights + 4.03 GB of KV over 576 GB usable per HGX box: 3.10 -> 4
  // stages of ceil(120 / 4) = 30 layers (each stage with both embeddings: 448 GB + 4.9 GB
  // fits). It first fits one NVL72.
  const ModelSpec gpt4 = model_file("gpt4-class-1.8t.json");
  EXPECT_NEAR(count_params(gpt4).total() / 1e12, 1.781, 0.001);
  const ModelOnDomain g8 = place_on_domain(gpt4, nvl8, q), g72 = place_on_domain(gpt4, nvl72, q), g576 = place_on_domain(gpt4, big, q);
  EXPECT_FALSE(g8.fits);
  EXPECT_EQ(g8.pipeline.stages, 4);
  EXPECT_EQ(g8.pipeline.layers_per_stage, 30);
  EXPECT_TRUE(g72.fits);
  EXPECT_TRUE(g576.fits);
  // Minimum latency falls as the domain grows: the pipeline of four boxes (each stage a
  // quarter of the layers on 8 x 3.35 TB/s) > one NVL72 > one NVL576.
  EXPECT_GT(*g8.pipeline.tpot, *g72.pipeline.tpot);
  EXPECT_GT(*g72.pipeline.tpot, *g576.pipeline.tpot);
  EXPECT_GT(g8.tpot_floor, g72.tpot_floor);
  EXPECT_GT(g72.tpot_floor, g576.tpot_floor);
  // The floor on a domain with more chips than experts per layer is the whole model at the
  // domain's bandwidth ("scale-up size times memory bandwidth per GPU", 1:18:00): every chip
  // holds a slice of a touched expert. 1,783.7 GB / (72 x 8 TB/s x 0.92 = 529.92 TB/s) =
  // 3.366 ms; / (144 x 31.9 TB/s x 0.87 = 3,996.4 TB/s) = 0.4463 ms.
  EXPECT_NEAR(to_gb(g72.weights), 1783.7, 0.1);
  EXPECT_NEAR(to_ms(g72.tpot_floor), 1783.7 / 529.92, 0.005 * 3.366);
  EXPECT_NEAR(to_ms(g576.tpot_floor), 1783.7 / 3996.4, 0.005 * 0.4463);

  // 5T: (5,027.6 + 4.29) / 576 = 8.74 -> at least 9 HGX boxes; 9 stages of ceil(128 / 9) =
  // 15 layers hold 15 x 39.23 GB + 6.6 GB of embeddings = 595 GB > 576, so 10 stages of 13.
  const ModelSpec t5 = model_file("moe-5t.json");
  const ModelOnDomain f8 = place_on_domain(t5, nvl8, q), f72 = place_on_domain(t5, nvl72, q), f576 = place_on_domain(t5, big, q);
  EXPECT_FALSE(f8.fits);
  EXPECT_EQ(f8.pipeline.stages, 10);
  EXPECT_EQ(f8.pipeline.layers_per_stage, 13);
  EXPECT_TRUE(f72.fits);
  EXPECT_TRUE(f576.fits);
  EXPECT_GT(*f8.pipeline.tpot, *f72.pipeline.tpot);
  EXPECT_GT(*f72.pipeline.tpot, *f576.pipeline.tpot);
  // 5,027.6 GB / 3,996.4 TB/s = 1.258 ms on the NVL576 (NVL72: Nvl72HoldsAFiveTrillionModel).
  EXPECT_NEAR(to_ms(f576.tpot_floor), 5027.6 / 3996.4, 0.005 * 1.258);
  // Each token crosses 9 stage boundaries: one token's activations, 16,384 x 2 B = 32 KB,
  // over 400 Gb/s InfiniBand with NCCL's LL protocol: 6.6 + 2.7 us + 32,768 B / (50 GB/s x
  // 0.73125 x 0.19 = 6.947 GB/s) = 14.02 us per hop, 0.1262 ms in all, and the sampled token
  // id (4 B) back from the last box to the first, 9.3 us: the pipeline's cost in latency is
  // its stages' reads, not its hops (pipelining solves capacity, 1:18:21).
  EXPECT_NEAR(to_us(*f8.pipeline.hop), 9.3 + 32768 / 6.946875e9 * 1e6, 1e-3);
  EXPECT_NEAR(to_ms(*f8.pipeline.hop_latency), 9 * to_ms(*f8.pipeline.hop) + (9.3 + 4 / 6.946875e9 * 1e6) / 1e3, 1e-6);
  EXPECT_NEAR(f8.pipeline.tpot->value(), 10 * f8.pipeline.stage->step.t_step.value() + f8.pipeline.hop_latency->value(), 1e-12);
  EXPECT_GE(f8.pipeline.tpot->value(), f8.tpot_floor.value());
}

TEST(Pipeline, AModelNoDomainHoldsNeverFits) {
  // Every system of the catalog, and the NVL576: a model larger than a domain is a
  // pipeline (stages >= 2, no one-domain layout, no one-domain cost), never a fit.
  const ModelSpec t5 = model_file("moe-5t.json");
  ScaleupQuery q = query(1, 8192);
  std::vector<SystemSpec> systems;
  for (const auto& n : builtin_system_names()) systems.push_back(load_system(n));
  systems.push_back(nvl576());
  for (const auto& row : scaleup_table(t5, systems, q)) {
    const ModelOnDomain& r = row.model;
    const bool holds = to_gb(r.weights) + to_gb(r.kv_per_sequence) <= to_gb(row.largest.usable);
    if (!holds) {
      EXPECT_FALSE(r.fits) << row.system.name;
      EXPECT_GE(r.pipeline.stages, 2) << row.system.name;
      EXPECT_FALSE(r.fastest.has_value()) << row.system.name;
      EXPECT_FALSE(r.cheapest.has_value()) << row.system.name;
      EXPECT_FALSE(r.reason.empty()) << row.system.name;
    }
    EXPECT_EQ(r.fits, r.pipeline.stages == 1) << row.system.name;
    if (r.fits) {
      EXPECT_TRUE(r.cheapest.has_value()) << row.system.name;
      EXPECT_GE(r.max_batch, 1) << row.system.name;
    }
  }
  // A domain too small for even one layer per stage: a 1-chip "domain" of 1 GB.
  SystemSpec tiny = load_system("h100-sxm");
  tiny.name = "tiny";
  tiny.scale_up_domain = 1;
  tiny.chip.hbm_capacity = gigabytes(1);
  const ModelOnDomain none = place_on_domain(t5, tiny, q);
  EXPECT_FALSE(none.fits);
  EXPECT_EQ(none.pipeline.stages, 0);
  EXPECT_FALSE(none.pipeline.tpot.has_value());
  EXPECT_NE(none.pipeline.reason.find("no pipeline of up to 128 stages"), std::string::npos);
}

TEST(ModelOnDomain, MaxBatchCountsTheLayoutsKvReplication) {
  // DeepSeek-V3 on 8 H20 (8 x 96 GB, 10% reserve: 691.2 GB usable) at 8192 tokens: the
  // weights take 673.2 GB, leaving 18 GB. Pooled evenly that holds 18e9 / 575.7e6 = 31
  // sequences, but attention TP8 keeps each sequence's whole MLA latent on all 8 chips,
  // so each chip's 2.25 GB holds 3 (decode -H h20 -n 8 -s 8192 and layouts say 3).
  const ModelSpec ds = load_model("deepseek-v3");
  const SystemSpec h20 = load_system("h20");
  const ModelOnDomain r = place_on_domain(ds, h20, query(1, 8192));
  ASSERT_TRUE(r.cheapest.has_value());
  EXPECT_EQ(r.max_batch, 3);
  EXPECT_EQ(r.max_batch, static_cast<int64_t>(r.cheapest->batch) * r.cheapest->replicas);
  // The even pool's figure, which the row used to print.
  DeploymentOptions o;
  o.n_chips = 8;
  o.weights = DType::fp8;
  EXPECT_EQ(memory_plan(make_deployment(ds, h20, o), 1, 8192).max_batch, 31);
  // 10 sequences fit the pool but no layout: the row does not fit (it said "fits" with max
  // batch 3 beside it) and says so; 3 still fit.
  const ModelOnDomain ten = place_on_domain(ds, h20, query(10, 8192));
  EXPECT_FALSE(ten.fits);
  EXPECT_EQ(ten.max_batch, 3);
  EXPECT_NE(ten.reason.find("no layout of the domain holds 10 sequences of 8192 tokens: at most 3"), std::string::npos) << ten.reason;
  EXPECT_TRUE(place_on_domain(ds, h20, query(3, 8192)).fits);
}

TEST(Pipeline, NoScaleOutMeansNoPipelineLatency) {
  SystemSpec s = load_system("h100-sxm");
  s.scale_out_bandwidth_per_direction = BytesPerSecond(0);
  const ModelOnDomain r = place_on_domain(model_file("gpt4-class-1.8t.json"), s, query(1, 8192));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.pipeline.stages, 4);
  EXPECT_FALSE(r.pipeline.tpot.has_value());
  EXPECT_NE(r.pipeline.reason.find("states no scale-out bandwidth"), std::string::npos);
}

TEST(ScaleupQuery, ErrorsNameTheField) {
  const SystemSpec h = load_system("h100-sxm");
  auto message = [&](ScaleupQuery q) {
    try {
      largest_model(h, q, bytes(0));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ScaleupQuery q;
  q.batch = -1;
  EXPECT_EQ(message(q), "batch: must be >= 0 sequences, got -1");
  q = {};
  q.context = 0;
  EXPECT_EQ(message(q), "context: must be >= 1 token, got 0");
  q = {};
  q.moe_sparsity = 0.5;
  EXPECT_EQ(message(q), "moe_sparsity: must be total / active parameters >= 1 (1 = dense), got 0.5");
  q = {};
  q.memory_reserve_fraction = 1;
  EXPECT_EQ(message(q), "memory_reserve_fraction: must be a fraction in [0, 1), got 1");
  EXPECT_THROW(largest_model(h, ScaleupQuery{}, bytes(-1)), InputError);
  q = {};
  q.batch = -3;
  EXPECT_THROW(place_on_domain(load_model("llama-3.1-8b"), h, q), InputError);
}

TEST(ModelOnDomain, LinearAttentionStateCountsAndLinearLayersHoldNoKv) {
  // Qwen3-Next-80B-A3B: 12 full-attention layers of 2 KV heads x 256 (bf16): 12 x 2 x 2 x
  // 256 x 2 B = 24,576 B per token, 201,326,592 B at 8192 tokens; the 36 Gated DeltaNet
  // layers hold no KV but a fixed state: 32 value heads x 128 x 128 fp32 = 2,097,152 B
  // plus conv 3 x (2 x 16 x 128 + 32 x 128) x 2 B = 49,152 B, x 36 = 77,266,944 B.
  // One sequence: 278,593,536 B, as the engine's memory plan counts it.
  const ModelSpec m = load_model("qwen3-next-80b-a3b");
  const ScaleupQuery q = query(4, 8192);
  const auto rows = scaleup_table(m, {load_system("h200")}, q);
  EXPECT_DOUBLE_EQ(rows[0].model.kv_per_sequence.value(), 278593536.0);
  EXPECT_DOUBLE_EQ(rows[0].largest.kv_room.value(), 4 * 278593536.0);
}

}  // namespace
}  // namespace chalk
