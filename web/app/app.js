// The blackboard in a browser: controls -> the JSON API (the CLI's --json) -> charts.
// Page state lives in the URL (?model=...&batch=...), so a view can be shared.
import { api } from './api.js';
import { termRows, termChart, fitLimit, frontierChart, memoryChart, rankedChart, percentileChart } from './charts.js';
import { numberButtons, hideExplanation } from './explain.js';
import { updateTraining } from './training.js';
import { words, layoutName } from './words.js';
import { rateBelowCapacity, loraWords, offeredWords } from './traffic.js';
import { sweepBatches, capAtLimit } from './limits.js';
import { chooseReplica, frontierSizes, chipsSource } from './replica.js';
import { modeExplanation } from './modes.js';
import { pipelineDecode, pipelineSweep, PIPE_STEP_TERMS, stagesWords } from './pipeline.js';
import { planView } from './plan.js';
import { updatePrices, updateHosts } from './prices.js';

const $ = (id) => document.getElementById(id);
const DEFAULTS = { model: 'llama-3.1-70b', hardware: 'h100-sxm', chips: 0, batch: 64, context: 4096, prompt: 8192, weights: '', kv: 'bf16', sheet: 'gemini-1.5-pro', train_chips: 1024, rate: 2, lora: '' };
const state = { ...DEFAULTS, upload: null };
const chalk = (window.chalk = { state, views: {}, data: {}, updates: 0, errors: [], chips: 0, rateAuto: true });

// Sliders move in powers of two; the URL holds the values themselves.
const log2 = (v) => Math.round(Math.log2(v));
const SLIDERS = {
  batch: { toValue: (k) => 2 ** k, toSlider: log2 },
  context: { toValue: (k) => 2 ** k, toSlider: log2 },
  prompt: { toValue: (k) => 2 ** k, toSlider: log2 },
  chips: { toValue: (k) => (k === 0 ? 0 : 2 ** (k - 1)), toSlider: (v) => (v === 0 ? 0 : log2(v) + 1) },
  train_chips: { toValue: (k) => 2 ** k, toSlider: log2 },
  rate: { toValue: (k) => 2 ** k, toSlider: log2 },
};

function readUrl() {
  const q = new URLSearchParams(location.search);
  for (const k of Object.keys(DEFAULTS)) {
    if (!q.has(k)) continue;
    if (k === 'rate') chalk.rateAuto = false;  // a rate the user chose (a shared URL) is kept, overloaded or not
    const v = q.get(k);
    state[k] = typeof DEFAULTS[k] === 'number' ? Number(v) : v;
  }
}

function writeUrl() {
  const q = new URLSearchParams();
  for (const k of Object.keys(DEFAULTS)) if (state[k] !== DEFAULTS[k]) q.set(k, state[k]);
  history.replaceState(null, '', q.toString() ? `?${q}` : location.pathname);
}

function syncControls() {
  // Context and prompt stop at the model's limit (review 3 M5: the slider ran to 1M past 131,072).
  const most = chalk.maxContext?.get(state.upload ?? state.model);
  for (const k of ['context', 'prompt']) ({ top: $(k).max, value: state[k] } = capAtLimit(most, state[k]));
  for (const [k, s] of Object.entries(SLIDERS)) {
    $(k).value = s.toSlider(state[k]);
  }
  for (const k of ['model', 'hardware', 'weights', 'kv', 'sheet', 'lora']) if (!state.upload || k !== 'model') $(k).value = state[k];
  $('batch-out').value = state.batch.toLocaleString('en-US');
  $('context-out').value = state.context.toLocaleString('en-US');
  $('prompt-out').value = state.prompt.toLocaleString('en-US');
  $('chips-out').value = state.chips === 0 ? (chalk.replica?.label || 'cheapest') : state.chips;  // the replica chosen, kept when the rate is lowered
  $('train-chips-out').value = state.train_chips.toLocaleString('en-US');
  $('rate-out').value = `${state.rate.toLocaleString('en-US')} req/s`;
}

/// The fields every deployment shares, named as the API documents them (the flags in snake_case). Chips: the slider's, or
/// else the replica chooseChips() read (0 until then: the command's own default); `stages`: with its pipeline stages
/// (pp) where it has them, for the commands that price a pipeline (decode, prefill, serving sweep).
function deployment({ chips = true, stages = false } = {}) {
  const f = { hardware: state.hardware, kv_dtype: state.kv };
  if (state.upload) f.model_config = state.upload; else f.model = state.model;
  if (state.weights) f.weights = state.weights;
  const n = state.chips > 0 ? state.chips : chalk.chips;
  if (chips && n > 0) f.chips = n;
  if (chips && stages && state.chips === 0 && chalk.pp > 1) f.pp = chalk.pp;
  return f;
}

/// With the chips slider at "cheapest", every view prices the replica replica.js chooses, read
/// once per update (with its pipeline stages where the CLI prices them: chalk.pp > 1).
async function chooseChips() {
  Object.assign(chalk, { chips: 0, pp: 1, replica: null, replica_choice: null, runner_up: null });
  if (state.chips > 0) return;
  $('chips-out').value = 'cheapest';
  const priced = !chalk.priced || chalk.priced.has(state.hardware);
  const r = (chalk.replica = await chooseReplica(api, deployment({ chips: false }), state.batch, state.context, priced));
  Object.assign(chalk, { chips: r.chips, pp: r.pp, replica_choice: r.replica_choice, runner_up: r.runner_up });
  if (r.label) $('chips-out').value = r.label;
}

/// Runs one view; a failure is recorded per view (chalk.errors) and shown once however many
/// views it stops: a bad URL (?model=nope) once printed the same error seven times.
async function view(name, fn) {
  try {
    await fn();
  } catch (e) {
    chalk.errors.push(`${name}: ${e.message}`);
    const shown = (chalk.shown ??= new Map());
    if (!shown.has(e.message)) shown.set(e.message, []);
    shown.get(e.message).push(name);
    $('error').textContent = [...shown].map(([m, views]) => `${m} (${views.join(', ')})`).join('\n');
  }
}

async function draw(name, el, spec) {
  const res = await vegaEmbed(el, spec, { actions: false, renderer: 'svg' });
  chalk.views[name] = res.view;
}

async function updateDecode() {
  if (chalk.pp > 1) return pipelineDecode({ api, fields: deployment({ stages: true }), state, draw, data: chalk.data });
  const j = await api('/api/decode', { ...deployment(), batch: state.batch, context: state.context, explain: true });
  chalk.data.decode = j;
  const row = j.rows[0];
  const ex = Object.fromEntries(j.explanations[0].figures.map((x) => [x.key, chipsSource(x, state.chips, $('chips-out').value)]));
  numberButtons($('headline'), [
    { key: 't_step_ms', label: 'decode step', value: row.t_step_ms, unit: 'ms', explanation: ex.t_step_ms },
    { key: 't_step_roofline_ms', label: 'roofline (lower bound)', value: row.t_step_roofline_ms, unit: 'ms', explanation: ex.t_step_roofline_ms },
    { key: 't_compute_ms', label: 'compute', value: row.t_compute_ms, unit: 'ms', explanation: ex.t_compute_ms },
    { key: 't_weights_ms', label: 'weight fetch', value: row.t_weights_ms, unit: 'ms', explanation: ex.t_weights_ms },
    { key: 't_kv_ms', label: 'KV fetch', value: row.t_kv_ms, unit: 'ms', explanation: ex.t_kv_ms },
    { key: 'tok_per_s_per_user', label: 'per user', value: row.tok_per_s_per_user, unit: 'tok/s', explanation: ex.tok_per_s_per_user },
    { key: 'tok_per_s_per_chip', label: 'per chip', value: row.tok_per_s_per_chip, unit: 'tok/s', explanation: ex.tok_per_s_per_chip },
    { key: 'cost_usd_per_mtok', label: 'cost', value: row.cost_usd_per_mtok, unit: '$/Mtok', explanation: ex.cost_usd_per_mtok },
    { key: 'kv_bytes_per_token', label: 'KV per token', value: ex.kv_bytes_per_token.result, unit: 'bytes', explanation: ex.kv_bytes_per_token },
  ]);
  const p = await api('/api/prefill', { ...deployment(), prompt: state.prompt, explain: true });
  chalk.data.prefill = p;
  const pex = Object.fromEntries(p.explanations[0].figures.map((x) => [x.key, x]));
  const headline = $('headline');
  const extra = document.createElement('span');
  headline.appendChild(extra);
  numberButtons(extra, [{ key: 'ttft_ms', label: `TTFT, ${state.prompt.toLocaleString('en-US')}-token prompt`, value: p.rows[0].ttft_ms, unit: 'ms', explanation: pex.ttft_ms }]);
  extra.style.display = 'contents';
  // Memory at the chosen batch and context: weights, KV (batch x context x KV/token), reserve.
  const kvGb = ex.kv_cache_gb.result;  // memory_plan's KV at batch x context (chalk/engine/explain.h)
  const m = j.memory;
  const parts = [
    { component: 'weights', gb: m.weights_gb, order: 0 },
    { component: `KV cache (${state.batch} x ${state.context.toLocaleString('en-US')} tokens)`, gb: kvGb, order: 1 },
    { component: 'reserve (activations, runtime)', gb: m.reserve_gb, order: 2 },
  ];
  chalk.data.memory = { parts, limit: m.hbm_total_gb };
  numberButtons($('memory-numbers'), ['hbm_total_gb', 'weights_gb', 'kv_cache_gb', 'reserve_gb', 'max_batch_at_context'].filter((k) => ex[k])
    .map((k) => ({ key: k, label: words(k), value: ex[k].result, unit: ex[k].unit, explanation: ex[k] })));
  await draw('memory', '#view-memory', memoryChart(parts, m.hbm_total_gb, `HBM ${m.hbm_total_gb.toLocaleString('en-US', { maximumSignificantDigits: 4 })} GB`));
}

const STEP_TERMS = ['t_compute_ms', 't_weights_ms', 't_kv_ms', 't_comm_ms', 't_overhead_ms', 't_host_ms', 't_step_ms'];
const COST_TERMS = ['cost_compute_usd_per_mtok', 'cost_weights_usd_per_mtok', 'cost_kv_usd_per_mtok', 'cost_comm_usd_per_mtok', 'cost_overhead_usd_per_mtok', 'cost_usd_per_mtok'];

async function updateSweep() {
  if (chalk.pp > 1) return pipelineSweep({ api, fields: deployment({ stages: true }), state, draw, data: chalk.data });
  const batch = (chalk.data.sweepBatches = await sweepBatches(api, deployment(), state.context));
  const [j, bal] = await Promise.all([api('/api/serving/sweep', { ...deployment(), batch, context: state.context, explain: true }),
    api('/api/serving/balance', { ...deployment(), context: state.context, explain: true })]);
  chalk.data.sweep = j;
  chalk.data.balance = bal;
  // The chosen batch's speed and cost, and the balance batch, each with its algebra.
  const at = j.explanations.find((e) => e.batch === state.batch);
  const ax = at ? Object.fromEntries(at.figures.map((x) => [x.key, chipsSource(x, state.chips, $('chips-out').value)])) : {};
  const bx = Object.fromEntries(bal.explanations.map((x) => [x.key, x]));
  // A batch past HBM gets no price and no speed here (review 2 H3: "cost at batch 256 0.911
  // $/Mtok" beside a headline saying it does not fit): one tile says so.
  const atRow = j.rows.find((r) => r.batch === state.batch);
  const unfit = atRow && atRow.memory_fits === false;
  const b = state.batch.toLocaleString('en-US');
  numberButtons($('sweep-numbers'), [
    ...(unfit ? [{ key: 'cost_usd_per_mtok', label: `cost at batch ${b}`, value: null, unit: `$/Mtok: batch ${b} does not fit in HBM` }]
      : ['cost_usd_per_mtok', 'tok_per_s_per_user', 'tok_per_s_per_chip'].filter((k) => ax[k]).map((k) => ({ key: k, label: `${words(k)} at batch ${b}`, value: ax[k].result, unit: ax[k].unit, explanation: ax[k] }))),
    { key: 'lecture_batch_peak', label: 'balance batch B* (lecture)', value: bal.balance.lecture_batch_peak, unit: 'sequences', explanation: bx.lecture_batch_peak },
    // The first compute-bound batch is balance's batch_with_kv (KV fetch counted): none at a
    // context past context_never_compute_bound_tokens, where the KV grows as fast as compute.
    { key: 'batch_with_kv', label: 'first compute-bound batch', value: bal.balance.batch_with_kv, explanation: bx.batch_with_kv ?? bx.context_never_compute_bound_tokens,
      unit: bal.balance.batch_with_kv === null
        ? (bal.balance.context_never_compute_bound_tokens === null ? 'none at this context: memory-bound at every batch'
          : `none: memory-bound at every batch past ${bal.balance.context_never_compute_bound_tokens.toLocaleString('en-US')} tokens of context`)
        : 'sequences' },
  ]);
  // Past HBM (memory_fits false) the step is grey and the cost is cut: the API prices no row
  // that does not fit (cost_usd_per_mtok null), and a cost curve falling on to batch 65,536
  // where 324 fit read as a price one could get (issue 30, review M3).
  const limit = fitLimit(j.rows, 'batch');
  const fitting = j.rows.filter((r) => r.memory_fits !== false);
  const none = 'no batch fits in HBM at this context';
  await draw('step', '#view-step', termChart(termRows(j.rows, 'batch', STEP_TERMS), 'batch (sequences)', 'ms per step', state.batch, limit,
    limit ? 'red line: the last batch that fits in HBM; grey: past it' : `grey: ${none}`));
  await draw('cost', '#view-cost', termChart(termRows(fitting, 'batch', COST_TERMS), 'batch (sequences)', 'USD per 1M tokens', state.batch, limit,
    limit ? 'red line: the last batch that fits in HBM; past it, no price' : none));
}

async function updateContext() {
  // The axis stops at the model's max context (the API's model.max_context_tokens; 131,072 for
  // Llama 3.1, where the sweep once ran to 1M), and contexts past HBM at this batch are grey.
  // A built-in model's limit is in /api/models; an uploaded config's is learnt from the first answer.
  const key = state.upload ? state.upload : state.model;
  const max = chalk.maxContext.get(key) || 1048576;
  // An uploaded config's limit is not known yet: ask past it once (allowed, for study) to learn it.
  const probe = chalk.maxContext.has(key) ? {} : { allow_infeasible: true };
  const j = await api('/api/serving/sweep', { ...deployment({ stages: true }), batch: state.batch, context: `128:${max}`, ...probe });
  if (j.model?.max_context_tokens && j.model.max_context_tokens < max) {
    chalk.maxContext.set(key, j.model.max_context_tokens);
    return updateContext();
  }
  chalk.data.context = j;
  const limit = fitLimit(j.rows, 'context_tokens');
  await draw('context', '#view-context', termChart(termRows(j.rows, 'context_tokens', chalk.pp > 1 ? PIPE_STEP_TERMS : STEP_TERMS), `context (tokens; the model's limit is ${max.toLocaleString('en-US')})`, 'ms per step', state.context, limit,
    limit ? `red line: the last context that fits in HBM at batch ${state.batch.toLocaleString('en-US')}; grey: past it` : `grey: no context fits in HBM at batch ${state.batch.toLocaleString('en-US')}`));
}

async function updateFrontier() {
  const f = { ...deployment({ chips: false }), context: state.context };
  const { sizes, note } = frontierSizes(state.chips, chalk.replica);
  if (sizes) f.replica_chips = sizes.join(',');
  $('frontier-note').textContent = note;
  // The server's answer names --replica-chips; on the page that control is the chips slider.
  const [fr, modes] = await Promise.all([api('/api/serving/frontier', f), api('/api/serving/modes', f)]).catch((e) => {
    if (e.field === 'replica-chips' && state.chips > 0) throw new Error(`chips: a replica of ${state.chips} chips does not hold the model at this context; move the chips slider up, or to "cheapest"`);
    throw e;
  });
  chalk.data.frontier = fr;
  chalk.data.modes = modes;
  const m = modes.modes;
  const marked = [{ mode: 'slow mode (cost floor)', ...m.slow_mode.cheapest }, { mode: 'baseline', ...m.baseline }, { mode: 'fastest', ...m.fastest }];
  for (const fm of m.fast_mode || []) if (fm.point) marked.push({ mode: `fast mode (${fm.speed_multiple ?? ''}x speed)`, ...fm.point });
  await draw('frontier', '#view-frontier', frontierChart(fr.rows.filter((r) => r.on_frontier !== false), marked));
  numberButtons($('modes'), marked.map((p) => ({ key: p.mode, label: p.mode, value: p.cost_usd_per_mtok, unit: `$/Mtok at ${Number(p.tok_per_s_per_user.toPrecision(3))} tok/s/user`,
    explanation: modeExplanation(p.mode, p, modes.assumptions) })));
}

async function updateLayouts() {
  const f = { ...deployment({ chips: false }), context: state.context };
  if (state.chips > 0) f.chips = state.chips;
  const j = await api('/api/layouts', { ...f, explain: true });
  chalk.data.layouts = j;
  const why = j.explanations?.[0]?.figures?.[0];
  numberButtons($('layouts-numbers'), why ? [{ key: 'layout_winner', label: `why ${j.rows[0].layout} wins`, value: why.result, unit: 'tok/s per chip', explanation: why }] : []);
  const rows = j.rows.slice(0, 14).map((l) => ({ ...l, name: layoutName(l) }));
  await draw('layouts', '#view-layouts', rankedChart(rows, 'name', 'tok_per_s_per_chip', 'decode tok/s per chip'));
}

/// The price views (prices.js), on the page's model and system.
const prices = () => updatePrices({ base: deployment({ chips: false }), sheet: state.sheet, data: chalk.data });
const hosts = () => updateHosts({ upload: state.upload, model: state.model, hardware: state.hardware, data: chalk.data });

/// The training view (training.js): the plan from train layouts' JSON, never its text.
const training = () => updateTraining({
  base: { ...(state.upload ? { model_config: state.upload } : { model: state.model }), hardware: state.hardware },
  chips: state.train_chips, draw, data: chalk.data,
});

async function updateSimulation() {
  // --lora as typed (N:RANK[,zipf:S][,max-loras:M]...): the API names a bad spec in one line.
  const sent = deployment();
  const sim = (rate) => api('/api/simulate', { ...sent, rate, requests: 200, input: state.prompt, output: 200, ...(state.lora ? { lora: state.lora } : {}) });
  let j = await sim(state.rate);
  let lowered = '';
  const lower = chalk.rateAuto ? rateBelowCapacity(j, state.rate) : null;
  if (lower) {
    // Below the slider's lowest rate the page cannot go: say so rather than imply that rate is
    // served (review 2 L10: 405B on 8 H100, capacity 0.205 req/s, opened at 0.25, overloaded).
    lowered = `${state.rate.toLocaleString('en-US')} req/s overloads this deployment (capacity about ${Number(lower.capacity.toPrecision(3))} req/s): ` +
      (lower.overloadedStill
        ? `the page opens at the slider's lowest rate, ${lower.rate.toLocaleString('en-US')} req/s, which overloads it too; more chips or shorter prompts serve it`
        : `the page opens at ${lower.rate.toLocaleString('en-US')} req/s; move the rate slider to study overload`);
    state.rate = lower.rate;
    syncControls();
    writeUrl();  // the URL shares the rate the page chose
    j = await sim(state.rate);
  }
  const rate = state.rate;
  // The API's warnings (OVERLOADED with its capacity, and the rest) beside the chart, never hidden.
  // chalk simulate prices the stages the other views price (PP2 x (TP8) for 405B on 16 H100:
  // its "pipeline" object); only where its answer has other stages is that said (review 6 M1:
  // a note said it ran without stages, and had no --pp, where it ran PP2).
  const simStages = j.pipeline?.pp ?? 1;
  const stages = chalk.pp > 1 && simStages !== chalk.pp ? `simulated with ${simStages} pipeline stage${simStages === 1 ? '' : 's'} on ${chalk.chips} chips; the other views price ${stagesWords(chalk.replica_choice, chalk.chips)}` : '';
  $('sim-warnings').textContent = [lowered, stages, ...(j.warnings ?? [])].filter(Boolean).join('\n');
  chalk.data.simulate = j;
  chalk.data.simulate_rate = rate;
  const r = j.rows[0];
  const rows = [];
  for (const metric of ['ttft', 'tpot']) for (const p of ['p50', 'p90', 'p99']) rows.push({ metric: metric.toUpperCase(), percentile: p, key: `${metric}_${p}_ms`, ms: r[`${metric}_${p}_ms`] });
  // The scheduler simulated, with the knobs it ran at (issue 29 item 5; `chalk simulate --json`'s engine object).
  const e = j.engine;
  // The page's replica, as `chalk simulate -n N`, which the CLI without -n may size otherwise (docs/web.md): said.
  const own = sent.chips ? `the page's replica, as chalk simulate -n ${sent.chips}; without -n chalk simulate sizes one for this traffic` : 'chalk simulate\'s own choice for this traffic';
  $('sim-summary').textContent = `${j.traffic}; on ${r.replicas} x ${r.replica_chips} chips (${own}); ${r.finished} finished, ${r.rejected} rejected; output ${Number(r.output_tok_per_s.toPrecision(4)).toLocaleString('en-US')} tok/s${offeredWords(j.details?.[0])}; ` +
    `engine ${e.name}: ${e.max_batched_tokens.toLocaleString('en-US')} tokens a step, at most ${e.max_sequences.toLocaleString('en-US')} running, ${e.gpu_memory_utilization} of HBM for weights and KV` +
    loraWords(j.details?.[0]?.lora);
  await draw('simulate', '#view-simulate', percentileChart(rows));
}

// One update at a time: a control moved while one runs queues exactly one more, run after it
// with the newest state. Overlapping updates once let a slower, older one (h100) draw its
// frontier and layouts over a newer one's (h200); the views' results never mix now.
let running = false;
let queued = false;
async function updateOnce() {
  writeUrl();
  syncControls();
  $('error').textContent = '';
  chalk.errors = [];
  chalk.shown = new Map();
  await view('replica', chooseChips);
  chalk.plan?.budgetAtLeast(state.chips > 0 ? state.chips : chalk.chips);
  // A model or system the server does not know (a hand-edited URL) fails every view alike:
  // say it once, naming it, and run none of them.
  if (chalk.errors.length && /^(model|hardware|model_config): /.test(chalk.errors[0].replace(/^replica: /, ''))) {
    $('error').textContent = chalk.errors[0].replace(/^replica: /, '');
    return;
  }
  await Promise.all([
    view('decode', updateDecode), view('sweep', updateSweep), view('context', updateContext), view('frontier', updateFrontier),
    view('layouts', updateLayouts), view('prices', prices), view('hosts', hosts), view('training', training), view('simulate', updateSimulation),
  ]);
  chalk.plan?.refresh();
}
async function update() {
  document.body.dataset.state = 'busy';
  if (running) { queued = true; return; }
  running = true;
  try {
    do { queued = false; await updateOnce(); } while (queued);
  } finally {
    running = false;
  }
  chalk.updates += 1;
  document.body.dataset.updates = chalk.updates;
  document.body.dataset.state = 'ready';
}

let timer;
const later = () => { document.body.dataset.state = 'busy'; clearTimeout(timer); timer = setTimeout(update, 120); };

async function start() {
  readUrl();
  const [models, systems, sheets] = await Promise.all([api('/api/models'), api('/api/hardware'), api('/api/prices/list')]);
  const fill = (el, names) => { el.innerHTML = names.map((n) => `<option>${n}</option>`).join(''); };
  fill($('model'), models.rows.map((m) => m.name));
  chalk.maxContext = new Map(models.rows.filter((m) => m.max_context_tokens > 0).map((m) => [m.name, m.max_context_tokens]));
  fill($('hardware'), systems.rows.map((s) => s.name));
  // Systems with a price: the only ones `prices forward` (the replica rule's command) prices.
  chalk.priced = new Set(systems.rows.filter((s) => typeof s.price_usd_per_chip_hour === 'number').map((s) => s.name));
  // A system alias the CLI reads (h100 for h100-sxm) selects that system, named as the server reads it (review 2 L6).
  if (!systems.rows.some((s) => s.name === state.hardware)) state.hardware = await api('/api/decode', { model: 'llama-3.1-8b', hardware: state.hardware, chips: 1, batch: 1, context: 128, allow_infeasible: true }).then((j) => j.hardware.name, () => state.hardware);
  fill($('sheet'), sheets.rows.map((s) => s.name));
  for (const k of Object.keys(SLIDERS)) {
    $(k).addEventListener('input', () => { if (k === 'rate') chalk.rateAuto = false; state[k] = SLIDERS[k].toValue(Number($(k).value)); syncControls(); later(); });
  }
  for (const k of ['model', 'hardware', 'weights', 'kv', 'sheet', 'lora']) {
    // A new model or system starts from the cheapest replica (review 3 L17: 512 GB200 chips stayed 512 L4).
    $(k).addEventListener('change', () => { state[k] = $(k).value; if (k === 'model' || k === 'hardware') state.chips = 0; if (k === 'model') { state.upload = null; $('upload-status').textContent = ''; } later(); });
  }
  // Enter in a text box applies it; the form never submits (review 4 H2: the native submit reloaded the page with the sliders' positions as values).
  $('controls').addEventListener('submit', (e) => { e.preventDefault(); const k = document.activeElement?.id; if (k === 'lora') { state.lora = $(k).value; later(); } });
  $('upload').addEventListener('change', async () => {
    const file = $('upload').files[0];
    if (!file) return;
    try {
      state.upload = JSON.parse(await file.text());
      $('upload-status').textContent = `using ${file.name} (not kept in the URL)`;
    } catch (e) {
      state.upload = null;
      $('upload-status').textContent = `${file.name}: not JSON (${e.message})`;
    }
    later();
  });
  $('explain-close').addEventListener('click', hideExplanation);
  chalk.plan = planView({ api, fields: () => deployment({ chips: false }), data: chalk.data,
    note: () => (chalk.pp > 1 ? `chalk plan simulates replicas without pipeline stages; the other views price ${stagesWords(chalk.replica_choice, chalk.chips)}` : '') });
  await update();
}

start();
