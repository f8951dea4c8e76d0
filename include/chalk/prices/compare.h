// Hosts' prices for an open model beside chalk's cost of serving it (issue 34; docs/
// prices.md, "Comparing hosts"). With the model known exactly, a host's speed per user
// fixes the batch each layout may run (1 / T_step(B) >= speed), that batch fixes chalk's
// cost per token (n price T_step / B), and the host's price against that cost gives the
// margin at full utilization and the utilization at which the price breaks even.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/engine/roofline.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/prices/hosts.h"

namespace chalk {

/// Output tokens/s per user assumed for an offer whose sheet states no speed: a typical
/// interactive speed of GPU-served APIs, 50 (plausible 30..100). Sources: production logs
/// put GPT-4o at 50-60 tok/s and Gemini 1.5 Pro / Azure's GPT-4o at 30-50 (S. Anand, "How
/// fast are LLMs in production?", 2024-09-01, github.com/sanand0/blog posts/2024); Artificial
/// Analysis measured DeepSeek's own V3 API falling from ~85 to ~50 tok/s after its launch
/// (January 2025 post). Pricing such an offer at the batch that fills HBM instead (the
/// cost floor, at a few tok/s per user) made every such host look hugely profitable.
inline constexpr double kAssumedTokPerSPerUser = 50;

/// The per-user decode speed `prices forward`'s headline asks by default (its
/// --min-tok-per-s-per-user): 25 output tokens/s, a TPOT of 40 ms, MLPerf Inference's
/// interactive-scenario limit for Llama 2 70B (MLCommons, Inference v5.0 rules: TTFT 450 ms,
/// TPOT 40 ms; the server scenario allows 200 ms). The slowest service still sold as
/// interactive. Not the 50 a host typically streams (kAssumedTokPerSPerUser): on one scale-up
/// domain without multi-token prediction, an MoE on Hopper reaches 50 only at a batch of 8
/// (DeepSeek-V3 on 8 H200: $21/Mtok of cost against $1.44 at 25), a cliff, not a deployment;
/// hosts reach it with wider expert parallelism and MTP, which the default search does not
/// price. `prices forward --min-tok-per-s-per-user 50` prices a host's speed.
inline constexpr double kDefaultMinTokPerSPerUser = 25;

/// The workload a blended price is for: each request brings `input_tokens` of prompt, of
/// which a fraction `prefix_hit_rate` is a cache hit, and decodes `output_tokens`.
/// Defaults: 3:1 input to output, the blend Artificial Analysis quotes, no cache hits.
struct CompareWorkload {
  int64_t input_tokens = 3000;
  int64_t output_tokens = 1000;
  double prefix_hit_rate = 0;  ///< [0, 1]
  /// The speed an offer that states none is compared at (`--speed`); every such row says
  /// it was assumed (OfferComparison::speed_assumed). A stated speed is never replaced.
  TokensPerSecond assumed_speed = TokensPerSecond(kAssumedTokPerSPerUser);
};

/// Throws InputError: input_tokens < 1 ("input"), output_tokens < 1 ("output"),
/// prefix_hit_rate outside [0, 1] ("prefix_hit_rate"), assumed_speed not > 0 ("speed").
void validate(const CompareWorkload& w);

/// The price of one token of the workload's traffic (input and output together):
/// (I ((1 - h) p_in + h p_hit) + O p_out) / (I + O), USD per token, with p_hit = p_in
/// when no cache price is given. Throws as validate.
UsdPerToken blended_price(UsdPerToken input, std::optional<UsdPerToken> cache_read, UsdPerToken output,
                          const CompareWorkload& w);

/// The smallest decode batch B in [1, max_batch] whose cost per output token at full
/// utilization, n price T_step(B, S) / B, is at most `output_price`: the batch at which
/// the price breaks even. Memory-bound, T_step = (W + B S kv) / (n BW), so
/// B* = (n price W / (n BW)) / (output_price - n price S kv / (n BW)). Empty when even
/// max_batch costs more (the price is below this replica's cost floor). Throws InputError
/// when the deployment has no price ("price_usd_per_chip_hour"), output_price <= 0
/// ("output_usd_per_mtok") or max_batch < 1 ("max_batch").
std::optional<int64_t> break_even_batch(const Deployment& d, int64_t context, UsdPerToken output_price, int64_t max_batch);

/// One host offer against one system.
struct SystemCost {
  std::string system;
  /// Why there is no figure: no public price, the weights fit no replica within the scale-up
  /// domain, or no layout reaches the host's speed ("no layout reaches 1844 tok/s per user;
  /// the fastest is 262 (batch 1 on 8 chips)"). Empty when the figures below are set.
  std::string unreachable;
  bool speed_out_of_reach = false;  ///< the reason is the speed (a wafer-scale or LPU tier)
  std::optional<double> fastest_tok_per_s_per_user;  ///< batch 1 on the fastest replica
  int64_t n_chips = 0, batch = 0;  ///< the cheapest replica and its batch at the speed
  std::string layout;
  TokensPerSecond tok_per_s_per_user;  ///< 1 / T_step at that batch (>= the host's speed)
  Seconds decode_t_step;
  UsdPerToken input_cost, output_cost, cache_read_cost;  ///< full utilization, no margin
  UsdPerToken blended_cost;  ///< the workload's mix of the three
  /// 1 - blended_cost / blended price: what the host keeps of its price with its chips
  /// always busy; negative: it loses money even then.
  double margin_at_full_utilization = 0;
  /// blended_cost / blended price: the busy fraction of chip time at which the price pays
  /// for the chips (cost at utilization u is cost / u); above 1, no utilization does.
  double break_even_utilization = 0;
  /// The same for each kind of token apart: input_cost / input price, output_cost /
  /// output price (a host may earn on one and lose on the other).
  double input_break_even_utilization = 0, output_break_even_utilization = 0;
  /// break_even_batch for the host's output price on this replica; empty: even its
  /// memory-full batch costs more.
  std::optional<int64_t> break_even_batch;
  int64_t max_batch = 0;  ///< the batch that fills the replica's HBM at the context
};

/// One offer against every system.
struct OfferComparison {
  HostOffer offer;
  UsdPerToken blended_price;
  /// The tok/s per user the offer is compared at: its stated speed, else the workload's
  /// assumed_speed (then speed_assumed is true: assumed, not measured).
  TokensPerSecond speed;
  bool speed_assumed = false;
  /// The weights' format the costs assume: the host's stated quantization unless the
  /// caller's options set one, else "checkpoint" (the model's own formats).
  std::string weights_dtype;
  std::vector<SystemCost> systems;    ///< in the order systems were given
  std::optional<size_t> cheapest;     ///< index of the lowest blended cost; empty: none reachable
};

struct HostComparison {
  std::string model;
  std::string notes;  ///< the sheet's
  CompareWorkload workload;
  int64_t context = 0;  ///< steady_state_context(input, output): the decode step's KV tokens
  std::vector<OfferComparison> offers;
};

/// Prices every offer of `sheet` on every system: the cheapest replica and batch at least
/// as fast as the offer's stated speed, or the workload's assumed_speed where it states
/// none (cheapest_replica_at_speed, serving.h); then
/// forward_prices (prices.h) at utilization 1 and margin 0 for the input (a prefill of
/// input_tokens prompts filling the layout), output and cache-read costs. `base` supplies
/// formats, efficiencies and mechanisms (its chips and layout are searched); an offer
/// that states its quantization is priced in it unless `base.weights` is set. Throws
/// InputError for an invalid workload or what cheapest_replica_at_speed throws for bad
/// options; an unreachable speed, a system without price or one the model does not fit is
/// a row with its reason, never an error.
HostComparison compare_hosts(const ModelSpec& m, const HostSheet& sheet, const std::vector<SystemSpec>& systems,
                             const DeploymentOptions& base, const CompareWorkload& w);

}  // namespace chalk
