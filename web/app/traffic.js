// The traffic view's pure helpers (app.js's updateSimulation): the rate the page opens at
// and the LoRA adapters' cost in words, both read off `chalk simulate`'s JSON.

/// The rate the page opens at when the user has not chosen one: the default 2 req/s, or, where
/// that overloads the deployment (the page once opened on Llama 3.1 70B at 4 req/s, about 3.0
/// its 8 H100 serve, and drew TTFT of 12 s), the largest power of two at most 80% of the
/// capacity the API reports (details[].capacity_req_per_s, chalk/sim/cluster.h), floored at
/// the slider's 1/4 req/s (`overloadedStill` when even that exceeds the capacity). Null when
/// the rate stands.
export function rateBelowCapacity(j, rate) {
  const d = j.details?.[0];
  if (!d?.overloaded || !(d.capacity_req_per_s > 0)) return null;
  const r = Math.max(0.25, 2 ** Math.floor(Math.log2(0.8 * d.capacity_req_per_s)));
  return r < rate ? { rate: r, capacity: d.capacity_req_per_s, overloadedStill: r >= d.capacity_req_per_s } : null;
}

/// The adapters' cost in words, from simulate's details[].lora (docs/output-schema.md).
export function loraWords(l) {
  if (!l) return '';
  return `; LoRA ${l.adapters} adapters of rank ${l.lora_rank}, ${Number((l.adapter_bytes / 1e6).toPrecision(4))} MB each, ${l.max_loras} in HBM: ` +
    `${l.adapter_loads} loads, ${Number(l.lora_gemm_s.toPrecision(3))} s of multi-adapter GEMM`;
}

/// Where the run fell behind its traffic (simulate's details[].keeps_up false, the API's
/// FALLS BEHIND warning; review 11 H1): " of the N tok/s offered" beside the output served.
export function offeredWords(d) {
  if (d?.keeps_up !== false) return '';
  return ` of the ${Number(d.offered_output_tok_per_s.toPrecision(4)).toLocaleString('en-US')} tok/s offered`;
}
