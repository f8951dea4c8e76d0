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
