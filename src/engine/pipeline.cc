// Pipelines in inference (pipeline.h; docs/formulas.md, "Pipelines in inference").
#include "chalk/engine/pipeline.h"
#include "chalk/base/count_cast.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"

namespace chalk {
namespace {

using counts::d;

void check_shape(const PipelineShape& shape, int64_t batch) {
  if (batch < 1) throw InputError("batch", "must be >= 1 sequence, got " + std::to_string(batch));
  if (shape.stages < 1) throw InputError("pp", "must be >= 1 stage, got " + std::to_string(shape.stages));
  if (shape.microbatches < 1) throw InputError("microbatches", "must be >= 1, got " + std::to_string(shape.microbatches));
  if (!(shape.activation_bytes > 0) || !std::isfinite(shape.activation_bytes)) {
    throw InputError("activation_bytes", "must be a positive number of bytes per element");
  }
}

}  // namespace

ModelSpec pipeline_stage_model(const ModelSpec& m, int64_t stages) {
  const int64_t layers = n_layers(m);
  if (stages < 1 || stages > layers) {
    throw InputError("pp", "expected 1 to " + std::to_string(layers) + " stages (" + m.name + " has " + std::to_string(layers) +
                               " layers), got " + std::to_string(stages));
  }
  if (stages == 1) return m;
  ModelSpec st = m;
  for (auto& g : st.groups) g.count = (g.count + stages - 1) / stages;
  st.name = m.name + " (1 of " + std::to_string(stages) + " pipeline stages)";
  return st;
}

namespace {
/// One point-to-point send over `link`: the fastest protocol's base + one step latency + bytes
/// at its share of the achieved bandwidth.
Seconds pipe_send_over(const LinkModel& link, Bytes message) {
  double best = INFINITY;
  for (const auto& p : link.protocols) {
    best = std::min(best, (p.base_latency + p.step_latency + message / (link.bandwidth * p.bandwidth_fraction)).value());
  }
  return seconds(best);
}
}  // namespace

Seconds stage_send_time(const SystemSpec& s, Bytes message) {
  if (!(s.scale_out_bandwidth_per_direction.value() > 0)) {
    throw InputError("hardware", s.name + " states no scale-out bandwidth: a pipeline's stage-to-stage send cannot be priced");
  }
  return pipe_send_over(scale_out_link(s), message);
}

Seconds hop_wire_time(const SystemSpec& s, Bytes message) {
  if (!(s.scale_out_bandwidth_per_direction.value() > 0)) {
    throw InputError("hardware", s.name + " states no scale-out bandwidth: a pipeline's stage-to-stage send cannot be priced");
  }
  return message / s.scale_out_bandwidth_per_direction;
}

bool stages_within_domain(const Deployment& stage, int64_t stages) {
  return stage.system.scale_up_bandwidth_per_direction.value() > 0 && stages * stage.n_chips <= stage.system.scale_up_domain;
}

Seconds pipeline_hop_time(const Deployment& stage, int64_t stages, Bytes message) {
  if (!stages_within_domain(stage, stages)) {
    return stage.mechanisms.enabled ? stage_send_time(stage.system, message) : hop_wire_time(stage.system, message);
  }
  return stage.mechanisms.enabled ? pipe_send_over(scale_up_link(stage.system), message) : message / stage.system.scale_up_bandwidth_per_direction;
}

PipelineDecode pipeline_decode(const Deployment& stage, const PipelineShape& shape, int64_t batch, int64_t context) {
  check_shape(shape, batch);
  PipelineDecode r;
  r.stages = shape.stages;
  r.microbatches = std::min(shape.microbatches, batch);
  r.microbatch = (batch + r.microbatches - 1) / r.microbatches;
  r.stage = decode_step(stage, r.microbatch, context);
  r.hop_bytes = bytes(d(r.microbatch) * d(stage.model.d_model) * shape.activation_bytes);
  r.t_hop = seconds(0);
  r.t_return = seconds(0);
  if (r.stages > 1) {
    r.t_hop = pipeline_hop_time(stage, r.stages, r.hop_bytes);
    r.t_return = pipeline_hop_time(stage, r.stages, bytes(d(r.microbatch) * 4.0));
  }
  const Seconds t = r.stage.t_step;
  r.t_pass = t * d(r.stages) + r.t_hop * d(r.stages - 1) + r.t_return;
  r.cycle = std::max(r.t_pass, t * d(r.microbatches));
  r.stage_busy = (t * d(r.microbatches)) / r.cycle;
  const double kept = r.stage.tokens_per_sequence;
  const double chips = d(r.stages) * d(stage.n_chips);
  r.tokens_per_s = TokensPerSecond(d(batch) * kept / r.cycle.value());
  r.tokens_per_s_per_user = TokensPerSecond(kept / r.cycle.value());
  r.tokens_per_s_per_chip = TokensPerSecond(r.tokens_per_s.value() / chips);
  if (stage.price_per_chip) r.cost_per_token = UsdPerToken(stage.price_per_chip->value() * chips / r.tokens_per_s.value());
  r.stage_memory = memory_plan(stage, batch, context);
  return r;
}

PipelinePrefill pipeline_prefill(const Deployment& stage, const PipelineShape& shape, int64_t batch, int64_t prompt, int64_t prefix) {
  check_shape(shape, batch);
  if (prompt < 1) throw InputError("prompt", "must be >= 1 token, got " + std::to_string(prompt));
  if (prefix < 0) throw InputError("prefix", "must be >= 0 tokens, got " + std::to_string(prefix));
  PipelinePrefill r;
  r.stages = shape.stages;
  r.microbatches = std::min(shape.microbatches, batch);
  r.microbatch = (batch + r.microbatches - 1) / r.microbatches;
  r.stage = prefill_step(stage, r.microbatch, prompt, prefix);
  r.hop_bytes = bytes(d(r.microbatch) * d(prompt) * d(stage.model.d_model) * shape.activation_bytes);
  r.t_hop = r.stages > 1 ? pipeline_hop_time(stage, r.stages, r.hop_bytes) : seconds(0);
  const Seconds t = r.stage.t_step;
  r.ttft = t * d(r.stages + r.microbatches - 1) + r.t_hop * d(r.stages - 1);
  const Seconds beat = std::max(t, r.t_hop);
  r.tokens_per_s = TokensPerSecond(d(batch) * d(prompt) / (beat * d(r.microbatches)).value());
  const double chips = d(r.stages) * d(stage.n_chips);
  if (stage.price_per_chip) r.cost_per_token = UsdPerToken(stage.price_per_chip->value() * chips / r.tokens_per_s.value());
  r.stage_memory = memory_plan(stage, batch, prompt + prefix);
  return r;
}

}  // namespace chalk
