// Pipelines in inference (lecture 47:12-1:18:33; docs/formulas.md, "Pipelines in inference"):
// the layers split into `stages` consecutive stages, one scale-up domain (or one group of
// chips) each; a stage passes each microbatch's activations to the next over the scale-out
// network. Pipelining adds capacity, not speed: every token still passes every stage in
// turn, so its latency does not fall with more stages; what rises is the work in flight
// (microbatches), hence the throughput of one replica; the KV per domain stays that of one
// microbatch over all layers; and it pays when the model does not fit one domain.
#pragma once

#include <cstdint>
#include <optional>

#include "chalk/base/units.h"
#include "chalk/engine/roofline.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"

namespace chalk {

/// The busiest stage of a pipeline over `stages` stages: every layer group cut to
/// ceil(count / stages) layers (so a stage's KV is exactly 1/stages of the model's when the
/// stages divide every group). It keeps the input embedding and the LM head, which only the
/// first and the last stage hold, so its weight bytes are a little above a real stage's
/// (one vocab x d_model matrix: 1.1B of Llama 3.1 405B's 406B). The name gains
/// " (1 of N pipeline stages)". stages = 1 returns `m` unchanged.
/// Throws InputError("pp") unless 1 <= stages <= n_layers(m).
ModelSpec pipeline_stage_model(const ModelSpec& m, int64_t stages);

/// One point-to-point send of `message` bytes from one stage to the next over the
/// scale-out network (collective.h scale_out_link): the fastest NCCL protocol's base
/// latency + one step latency + bytes / (achieved bandwidth x protocol fraction) (the
/// alpha-beta model of DESIGN.md 1.3). Throws InputError("hardware") when the system
/// states no scale-out bandwidth.
Seconds stage_send_time(const SystemSpec& s, Bytes message);

/// The wire time of the same send: message / scale-out bandwidth per direction (no
/// protocol latency, full rate): the lower bound of stage_send_time, used by the roofline
/// (mechanisms off). Throws InputError("hardware") as stage_send_time.
Seconds hop_wire_time(const SystemSpec& s, Bytes message);

/// The stage-to-stage send of a pipeline of `stages` copies of `stage` (review 6 L9): over
/// the scale-up link (collective.h scale_up_link, the same alpha-beta model with NCCL's
/// NVLink ring latencies) when every stage's chips sit in one scale-up domain, stages x
/// stage.n_chips <= scale_up_domain (3 stages of 2 H100 in one 8-GPU NVLink domain: NCCL
/// sends over NVLink, not the NIC), else over the scale-out network (stage_send_time); with
/// mechanisms off, the wire time at that link's per-direction rate. Throws InputError
/// ("hardware") for stages across domains on a system without a scale-out network.
Seconds pipeline_hop_time(const Deployment& stage, int64_t stages, Bytes message);

/// True when the `stages` stages of `stage` fit one scale-up domain (pipeline_hop_time's link).
bool stages_within_domain(const Deployment& stage, int64_t stages);

/// A pipelined replica: `stages` copies of the busiest stage's deployment (its chips are
/// `stage.n_chips`, one scale-up domain or part of one), `microbatches` in flight.
struct PipelineShape {
  int64_t stages = 1;        ///< pp >= 1
  int64_t microbatches = 1;  ///< in flight, >= 1 (the lecture: as many as stages keep every stage busy)
  /// Bytes per activation element sent between stages (bf16 = 2, the activations' format).
  double activation_bytes = 2;
};

/// One decode step of a pipelined replica serving `batch` sequences at `context` tokens.
struct PipelineDecode {
  int64_t stages = 1, microbatches = 1;  ///< microbatches: min(shape.microbatches, batch)
  int64_t microbatch = 1;         ///< sequences per microbatch: ceil(batch / microbatches)
  DecodeStep stage;               ///< the busiest stage on one microbatch (decode_step of the stage deployment)
  Bytes hop_bytes;                ///< microbatch x d_model x activation_bytes, one stage boundary
  Seconds t_hop;                  ///< pipeline_hop_time(hop_bytes); 0 when stages = 1
  /// The sampled token ids (microbatch x 4 bytes) sent from the last stage back to the
  /// first, which embeds them for the next step; 0 when stages = 1.
  Seconds t_return;
  /// One token's pass through every stage: stages x stage.t_step + (stages - 1) x t_hop +
  /// t_return: a token passes every stage in turn, so the stages' steps add up (lecture
  /// 1:16:47-1:18:21); a stage holds 1/stages of the layers, so with the same chips per
  /// stage this is about one domain's step plus the hops: never faster. It is a user's
  /// TPOT only while the stages wait on it (microbatches x stage.t_step <= t_pass).
  Seconds t_pass;
  /// Time between two steps of the same microbatch, hence between two tokens of one user:
  /// the TPOT a user sees, max(t_pass, microbatches x stage.t_step) (a stage runs its
  /// microbatches one after another; sends overlap the next microbatch's compute). With
  /// more microbatches than the pass covers, the stages are the queue: Llama 3.1 405B on
  /// 2 x 8 H100 at 8 microbatches waits 8 x 25.7 = 206 ms, not the 51.4 ms pass.
  Seconds cycle;
  /// Fraction of a stage's time spent computing: microbatches x stage.t_step / cycle (1 -
  /// the bubble; about 1 / stages with one microbatch).
  double stage_busy = 1;
  TokensPerSecond tokens_per_s;           ///< batch / cycle
  TokensPerSecond tokens_per_s_per_user;  ///< 1 / cycle
  TokensPerSecond tokens_per_s_per_chip;  ///< batch / cycle / (stages x stage chips)
  std::optional<UsdPerToken> cost_per_token;  ///< stages x stage chips x price x cycle / batch
  /// HBM of one stage's domain: its weights and the KV of every sequence in flight over its
  /// layers (memory_plan of the stage deployment at `batch`): with microbatches = stages
  /// of b sequences it equals one domain holding all the layers at b (KV per domain stays).
  MemoryPlan stage_memory;
};

/// The decode step of a pipeline whose busiest stage is `stage` (a Deployment of
/// pipeline_stage_model on the chips of one stage). Stage-to-stage sends use
/// stage.system's scale-out network when stages > 1. Throws InputError for batch < 1,
/// context < 0, stages < 1 ("pp"), microbatches < 1 ("microbatches"), activation_bytes
/// <= 0, or stages > 1 on a system without a scale-out bandwidth ("hardware").
/// With `stage.mechanisms.enabled` false (the roofline: the lower bound) a send is its
/// bytes over the scale-out link's full per-direction rate, no latency (hop_wire_time), so
/// the pipeline's roofline is a true lower bound of its engine figures.
PipelineDecode pipeline_decode(const Deployment& stage, const PipelineShape& shape, int64_t batch, int64_t context);

/// One prefill through a pipelined replica: `batch` prompts of `prompt` tokens after
/// `prefix` cached tokens, split into microbatches of whole prompts.
struct PipelinePrefill {
  int64_t stages = 1, microbatches = 1, microbatch = 1;  ///< as PipelineDecode
  PrefillStep stage;      ///< the busiest stage on one microbatch
  Bytes hop_bytes;        ///< microbatch x prompt x d_model x activation_bytes
  Seconds t_hop;          ///< pipeline_hop_time(hop_bytes); 0 when stages = 1
  /// Time to first token of the last microbatch: the fill, (stages + microbatches - 1) x
  /// stage.t_step + (stages - 1) x t_hop (GPipe's forward pass; a send overlaps the next
  /// microbatch's compute); with one microbatch stages x stage.t_step + (stages - 1) x
  /// t_hop: more stages never shorten a lone prompt.
  Seconds ttft;
  /// Prompt tokens per second of a steady stream of such batches (every stage busy, since
  /// one batch's prefill does not wait on the previous): batch x prompt / (microbatches x
  /// max(stage.t_step, t_hop)). Microbatches shorten a batch's fill (ttft), not this.
  TokensPerSecond tokens_per_s;
  std::optional<UsdPerToken> cost_per_token;  ///< per input token at tokens_per_s
  MemoryPlan stage_memory;  ///< the stage domain at `batch` prompts of prefix + prompt tokens
};

/// The prefill of a pipeline whose busiest stage is `stage`. Throws as pipeline_decode,
/// and for prompt < 1 or prefix < 0.
PipelinePrefill pipeline_prefill(const Deployment& stage, const PipelineShape& shape, int64_t batch, int64_t prompt,
                                 int64_t prefix = 0);

}  // namespace chalk
