// Hosts' prices beside chalk's cost at their speed (compare.h; docs/prices.md, "Comparing
// hosts"): the replica and batch come from serving's cheapest_replica_at_speed, the costs
// from forward_prices at full utilization and no margin.
#include <cmath>
#include <cstdio>

#include "chalk/base/dtype.h"
#include "chalk/base/error.h"
#include "chalk/engine/layout_search.h"
#include "chalk/engine/pipeline.h"
#include "chalk/prices/compare.h"
#include "chalk/prices/prices.h"
#include "chalk/serving/serving_speed.h"

namespace chalk {
namespace {

std::string compare_num(double x, const char* f = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

/// Output cost per token at full utilization: n price T_step(B) / B.
double output_cost_at(const Deployment& d, int64_t batch, int64_t context) {
  return decode_step(d, batch, context).cost_per_token->value();
}

/// One offer on one system, from the replica search's answer `c` at the offer's speed.
/// Why no replica within `s`'s scale-up domain holds the model: its weights alone (the
/// usual reason: a 671 GB model on an 8 x 80 GB domain), else the weights beside one
/// sequence's KV cache at `context`, when no replica of up to 64 domains holds it either
/// (cheapest_replicas_at_speeds tries the smallest replica across domains).
std::string fit_reason(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& opt, int64_t context) {
  const std::string domain = "one " + std::to_string(s.scale_up_domain) + "-chip scale-up domain of " + s.name;
  try {
    DeploymentOptions o = opt;
    o.n_chips = s.scale_up_domain;
    const Deployment d = make_deployment(m, s, o);
    const double weights_gb = to_gb(d.weight_bytes_total);
    const double usable_gb = to_gb(s.chip.hbm_capacity) * static_cast<double>(s.scale_up_domain) * (1 - o.memory_reserve_fraction);
    if (weights_gb > usable_gb) {
      return "the model's weights (" + compare_num(weights_gb, "%.4g") + " GB) do not fit " + domain + " (" + compare_num(usable_gb, "%.4g") +
             " GB usable); nor does any replica of up to 64 domains";
    }
    return "the model's weights (" + compare_num(weights_gb, "%.4g") + " GB) and one sequence's KV cache at " + std::to_string(context) +
           " tokens do not fit " + domain + " (" + compare_num(usable_gb, "%.4g") + " GB usable); nor does any replica of up to 64 domains";
  } catch (const std::exception&) {
    return "the weights and one sequence of " + std::to_string(context) + " tokens fit no replica within " + domain;
  }
}

/// Why the fastest replica of `m` on `s` (batch 1, `f`) is as slow as it is, from its own step
/// (review 5 M8: "beyond every GPU's step" was said of an L4 whose weights did not fit one
/// server). A replica wider than the scale-up domain: the weights do not fit one domain, so
/// it spans several over the scale-out network. Else the term that governs its step.
std::string slow_reason(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& opt, const ModePoint& f) {
  const DecodeStep& st = f.step;
  if (f.n_chips > s.scale_up_domain) {
    try {
      DeploymentOptions o = opt;
      o.n_chips = s.scale_up_domain;
      const Deployment d = make_deployment(m, s, o);
      const double usable_gb = to_gb(s.chip.hbm_capacity) * static_cast<double>(s.scale_up_domain) * (1 - o.memory_reserve_fraction);
      return "the weights (" + compare_num(to_gb(d.weight_bytes_total), "%.4g") + " GB) do not fit one " + std::to_string(s.scale_up_domain) +
             "-chip scale-up domain of " + s.name + " (" + compare_num(usable_gb, "%.4g") + " GB usable), so the fastest replica spans " +
             std::to_string((f.n_chips + s.scale_up_domain - 1) / s.scale_up_domain) + " domains over the scale-out network: step " +
             compare_num(to_ms(st.t_step), "%.3g") + " ms, of which communication " + compare_num(to_ms(st.t_comm), "%.3g") + " ms";
    } catch (const std::exception&) {
      // options the domain cannot take: the step alone below
    }
  }
  return "its step at batch 1 is " + compare_num(to_ms(st.t_step), "%.3g") + " ms, governed by " + st.governs + " (weights " +
         compare_num(to_ms(st.t_weights), "%.3g") + " ms: each chip reads its share of the weights at " +
         compare_num(to_tb_per_s(s.chip.hbm_bandwidth) * s.efficiency.hbm, "%.3g") + " TB/s, " +
         compare_num(100 * s.efficiency.hbm, "%.3g") + "% of its " + compare_num(to_tb_per_s(s.chip.hbm_bandwidth), "%.3g") +
         " TB/s peak; communication " + compare_num(to_ms(st.t_comm), "%.3g") + " ms)";
}

SystemCost cost_on(const ModelSpec& m, const SystemSpec& s, const HostOffer& o, TokensPerSecond speed, const SpeedChoice& c, const CompareWorkload& w,
                   int64_t context, UsdPerToken blended, const std::string& no_fit, const std::string& slow) {
  SystemCost r;
  r.system = s.name;
  if (c.fastest) r.fastest_tok_per_s_per_user = c.fastest->tokens_per_s_per_user.value();
  if (!c.fastest) {
    r.unreachable = no_fit;
    return r;
  }
  if (!c.point) {
    r.speed_out_of_reach = true;
    r.unreachable = "no layout reaches " + compare_num(speed.value(), "%.4g") + " tok/s per user; the fastest is " +
                    compare_num(c.fastest->tokens_per_s_per_user.value(), "%.4g") + " (batch 1 on " + std::to_string(c.fastest->n_chips) +
                    " chips): " + slow;
    return r;
  }
  const Deployment& d = *c.deployment;
  ForwardAssumptions fa;
  fa.decode_batch = c.point->batch;
  fa.decode_context_tokens = std::max<int64_t>(1, context);
  fa.prompt_tokens = w.input_tokens;
  fa.utilization = 1;
  fa.gross_margin = 0;
  const ForwardPrices f = forward_prices(d, fa);
  r.n_chips = d.n_chips;
  r.batch = c.point->batch;
  r.layout = c.point->layout;
  r.tok_per_s_per_user = c.point->tokens_per_s_per_user;
  r.decode_t_step = f.decode.t_step;
  r.input_cost = f.input_cost;
  r.output_cost = f.output_cost;
  r.cache_read_cost = f.cache_read;  // markup 1: the cost
  if (c.stages > 1) {
    // A pipeline (review 4 M5), priced as `prices forward --pp` prices it: output cost =
    // every stage's chips x price x the cycle / batch; input cost over a steady stream of
    // prefills, one microbatch of the stage's prefill batch per stage; a cached token's
    // read costs what it costs on one replica of these chips (per chip, for the whole
    // model's KV per token: `d` holds 1/stages of the layers).
    const PipelineShape shape{c.stages, c.stages};
    const PipelineDecode dec = pipeline_decode(d, shape, c.point->batch, std::max<int64_t>(1, context));
    const PipelinePrefill pre = pipeline_prefill(d, shape, f.prefill_batch * c.stages, w.input_tokens);
    r.n_chips = d.n_chips * c.stages;
    r.decode_t_step = dec.cycle;
    r.output_cost = *dec.cost_per_token;
    r.input_cost = *pre.cost_per_token;
    const BytesPerToken whole = kv_bytes_per_token(m, fa.decode_context_tokens, d.kv);
    if (f.kv_bytes_per_token.value() > 0) r.cache_read_cost = f.cache_read * (whole.value() / f.kv_bytes_per_token.value());
  }
  r.blended_cost = blended_price(r.input_cost, r.cache_read_cost, r.output_cost, w);
  r.break_even_utilization = r.blended_cost / blended;
  r.margin_at_full_utilization = 1 - r.break_even_utilization;
  r.input_break_even_utilization = r.input_cost / o.input;
  r.output_break_even_utilization = r.output_cost / o.output;
  const MemoryPlan mp = memory_plan(d, 1, context);
  r.max_batch = std::max<int64_t>(r.batch, std::min<int64_t>(mp.max_batch, kMaxBaseBatch));
  // break_even_batch prices one replica's decode step; a pipeline's cycle is not one: none.
  if (c.stages <= 1) r.break_even_batch = break_even_batch(d, context, o.output, r.max_batch);
  return r;
}

}  // namespace

void validate(const CompareWorkload& w) {
  if (w.input_tokens < 1) throw InputError("input", "must be >= 1 token, got " + std::to_string(w.input_tokens));
  if (w.output_tokens < 1) throw InputError("output", "must be >= 1 token, got " + std::to_string(w.output_tokens));
  if (!(w.prefix_hit_rate >= 0 && w.prefix_hit_rate <= 1)) {
    throw InputError("prefix_hit_rate", "must be a fraction in [0, 1], got " + compare_num(w.prefix_hit_rate));
  }
  if (!(w.assumed_speed.value() > 0) || !std::isfinite(w.assumed_speed.value())) {
    throw InputError("speed", "must be > 0 tok/s per user, got " + compare_num(w.assumed_speed.value()));
  }
}

UsdPerToken blended_price(UsdPerToken input, std::optional<UsdPerToken> cache_read, UsdPerToken output,
                          const CompareWorkload& w) {
  validate(w);
  const double i = static_cast<double>(w.input_tokens), o = static_cast<double>(w.output_tokens);
  const UsdPerToken hit = cache_read.value_or(input);
  const UsdPerToken per_input = input * (1 - w.prefix_hit_rate) + hit * w.prefix_hit_rate;
  return (per_input * i + output * o) / (i + o);
}

std::optional<int64_t> break_even_batch(const Deployment& d, int64_t context, UsdPerToken output_price, int64_t max_batch) {
  if (!d.price_per_chip) throw InputError("price_usd_per_chip_hour", d.system.name + " has no public price per chip-hour");
  if (!(output_price.value() > 0)) throw InputError("output_usd_per_mtok", "must be > 0, got " + compare_num(to_usd_per_mtok(output_price)));
  if (max_batch < 1) throw InputError("max_batch", "must be >= 1, got " + std::to_string(max_batch));
  const double price = output_price.value();
  auto covers = [&](int64_t b) { return output_cost_at(d, b, context) <= price; };
  if (!covers(max_batch)) return std::nullopt;
  if (covers(1)) return 1;
  int64_t lo = 1, hi = max_batch;  // !covers(lo), covers(hi): cost per token falls as B grows
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (covers(mid) ? hi : lo) = mid;
  }
  return hi;
}

HostComparison compare_hosts(const ModelSpec& m, const HostSheet& sheet, const std::vector<SystemSpec>& systems,
                             const DeploymentOptions& base, const CompareWorkload& w) {
  validate(w);
  HostComparison h;
  h.model = m.name;
  h.notes = sheet.notes;
  h.workload = w;
  h.context = steady_state_context(w.input_tokens, w.output_tokens);
  // The replicas of a system are resolved once per weights' format, for every offer's speed.
  std::vector<DeploymentOptions> opts;
  for (const HostOffer& o : sheet.offers) {
    OfferComparison oc;
    oc.offer = o;
    oc.blended_price = blended_price(o.input, o.cache_read, o.output, w);
    oc.speed_assumed = !o.tok_per_s_per_user.has_value();
    oc.speed = o.tok_per_s_per_user.value_or(w.assumed_speed);
    // The host's stated quantization sets the weights' format unless the caller set one.
    DeploymentOptions opt = base;
    if (!opt.weights && !o.quantization.empty()) opt.weights = parse_dtype(o.quantization, "quantization");
    oc.weights_dtype = opt.weights ? std::string(to_string(*opt.weights)) : "checkpoint";
    opts.push_back(opt);
    h.offers.push_back(std::move(oc));
  }
  for (const SystemSpec& s : systems) {
    std::vector<bool> done(h.offers.size(), false);
    for (size_t i = 0; i < h.offers.size(); ++i) {
      if (done[i]) continue;
      std::vector<size_t> group;
      std::vector<TokensPerSecond> speeds;
      for (size_t k = i; k < h.offers.size(); ++k) {
        if (done[k] || h.offers[k].weights_dtype != h.offers[i].weights_dtype) continue;
        done[k] = true;
        group.push_back(k);
        speeds.push_back(h.offers[k].speed);
      }
      std::vector<SpeedChoice> choices;
      if (opts[i].price_per_chip || s.price_per_chip) choices = cheapest_replicas_at_speeds(m, s, opts[i], h.context, speeds);
      std::string no_fit, slow;
      for (const SpeedChoice& c : choices) {
        if (!c.fastest) no_fit = fit_reason(m, s, opts[i], h.context);
      }
      if (!choices.empty() && choices.front().fastest) slow = slow_reason(m, s, opts[i], *choices.front().fastest);
      for (size_t g = 0; g < group.size(); ++g) {
        OfferComparison& oc = h.offers[group[g]];
        if (choices.empty()) {
          SystemCost r;
          r.system = s.name;
          r.unreachable = "no public price per chip-hour";
          oc.systems.push_back(r);
        } else {
          oc.systems.push_back(cost_on(m, s, oc.offer, oc.speed, choices[g], w, h.context, oc.blended_price, no_fit, slow));
        }
        const SystemCost& r = oc.systems.back();
        if (r.unreachable.empty() && (!oc.cheapest || r.blended_cost < oc.systems[*oc.cheapest].blended_cost)) {
          oc.cheapest = oc.systems.size() - 1;
        }
      }
    }
  }
  return h;
}

}  // namespace chalk
