// A training or whole-run row's prediction: its plan (validate_training.cc) priced through
// src/training, step time, throughput, MFU or a whole run's hours, as the row's metric names
// (docs/accuracy.md, "Training rows"). Split from validate_training.cc by concept.
#include <algorithm>
#include <cmath>
#include <optional>

#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/goodput.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

using counts::d;

}  // namespace

void predict_training(const TrainRowPlan& t, Prediction& out) {
  const TrainingPlan& p = t.plan;
  const TrainingCosts c = make_training_costs(t.model, p.seq_len);
  const TrainingSystem s = make_training_system(t.system, p.compute);
  const int64_t chips = plan_chips(p);
  const Placement pl = check_plan(t.model, t.system, chips, p);
  const TrainingStep st = training_step(c, s, p, pl);
  const double n = d(chips), K = st.tokens_per_step;

  // The plain roofline: the executed FLOPs at the datasheet peak of every chip.
  const bool rerun = p.recompute == Recompute::full || p.reversible;
  const double fwd_nc = c.matmul_flops_per_token + c.attention_flops_per_token_noncausal;
  const double t_plain = st.hardware_flops.value() / (n * t.system.chip.peak_for(p.compute).value());
  // The FLOPs a row's TFLOP/s or MFU counts, by its engine's convention (docs/accuracy.md):
  // megatron: Narayanan et al. 2021 Eq. 3, the executed FLOPs with non-causal attention and
  // the recomputed forward (the LM head not recomputed); llm-foundry: MosaicML's MFU,
  // 6N + non-causal attention (PaLM App. B); others: the model FLOPs with causal attention
  // (Llama 3, DeepSeek-V3).
  double flops = st.model_flops.value();
  std::string convention = "model FLOPs, causal attention";
  if (t.engine == "megatron") {
    flops = K * (3 * fwd_nc + (rerun ? fwd_nc - c.lm_head_flops_per_token : 0.0) +
                 (p.recompute == Recompute::selective ? c.attention_flops_per_token_noncausal : 0.0));
    convention = "Narayanan et al. 2021 Eq. 3: executed FLOPs, non-causal attention, recomputation counted";
  } else if (t.engine == "llm-foundry" || t.engine == "maxtext") {
    flops = K * 3 * fwd_nc;
    convention = "6N + 12 L H Q T (PaLM App. B): non-causal attention";
  }
  // A whole run's hours include its interruptions: the interruption model's goodput
  // (training/goodput.h; docs/formulas.md, "Run goodput"), checkpointing the plan's weights
  // and optimizer states. The measurement format has no goodput column: every run row takes it.
  std::optional<InterruptionGoodput> run_goodput;
  if (t.metric == "gpu_hours" || t.metric == "wall_hours") run_goodput = interruption_goodput(chips, checkpoint_bytes(t.model, p.state));
  const double g = run_goodput ? run_goodput->goodput : 1.0;
  auto value = [&](double T) {
    const std::string& m = t.metric;
    if (m == "step_s") return T;
    if (m == "step_ms") return T * 1e3;
    if (m == "train_tok_per_s") return K / T;
    if (m == "train_tok_per_s_per_chip") return K / T / n;
    if (m == "tflop_per_s_per_chip") return flops / T / n / 1e12;
    if (m == "mfu_pct") return 100 * flops / (T * n * s.peak_bf16.value());
    if (m == "gpu_hours") return t.train_tokens / (K / T) / g * n / 3600;
    if (m == "wall_hours") return t.train_tokens / (K / T) / g / 3600;
    throw InputError("metric", "'" + m + "' is not a training metric");
  };
  out.predicted = value(st.t_step.value());
  out.predicted_plain = value(t_plain);
  if (t.metric == "tflop_per_s_per_chip" || t.metric == "mfu_pct") out.notes.push_back("FLOPs counted as " + convention);
  if (t.metric == "gpu_hours" || t.metric == "wall_hours") {
    char gbuf[320];
    std::snprintf(gbuf, sizeof gbuf,
                  "goodput %.3f (interruption model): %.3g interruptions/h x %.3g min lost, checkpoint every %.3g min at %.3g s a save; "
                  "ramp-up and evaluation not modelled",
                  g, run_goodput->interruptions_per_hour, run_goodput->lost_per_interruption.value() / 60,
                  run_goodput->checkpoint_interval.value() / 60, run_goodput->save_stall.value());
    out.notes.push_back(row_count(t.train_tokens) + " tokens at the steady step / goodput");
    out.notes.push_back(gbuf);
  }
  out.bound_plain = "compute";
  // What governs: the largest of compute, bubble, exposed communication, optimizer.
  const double m = d(st.microbatches);
  const double compute = m * (st.t_matmul + st.t_attention + st.t_recompute + st.t_elementwise).value();
  const double comm = m * (st.t_tp + st.t_ep_exposed + st.t_cp_exposed + st.t_pp_exposed).value() + st.t_dp_exposed.value();
  const std::pair<double, const char*> terms[] = {
      {compute, "compute"}, {st.t_bubble.value(), "bubble"}, {comm, "communication"}, {st.t_optimizer.value(), "optimizer"}};
  out.governs = std::max_element(std::begin(terms), std::end(terms))->second;
  out.inputs = t.model.name + " on " + std::to_string(chips) + " x " + t.system.name + ", " + std::to_string(p.global_batch) +
               " sequences of " + std::to_string(p.seq_len) + ", compute " + std::string(to_string(p.compute));
  out.layout = describe_plan(p) + "; " + pl.description;
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "step %.3g s: compute %.3g s (busiest stage %.3g layers + %.3g output layers), bubble %.3g s (%.0f%%), exposed "
                "communication %.3g s, SMs held by hidden communication %.3g s, optimizer %.3g s",
                st.t_step.value(), compute, st.busy_layers, st.busy_output_layers, st.t_bubble.value(), 100 * st.bubble_fraction, comm,
                (st.t_dp_sm_contention + st.t_cp_sm_contention).value(), st.t_optimizer.value());
  out.notes.push_back(buf);
  if (st.unpaired_chunks > 0) {
    std::snprintf(buf, sizeof buf, "DualPipe: %lld forward and backward chunks of the busiest rank run unpaired (warm-up, cool-down), %.3g s over pairing",
                  static_cast<long long>(st.unpaired_chunks), st.t_unpaired.value());
    out.notes.push_back(buf);
  }
}

}  // namespace chalk::detail
