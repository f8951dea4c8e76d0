// Where the page's curves and sliders stop (review 3): a sweep ends at the batch that fills
// HBM, and context or prompt never pass the model's limit.

/// The batch sweep's batches as the API's comma list: powers of two to 65,536 and the batch
/// that fills HBM at this context (chalk decode's max_batch_at_context), where the cost is
/// lowest (M3: the curves stopped at 64 where HBM holds 109).
export async function sweepBatches(api, fields, context) {
  const d = await api('/api/decode', { ...fields, batch: 1, context, explain: true });
  const full = d.explanations[0].figures.find((x) => x.key === 'max_batch_at_context')?.result;
  const b = Array.from({ length: 17 }, (_, i) => 2 ** i);
  if (full >= 1 && !b.includes(full)) b.push(full);
  return b.sort((x, y) => x - y).join(',');
}

/// The slider's top (log2 of tokens) and the value kept under it, for a model whose limit is
/// `most` tokens (undefined: 2^20, the slider's own top) (M5: it ran to 1M past 131,072).
export function capAtLimit(most, value) {
  const top = most ? Math.floor(Math.log2(most)) : 20;
  return { top, value: most && value > most ? 2 ** top : value };
}
