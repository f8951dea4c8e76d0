#include <fmt/format.h>

#include "chalk/hardware/overhead_label.h"
#include "chalk/serving/explain.h"

namespace chalk {
namespace {

ExplainInput serving_chips_in(const Deployment& d) {
  return {"n", "chips in the replica", static_cast<double>(d.n_chips), "chips", "--chips, or the smallest replica that holds the model"};
}

ExplainInput serving_price_in(const Deployment& d) {
  return {"price", "rental price per chip-hour", to_usd_per_hour(*d.price_per_chip), "USD/hour",
          d.price_source.empty() ? "--price-usd-per-chip-hour" : d.price_source};
}

}  // namespace

std::vector<Explanation> explain_serving_point(const Deployment& d, const ServingPoint& p) {
  const DecodeStep& s = p.step;
  const auto& N = explain_number;
  const double B = static_cast<double>(p.batch), n = static_cast<double>(d.n_chips), kept = s.tokens_per_sequence;
  const double step_ms = to_ms(s.t_step);
  const ExplainInput step_in{"T_step", "decode step time", step_ms, "ms", "t_step_ms of this row"};
  const ExplainInput kept_in{"kept", "tokens kept per sequence per step", kept, "tokens", "1 without drafting (levers.tokens_kept_per_step)"};
  std::vector<Explanation> out;
  out.push_back({"tok_per_s_per_user", "tokens one user sees per second (1 / TPOT)", "tok/s/user = kept / T_step", {kept_in, step_in},
                 fmt::format("{} / {} ms = {} tok/s", N(kept), N(step_ms), N(s.tokens_per_s_per_user.value())), s.tokens_per_s_per_user.value(),
                 "tok/s", "lecture 7:46-11:00 (speed is one token per step); docs/formulas.md 3 (decode roofline)", ""});
  out.push_back({"tok_per_s_per_chip", "tokens per second per chip of the replica", "tok/s/chip = B kept / (n T_step)",
                 {{"B", "batch", B, "sequences", "--batch"}, kept_in, serving_chips_in(d), step_in},
                 fmt::format("{} x {} / ({} x {} ms) = {} tok/s", N(B), N(kept), N(n), N(step_ms), N(s.tokens_per_s_per_chip.value())),
                 s.tokens_per_s_per_chip.value(), "tok/s", "docs/formulas.md 3 (throughput per chip)", ""});
  // No price for a batch the replica cannot hold (issue 30, review 2 H3): its row's cost is empty.
  if (!p.cost || !d.price_per_chip || !p.fits) return out;
  const double price_h = to_usd_per_hour(*d.price_per_chip);
  const double tok_per_h = s.tokens_per_s.value() * 3600;
  out.push_back({"cost_usd_per_mtok", "what a million output tokens cost in chip rental",
                 "cost per 1M tokens = price per chip-hour x n / (tokens per hour / 1e6); tokens per hour = 3600 B kept / T_step",
                 {serving_price_in(d), serving_chips_in(d), {"tok/h", "tokens the replica produces per hour", tok_per_h, "tokens", "3600 x tok_per_s of this row"}},
                 fmt::format("${} x {} / ({} / 1e6) = ${} per 1M tokens", N(price_h), N(n), N(tok_per_h), N(to_usd_per_mtok(p.cost->total))),
                 to_usd_per_mtok(p.cost->total), "USD per 1M tokens", "lecture 7:46 (cost per token); docs/formulas.md, Serving economics", ""});
  const std::string floor = overhead_label(d.system);
  const struct {
    const char* key;
    const char* what;
    Seconds t;
    UsdPerToken TermCosts::*cost;
  } terms[] = {{"cost_compute_usd_per_mtok", "compute", s.t_compute, &TermCosts::compute},
               {"cost_weights_usd_per_mtok", "weight fetch", s.t_weights, &TermCosts::weights},
               {"cost_kv_usd_per_mtok", "KV fetch", s.t_kv, &TermCosts::kv},
               {"cost_comm_usd_per_mtok", "exposed communication", s.t_comm, &TermCosts::comm},
               {"cost_overhead_usd_per_mtok", floor.c_str(), s.t_overhead, &TermCosts::overhead}};
  for (const auto& t : terms) {
    const double v = to_usd_per_mtok((*p.cost).*t.cost);
    out.push_back({t.key, fmt::format("the {} term's share of the cost: what the tokens would cost if the step took only that term", t.what),
                   "cost_term per 1M tokens = n x price per chip-second x T_term / (B kept) x 1e6",
                   {serving_chips_in(d), serving_price_in(d), {"T_term", t.what, to_ms(t.t), "ms", "this row's term"}, {"B", "batch", B, "sequences", "--batch"}, kept_in},
                   fmt::format("{} x ${}/3600 s x {} ms / {} tokens x 1e6 = ${} per 1M tokens", N(n), N(price_h), N(to_ms(t.t)), N(B * kept), N(v)), v,
                   "USD per 1M tokens", "docs/formulas.md (cost by term); lecture 7:46-15:30", ""});
  }
  return out;
}

std::vector<Explanation> explain_balance(const Deployment& d, const BalancePoints& b, const ServingLevers& levers) {
  const auto& N = explain_number;
  // The weights a large-batch step reads, as balance_points counts them: every stored
  // weight but an untied input embedding (a step gathers one row of it per token).
  const double untied = d.model.tie_embeddings ? 0.0 : d.params.embedding;
  const double n_read = d.params.total() - untied;
  const double n_active = d.params.active_matmul();
  const double b_w = (d.weight_bytes_total.value() - untied * weight_bytes_per_element(d.weights.embedding, d.weights.embedding_bits)) / n_read;
  const auto& chip = d.system.chip;
  const double F = chip.peak_for(d.compute).value() / 1e12, W = to_tb_per_s(chip.hbm_bandwidth);
  const double Fe = d.flops_effective.value() / 1e12, We = to_tb_per_s(d.hbm_effective);
  const std::string model_src = fmt::format("{}'s config", d.model.name);
  const ExplainInput nread_in{"N_read", "weights a large-batch step reads (all but an untied input embedding)", n_read / 1e9, "billion", model_src};
  const ExplainInput nact_in{"N_active", "matmul parameters one token multiplies", n_active / 1e9, "billion", model_src};
  const ExplainInput bw_in{"b_w", "mean bytes per weight read", b_w, "bytes", "--weights, or the checkpoint's format"};
  std::vector<Explanation> out;
  out.push_back({"lecture_batch_peak", "the batch where one step's compute time equals its weight-fetch time, at peak rates",
                 "B* = N_read b_w F / (2 N_active W)  (from B 2 N_active / F = N_read b_w / W)",
                 {nread_in, bw_in, {"F", "dense peak per chip", F, "TFLOP/s", fmt::format("{} datasheet", chip.name)}, nact_in,
                  {"W", "HBM bandwidth per chip", W, "TB/s", fmt::format("{} datasheet", chip.name)}},
                 fmt::format("{}e9 x {} x {}e12 / (2 x {}e9 x {}e12) = {}", N(n_read / 1e9), N(b_w), N(F), N(n_active / 1e9), N(W), N(b.lecture_batch_peak)),
                 b.lecture_batch_peak, "sequences", "lecture 15:53-19:52 (the balance batch)", ""});
  out.push_back({"lecture_batch_effective", "the same at the achievable rates the deployment uses",
                 "B*_eff = N_read b_w (F eff_mm) / (2 N_active (W eff_hbm))",
                 {nread_in, bw_in, {"F eff_mm", "achievable FLOP/s per chip", Fe, "TFLOP/s", d.matmul_efficiency_source.empty() ? "the system's efficiency" : d.matmul_efficiency_source},
                  nact_in, {"W eff_hbm", "achievable HBM bandwidth per chip", We, "TB/s", d.hbm_efficiency_source.empty() ? "the system's efficiency" : d.hbm_efficiency_source}},
                 fmt::format("{}e9 x {} x {}e12 / (2 x {}e9 x {}e12) = {}", N(n_read / 1e9), N(b_w), N(Fe), N(n_active / 1e9), N(We), N(b.lecture_batch_effective)),
                 b.lecture_batch_effective, "sequences", "lecture 15:53-19:52", ""});
  if (b.batch_with_kv) {
    const int64_t B = *b.batch_with_kv;
    const DecodeLevers lev = resolve_levers(levers, b.context);
    const DecodeStep at = decode_step(d, B, b.context, lev);
    std::string below = "B = 1 is the smallest batch";
    if (B > 1) {
      const DecodeStep under = decode_step(d, B - 1, b.context, lev);
      below = fmt::format("at B - 1 = {}: {} ms < {} ms", B - 1, N(to_ms(under.t_compute)), N(to_ms(under.t_memory)));
    }
    out.push_back({"batch_with_kv", fmt::format("the smallest batch whose decode step is compute-bound at context {}", b.context),
                   "smallest B with T_compute(B) >= T_weights(B) + T_kv(B, S), solved on the step (MoE expert touching, the busiest chip and attention count)",
                   {{"S", "context", static_cast<double>(b.context), "tokens", "--context"},
                    {"T_compute", "compute at B", to_ms(at.t_compute), "ms", "decode_step at B"},
                    {"T_weights", "weight fetch at B", to_ms(at.t_weights), "ms", "decode_step at B"},
                    {"T_kv", "KV fetch at B", to_ms(at.t_kv), "ms", "decode_step at B"}},
                   fmt::format("at B = {}: {} ms >= {} + {} ms; {}", B, N(to_ms(at.t_compute)), N(to_ms(at.t_weights)), N(to_ms(at.t_kv)), below),
                   static_cast<double>(B), "sequences", "lecture 10:43-11:25, 15:53-19:52", ""});
  } else if (b.context_never_compute_bound) {
    // No compute-bound batch: say why, as a figure (review 6 M10: the page's "first
    // compute-bound batch - none" opened nothing). Past S*, each sequence's KV read takes at
    // least its compute, so adding sequences adds memory time as fast as compute time.
    const int64_t S = *b.context_never_compute_bound;
    const DecodeStep at = per_sequence_terms(d, S, resolve_levers(levers, S));
    std::string below = "S = 0 is the smallest context";
    if (S > 0) {
      const DecodeStep under = per_sequence_terms(d, S - 1, resolve_levers(levers, S - 1));
      below = fmt::format("at S - 1 = {}: {} ms < {} ms", S - 1, N(to_ms(under.t_kv)), N(to_ms(under.t_compute)));
    }
    out.push_back({"context_never_compute_bound_tokens",
                   fmt::format("the context past which no batch is compute-bound (so none is at context {})", b.context),
                   "smallest S with T_kv(S) >= T_compute(S), one sequence's terms (both grow with the batch; the weights do not)",
                   {{"S_asked", "context asked", static_cast<double>(b.context), "tokens", "--context"},
                    {"T_compute", "one sequence's compute at S", to_ms(at.t_compute), "ms", "per_sequence_terms at S"},
                    {"T_kv", "one sequence's KV fetch at S", to_ms(at.t_kv), "ms", "per_sequence_terms at S"}},
                   fmt::format("at S = {}: {} ms >= {} ms; {}", S, N(to_ms(at.t_kv)), N(to_ms(at.t_compute)), below),
                   static_cast<double>(S), "tokens", "lecture 10:43-11:25", ""});
  }
  return out;
}

}  // namespace chalk
