// The scale-up story (lecture 36:27-47:12, 1:16-1:18; docs/scaleup.md): one scale-up domain
// (an NVLink or ICI domain) bounds an expert layer, its memory bounds the model it can hold,
// and its aggregate HBM bandwidth bounds the time per output token. Pipelining across
// domains solves capacity, never bandwidth (1:18:21): every stage still reads its share of
// the weights at one domain's bandwidth, one stage after another, and each stage boundary
// adds a scale-out hop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/base/dtype.h"
#include "chalk/base/units.h"
#include "chalk/engine/layout_search.h"
#include "chalk/engine/pipeline.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"

namespace chalk {

/// What every system is asked. Unset fields take the defaults documented here.
struct ScaleupQuery {
  /// Weight format of the model checked (every component; unset = its checkpoint's formats)
  /// and of the largest model (unset = fp8).
  std::optional<DType> weights;
  DType kv = DType::bf16;      ///< KV-cache format
  /// Sequences whose KV cache must fit beside the weights on one domain (the "room for a KV
  /// batch" of the largest model and the fit test of a given model), each at `context`.
  int64_t batch = 1;
  int64_t context = 8192;  ///< tokens in each sequence's KV cache
  /// Total over active parameters of the MoE column (DeepSeek-V3: 671B / 37B = 18; Kimi K2:
  /// 1T / 32B = 31). Must be >= 1 (1 = dense).
  double moe_sparsity = 16;
  /// Fraction of HBM held back for activations and runtime (DeploymentOptions' default, vLLM's
  /// gpu_memory_utilization 0.9).
  double memory_reserve_fraction = 0.10;
};

/// One domain's memory and bandwidth, and the largest model it holds.
struct LargestModel {
  Bytes domain_hbm;              ///< n x HBM capacity per chip
  BytesPerSecond domain_hbm_bandwidth;  ///< n x peak HBM bandwidth per chip (the lecture's 1:18:00)
  Bytes usable;                  ///< (1 - reserve) x domain_hbm
  Bytes kv_room;                 ///< batch x (KV + linear-layer state) bytes of one sequence at context
  /// N = (usable - kv_room) / b_w, the total parameters that fit, dense or MoE alike (0 when
  /// the KV batch alone fills the domain). Memory does not care how sparse a model is.
  double params_total = 0;
  double moe_params_active = 0;  ///< N / moe_sparsity: what one token of the MoE reads
  /// The memory floor of one output token at batch 1: (bytes read) / (n W eff_hbm), with
  /// bytes read = N b_w + one sequence's KV (dense) or N b_w / sparsity + KV (MoE, one token
  /// touches only its experts). The dense floor is about the HBM sweep time (lecture 22:44):
  /// a dense model that fills the domain reads all of it per token.
  Seconds dense_tpot_floor;
  Seconds moe_tpot_floor;
};

/// The largest model one scale-up domain of `s` holds in format q.weights (fp8 when unset) with room for
/// q.batch sequences of `kv_bytes_per_sequence` (lecture 45:44: "a scale-up on the order of
/// 10, 20 terabytes, which is enough for a 5T model"). Throws InputError for a query out of
/// range (see validate(ScaleupQuery)) or negative KV bytes.
LargestModel largest_model(const SystemSpec& s, const ScaleupQuery& q, Bytes kv_bytes_per_sequence);

/// A pipeline of stages, one scale-up domain each, for a model that one domain cannot hold
/// (engine/pipeline.h: the busiest stage is pipeline_stage_model, each send stage_send_time).
struct PipelinePlan {
  /// Domains in the pipeline: 1 when the model fits one domain; 0 when no pipeline of up to
  /// one layer per stage fits (see reason).
  int64_t stages = 1;
  int64_t layers_per_stage = 0;  ///< of the busiest stage (ceil per layer group)
  /// One stage-to-stage transfer of one token's activations (batch 1 x d_model x 2 bytes,
  /// bf16) over the scale-out network: min over NCCL protocols of base + one step latency +
  /// bytes / (achieved bandwidth x protocol fraction) (pipeline.h stage_send_time). Unset
  /// when the system states no scale-out bandwidth.
  std::optional<Seconds> hop;
  /// Latency the pipeline adds per output token at batch 1: (stages - 1) x hop + the
  /// sampled token id (4 bytes) sent back from the last stage to the first (pipeline.h
  /// PipelineDecode::t_return); 0 when stages = 1.
  std::optional<Seconds> hop_latency;
  std::optional<LayoutCandidate> stage;  ///< the fastest layout of the busiest stage on one domain (batch 1)
  /// stages x the busiest stage's step + hop_latency (pipeline_decode at batch 1, one
  /// microbatch): a token passes every stage in turn, so the weights are still read at one
  /// domain's bandwidth (lecture 1:16:47-1:18:21).
  std::optional<Seconds> tpot;
  /// The cheapest tokens of the pipeline (lecture 56:43-1:12:28): the busiest stage laid
  /// out as `cheapest_stage` (the throughput search's best for the stage model on one
  /// domain, replicas inside the domain allowed), each stage replica holding the largest
  /// batch B its HBM holds at q.context over its layers, `stages` microbatches of B /
  /// stages in flight so every stage stays busy (pipeline_decode): tokens/s = B / cycle,
  /// counted over every stage's chips (stages x stage replica chips), stage-to-stage
  /// sends and the token ids sent back included. Unset when no pipeline could be priced.
  std::optional<PipelineDecode> cheapest;
  std::optional<LayoutCandidate> cheapest_stage;  ///< the stage layout of `cheapest`
  int64_t cheapest_batch = 0;  ///< B: sequences in flight through one pipeline replica
  std::string reason;  ///< why no pipeline could be priced (empty when it was)
};

/// One model on one scale-up domain of one system.
struct ModelOnDomain {
  Bytes weights;            ///< every weight in q.weights (unset: the checkpoint's formats)
  Bytes kv_per_sequence;    ///< at q.context in q.kv, plus linear layers' fixed state (sequence_bytes)
  /// Weights + reserve + q.batch sequences of KV fit one domain's HBM, the weights and KV
  /// spread evenly over its chips (roofline.h memory_plan).
  bool fits = false;
  /// Sequences at q.context one domain holds beside the weights under `cheapest`'s layout
  /// (its batch per replica x replicas), KV replicated as that layout replicates it (MLA's
  /// latent on every chip of an attention TP group), the memory model of decode and
  /// layouts; 0 when no layout of one domain fits. DeepSeek-V3 on 8 H20 at 8192 tokens: 3
  /// (attention TP8 keeps each sequence's whole 575.7 MB latent on all 8 chips, so the
  /// 18 GB left beside the weights holds 8x fewer), not the 31 = (691.2 - 673.2) GB /
  /// 575.7 MB of an even pool.
  int64_t max_batch = 0;
  /// The roofline floor at batch 1 on one domain: (weights touched + KV of one sequence) /
  /// (n W eff_hbm), compute ignored (decode_step without mechanisms, n = domain chips).
  /// Set even when the model does not fit: it is then the floor a pipeline cannot beat.
  Seconds tpot_floor;
  /// The fastest layout at batch 1 among every replica size that divides the domain
  /// (search_layouts, latency objective: weights and KV at the chips' bandwidth plus the
  /// per-layer collectives and kernel launch floor of overhead.h). Unset when none fits.
  std::optional<LayoutCandidate> fastest;
  /// The layout with the most tokens/s per chip, each replica running the largest batch its
  /// HBM holds at q.context (search_layouts, throughput objective). Unset when none fits.
  std::optional<LayoutCandidate> cheapest;
  /// The cheapest tokens/s per chip however the model is served: `cheapest` on one domain
  /// when it fits, else the pipeline's (pipeline.cheapest: every domain's chips counted).
  /// Unset when neither could be priced (see reason and pipeline.reason).
  std::optional<double> cheapest_tokens_per_s_per_chip;
  /// price per chip-second / cheapest_tokens_per_s_per_chip; unset without a price.
  std::optional<UsdPerToken> cheapest_cost_per_token;
  PipelinePlan pipeline;    ///< stages = 1 when the model fits; else the pipeline across domains
  std::string reason;       ///< why it does not fit, or why no layout fits (empty otherwise)
};

/// Places `m` on one scale-up domain of `s` (and, when it does not fit, on a pipeline of
/// domains). Never reports a model that one domain cannot hold as fitting: such a model has
/// fits = false and pipeline.stages >= 2. Throws InputError for a bad query, or when the
/// weight format or the chip's compute classes reject the model (make_deployment's errors).
ModelOnDomain place_on_domain(const ModelSpec& m, const SystemSpec& s, const ScaleupQuery& q);

/// Domains a pipeline needs: the smallest p with (weights + kv_room) / p <= usable, where
/// usable = (1 - reserve) x domain HBM. Throws InputError when usable <= 0.
int64_t pipeline_stages_needed(Bytes weights, Bytes kv_room, Bytes usable);

/// One row of `chalk scaleup`: a system, its domain, the largest model it holds and the
/// given model on it.
struct ScaleupRow {
  SystemSpec system;
  LargestModel largest;
  ModelOnDomain model;
};

/// Every system in `systems`, in order. Throws as largest_model and place_on_domain.
std::vector<ScaleupRow> scaleup_table(const ModelSpec& m, const std::vector<SystemSpec>& systems, const ScaleupQuery& q);

/// Checks a query: batch >= 0, context >= 1, moe_sparsity >= 1, reserve in [0, 1). Throws
/// InputError naming the field (batch, context, moe_sparsity, memory_reserve_fraction).
void validate(const ScaleupQuery& q);

}  // namespace chalk
