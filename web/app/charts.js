// Vega-Lite specs for the page's views. Labels never overprint: axes thin their labels
// (labelOverlap) and print numbers as people write them, with thousands separators and no
// SI letters ("1,024" sequences, "0.4" s, "500" GB: issue 30 item 6 found "1.024k",
// "400m" and "0.5k" on axes whose unit is in the title); legends list only the terms that
// are drawn (all-zero terms are dropped first), sit under the plot, and are never cut
// short (labelLimit 0); marks that need a name get a legend entry instead of a text label
// laid over the plot. Each chart with its axes and legend fits a 470 px column (style.css).
export const NUMBER = ',.12~g';
const AXIS = { labelOverlap: 'greedy', labelFlush: true, labelSeparation: 6, grid: true, format: NUMBER };
const LEGEND = { title: null, orient: 'bottom', direction: 'horizontal', labelLimit: 0 };
const WIDTH = 380;
const HEIGHT = 220;

const TERM_LABELS = {
  t_compute_ms: 'compute', t_weights_ms: 'weight fetch', t_kv_ms: 'KV fetch', t_comm_ms: 'communication',
  t_overhead_ms: 'kernel floor', t_host_ms: 'host (CPU)', t_step_ms: 'step (total)',
  cost_compute_usd_per_mtok: 'compute', cost_weights_usd_per_mtok: 'weight fetch', cost_kv_usd_per_mtok: 'KV fetch',
  cost_comm_usd_per_mtok: 'communication', cost_overhead_usd_per_mtok: 'kernel floor', cost_usd_per_mtok: 'total',
  t_stage_ms: 'one pipeline stage', t_hop_ms: 'stage-to-stage hop',
};

/// Long rows {x, term, value, fits} for the terms that are drawn: a term that is zero (or
/// missing) everywhere is left out, so the legend names only lines on the chart. `fits` is the
/// row's memory_fits (true where the API leaves it out), for termChart to grey the rest.
export function termRows(rows, xKey, keys) {
  const drawn = keys.filter((k) => rows.some((r) => typeof r[k] === 'number' && r[k] > 0));
  const out = [];
  for (const r of rows) for (const k of drawn) if (typeof r[k] === 'number' && r[k] > 0) out.push({ x: r[xKey], key: k, term: TERM_LABELS[k] || k, value: r[k], fits: r.memory_fits !== false });
  return { rows: out, drawn: drawn.map((k) => TERM_LABELS[k] || k) };
}

/// The largest x whose row fits in HBM, or null when every row fits (nothing to mark) or none
/// does (the whole chart is grey; the title says so).
export function fitLimit(rows, xKey) {
  if (rows.every((r) => r.memory_fits !== false)) return null;
  const fit = rows.filter((r) => r.memory_fits !== false).map((r) => r[xKey]);
  return fit.length ? Math.max(...fit) : 0;
}

/// Terms against x on log-log axes. Points past HBM (issue 30 M3: the cost curve ran on to
/// batch 65,536 where 324 fit) are grey dots off the lines, and `limit` (fitLimit's x) is a
/// red rule, and `limitTitle` (the caller's words for it) the chart's title, as memoryChart
/// names its HBM line.
export function termChart(long, xTitle, yTitle, marker, limit = null, limitTitle = '') {
  const line = (filter, extra) => ({
    transform: [{ filter }],
    mark: { type: 'line', point: { size: 18 }, ...extra },
    encoding: {
      x: { field: 'x', type: 'quantitative', scale: { type: 'log', base: 2 }, title: xTitle, axis: { ...AXIS, tickCount: 8 } },
      y: { field: 'value', type: 'quantitative', scale: { type: 'log' }, title: yTitle, axis: { ...AXIS, tickCount: 6 } },
      color: { field: 'term', type: 'nominal', scale: { domain: long.drawn }, legend: { ...LEGEND, columns: 4 } },
      strokeWidth: { condition: { test: "datum.term === 'step (total)' || datum.term === 'total'", value: 3 }, value: 1.5 },
      tooltip: [{ field: 'term' }, { field: 'x', title: xTitle }, { field: 'value', title: yTitle, format: '.4~g' }, { field: 'fits', title: 'fits in HBM' }],
    },
  });
  const layers = [line('datum.fits')];
  if (long.rows.some((r) => !r.fits)) {
    const grey = line('!datum.fits', { opacity: 0.35, strokeDash: [2, 3] });
    grey.mark.point = { size: 14, color: '#9e9e9e' };
    grey.mark.color = '#9e9e9e';
    grey.encoding.color = { value: '#9e9e9e' };
    grey.encoding.detail = { field: 'term', type: 'nominal' };
    layers.push(grey);
  }
  if (marker !== undefined) {
    layers.push({ data: { values: [{ x: marker }] }, mark: { type: 'rule', strokeDash: [4, 3], color: '#555' }, encoding: { x: { field: 'x', type: 'quantitative' } } });
  }
  const spec = { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', width: WIDTH, height: HEIGHT, data: { name: 'rows', values: long.rows }, layer: layers };
  if (limit !== null) {
    if (limit > 0) layers.push({ data: { name: 'limit', values: [{ x: limit }] }, mark: { type: 'rule', color: '#b71c1c', strokeWidth: 2 }, encoding: { x: { field: 'x', type: 'quantitative' } } });
    spec.title = { text: limitTitle, color: '#b71c1c', fontSize: 11, fontWeight: 'normal', anchor: 'start' };
  }
  return spec;
}

/// Frontier: tok/s per user against cost; the modes are points with a legend entry each.
export function frontierChart(points, modes) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json', width: WIDTH, height: HEIGHT,
    layer: [
      { data: { name: 'rows', values: points }, mark: { type: 'line', point: { size: 20 }, color: '#90a4ae' },
        encoding: {
          x: { field: 'tok_per_s_per_user', type: 'quantitative', title: 'tok/s per user', axis: AXIS },
          y: { field: 'cost_usd_per_mtok', type: 'quantitative', scale: { type: 'log' }, title: 'USD per 1M output tokens', axis: AXIS },
          tooltip: [{ field: 'chips' }, { field: 'batch' }, { field: 'tok_per_s_per_user', format: '.4~g' }, { field: 'cost_usd_per_mtok', format: '.4~g' }, { field: 'layout' }],
        } },
      { data: { name: 'modes', values: modes }, mark: { type: 'point', filled: true, size: 140 },
        encoding: {
          x: { field: 'tok_per_s_per_user', type: 'quantitative' }, y: { field: 'cost_usd_per_mtok', type: 'quantitative' },
          shape: { field: 'mode', type: 'nominal', legend: { ...LEGEND, columns: 2 } },
          color: { field: 'mode', type: 'nominal', legend: { ...LEGEND, columns: 2 } },
          tooltip: [{ field: 'mode' }, { field: 'batch' }, { field: 'chips' }, { field: 'tok_per_s_per_user', format: '.4~g' }, { field: 'cost_usd_per_mtok', format: '.4~g' }],
        } },
    ],
    resolve: { scale: { color: 'independent', shape: 'independent' } },
  };
}

/// Stacked bar of memory components with the limit as a rule, named in the chart's title
/// (a label inside the plot would print over the bars).
export function memoryChart(parts, limit, limitLabel, unit = 'GB') {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json', width: WIDTH, height: 70,
    title: { text: `red line: ${limitLabel}`, color: '#b71c1c', fontSize: 11, fontWeight: 'normal', anchor: 'start' },
    layer: [
      { data: { name: 'rows', values: parts }, mark: 'bar',
        encoding: {
          x: { field: 'gb', type: 'quantitative', stack: 'zero', title: unit, axis: AXIS, scale: { domainMax: Math.max(limit * 1.15, parts.reduce((a, p) => a + p.gb, 0) * 1.05) } },
          color: { field: 'component', type: 'nominal', sort: parts.map((p) => p.component), scale: { domain: parts.map((p) => p.component) }, legend: { ...LEGEND, columns: 2 } },
          order: { field: 'order', type: 'quantitative' },
          tooltip: [{ field: 'component' }, { field: 'gb', title: unit, format: '.4~g' }],
        } },
      { data: { name: 'limit', values: [{ gb: limit, label: limitLabel }] }, mark: { type: 'rule', color: '#b71c1c', strokeWidth: 2 }, encoding: { x: { field: 'gb', type: 'quantitative' } } },
    ],
  };
}

/// Ranked horizontal bars: one row per item, names on the axis (never over the bars).
export function rankedChart(rows, nameKey, valueKey, title) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json', width: 170, height: { step: 16 },
    data: { name: 'rows', values: rows },
    mark: 'bar',
    encoding: {
      y: { field: nameKey, type: 'nominal', sort: null, title: null, axis: { labelLimit: 300 } },
      x: { field: valueKey, type: 'quantitative', title, axis: AXIS },
      color: { field: 'fits', type: 'nominal', scale: { domain: [true, false], range: ['#1976d2', '#bdbdbd'] }, legend: null },
      tooltip: rows.length ? Object.keys(rows[0]).map((k) => ({ field: k })) : [],
    },
  };
}

/// Latency percentiles under traffic (chalk simulate): one bar per percentile, TTFT and
/// TPOT side by side on their own scales (TTFT is often 10-100x TPOT).
export function percentileChart(rows) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    data: { name: 'rows', values: rows },
    facet: { column: { field: 'metric', type: 'nominal', title: null } },
    spec: {
      width: 150, height: 140, mark: 'bar',
      encoding: {
        x: { field: 'percentile', type: 'nominal', title: null, sort: ['p50', 'p90', 'p99'], axis: { labelAngle: 0 } },
        y: { field: 'ms', type: 'quantitative', title: 'ms', axis: AXIS },
        color: { field: 'metric', type: 'nominal', legend: null },
        tooltip: [{ field: 'key' }, { field: 'ms', format: '.4~g' }],
      },
    },
    resolve: { scale: { y: 'independent' } },
  };
}
