// Memory per chip of a training plan (docs/training.md, "Memory").
#include "chalk/training/memory.h"
#include "chalk/base/count_cast.h"

#include <algorithm>

#include "chalk/training/kernels.h"

namespace chalk {
namespace {

using counts::d;

}  // namespace

Bytes activation_bytes_per_layer(const TrainingCosts& c, const TrainingPlan& p, Recompute r) {
  const double t = d(p.tp);
  const double tokens = d(p.microbatch) * d(c.seq_len) / d(p.cp);  // b s' on this rank
  const double scale = p.activation_bytes / 2.0;
  if (r == Recompute::full) {
    const double input = tokens * d(c.d_model) * p.activation_bytes;
    return Bytes(p.sequence_parallel ? input / t : input);
  }
  // Without dropout no masks are stored: Korthikanti's 2sbh of masks and the scores' 3as
  // (dropout mask and output) drop out.
  const double score_per_ctx = c.act_scores_per_token_per_ctx - (p.dropout ? 0.0 : c.act_scores_dropout_per_token_per_ctx);
  const double scores = (r == Recompute::selective || p.flash_attention) ? 0.0 : score_per_ctx * d(c.seq_len) / t;
  // Recompute modules drop what they rerun; low-precision storage keeps the GEMM inputs
  // left (and, with moe_act, the experts' activation-function inputs) at the quantized
  // copy's bytes: keep = copy bytes / 2 (FP8 0.5).
  const bool layernorm = p.recompute_modules & kRecomputeLayernorm, mla = p.recompute_modules & kRecomputeMlaUpProj;
  const bool moe_act = p.recompute_modules & kRecomputeMoeAct;
  const double keep = p.low_precision_activations ? quantized_copy_bytes(p.compute) / 4 : 0.0;
  const double cut = keep > 0 ? 1 - keep : 0.0;  // the share of a quantized input's bf16 bytes not stored
  const double R = c.act_replicated_per_token - (p.dropout ? 0.0 : c.act_dropout_per_token) -
                   (layernorm ? c.act_norm_outputs : cut * c.act_norm_outputs);
  const double fc2 = moe_act ? c.act_moe_fc2_inputs : 0.0;
  const double sharded = c.act_sharded_per_token - (mla ? c.act_mla_qkv : 0.0) - fc2 - cut * (c.act_linear_inputs_sharded - fc2) -
                         (moe_act ? cut * c.act_moe_fn_inputs : 0.0);
  const double A = R + sharded;
  const double per_token = p.sequence_parallel ? A / t + scores : R + sharded / t + scores;
  return Bytes(tokens * per_token * scale);
}

double microbatches_in_flight(PipelineSchedule s, int64_t p, int64_t m, int64_t v) {
  if (p <= 1) return 1;
  const double P = d(p), M = d(m);
  switch (s) {
    case PipelineSchedule::gpipe: return M;
    case PipelineSchedule::one_f_one_b:
    case PipelineSchedule::zb_h1: return std::min(P, M);
    case PipelineSchedule::interleaved: return P * (1 + (P - 1) / (P * d(v))) * (M < P ? M / P : 1.0);
    case PipelineSchedule::zb_v: return std::min(P, M);
    case PipelineSchedule::dualpipe: return P + 1;
  }
  return P;
}

TrainingMemory training_memory(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& pl) {
  TrainingMemory out;
  const double L = d(c.layers);
  const double frac = d(pl.layers_per_stage) / L;
  const double tables = p.pp == 1 ? c.embedding_params + c.lm_head_params : std::max(c.embedding_params, c.lm_head_params);
  const double stages_held = p.schedule == PipelineSchedule::dualpipe && p.pp > 1 ? 2.0 : 1.0;
  const double dense = stages_held * (c.dense_layer_params * frac + tables) / d(p.tp);
  const double experts = stages_held * c.expert_params * frac / d(p.ep * p.etp);
  out.params_per_chip = dense + experts;
  out.dense_params_per_chip = dense;
  out.expert_params_per_chip = experts;
  const double dp_dense = d(p.dp * p.cp);
  const double dp_expert = d(p.tp * p.cp * p.dp) / d(p.ep * p.etp);
  // Each rank's shard of the parameters, divided once for the three states (the same doubles).
  const double shard = dense / dp_dense + experts / dp_expert, whole = dense + experts;
  auto sharded = [&](double bytes_per_param, int from_stage) { return bytes_per_param * (p.zero_stage >= from_stage ? shard : whole); };
  out.weights = Bytes(sharded(p.state.weights, 3));
  out.gradients = Bytes(sharded(p.state.gradients, 2));
  out.optimizer = Bytes(sharded(p.state.optimizer, 1));
  if (p.zero_stage == 3) {
    out.zero3_buffers = Bytes(2 * p.state.weights * (c.dense_layer_params / d(p.tp) + c.expert_params / d(p.ep * p.etp)) / L);
  }
  out.activations_per_layer = activation_bytes_per_layer(c, p, p.recompute);
  out.microbatches_in_flight = microbatches_in_flight(p.schedule, p.pp, pl.microbatches, p.virtual_stages);
  // One layer's full activations: live during its backward under full recomputation and
  // with reversible layers, and needed for nothing else.
  const bool working_set = p.reversible || p.recompute == Recompute::full;
  const Bytes full_layer = working_set ? activation_bytes_per_layer(c, p, Recompute::none) : Bytes(0);
  if (p.reversible) {
    out.activations = Bytes(0);
    out.activation_working = full_layer;
  } else {
    out.activations = out.activations_per_layer * (d(pl.layers_per_stage) * out.microbatches_in_flight);
    if (p.recompute == Recompute::full) out.activation_working = full_layer;
  }
  if (p.pp == 1) {
    // Output layer and loss (Megatron theoretical_memory_usage.py): 4 s b h (1 + V/h), / t under SP.
    const double tokens = d(p.microbatch) * d(c.seq_len) / d(p.cp);
    const double bytes = 4 * tokens * (d(c.d_model) + d(c.vocab)) / d(p.tp);
    out.activations += Bytes(bytes);
  }
  out.total = out.weights + out.gradients + out.optimizer + out.zero3_buffers + out.activations + out.activation_working;
  out.capacity = s.hbm_capacity;
  out.fits = out.total <= out.capacity;
  return out;
}

int64_t largest_microbatch(const TrainingCosts& c, const TrainingSystem& s, TrainingPlan p) {
  const int64_t per_replica = p.global_batch / std::max<int64_t>(1, p.dp);
  int64_t best = 0;
  for (int64_t b = 1; b <= per_replica; ++b) {
    if (per_replica % b != 0) continue;
    p.microbatch = b;
    const Placement pl = place_plan(c.layers, c.padded_layers, s.domain, p);
    if (!training_memory(c, s, p, pl).fits) break;  // activations grow with b
    best = b;
  }
  return best;
}

}  // namespace chalk
