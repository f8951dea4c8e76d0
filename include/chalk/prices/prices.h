// API price sheets, and reading them backwards (lecture 1:32:51-2:03:48; DESIGN.md
// section 1.5): providers price near cost ("otherwise someone could scoop you", 1:41:22),
// so a price sheet leaks the system behind it. From a sheet, chalk infers
//   (a) KV bytes per token from a long-context price step,
//   (b) that prefill is compute-bound and decode memory-bound, from the output/input ratio,
//       how far below the compute roofline decode runs, and the implied decode batch,
//   (c) the implied cost of a cache hit (a fetch) against a miss (a recompute),
//   (d) the memory tier behind each cache duration,
//   (e) the batch behind a fast, priority or flex multiple, and the speedup it buys,
//   (f) the context length that memory bandwidth allows,
// each as a value with a low/high range over stated, adjustable assumptions; and, in the
// forward direction, the prices a model on a system implies. Derivations: docs/formulas.md,
// section "prices". Data: data/prices/*.json ("chalk-prices/1", docs/prices.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/engine/roofline.h"
#include "chalk/base/units.h"
#include "chalk/prices/price_sheet.h"

namespace chalk {

// ---------------------------------------------------------------------------------------
// Reading prices backwards

/// A figure and the range it spans as its assumptions move across their ranges
/// (low <= value <= high).
template <class Q>
struct Estimate {
  Q value{}, low{}, high{};
};

/// Cost of holding bytes in a memory tier (an amortised purchase price, or for HBM a share
/// of the chip's rental price).
struct TierCostAssumptions {
  /// Share of a chip's rental price charged to its HBM capacity. 1 = the full price: KV
  /// that fills HBM displaces the batch the chip could otherwise serve (lecture 1:57:24).
  Estimate<double> hbm_share_of_chip_price{1.0, 0.25, 1.0};
  /// Server DRAM (DDR5, LPDDR5X), flash (NVMe) and disk (HDD), USD per GB-hour: purchase
  /// price of $5 ($2.5-$10) / GB, $0.10 ($0.05-$0.20) / GB and $0.02 ($0.015-$0.03) / GB
  /// amortised over 4 years (35,064 h). chalk's order-of-magnitude assumptions; docs/sources/
  /// carries no memory prices.
  Estimate<UsdPerByteSecond> dram{usd_per_gb_hour(5.0 / 35064), usd_per_gb_hour(2.5 / 35064), usd_per_gb_hour(10.0 / 35064)};
  Estimate<UsdPerByteSecond> flash{usd_per_gb_hour(0.10 / 35064), usd_per_gb_hour(0.05 / 35064), usd_per_gb_hour(0.20 / 35064)};
  Estimate<UsdPerByteSecond> disk{usd_per_gb_hour(0.02 / 35064), usd_per_gb_hour(0.015 / 35064), usd_per_gb_hour(0.03 / 35064)};
  /// Used when the system lists no flash tier: hardware.md's 8 x 3.84 TB NVMe per 8 GPUs at
  /// ~7.0 GB/s per PCIe Gen4 x4 drive (Intel D7-P5500).
  MemoryTier assumed_flash{"NVMe flash (assumed)", gigabytes(3840), gigabytes_per_second(7.0),
                           "docs/sources/hardware.md: 8 x 3.84 TB NVMe per 8 GPUs, ~7.0 GB/s per Gen4 x4 drive", {}, {}};
  /// Always added unless the system lists a disk: one 20 TB HDD per chip at ~0.27 GB/s
  /// sustained (a nearline 3.5-inch drive; chalk's assumption).
  MemoryTier assumed_disk{"HDD (assumed)", gigabytes(20000), gigabytes_per_second(0.27),
                          "chalk assumption: one 20 TB nearline HDD per chip, ~270 MB/s sustained", {}, {}};
};

/// The largest decode batch price inference and forward pricing search (2^24 sequences, as
/// `chalk decode --batch`); --base-batch beyond it is an error, never an overflowing 2 x B0.
inline constexpr int64_t kMaxBaseBatch = int64_t{1} << 24;

/// What the inverse assumes about the provider's model and chips. Defaults are the
/// lecture's (1:35:47): 50e9 active parameters, 300 FLOPs per byte, attention FLOPs ignored.
struct InferenceAssumptions {
  Estimate<double> active_params{50e9, 25e9, 100e9};  ///< N_active
  /// F/W: the chip's FLOP/s per byte/s of HBM (H100 bf16 295, GB200 bf16 313, fp8 twice).
  Estimate<FlopsPerByte> flops_per_byte{FlopsPerByte(300), FlopsPerByte(200), FlopsPerByte(600)};
  /// a: attention FLOPs per KV byte attended (QK^T and softmax x V), which the lecture drops
  /// (1:51:23, "as an approximation I chose to remove it"). GQA in bf16: query heads per
  /// KV head, h / g (4 h d_h FLOPs per 2 g d_h x 2 bytes: Llama 3.1 8B 32/8 = 4; 70B 8; 405B
  /// 16); MLA absorbed: 2 x 128 x (576 + 512) / (576 x 2) = 242. Must stay below F/W.
  Estimate<FlopsPerByte> attention_flops_per_kv_byte{FlopsPerByte(0), FlopsPerByte(0), FlopsPerByte(16)};
  /// Weight bytes one decode step reads (all experts touched at large batch): ~500 GB for
  /// a frontier MoE in fp8 (DeepSeek-V3: 671 GB), 100 GB (a dense 50B model in bf16) to 2 TB.
  Estimate<Bytes> weight_bytes{gigabytes(500), gigabytes(100), gigabytes(2000)};
  /// Mean context S of a decode step; the prefill that prices input is taken to be a prompt
  /// of S tokens, whose queries attend to S/2 on average.
  Estimate<double> decode_context_tokens{4096, 1024, 16384};
  /// LM-head parameters within active_params (vocab x d_model). A prefill runs the head on
  /// its last position only, so an input token costs 2 (N_active - head (S - 1) / S) matmul
  /// FLOPs (the roofline's prefill, docs/formulas.md section 4). 0, the lecture's model,
  /// charges every input token the head.
  double head_params = 0;
  /// KV bytes per token when the sheet has no long-context step: the lecture's 1,667
  /// (1:38:18), 1 KB to 4 KB ("about 1 kilobyte, almost 2 kilobytes").
  Estimate<BytesPerToken> kv_bytes_per_token{BytesPerToken(1667), BytesPerToken(1000), BytesPerToken(4000)};
  /// Step-time budget of a decode step for (f): ~20 ms, the batching window (lecture 22:44).
  Seconds step_budget = milliseconds(20);
  /// Hold time assumed for a per-hour storage price with no stated duration (Gemini's
  /// explicit cache: the TTL defaults to one hour).
  Seconds storage_duration = hours(1);
  /// Base decode batch for (e), 0..kMaxBaseBatch; 0 = cost_optimal_decode_batch at decode_context_tokens.
  int64_t base_batch = 0;
  TierCostAssumptions tier_costs;
};

/// (a) KV bytes per token at a long-context price step (lecture 1:33:25-1:38:18). Per
/// decode token at large batch, compute takes (2 N_active + a S kv) / F and the KV fetch
/// S kv / W; the price rises where the second catches the first:
/// S* kv / W = (2 N_active + a S* kv) / F, so kv = 2 N_active / (S* (F/W - a)). With the
/// lecture's a = 0: kv = 2 N_active / (S* F/W) = 2 x 50e9 / (200,000 x 300) = 1,667 bytes.
/// Throws InputError unless N, F/W and S* are positive and 0 <= a < F/W.
BytesPerToken kv_bytes_at_price_step(double active_params, FlopsPerByte flops_per_byte, int64_t threshold_tokens,
                                     FlopsPerByte attention_flops_per_kv_byte = FlopsPerByte(0));

/// The same over the ranges of N_active, F/W and a.
Estimate<BytesPerToken> kv_bytes_at_price_step(const InferenceAssumptions& a, int64_t threshold_tokens);

/// (b) What the output/input price ratio r says (lecture 1:41:26-1:48:20). Prefill is
/// compute-bound: an input token costs f_p / F of chip time, f_p = 2 N + a kv S/2. Decode
/// at batch B is memory-bound: an output token costs (weights/B + S kv) / W. At the same
/// markup r = (F/W) (weights/B + S kv) / f_p, so decode fetches r f_p / (F/W) bytes per
/// output token, B = weights / (r f_p / (F/W) - S kv), and decode reaches f_d / (r f_p) of
/// the compute roofline (f_d = 2 N + a kv S; 1 / r when a = 0).
struct PhaseInference {
  double output_to_input_ratio = 0;  ///< r = output price / input price
  bool output_costs_more = false;    ///< r > 1: decode (output) is the dearer, memory-bound phase
  Estimate<double> decode_fraction_of_compute_roofline;   ///< f_d / (r f_p)
  Estimate<BytesPerToken> decode_bytes_per_output_token;  ///< r f_p / (F/W)
  /// weights / (bytes per output token - S kv); empty when the KV fetch alone explains r.
  std::optional<Estimate<double>> implied_decode_batch;
  bool implied_batch_partial = false;  ///< some corners of the range had no finite batch
};
/// `step_threshold_tokens`: the sheet's price step S*, so that kv (a) moves with N, F/W
/// and a at each corner of the range; empty: kv is a.kv_bytes_per_token.
/// Throws InputError unless both prices are positive.
PhaseInference infer_phases(UsdPerToken input, UsdPerToken output, const InferenceAssumptions& a,
                            std::optional<int64_t> step_threshold_tokens);

/// (c) A cache hit fetches stored KV instead of recomputing it (lecture 1:48:52-1:51:19).
/// q = read price / input price. Fetching a token's KV from HBM costs kv / W of chip time
/// against f_p / F to recompute it (b): a ratio kv (F/W) / f_p. The price q is met if the
/// KV streams at kv (F/W) / (f_p q) of HBM bandwidth, i.e. from a tier that slow.
struct CacheReadInference {
  double read_to_input_ratio = 0;                  ///< q
  Estimate<double> hbm_fetch_to_recompute_cost;    ///< kv (F/W) / f_p
  Estimate<double> implied_fetch_fraction_of_hbm;  ///< kv (F/W) / (f_p q)
  Estimate<BytesPerSecond> implied_fetch_bandwidth_per_chip;  ///< that fraction of `hbm_per_chip`
};
/// With kv from a price step and a = 0, kv (F/W) / (2 N) = 1 / S*: the HBM fetch is S*
/// times cheaper than the recompute, whatever N and F/W. Throws InputError unless
/// input > 0 and read > 0.
CacheReadInference infer_cache_read(UsdPerToken input, UsdPerToken read, const InferenceAssumptions& a,
                                    std::optional<int64_t> step_threshold_tokens, BytesPerSecond hbm_per_chip);

enum class TierKind { hbm, dram, flash, disk };
std::string_view to_string(TierKind k);

/// A memory tier with its cost of holding a byte.
struct TierSpec {
  std::string name;
  TierKind kind = TierKind::hbm;
  Bytes capacity_per_chip;
  BytesPerSecond bandwidth_per_chip;
  Seconds sweep_time;  ///< capacity / bandwidth: the time to read the tier once
  std::optional<Estimate<UsdPerByteSecond>> cost;  ///< empty: HBM of a chip with no price
  std::string source;
  bool assumed = false;  ///< not in the system's catalog entry
};

/// HBM (cost: chip price x share / capacity), the system's host tiers (SystemSpec::
/// host_tiers; kind read from the name: DDR, flash/NVMe/SSD, disk/HDD), then an assumed
/// flash tier if none is listed and an assumed disk. Ordered fastest first.
std::vector<TierSpec> memory_tiers(const SystemSpec& s, std::optional<UsdPerSecond> price_per_chip,
                                   const TierCostAssumptions& a);

/// Storage price per token-second implied by a cache write's premium over input:
/// (write - input) / duration. Anthropic Opus 4.6, 5 minutes: (6.25 - 5) / 300 s = $15 per
/// 1M tokens per hour. Empty when the write costs no more than input.
std::optional<UsdPerTokenSecond> storage_price_from_write(UsdPerToken input, const CacheWrite& w);

/// One tier judged against one storage price.
struct TierFit {
  TierSpec tier;
  std::optional<Estimate<double>> price_to_cost;       ///< (price / kv) / tier cost
  std::optional<Estimate<BytesPerToken>> breakeven_kv; ///< price / tier cost: KV at which price = cost
  bool covers_cost = false;         ///< price per byte-hour >= tier cost (central values)
  bool readable_within_duration = false;  ///< sweep_time <= duration
};

/// (d) Which tier fits a cache price (lecture 1:56:22-2:03:48). By cost: the dearest tier
/// whose cost per byte-hour the price (price per token-hour / kv) still covers, since
/// providers price near cost. By duration: the slowest (cheapest per byte) tier that can
/// read all it holds within the hold time (sweep <= duration); a slower tier runs out of
/// bandwidth before capacity, the reasoning of Gray and Putzolu's five-minute rule (1987).
struct StorageInference {
  std::string basis;  ///< "storage price" or "5-min cache write premium"
  UsdPerTokenSecond price;
  Seconds duration;
  Estimate<UsdPerByteSecond> price_per_byte;  ///< price / kv
  std::vector<TierFit> tiers;
  std::string tier_by_cost;      ///< empty: the price is below every tier's cost
  std::string tier_by_duration;  ///< empty: no tier can be read within the duration
};
StorageInference infer_storage_tier(const std::string& basis, UsdPerTokenSecond price, Seconds duration,
                                    const Estimate<BytesPerToken>& kv, const std::vector<TierSpec>& tiers);

/// The batch at which cost per decode token stops falling: the smallest B whose step is
/// compute-bound, or, if the largest that fits in HBM at `context` comes first, the cheapest
/// batch up to it (cheapest_decode_point: the largest, unless the engine pads it up to a
/// larger CUDA graph) (lecture 15:53-19:52; cost per token ~ t_step / B). Throws InputError
/// for context < 0.
int64_t cost_optimal_decode_batch(const Deployment& d, int64_t context);

/// (e) A price multiple m read as a batch change on the latency-cost frontier (lecture
/// 0:00, "fast mode": 6x the price for ~2.5x the speed). Cost per token ~ t_step(B) / B
/// (decode_step); the batch whose cost is m times the base batch's, and the speedup
/// t_step(B0) / t_step(B) it buys. m > 1 searches B < B0, m < 1 searches B > B0 up to the
/// largest batch that fits. The deployment's model stands in for the provider's.
struct MultipleInference {
  std::string tier;   ///< "fast", "priority", "flex", "batch", "off-peak"
  double multiple = 1;  ///< output price / standard output price
  int64_t base_batch = 0;
  int64_t context = 0;
  Estimate<double> batch;    ///< over base batch B0/2 .. 2 B0
  Estimate<double> speedup;  ///< tokens/s per user vs the base batch
  double achieved_multiple = 1;  ///< the cost multiple at `batch.value`
  bool reachable = false;  ///< batching alone reaches the multiple
  std::optional<double> stated_speedup;
  /// The cost multiple batching needs to buy the stated speedup; empty: out of reach by
  /// batching alone (more chips per replica or speculative decoding would be needed).
  std::optional<double> cost_multiple_for_stated_speedup;
};
MultipleInference infer_multiple(const Deployment& d, const std::string& tier, double multiple, int64_t base_batch,
                                 int64_t context, std::optional<double> stated_speedup = std::nullopt);

/// (f) The context at which one sequence's KV fetch alone fills a decode step's time
/// budget (lecture 1:52:26-1:54:39): S = budget x W / kv, with W the bandwidth of the
/// chips holding one replica; and the context at which one sequence's KV fills their HBM
/// beside the weights: S = (HBM x (1 - reserve) - weights) / kv.
struct ContextCeiling {
  Seconds step_budget;
  BytesPerSecond replica_bandwidth;
  Estimate<double> bandwidth_ceiling_tokens;
  std::optional<Estimate<double>> capacity_ceiling_tokens;  ///< empty: weights alone fill HBM
};
ContextCeiling context_ceiling(const Estimate<BytesPerToken>& kv, const Deployment& d, const InferenceAssumptions& a);

/// Every inference from one sheet.
struct PriceInference {
  std::string sheet;
  std::optional<LongContextTier> step;  ///< the first long-context tier, if any
  Estimate<BytesPerToken> kv_bytes_per_token;  ///< (a) from the step, else the assumption
  bool kv_from_step = false;
  PhaseInference phases;                                   ///< (b)
  std::optional<CacheReadInference> cache_read;            ///< (c)
  std::vector<StorageInference> storage;                   ///< (d) per storage price or write
  std::vector<MultipleInference> multiples;                ///< (e) per tier, batch, off-peak
  ContextCeiling ceiling;                                  ///< (f)
};

/// Runs (a)-(f) for `s`. `d` supplies the chip for (c), the tiers for (d), the model that
/// stands in for the provider's in (e) and the replica's bandwidth for (f). Throws
/// InputError for an invalid sheet (validate) or invalid assumptions (validate below).
PriceInference infer_prices(const PriceSheet& s, const InferenceAssumptions& a, const Deployment& d);

/// Checks an InferenceAssumptions: every range ordered low <= value <= high and positive
/// (attention FLOPs per KV byte may be 0 and must stay below the low F/W; the HBM share is
/// at most 1). Throws InputError naming the flag ("--active-params").
void validate(const InferenceAssumptions& a);

/// One figure of a PriceInference, flattened for tables: `quantity` carries its unit
/// suffix ("kv_bytes_per_token", "implied_fetch_gb_per_s_per_chip").
struct InferenceFigure {
  std::string inference;  ///< "a".."f"
  std::string subject;    ///< what it is about ("", "fast", "5-min cache write / HBM")
  std::string quantity;
  Estimate<double> figure;
  std::string note;
};
std::vector<InferenceFigure> inference_figures(const PriceInference& p);

/// An InferenceFigure's `quantity` key in words, with its unit, for the table people read
/// ("kv_bytes_per_token" -> "KV bytes per token"); JSON and CSV keep the key (issue 30 item 7).
/// The meanings are docs/prices.md's, section by section (a)-(f). A key it does not know
/// comes back unchanged.
std::string quantity_words(std::string_view key);

// ---------------------------------------------------------------------------------------
// The forward direction

struct ForwardAssumptions {
  int64_t decode_batch = 0;            ///< 0 = cost_optimal_decode_batch
  int64_t decode_context_tokens = 4096;  ///< S of the decode step
  int64_t prompt_tokens = 4096;        ///< each prefilled prompt has this many tokens
  /// Prompts prefilled in the step that prices input; 0 = fill the layout: one per
  /// data-parallel attention group with mechanisms (n / tp_attention; every chip when KV is
  /// split by batch), else 1. A single prompt on a data-parallel layout leaves every other
  /// rank idle while the replica's n chips are billed.
  int64_t prefill_batch = 0;
  double utilization = 0.5;            ///< billable fraction of chip time, (0, 1]
  double gross_margin = 0.5;           ///< price = cost / (utilization (1 - margin)), [0, 1)
};

/// The prices a model on a system implies.
struct ForwardPrices {
  std::string model, system;
  int64_t n_chips = 1;
  ForwardAssumptions assumptions;
  double markup = 1;  ///< 1 / (utilization (1 - gross_margin))
  int64_t decode_batch = 0;
  int64_t prefill_batch = 1;  ///< prompts in the prefill step that prices input
  DecodeStep decode;
  PrefillStep prefill;
  BytesPerToken kv_bytes_per_token;  ///< the model's, at decode_context_tokens
  UsdPerToken input_cost, output_cost;  ///< at full utilization and no margin
  UsdPerToken input, output;            ///< cost x markup
  UsdPerToken cache_read;               ///< streaming a token's KV from HBM, x markup
  UsdPerTokenSecond storage_hbm;        ///< holding a token's KV in HBM, x markup
  /// The context where a decode token's KV fetch time equals its compute time (the step
  /// (a) reads); empty if the KV fetch never catches up (sliding windows, MLA on a chip
  /// with F/W below the absorbed attention's FLOPs per KV byte).
  std::optional<int64_t> long_context_threshold_tokens;
  bool memory_fits = true;  ///< weights and the batch's KV fit in HBM
};

/// Forward prices (DESIGN.md section 1: cost per token = n price t_step / B):
/// input = n price t_prefill(1, P) / P, output = n price t_step(B, S) / B,
/// cache read = n price (kv / (n W eff)), storage = price / HBM capacity x kv, each times
/// markup. Input uses a prefill of prefill_batch prompts (default: one per data-parallel
/// attention group, so the layout is full). Throws InputError when the system has no price
/// ("--price-usd-per-chip-hour"), when the weights do not fit in the replica's HBM (no
/// price for a deployment that cannot run: "--chips"), or for out-of-range assumptions.
ForwardPrices forward_prices(const Deployment& d, const ForwardAssumptions& a);

/// The context S* where decode_step(d, 1, S) has t_kv = t_compute; empty if none below 2^34.
std::optional<int64_t> kv_compute_crossover_context(const Deployment& d);

/// A sheet of forward prices, to feed back to the inverse: a long-context tier at S*
/// priced at 2 S* (decode at its cost-optimal batch, prefill of 2 S* tokens).
PriceSheet to_price_sheet(const ForwardPrices& f, const Deployment& d);

}  // namespace chalk
