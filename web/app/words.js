// The page's words for the API's keys: a tile says "MFU 64.1%", never "mfu 0.6408
// fraction" (issue 30 item 6). The keys and their units are docs/output-schema.md's; the
// values shown are the API's own (the tile keeps the raw number in data-value).
const WORDS = {
  t_step_s: 'step time', bubble_fraction: 'pipeline bubble', mfu: 'MFU', tok_per_s: 'throughput',
  activations_gb: 'activations per chip', total_gb: 'memory per chip',
  hbm_total_gb: 'HBM of the replica', weights_gb: 'weights', kv_cache_gb: 'KV cache', reserve_gb: 'reserve',
  max_batch_at_context: 'largest batch at this context',
  cost_usd_per_mtok: 'cost', tok_per_s_per_user: 'speed per user', tok_per_s_per_chip: 'throughput per chip',
  kv_bytes_per_token: 'KV cache per token', output_to_input_price_ratio: 'output / input price',
  decode_bytes_per_output_token: 'bytes read per output token', decode_fraction_of_compute_roofline: 'decode share of the compute roofline',
};

/// "mfu" -> "MFU"; a key without words of its own reads as its words ("t_step_s" would be "t step s").
export const words = (key) => WORDS[key] ?? key.replace(/_/g, ' ');

/// The unit as people write it: fractions become percentages (handled by display), a ratio
/// needs none ("4" times), "USD per 1M tokens" is "$/Mtok".
const UNITS = { fraction: '%', ratio: 'x', 'USD per 1M tokens': '$/Mtok', 'bytes per token': 'bytes/token' };
export const unitWords = (unit) => UNITS[unit] ?? unit;

/// `prices infer`'s quantities in the words its text table prints (quantity_words,
/// src/prices/price_figures.cc; the JSON carries the key). The browser test checks each label
/// the page shows against the CLI's table, so the two cannot drift apart unseen.
const QUANTITY_WORDS = {
  price_step_threshold_tokens: 'price step threshold (tokens)', kv_bytes_per_token: 'KV bytes per token',
  output_to_input_price_ratio: 'output / input price', decode_fraction_of_compute_roofline: 'decode share of compute roofline',
  decode_bytes_per_output_token: 'decode bytes per output token', implied_decode_batch: 'implied decode batch',
  cache_read_to_input_price_ratio: 'cache read / input price', hbm_fetch_to_recompute_cost_ratio: 'HBM fetch / recompute cost',
  implied_fetch_fraction_of_hbm_bandwidth: 'implied fetch share of HBM bandwidth', implied_fetch_gb_per_s_per_chip: 'implied fetch GB/s per chip',
  storage_usd_per_mtok_per_hour: 'storage $ per Mtok-hour', hold_s: 'hold (s)', storage_usd_per_gb_hour: 'storage $ per GB-hour',
  sweep_s: 'tier sweep time (s)', tier_cost_usd_per_gb_hour: 'tier cost $ per GB-hour', price_to_cost_ratio: 'price / cost',
  breakeven_kv_bytes_per_token: 'break-even KV bytes per token', price_multiple: 'price multiple', speedup: 'speed-up per user',
  stated_speedup: 'stated speed-up', cost_multiple_for_stated_speedup: 'cost multiple for stated speed-up',
  step_budget_ms: 'step budget (ms)', bandwidth_ceiling_tokens: 'bandwidth ceiling (tokens)', capacity_ceiling_tokens: 'capacity ceiling (tokens)',
};
export const quantityWords = (key) => QUANTITY_WORDS[key] ?? key.replace(/_/g, ' ');

/// A ranked layout's label: "#2 TP4 x 2 replicas", the replicas counted once (review 3 L8:
/// "#2 TP4 x 2 replicas x2"); a layout whose name does not count them gets "xN" (N > 1).
export const layoutName = (l) => `#${l.rank} ${l.layout}${l.replicas > 1 && !/replica/.test(l.layout) ? ` x${l.replicas}` : ''}`;
