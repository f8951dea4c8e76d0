#include <fmt/format.h>

#include "chalk/training/explain.h"

namespace chalk {
namespace {

std::string bubble_formula(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b: return "bubble = (p - 1)(t_f + t_b)";
    case PipelineSchedule::interleaved: return "bubble = (p - 1)(t_f + t_b) / v";
    case PipelineSchedule::zb_h1:
      return "bubble = max((p - 1) max(0, t_f + t_b - 2 t_w), (p - 1)(t_f + t_b - t_w) - (m - 1) t_w) (the second, the few-microbatch "
             "floor, rules while m < p; docs/training.md)";
    case PipelineSchedule::zb_v:
      return "bubble = max(0, (2p - 1 - m) t_f / 2) + max(0, (p - 1) t_bi - (m - 1) t_bi / 2 - m t_w), t_bi = t_b - t_w (the "
             "few-microbatch floor: 0 from m about 2p, where ZB-V fills the bubble with weight-gradient passes; docs/training.md)";
    case PipelineSchedule::dualpipe: return "bubble = (p/2 - 1) max(0, F&B + B - 3 W), F&B = t_f + t_b, B and W a lone backward chunk and its weight GEMMs";
  }
  return "bubble";
}

}  // namespace

std::vector<Explanation> explain_training_step(const TrainingSystem& s, const TrainingPlan& p, const Placement& pl, const TrainingStep& st) {
  const auto& N = explain_number;
  const double m = static_cast<double>(st.microbatches), chips = static_cast<double>(plan_chips(p));
  const double tf = st.t_forward.value(), tb = st.t_backward.value();  // s, as the row (review 7 M9)
  const ExplainInput m_in{"m", "microbatches per step per pipeline", m, "microbatches", "global batch / (DP x microbatch)"};
  const ExplainInput tf_in{"t_f", "forward of one microbatch on one stage (compute + exposed communication)", tf, "s", "t_forward_s"};
  const ExplainInput tb_in{"t_b", "backward of one microbatch on one stage", tb, "s", "t_backward_s"};
  const ExplainInput step_in{"T_step", "step time", st.t_step.value(), "s", "t_step_s"};
  const ExplainInput chips_in{"n", "chips (DP x TP x PP x CP)", chips, "chips", "--chips"};
  std::vector<Explanation> out;
  out.push_back({"bubble_fraction", "idle pipeline time as a fraction of the microbatches' work (Narayanan et al. 2021's convention)",
                 bubble_formula(p.schedule) + "; fraction = bubble / (m (t_f + t_b))",
                 {{"p", "pipeline stages", static_cast<double>(p.pp), "stages", "--pp"}, m_in, tf_in, tb_in,
                  {"t_w", "weight-gradient GEMMs within t_b", st.t_weight_grad.value(), "s", "zero-bubble schedules (Qi et al. 2023)"},
                  {"v", "model chunks per rank", static_cast<double>(pl.chunks), "chunks", "--schedule (interleaved: --virtual-stages)"}},
                 fmt::format("{} s / ({} x ({} + {}) s) = {}", N(st.t_bubble.value()), N(m), N(tf), N(tb), N(st.bubble_fraction)), st.bubble_fraction,
                 "fraction", fmt::format("schedule {}; Narayanan et al. 2021 section 2.2; docs/training.md (Step)", to_string(p.schedule)), ""});
  out.push_back({"t_step_s", "one optimizer step", "T_step = m (t_f + t_b) + unpaired + bubble + exposed DP reduce + optimizer",
                 {m_in, tf_in, tb_in,
                  {"unpaired", "DualPipe's warm-up and cool-down chunks run alone, over pairing", st.t_unpaired.value(), "s", "t_unpaired_s"},
                  {"bubble", "pipeline bubble", st.t_bubble.value(), "s", "bubble_fraction"},
                  {"DP exposed", "gradient reduce not hidden behind the last backward", st.t_dp_exposed.value(), "s", "t_dp_exposed_s"},
                  {"optimizer", "grad-norm pass and AdamW over the owned parameters at the HBM rate", st.t_optimizer.value(), "s", "t_optimizer_s"}},
                 fmt::format("{} x ({} + {}) s + {} + {} + {} + {} s = {} s", N(m), N(tf), N(tb), N(st.t_unpaired.value()), N(st.t_bubble.value()),
                             N(st.t_dp_exposed.value()),
                             N(st.t_optimizer.value()), N(st.t_step.value())),
                 st.t_step.value(), "s", "docs/training.md (Step)", ""});
  out.push_back({"tok_per_s", "training tokens per second over all chips", "tok/s = global batch x sequence length / T_step",
                 {{"B_global", "sequences per step", static_cast<double>(p.global_batch), "sequences", "--global-batch"},
                  {"s", "tokens per sequence", static_cast<double>(p.seq_len), "tokens", "--seq-len"}, step_in},
                 fmt::format("{} x {} / {} s = {} tok/s", N(static_cast<double>(p.global_batch)), N(static_cast<double>(p.seq_len)), N(st.t_step.value()),
                             N(st.tokens_per_s.value())),
                 st.tokens_per_s.value(), "tok/s", "docs/training.md (Step)", ""});
  const double flops_per_token = st.tokens_per_step > 0 ? st.model_flops.value() / st.tokens_per_step : 0;
  out.push_back({"mfu", "model FLOPs utilization: the useful FLOPs over what the chips could do at their bf16 dense peak",
                 "MFU = model FLOPs per token x tokens per step / (T_step x n x F_bf16); model FLOPs per token = 3 x (2 N_active + causal attention)",
                 {{"FLOPs/token", "model FLOPs per token, forward and backward (recomputation not counted)", flops_per_token / 1e9, "GFLOP", "6 N_matmul + 3 x attention"},
                  {"tokens", "tokens per step", st.tokens_per_step, "tokens", "global batch x sequence length"}, step_in, chips_in,
                  {"F_bf16", "dense bf16 peak per chip", s.peak_bf16.value() / 1e12, "TFLOP/s", fmt::format("{} datasheet", s.name)}},
                 fmt::format("{}e9 x {} / ({} s x {} x {}e12) = {}", N(flops_per_token / 1e9), N(st.tokens_per_step), N(st.t_step.value()), N(chips),
                             N(s.peak_bf16.value() / 1e12), N(st.mfu)),
                 st.mfu, "fraction", "PaLM (Chowdhery et al. 2022) appendix B; lecture's MFU; docs/training.md", ""});
  return out;
}

std::vector<Explanation> explain_training_memory(const TrainingPlan& p, const Placement& pl, const TrainingMemory& m) {
  const auto& N = explain_number;
  const ExplainInput params_in{"P_chip", "parameters this chip's stage holds before ZeRO (dense / TP + experts / (EP x ETP))", m.params_per_chip / 1e9,
                               "billion", "the model's config and the plan"};
  std::vector<Explanation> out;
  const struct {
    const char* key;
    const char* what;
    double bytes_per_param;
    int zero_from;
    Bytes got;
  } states[] = {{"weights_gb", "working weights", p.state.weights, 3, m.weights},
                {"gradients_gb", "gradients", p.state.gradients, 2, m.gradients},
                {"optimizer_gb", "optimizer states (master weights, Adam moments)", p.state.optimizer, 1, m.optimizer}};
  for (const auto& x : states) {
    const double unsharded = m.params_per_chip * x.bytes_per_param / 1e9;
    const bool sharded = p.zero_stage >= x.zero_from;
    const double shard = to_gb(x.got) > 0 ? unsharded / to_gb(x.got) : 1.0;
    out.push_back({x.key, fmt::format("{} per chip", x.what),
                   sharded ? fmt::format("{} = P_chip x bytes per parameter / ZeRO shard (ZeRO-{} shards it over the data-parallel ranks)", x.key, p.zero_stage)
                           : fmt::format("{} = P_chip x bytes per parameter (ZeRO-{} does not shard it)", x.key, p.zero_stage),
                   {params_in, {"bytes", "bytes per parameter", x.bytes_per_param, "bytes", fmt::format("--optimizer {}", p.state.name)},
                    {"shard", "ranks sharing it (dense over DP x CP, experts over the expert data-parallel ranks)", shard, "ranks", "--zero"}},
                   fmt::format("{}e9 x {} / {} = {} GB", N(m.params_per_chip / 1e9), N(x.bytes_per_param), N(shard), N(to_gb(x.got))), to_gb(x.got), "GB",
                   "ZeRO (Rajbhandari et al. 2020) sections 5.1-5.3; docs/training.md (Memory)", ""});
  }
  out.push_back({"activations_gb", "activations the first stage stores at its peak",
                 "activations = bytes per layer per microbatch x layers per stage x microbatches in flight",
                 {{"a_layer", "stored activation bytes of one layer for one microbatch (Korthikanti et al. 2022, Table 2)", to_gb(m.activations_per_layer), "GB",
                   fmt::format("microbatch {}, sequence {}, TP {}{}, recompute {}", p.microbatch, p.seq_len, p.tp, p.sequence_parallel ? "+SP" : "",
                               p.recompute == Recompute::none ? "none" : p.recompute == Recompute::selective ? "selective" : "full")},
                  {"L_stage", "layers on the first stage", static_cast<double>(pl.layers_per_stage), "layers", "layers / (PP x chunks)"},
                  {"in_flight", "microbatches whose activations the first stage holds", m.microbatches_in_flight, "microbatches",
                   fmt::format("schedule {} (1F1B: min(p, m))", to_string(p.schedule))}},
                 fmt::format("{} GB x {} x {} = {} GB{}", N(to_gb(m.activations_per_layer)), pl.layers_per_stage, N(m.microbatches_in_flight), N(to_gb(m.activations)),
                             p.reversible ? " (reversible layers store none)" : p.pp == 1 ? " (+ the output layer and loss)" : ""),
                 to_gb(m.activations), "GB", "Korthikanti et al. 2022 section 4; docs/training.md (Memory)", ""});
  out.push_back({"total_gb", "memory of the busiest (first) stage's chip, against its HBM",
                 "total = weights + gradients + optimizer + ZeRO-3 buffers + activations + working set <= HBM per chip",
                 {{"weights", "weights", to_gb(m.weights), "GB", "weights_gb"}, {"gradients", "gradients", to_gb(m.gradients), "GB", "gradients_gb"},
                  {"optimizer", "optimizer states", to_gb(m.optimizer), "GB", "optimizer_gb"}, {"ZeRO-3", "gathered layers", to_gb(m.zero3_buffers), "GB", "zero3_buffers_gb"},
                  {"activations", "stored activations", to_gb(m.activations), "GB", "activations_gb"},
                  {"working", "one layer's working set", to_gb(m.activation_working), "GB", "activation_working_gb"},
                  {"HBM", "HBM per chip", to_gb(m.capacity), "GB", "the chip's datasheet"}},
                 fmt::format("{} + {} + {} + {} + {} + {} = {} GB {} {} GB HBM", N(to_gb(m.weights)), N(to_gb(m.gradients)), N(to_gb(m.optimizer)),
                             N(to_gb(m.zero3_buffers)), N(to_gb(m.activations)), N(to_gb(m.activation_working)), N(to_gb(m.total)), m.fits ? "<=" : ">",
                             N(to_gb(m.capacity))),
                 to_gb(m.total), "GB", "docs/training.md (Memory)", ""});
  return out;
}

}  // namespace chalk
