// The figures of a PriceInference flattened into rows (inference, subject, quantity with
// its unit suffix, value, low, high, note) for tables, CSV and JSON.
#include <cstdio>
#include <string_view>
#include <utility>

#include "chalk/prices/prices.h"

namespace chalk {
namespace {

std::string figures_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

template <class Q>
Estimate<double> figures_untyped(const Estimate<Q>& e) {
  return {e.value.value(), e.low.value(), e.high.value()};
}

}  // namespace

std::vector<InferenceFigure> inference_figures(const PriceInference& p) {
  std::vector<InferenceFigure> out;
  auto point = [](double v) { return Estimate<double>{v, v, v}; };
  auto add = [&](const char* inference, std::string subject, std::string quantity, Estimate<double> e, std::string note = "") {
    out.push_back({inference, std::move(subject), std::move(quantity), e, std::move(note)});
  };
  if (p.step) {
    add("a", "", "price_step_threshold_tokens", point(static_cast<double>(p.step->threshold_tokens)));
    add("a", "", "kv_bytes_per_token", figures_untyped(p.kv_bytes_per_token),
        "where the KV fetch catches compute: 2 N_active / (S* (F/W - a)) (lecture 1:35:47)");
  } else {
    add("a", "", "kv_bytes_per_token", figures_untyped(p.kv_bytes_per_token), "assumed: the sheet has no long-context price step");
  }
  const auto& ph = p.phases;
  add("b", "", "output_to_input_price_ratio", point(ph.output_to_input_ratio),
      ph.output_costs_more ? "output dearer than input: decode is the memory-bound phase, prefill the compute-bound one"
                           : "output NOT dearer than input: contradicts a memory-bound decode");
  add("b", "", "decode_fraction_of_compute_roofline", ph.decode_fraction_of_compute_roofline, "f_d / (ratio f_p); 1 / ratio without attention");
  add("b", "", "decode_bytes_per_output_token", figures_untyped(ph.decode_bytes_per_output_token), "ratio x f_p / (F/W), f_p = 2 N_active + a kv S/2");
  if (ph.implied_decode_batch) {
    add("b", "", "implied_decode_batch", *ph.implied_decode_batch,
        std::string("weights / (bytes per output token - S kv)") + (ph.implied_batch_partial ? "; unbounded at some corners" : ""));
  }
  if (p.cache_read) {
    const auto& c = *p.cache_read;
    add("c", "", "cache_read_to_input_price_ratio", point(c.read_to_input_ratio), "a hit fetches stored KV instead of recomputing it");
    add("c", "", "hbm_fetch_to_recompute_cost_ratio", c.hbm_fetch_to_recompute_cost, "kv (F/W) / f_p");
    add("c", "", "implied_fetch_fraction_of_hbm_bandwidth", c.implied_fetch_fraction_of_hbm, "kv (F/W) / (f_p q)");
    const auto& b = c.implied_fetch_bandwidth_per_chip;
    add("c", "", "implied_fetch_gb_per_s_per_chip", {to_gb_per_s(b.value), to_gb_per_s(b.low), to_gb_per_s(b.high)},
        "the bandwidth per chip at which streaming the KV costs the read price");
  }
  for (const auto& st : p.storage) {
    add("d", st.basis, "storage_usd_per_mtok_per_hour", point(to_usd_per_mtok_per_hour(st.price)));
    add("d", st.basis, "hold_s", point(st.duration.value()));
    const auto& pb = st.price_per_byte;
    add("d", st.basis, "storage_usd_per_gb_hour", {to_usd_per_gb_hour(pb.value), to_usd_per_gb_hour(pb.low), to_usd_per_gb_hour(pb.high)},
        "by cost: " + (st.tier_by_cost.empty() ? std::string("below every tier's cost") : st.tier_by_cost) +
            "; by duration: " + (st.tier_by_duration.empty() ? std::string("no tier") : st.tier_by_duration));
    for (const auto& f : st.tiers) {
      const std::string subject = st.basis + " / " + f.tier.name;
      add("d", subject, "sweep_s", point(f.tier.sweep_time.value()),
          f.readable_within_duration ? "readable within the hold time" : "slower to read once than the hold time");
      if (f.tier.cost) {
        const auto& c = *f.tier.cost;
        add("d", subject, "tier_cost_usd_per_gb_hour", {to_usd_per_gb_hour(c.value), to_usd_per_gb_hour(c.low), to_usd_per_gb_hour(c.high)});
        add("d", subject, "price_to_cost_ratio", *f.price_to_cost, f.covers_cost ? "price covers the tier's cost" : "price below the tier's cost");
        add("d", subject, "breakeven_kv_bytes_per_token", figures_untyped(*f.breakeven_kv), "the KV per token at which price = cost");
      }
    }
  }
  for (const auto& m : p.multiples) {
    add("e", m.tier, "price_multiple", point(m.multiple));
    add("e", m.tier, "implied_decode_batch", m.batch,
        "from base batch " + std::to_string(m.base_batch) + " at context " + std::to_string(m.context) +
            (m.reachable ? "" : "; batching alone cannot reach the multiple (achieves " + figures_num(m.achieved_multiple) + "x)"));
    add("e", m.tier, "speedup", m.speedup, "tokens/s per user vs the base batch");
    if (m.stated_speedup) {
      add("e", m.tier, "stated_speedup", point(*m.stated_speedup));
      if (m.cost_multiple_for_stated_speedup) {
        add("e", m.tier, "cost_multiple_for_stated_speedup", point(*m.cost_multiple_for_stated_speedup));
      }
    }
  }
  add("f", "", "step_budget_ms", point(to_ms(p.ceiling.step_budget)));
  add("f", "", "bandwidth_ceiling_tokens", p.ceiling.bandwidth_ceiling_tokens,
      "one sequence's KV fetch fills the step budget: budget x W / kv");
  if (p.ceiling.capacity_ceiling_tokens) {
    add("f", "", "capacity_ceiling_tokens", *p.ceiling.capacity_ceiling_tokens, "one sequence's KV fills HBM beside the weights");
  }
  return out;
}

std::string quantity_words(std::string_view key) {
  // Every quantity inference_figures writes, in the order it writes them.
  static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
      {"price_step_threshold_tokens", "price step threshold (tokens)"},
      {"kv_bytes_per_token", "KV bytes per token"},
      {"output_to_input_price_ratio", "output / input price"},
      {"decode_fraction_of_compute_roofline", "decode share of compute roofline"},
      {"decode_bytes_per_output_token", "decode bytes per output token"},
      {"implied_decode_batch", "implied decode batch"},
      {"cache_read_to_input_price_ratio", "cache read / input price"},
      {"hbm_fetch_to_recompute_cost_ratio", "HBM fetch / recompute cost"},
      {"implied_fetch_fraction_of_hbm_bandwidth", "implied fetch share of HBM bandwidth"},
      {"implied_fetch_gb_per_s_per_chip", "implied fetch GB/s per chip"},
      {"storage_usd_per_mtok_per_hour", "storage $ per Mtok-hour"},
      {"hold_s", "hold (s)"},
      {"storage_usd_per_gb_hour", "storage $ per GB-hour"},
      {"sweep_s", "tier sweep time (s)"},
      {"tier_cost_usd_per_gb_hour", "tier cost $ per GB-hour"},
      {"price_to_cost_ratio", "price / cost"},
      {"breakeven_kv_bytes_per_token", "break-even KV bytes per token"},
      {"price_multiple", "price multiple"},
      {"speedup", "speed-up per user"},
      {"stated_speedup", "stated speed-up"},
      {"cost_multiple_for_stated_speedup", "cost multiple for stated speed-up"},
      {"step_budget_ms", "step budget (ms)"},
      {"bandwidth_ceiling_tokens", "bandwidth ceiling (tokens)"},
      {"capacity_ceiling_tokens", "capacity ceiling (tokens)"},
  };
  for (const auto& [k, w] : kWords) {
    if (k == key) return std::string(w);
  }
  return std::string(key);
}

}  // namespace chalk
