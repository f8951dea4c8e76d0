// The training view: the best plan `chalk train layouts` finds on the page's training chips,
// its step by part and its memory per chip by component (docs/web.md).
//
// The plan comes from the API's JSON: the best row's `train_step_flags` (docs/output-schema.md),
// the flags `train step` and `train memory` take, with the document's global batch and
// sequence length. The page once parsed the plan's name and read "TP32+SP" as TP3 without
// SP: DeepSeek-V3 on GB200 showed MFU 8.0% and a 5.1 s step where the API said 46.3% and
// 0.886 s (issue 30 item 6).
import { api } from './api.js';
import { memoryChart } from './charts.js';
import { numberButtons } from './explain.js';
import { words } from './words.js';

/// The step's parts, each over the whole step, in seconds; they add up to `t_step_s`
/// (src/training/step.cc: t_step = m (t_f + t_b) + t_unpaired + bubble + exposed DP reduce
/// + the SM time the hidden reduce takes + optimizer). The forward and backward of the
/// `microbatches` microbatches, not one microbatch's (t_forward_s and t_backward_s are per
/// microbatch: `train step`'s "fwd s/mb").
export function stepParts(s) {
  const v = (k) => s[k] ?? 0;
  const mb = `${s.microbatches.toLocaleString('en-US')} microbatch${s.microbatches === 1 ? '' : 'es'}`;
  return [
    { component: `forward (${mb})`, s: s.microbatches * v('t_forward_s') },
    { component: `backward (${mb})`, s: s.microbatches * v('t_backward_s') },
    { component: 'unpaired chunks', s: v('t_unpaired_s') },
    { component: 'pipeline bubble', s: v('t_bubble_s') },
    { component: 'exposed DP reduce', s: v('t_dp_exposed_s') },
    { component: 'DP reduce SM share', s: v('t_dp_sm_contention_s') },
    { component: 'optimizer', s: v('t_optimizer_s') },
  ].map((p, order) => ({ ...p, order })).filter((p) => p.s > 0);
}

/// Draws the view; `base` is the model (or uploaded config) and hardware, `chips` the
/// training chips, `draw(name, selector, spec)` the page's chart drawer, `data` its record.
export async function updateTraining({ base, chips, draw, data }) {
  const plan = document.getElementById('train-plan');
  plan.classList.remove('error');
  data.train_error = null;
  // The plan search takes seconds (20 s on a loaded machine) and the view showed nothing
  // meanwhile (review 4 L0/M6): say it is computing, the figures of the last plan dimmed
  // (aria-busy, style.css) until the new ones replace them.
  const figure = plan.closest('figure');
  plan.textContent = `computing the best training plan on ${chips.toLocaleString('en-US')} chips...`;
  figure.setAttribute('aria-busy', 'true');
  try {
    await drawTraining({ base, chips, draw, data });
  } catch (e) {
    // A system the training model cannot run on (L4: no scale-out bandwidth) is said inside
    // this view, where its heading stood empty with the reason in the sidebar (review 3 L6).
    if (e.status !== 400 || e.field === 'model' || e.field === 'model_config') {
      plan.textContent = '';  // the page's error line says why; not "computing" forever
      throw e;
    }
    data.train_error = e.message;
    plan.classList.add('error');
    plan.textContent = `no training figures on this system: ${e.message}`;
    document.getElementById('train-numbers').innerHTML = '';
    for (const id of ['view-train', 'view-train-memory']) document.getElementById(id).innerHTML = '';
  } finally {
    figure.removeAttribute('aria-busy');
  }
}

async function drawTraining({ base, chips, draw, data }) {
  const lay = await api('/api/train/layouts', { ...base, chips, limit: 1 });
  data.train_layouts = lay;
  const best = lay.rows.find((l) => l.memory_fits);
  if (!best) throw new Error(`no training plan fits on ${chips} chips`);
  const plan = { ...best.train_step_flags, global_batch: lay.global_batch, seq_len: lay.context_tokens };
  for (const [k, v] of Object.entries(plan)) if (v === '' || v === false) delete plan[k];
  const [step, mem] = await Promise.all([api('/api/train/step', { ...base, chips, ...plan, explain: true }), api('/api/train/memory', { ...base, chips, ...plan, explain: true })]);
  const tx = Object.fromEntries([...step.explanations, ...mem.explanations].map((x) => [x.key, x]));
  numberButtons(document.getElementById('train-numbers'), ['t_step_s', 'mfu', 'bubble_fraction', 'tok_per_s', 'activations_gb', 'total_gb'].filter((k) => tx[k])
    .map((k) => ({ key: k, label: words(k), value: tx[k].result, unit: tx[k].unit, explanation: tx[k] })));
  data.train_step = step;
  data.train_memory = mem;
  const s = step.rows[0];
  // Seconds on the axis from a 1 s step up, milliseconds below it ("0.4" s once read "400m").
  const inMs = s.t_step_s < 1;
  const scale = inMs ? 1e3 : 1;
  const parts = stepParts(s).map((p) => ({ component: p.component, gb: p.s * scale, order: p.order }));
  data.train_parts = parts;
  document.getElementById('train-plan').textContent = `best plan on ${chips.toLocaleString('en-US')} chips: ${best.plan}; ` +
    `MFU ${(100 * s.mfu).toFixed(1)}%, step ${Number(s.t_step_s.toPrecision(3))} s`;
  const stepLabel = inMs ? `${Number((1e3 * s.t_step_s).toPrecision(3)).toLocaleString('en-US')} ms` : `${Number(s.t_step_s.toPrecision(3)).toLocaleString('en-US')} s`;
  await draw('train', '#view-train', memoryChart(parts, s.t_step_s * scale, `step ${stepLabel}`, inMs ? 'ms per step' : 's per step'));
  const mparts = [
    { component: 'weights', gb: mem.weights_gb, order: 0 }, { component: 'gradients', gb: mem.gradients_gb, order: 1 },
    { component: 'optimizer states', gb: mem.optimizer_gb, order: 2 }, { component: 'activations', gb: mem.activations_gb, order: 3 },
    { component: 'ZeRO-3 buffers', gb: mem.zero3_buffers_gb, order: 4 }, { component: 'working', gb: mem.activation_working_gb, order: 5 },
  ].filter((p) => p.gb > 0);
  await draw('train_memory', '#view-train-memory', memoryChart(mparts, mem.hbm_gb_per_chip, `HBM ${mem.hbm_gb_per_chip} GB per chip`, 'GB per chip'));
}
