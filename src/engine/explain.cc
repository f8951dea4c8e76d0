#include "chalk/engine/explain.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "chalk/hardware/overhead_label.h"

namespace chalk {
namespace {

std::string num(double v) { return explain_number(v); }

std::string chip_source(const Deployment& d) {
  const std::string& s = d.system.chip_source.empty() ? d.system.source : d.system.chip_source;
  return fmt::format("{} datasheet ({}{})", d.system.chip.name, s.empty() ? "chalk hardware" : s, d.system.date.empty() ? "" : ", " + d.system.date);
}

/// The inputs every time term shares: chips, dense peak, HBM bandwidth, efficiencies.
ExplainInput chips_in(const Deployment& d) {
  return {"n", "chips in the replica", static_cast<double>(d.n_chips), "chips", "--chips, or the smallest replica that holds the model"};
}
ExplainInput peak_in(const Deployment& d) {
  return {"F", fmt::format("dense {} peak per chip", to_string(d.compute)), d.system.chip.peak_for(d.compute).value() / 1e12,
          "TFLOP/s", chip_source(d)};
}
ExplainInput hbm_in(const Deployment& d) {
  return {"W", "HBM bandwidth per chip", to_tb_per_s(d.system.chip.hbm_bandwidth), "TB/s", chip_source(d)};
}
ExplainInput mm_eff_in(const Deployment& d) {
  return {"eff_mm", "achievable fraction of peak FLOP/s", d.matmul_efficiency, "fraction",
          d.matmul_efficiency_source.empty() ? "the system's efficiency" : d.matmul_efficiency_source};
}
ExplainInput hbm_eff_in(const Deployment& d) {
  return {"eff_hbm", "achievable fraction of peak HBM bandwidth", d.hbm_efficiency, "fraction",
          d.hbm_efficiency_source.empty() ? "the system's efficiency" : d.hbm_efficiency_source};
}

/// A term computed by the roofline, reported by the engine step when mechanisms are on.
std::string engine_note(const Deployment& d, double roofline_ms, double reported_ms) {
  if (!d.mechanisms.enabled) return "";
  return fmt::format("reported by the engine step: {} ms on the busiest chip with kernel efficiencies (docs/formulas.md); "
                     "the roofline above, {} ms, is its lower bound",
                     num(reported_ms), num(roofline_ms));
}

/// Whether the engine step pays host work (engine_step: mechanisms on, a GPU, an engine
/// with host time).
bool host_applies(const Deployment& d) { return d.mechanisms.enabled && d.mechanisms.host.s_per_sequence > 0 && !is_tpu(d.system); }

/// Where T_overhead comes from, by the kind of chip (a GPU kernel's floor or a TPU's per-op
/// floor: overhead_label).
std::string overhead_source(const Deployment& d) {
  const std::string floor = d.system.op_floor ? "the hardware file's op_floor per " + (d.system.op_floor_kind.empty() ? std::string("op") : d.system.op_floor_kind)
                                              : std::string("per-kernel floor");
  return floor + "; norms, rotary, activation at max(floor, HBM traffic) (docs/formulas.md)";
}

/// The engine step's formula, with an eager step's launches (CudaGraphs) and the host's
/// work where there is any (HostTime).
std::string step_formula(const Deployment& d, const char* lhs, bool eager) {
  const std::string gpu = eager ? "max(T_ops + T_comm + T_overhead, T_launch)" : "T_ops + T_comm + T_overhead";
  if (!host_applies(d)) return std::string(lhs) + " = " + gpu;
  return std::string(lhs) + (d.mechanisms.host.overlap ? " = max(" + gpu + ", T_host)" : " = " + gpu + " + T_host");
}

/// Its algebra: "a + b + c = t ms", eager "max(a + b + c, l)", with host work "max(..., h) = t ms".
std::string step_algebra(const Deployment& d, Seconds ops, Seconds comm, Seconds overhead, Seconds launch, Seconds host, Seconds step,
                         const std::string& governs) {
  std::string gpu = fmt::format("{} + {} + {}", num(to_ms(ops)), num(to_ms(comm)), num(to_ms(overhead)));
  if (launch > Seconds(0)) gpu = fmt::format("max({}, {})", gpu, num(to_ms(launch)));
  std::string lhs = gpu;
  if (host_applies(d)) {
    lhs = d.mechanisms.host.overlap ? fmt::format("max({}, {})", gpu, num(to_ms(host))) : fmt::format("{} + {}", gpu, num(to_ms(host)));
  }
  return fmt::format("{} = {} ms (governed by {})", lhs, num(to_ms(step)), governs);
}

ExplainInput host_input(const Deployment& d, Seconds host) {
  return {"T_host", "the engine's host work for the step (scheduling, input preparation, sampling, detokenizing)", to_ms(host), "ms",
          host_applies(d) ? d.mechanisms.host.source + " (docs/formulas.md, host time per step)" : "none (plain roofline, a TPU, or an engine without host time)"};
}

/// T_launch: the host's launches of an eager step, or the CUDA graph the step replays.
ExplainInput launch_input(const Deployment& d, int64_t graph_batch, Seconds launch) {
  const CudaGraphs& g = d.mechanisms.graphs;
  std::string why = "none (plain roofline or a TPU)";
  if (launch > Seconds(0)) {
    why = fmt::format("eager ({}): each kernel launched by the host, {} us (docs/formulas.md, CUDA graphs)",
                      g.eager ? "--enforce-eager" : "above the largest captured CUDA graph or a step the engine does not capture",
                      num(g.launch_s_per_kernel * 1e6));
  } else if (graph_batch > 0 && !g.sizes.empty()) {
    why = fmt::format("CUDA graph of {} {} replayed, the step padded up to it; {}", graph_batch, g.per_token ? "tokens" : "sequences", g.source);
  } else if (d.mechanisms.enabled && !is_tpu(d.system)) {
    why = g.source;
  }
  return {"T_launch", "an eager step's kernel launches by the host (0 when a CUDA graph replays the step)", to_ms(launch), "ms", why};
}

double kv_bytes_per_token_at(const Deployment& d, int64_t context) {
  double bytes = 0;
  for (const auto& g : d.attention) {
    const double held = g.window > 0 ? std::min<double>(static_cast<double>(g.window), static_cast<double>(context)) : static_cast<double>(context);
    bytes += g.layers * g.kv_bytes_per_token * (context > 0 ? held / static_cast<double>(context) : 1.0);
  }
  return bytes;
}

Explanation kv_per_token(const Deployment& d, int64_t context) {
  double full = 0, layers = 0;
  for (const auto& g : d.attention) {
    full += g.layers * g.kv_bytes_per_token;
    layers += g.layers;
  }
  const double at = kv_bytes_per_token_at(d, context);
  Explanation e{"kv_bytes_per_token", "KV-cache bytes one token of context holds, over all layers",
                "KV/token = sum over layers of 2 (K and V) x KV heads x head dim x b_kv (MLA: (kv_lora_rank + rope dim) x b_kv); "
                "sliding-window layers hold at most the window",
                {{"L", "layers with a KV cache", layers, "layers", fmt::format("{}'s config", d.model.name)},
                 {"KV/token/layer", "mean KV bytes per token per layer", layers > 0 ? full / layers : 0, "bytes", "the model's attention shape and --kv-dtype"}},
                fmt::format("{} layers x {} bytes = {} bytes at full context; {} bytes per token averaged over a context of {}", num(layers),
                            num(layers > 0 ? full / layers : 0), num(full), num(at), context),
                at, "bytes", "docs/formulas.md 1.2 (KV cache bytes); lecture 1:39", ""};
  return e;
}

}  // namespace

std::string explain_number(double v) {
  // From 100,000 up, 289B style as the CLI's tables write counts (review L2: "3.277e+05").
  static constexpr std::pair<double, const char*> kSuffixes[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  if (std::isfinite(v) && std::fabs(v) >= 1e5 && std::fabs(v) < 1e16) {
    for (const auto& [scale, suffix] : kSuffixes) {
      if (std::fabs(v) >= scale) return fmt::format("{:.4g}{}", v / scale, suffix);
    }
  }
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e5) return fmt::format("{:.0f}", v);  // "49690", not "4.969e+04"
  return fmt::format("{:.4g}", v);
}

std::vector<Explanation> explain_decode(const Deployment& d, int64_t batch, int64_t context) {
  const DecodeStep r = decode_step(d, batch, context);
  Deployment lower_d = d;
  lower_d.mechanisms.enabled = false;
  const DecodeStep lo = decode_step(lower_d, batch, context);
  const double B = static_cast<double>(batch), n = static_cast<double>(d.n_chips);
  const double F = d.system.chip.peak_for(d.compute).value(), W = d.system.chip.hbm_bandwidth.value();
  std::vector<Explanation> out;
  out.push_back(kv_per_token(d, context));

  const double n_active = d.matmul_flops_per_token / 2;
  const double attn_per_token = B > 0 ? lo.flops.value() / B - d.matmul_flops_per_token : 0;
  out.push_back({"t_compute_ms", "time the matmuls and attention of one decode step take at the achievable FLOP rate",
                 "T_compute = B (2 N_active + A(S)) / (n F eff_mm)",
                 {{"B", "batch (sequences, one token each)", B, "sequences", "--batch"},
                  {"N_active", "parameters one token multiplies (matmul weights)", n_active / 1e9, "billion", fmt::format("{}'s config", d.model.name)},
                  {"A(S)", "attention FLOPs per token at context S", attn_per_token / 1e9, "GFLOP", fmt::format("context S = {} (--context)", context)},
                  chips_in(d), peak_in(d), mm_eff_in(d)},
                 fmt::format("{} x (2 x {}e9 + {}e9) / ({} x {}e12 x {}) = {} ms", num(B), num(n_active / 1e9), num(attn_per_token / 1e9), num(n),
                             num(F / 1e12), num(d.matmul_efficiency), num(to_ms(lo.t_compute))),
                 to_ms(r.t_compute), "ms", "lecture 2:21-7:46; docs/formulas.md 3 (decode roofline)", engine_note(d, to_ms(lo.t_compute), to_ms(r.t_compute))});
  // An MoE's experts do not split evenly when the batch touches few of them: the chip
  // holding the most touched experts reads more than 1/n of the bytes and sets the time
  // (review 4 M9: the algebra then showed the even split and did not give the figure).
  const double busiest_gb = to_gb(Bytes(lo.t_weights.value() * W * d.hbm_efficiency));
  const bool uneven = busiest_gb > 1.0005 * to_gb(lo.weight_bytes_read) / n;
  std::vector<ExplainInput> weight_inputs = {
      {"bytes_w", "weight bytes read this step, all chips", to_gb(lo.weight_bytes_read), "GB", "weights format (--weights) x parameters touched"},
      {"E_touched", "experts touched per MoE layer", lo.experts_touched, "experts", "E (1 - (1 - k/E)^B) (docs/formulas.md 3, experts touched)"},
      chips_in(d), hbm_in(d), hbm_eff_in(d)};
  if (uneven) {
    weight_inputs.push_back({"E_busiest", "of the touched experts, on the busiest chip (per MoE layer)", lo.experts_on_busiest_chip, "experts",
                             "busiest_chip_experts (docs/formulas.md 3, experts touched)"});
    weight_inputs.push_back({"bytes_chip", "weight bytes the busiest chip reads: its 1/n of the always-on weights and its E_busiest experts", busiest_gb,
                             "GB", "weights format x the busiest chip's parameters touched"});
  }
  out.push_back({"t_weights_ms", "time to read the weights one decode step touches from HBM",
                 "T_weights = weight bytes read / (n W eff_hbm); an MoE reads its always-on weights and the experts the batch touches, "
                 "E (1 - (1 - k/E)^B) per layer, and when those do not split evenly over the chips, T_weights = the busiest chip's bytes / (W eff_hbm)",
                 weight_inputs,
                 uneven ? fmt::format("{} GB / ({} TB/s x {}) = {} ms (the busiest chip holds {} of the {} experts touched per layer; {} GB over {} chips "
                                      "would be {} GB each)",
                                      num(busiest_gb), num(W / 1e12), num(d.hbm_efficiency), num(to_ms(lo.t_weights)), num(lo.experts_on_busiest_chip),
                                      num(lo.experts_touched), num(to_gb(lo.weight_bytes_read)), num(n), num(to_gb(lo.weight_bytes_read) / n))
                        : fmt::format("{} GB / ({} x {} TB/s x {}) = {} ms", num(to_gb(lo.weight_bytes_read)), num(n), num(W / 1e12), num(d.hbm_efficiency),
                                      num(to_ms(lo.t_weights))),
                 to_ms(r.t_weights), "ms", "lecture 7:46-11:00; docs/formulas.md 3 (decode roofline)", engine_note(d, to_ms(lo.t_weights), to_ms(r.t_weights))});
  out.push_back({"t_kv_ms", "time to read the batch's KV cache from HBM",
                 "T_kv = B S (KV bytes per token) / (n W eff_hbm)",
                 {{"B", "batch", B, "sequences", "--batch"},
                  {"S", "context (tokens in each sequence's KV cache)", static_cast<double>(context), "tokens", "--context"},
                  {"KV/token", "KV bytes per token", kv_bytes_per_token_at(d, context), "bytes", "see kv_bytes_per_token"},
                  chips_in(d), hbm_in(d), hbm_eff_in(d)},
                 fmt::format("{} GB read / ({} x {} TB/s x {}) = {} ms", num(to_gb(lo.kv_bytes_read)), num(n), num(W / 1e12), num(d.hbm_efficiency),
                             num(to_ms(lo.t_kv))),
                 to_ms(r.t_kv), "ms", "lecture 11:00-15:30; docs/formulas.md 3 (decode roofline)", engine_note(d, to_ms(lo.t_kv), to_ms(r.t_kv))});
  out.push_back({"t_step_roofline_ms", "the roofline of the step: its lower bound",
                 "T_step >= max(T_compute, T_weights + T_kv)",
                 {{"T_compute", "roofline compute", to_ms(lo.t_compute), "ms", "t_compute_ms"},
                  {"T_weights", "roofline weight fetch", to_ms(lo.t_weights), "ms", "t_weights_ms"},
                  {"T_kv", "roofline KV fetch", to_ms(lo.t_kv), "ms", "t_kv_ms"}},
                 fmt::format("max({}, {} + {}) = {} ms ({}-bound)", num(to_ms(lo.t_compute)), num(to_ms(lo.t_weights)), num(to_ms(lo.t_kv)),
                             num(to_ms(lo.t_step)), to_string(lo.bound)),
                 to_ms(lo.t_step), "ms", "lecture 2:21-15:30; Pope et al. 2022 section 2", ""});
  out.push_back({"t_step_ms", d.mechanisms.enabled ? "the engine step: what a serving engine pays per step" : "the step (roofline view)",
                 d.mechanisms.enabled ? step_formula(d, "T_step", r.t_launch > Seconds(0)) + "; T_ops = sum over kernels of max(compute, memory)"
                                      : "T_step = max(T_compute, T_weights + T_kv)",
                 {{"T_ops", "operations", to_ms(r.t_operations), "ms", "each kernel's max(compute, memory)"},
                  {"T_comm", "communication not hidden", to_ms(r.t_comm), "ms", "the layout's collectives (NCCL latency model)"},
                  {"T_overhead", overhead_label(d.system), to_ms(r.t_overhead), "ms", overhead_source(d)},
                  launch_input(d, r.graph_batch, r.t_launch), host_input(d, r.t_host)},
                 step_algebra(d, r.t_operations, r.t_comm, r.t_overhead, r.t_launch, r.t_host, r.t_step - r.t_draft, r.governs) +
                     (r.t_draft > Seconds(0) ? fmt::format("; + drafts {} ms = {} ms", num(to_ms(r.t_draft)), num(to_ms(r.t_step))) : ""),
                 to_ms(r.t_step), "ms", d.mechanisms.enabled ? "docs/formulas.md (engine step)" : "lecture 2:21-15:30", ""});
  out.push_back({"tok_per_s", "tokens the replica produces per second", "tok/s = B x kept / T_step",
                 {{"B", "batch", B, "sequences", "--batch"}, {"kept", "tokens kept per sequence per step", r.tokens_per_sequence, "tokens", "1 without speculative decoding"},
                  {"T_step", "step time", to_ms(r.t_step), "ms", "t_step_ms"}},
                 fmt::format("{} x {} / {} ms = {} tok/s", num(B), num(r.tokens_per_sequence), num(to_ms(r.t_step)), num(r.tokens_per_s.value())),
                 r.tokens_per_s.value(), "tok/s", "docs/formulas.md 3 (tokens/s = B / T_step)", ""});
  out.push_back({"tok_per_s_per_user", "tokens one user sees per second", "tok/s/user = kept / T_step",
                 {{"T_step", "step time", to_ms(r.t_step), "ms", "t_step_ms"}},
                 fmt::format("{} / {} ms = {} tok/s", num(r.tokens_per_sequence), num(to_ms(r.t_step)), num(r.tokens_per_s_per_user.value())),
                 r.tokens_per_s_per_user.value(), "tok/s", "docs/formulas.md 3 (tokens/s per user = 1 / T_step)", ""});
  out.push_back({"tok_per_s_per_chip", "tokens per second per chip", "tok/s/chip = tok/s / n",
                 {{"tok/s", "replica tokens per second", r.tokens_per_s.value(), "tok/s", "tok_per_s"}, chips_in(d)},
                 fmt::format("{} / {} = {} tok/s", num(r.tokens_per_s.value()), num(n), num(r.tokens_per_s_per_chip.value())),
                 r.tokens_per_s_per_chip.value(), "tok/s", "docs/formulas.md 3 (tokens/s per chip = B / (n T_step))", ""});
  const MemoryPlan mem = memory_plan(d, batch, context);
  if (r.cost_per_token && d.price_per_chip && !mem.fits) {
    // A batch the replica cannot hold has no price (issue 30, review 2 M4): the table and
    // JSON leave it empty, and so does its explanation; result NaN (null in JSON).
    out.push_back({"cost_usd_per_mtok", "no price: this batch does not fit in the replica's HBM", "cost/token = n (price per chip-second) T_step / (B kept), only for a batch that fits",
                   {chips_in(d), {"B", "batch", B, "sequences", "--batch"},
                    {"max_batch", "most sequences HBM holds at this context", static_cast<double>(mem.max_batch), "sequences", "memory_plan (max_batch_at_context)"}},
                   fmt::format("batch {} at {} tokens does not fit on {} chips (at most {} sequences): no price", batch, context, d.n_chips, mem.max_batch),
                   std::nan(""), "USD per 1M tokens", "docs/formulas.md 3 (cost per token = n price T_step / B)", ""});
  } else if (r.cost_per_token && d.price_per_chip) {
    const double price_h = to_usd_per_hour(*d.price_per_chip);
    out.push_back({"cost_usd_per_mtok", "what a million output tokens cost in chip rental", "cost/token = n (price per chip-second) T_step / (B kept)",
                   {chips_in(d), {"price", "rental price per chip-hour", price_h, "USD/hour", d.price_source.empty() ? "--price-usd-per-chip-hour" : d.price_source},
                    {"T_step", "step time", to_ms(r.t_step), "ms", "t_step_ms"}, {"B", "batch", B, "sequences", "--batch"}},
                   fmt::format("{} x ${}/3600 s x {} ms / {} tokens x 1e6 = ${} per 1M tokens", num(n), num(price_h), num(to_ms(r.t_step)),
                               num(B * r.tokens_per_sequence), num(to_usd_per_mtok(*r.cost_per_token))),
                   to_usd_per_mtok(*r.cost_per_token), "USD per 1M tokens", "docs/formulas.md 3 (cost per token = n price T_step / B); lecture 7:46", ""});
  }
  return out;
}

std::vector<Explanation> explain_prefill(const Deployment& d, int64_t batch, int64_t prompt, int64_t prefix) {
  const PrefillStep r = prefill_step(d, batch, prompt, prefix);
  Deployment lower_d = d;
  lower_d.mechanisms.enabled = false;
  const PrefillStep lo = prefill_step(lower_d, batch, prompt, prefix);
  const double B = static_cast<double>(batch), P = static_cast<double>(prompt), n = static_cast<double>(d.n_chips);
  const double F = d.system.chip.peak_for(d.compute).value(), W = d.system.chip.hbm_bandwidth.value();
  const double n_active = d.matmul_flops_per_token / 2;
  const double n_head = d.params.lm_head > 0 ? d.params.lm_head : d.params.embedding;  // tied: the table
  const double attn = lo.flops.value() - B * P * d.matmul_flops_per_token + B * (P - 1) * 2 * n_head;
  std::vector<Explanation> out;
  out.push_back({"t_compute_ms", "time the prompt's matmuls and causal attention take at the achievable FLOP rate",
                 "T_compute = (B P 2 N_active - B (P - 1) 2 N_head + attention(P, prefix)) / (n F eff_mm); the LM head runs on each "
                 "prompt's last token only; attention grows as P^2 (causal)",
                 {{"B", "prompts", B, "prompts", "--batch"}, {"P", "prompt length", P, "tokens", "--prompt"},
                  {"N_active", "parameters one token multiplies", n_active / 1e9, "billion", fmt::format("{}'s config", d.model.name)},
                  {"N_head", "LM head parameters (vocab x d_model)", n_head / 1e9, "billion", fmt::format("{}'s config", d.model.name)},
                  {"attention", "attention FLOPs of the batch", attn / 1e12, "TFLOP", "causal scores and values over prefix + prompt"},
                  chips_in(d), peak_in(d), mm_eff_in(d)},
                 fmt::format("({} x {} x 2 x {}e9 - {} x {} x 2 x {}e9 + {}e12) / ({} x {}e12 x {}) = {} ms", num(B), num(P), num(n_active / 1e9), num(B),
                             num(P - 1), num(n_head / 1e9), num(attn / 1e12), num(n),
                             num(F / 1e12), num(d.matmul_efficiency), num(to_ms(lo.t_compute))),
                 to_ms(r.t_compute), "ms", "lecture 1:41-1:51; docs/formulas.md 4 (prefill roofline)", engine_note(d, to_ms(lo.t_compute), to_ms(r.t_compute))});
  out.push_back({"t_weights_ms", "time to read the weights once for the whole chunk", "T_weights = weight bytes read / (n W eff_hbm)",
                 {{"bytes_w", "weight bytes read", to_gb(lo.weight_bytes_read), "GB", "--weights format x parameters touched"}, chips_in(d), hbm_in(d), hbm_eff_in(d)},
                 fmt::format("{} GB / ({} x {} TB/s x {}) = {} ms", num(to_gb(lo.weight_bytes_read)), num(n), num(W / 1e12), num(d.hbm_efficiency),
                             num(to_ms(lo.t_weights))),
                 to_ms(r.t_weights), "ms", "lecture 1:41-1:51", engine_note(d, to_ms(lo.t_weights), to_ms(r.t_weights))});
  out.push_back({"t_kv_ms", "time to read the cached prefix's KV and write the prompt's", "T_kv = (KV read + KV written) / (n W eff_hbm)",
                 {{"KV_read", "prefix KV read", to_gb(lo.kv_bytes_read), "GB", "--prefix"}, {"KV_written", "prompt KV written", to_gb(lo.kv_bytes_written), "GB", "--prompt"},
                  chips_in(d), hbm_in(d), hbm_eff_in(d)},
                 fmt::format("({} + {}) GB / ({} x {} TB/s x {}) = {} ms", num(to_gb(lo.kv_bytes_read)), num(to_gb(lo.kv_bytes_written)), num(n), num(W / 1e12),
                             num(d.hbm_efficiency), num(to_ms(lo.t_kv))),
                 to_ms(r.t_kv), "ms", "lecture 1:41-1:51", engine_note(d, to_ms(lo.t_kv), to_ms(r.t_kv))});
  out.push_back({"ttft_roofline_ms", "the roofline of the prefill: its lower bound", "T >= max(T_compute, T_weights + T_kv)",
                 {{"T_compute", "roofline compute", to_ms(lo.t_compute), "ms", "t_compute_ms"}, {"T_weights", "roofline weights", to_ms(lo.t_weights), "ms", "t_weights_ms"},
                  {"T_kv", "roofline KV", to_ms(lo.t_kv), "ms", "t_kv_ms"}},
                 fmt::format("max({}, {} + {}) = {} ms ({}-bound)", num(to_ms(lo.t_compute)), num(to_ms(lo.t_weights)), num(to_ms(lo.t_kv)),
                             num(to_ms(lo.ttft)), to_string(lo.bound)),
                 to_ms(lo.ttft), "ms", "lecture 1:41-1:51", ""});
  out.push_back({"ttft_ms", "time to first token of a lone request (no queueing)",
                 d.mechanisms.enabled ? step_formula(d, "TTFT", r.t_launch > Seconds(0)) : "TTFT = max(T_compute, T_weights + T_kv)",
                 {{"T_ops", "operations", to_ms(r.t_operations), "ms", "each kernel's max(compute, memory)"},
                  {"T_comm", "communication not hidden", to_ms(r.t_comm), "ms", "the layout's collectives"},
                  {"T_overhead", overhead_label(d.system), to_ms(r.t_overhead), "ms", overhead_source(d)},
                  launch_input(d, r.graph_batch, r.t_launch), host_input(d, r.t_host)},
                 step_algebra(d, r.t_operations, r.t_comm, r.t_overhead, r.t_launch, r.t_host, r.ttft, r.governs),
                 to_ms(r.ttft), "ms", d.mechanisms.enabled ? "docs/formulas.md (engine step)" : "lecture 1:41-1:51", ""});
  out.push_back({"tok_per_s", "prompt tokens prefilled per second", "tok/s = B P / TTFT",
                 {{"B", "prompts", B, "prompts", "--batch"}, {"P", "prompt length", P, "tokens", "--prompt"}, {"TTFT", "prefill time", to_ms(r.ttft), "ms", "ttft_ms"}},
                 fmt::format("{} x {} / {} ms = {} tok/s", num(B), num(P), num(to_ms(r.ttft)), num(r.tokens_per_s.value())), r.tokens_per_s.value(), "tok/s",
                 "docs/formulas.md 4 (prefill roofline)", ""});
  if (r.cost_per_token && d.price_per_chip) {
    const double price_h = to_usd_per_hour(*d.price_per_chip);
    out.push_back({"cost_usd_per_mtok", "what a million input tokens cost in chip rental", "cost/token = n (price per chip-second) TTFT / (B P)",
                   {chips_in(d), {"price", "rental price per chip-hour", price_h, "USD/hour", d.price_source.empty() ? "--price-usd-per-chip-hour" : d.price_source},
                    {"TTFT", "prefill time", to_ms(r.ttft), "ms", "ttft_ms"}, {"B P", "tokens prefilled", B * P, "tokens", "--batch x --prompt"}},
                   fmt::format("{} x ${}/3600 s x {} ms / {} tokens x 1e6 = ${} per 1M tokens", num(n), num(price_h), num(to_ms(r.ttft)), num(B * P),
                               num(to_usd_per_mtok(*r.cost_per_token))),
                   to_usd_per_mtok(*r.cost_per_token), "USD per 1M tokens", "docs/formulas.md 3 (cost per token = n price T_step / B)", ""});
  }
  return out;
}

}  // namespace chalk
