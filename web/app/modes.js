// The frontier's mode tiles (app.js's updateFrontier) with their algebra: `chalk serving
// modes` prints each mode's point (chips, batch, step, cost) but no explanation, so each
// tile's is the serving sweep's cost formula (src/serving/explain_serving.cc,
// "cost_usd_per_mtok") over that point's own figures from the same answer: nothing here is
// priced by the page (review 6 M10: the four tiles opened nothing on click).

const sig = (v) => Number(v.toPrecision(4)).toLocaleString('en-US', { maximumSignificantDigits: 4 });

/// The explanation of mode point `p` (a `modes` entry or row: chips, batch, t_step_ms, pp,
/// layout, cost_usd_per_mtok) under the answer's `assumptions` (price and its source);
/// null where the point has no cost (no price for the system).
export function modeExplanation(label, p, assumptions) {
  const price = assumptions?.price_usd_per_chip_hour;
  if (typeof p.cost_usd_per_mtok !== 'number' || typeof price !== 'number') return null;
  const tokPerHour = 3600 * p.batch / (p.t_step_ms / 1e3);
  const step = p.pp > 1 ? 'the pipeline cycle between a user\'s tokens (every stage once)' : 'the decode step';
  return {
    key: 'cost_usd_per_mtok',
    quantity: `${label}: what a million output tokens cost in chip rental at batch ${p.batch.toLocaleString('en-US')} on ${p.chips} chips (${p.layout})`,
    formula: 'cost per 1M tokens = price per chip-hour x n / (tokens per hour / 1e6); tokens per hour = 3600 B / T_step',
    inputs: [
      { symbol: 'price', name: 'rental price per chip-hour', value: price, unit: 'USD/hour', source: assumptions.price_source ?? '--price-usd-per-chip-hour' },
      { symbol: 'n', name: 'chips in the replica', value: p.chips, unit: 'chips', source: 'chalk serving modes: this point' },
      { symbol: 'B', name: 'sequences per step', value: p.batch, unit: 'sequences', source: 'chalk serving modes: this point' },
      { symbol: 'T_step', name: step, value: p.t_step_ms, unit: 'ms', source: 'chalk serving modes: the engine step at this point' },
    ],
    substituted: `$${sig(price)} x ${p.chips} / (3600 x ${p.batch} / ${sig(p.t_step_ms)} ms / 1e6) = $${sig(price * p.chips / (tokPerHour / 1e6))} per 1M tokens`,
    result: p.cost_usd_per_mtok,
    unit: 'USD per 1M tokens',
    source: 'lecture 7:46 (cost per token); docs/formulas.md, Serving economics',
    note: '',
  };
}
