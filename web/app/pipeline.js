// The headline, memory and batch views when the page prices pipeline stages (replica.js:
// no replica within one scale-up domain holds the model, and `chalk serving sweep` chooses
// the layout `chalk layouts` ranks first, e.g. Llama 3.1 405B on H100: PP2 x (TP8) on 16
// chips). Each figure is the pipelined command's own JSON (apps/chalk/pipeline_cli.h): `chalk
// decode -n 16 --pp 2`, `chalk prefill -n 16 --pp 2` and `chalk serving sweep` with no batch
// (its list ends at the batch the busiest stage's HBM holds). Pipelined rows carry no
// per-term split and no explanation (the CLI explains a step without stages), so the tiles
// say what they are and the charts plot a stage, the hop between stages and the step.
import { numberButtons } from './explain.js';
import { termRows, memoryChart, termChart } from './charts.js';
import { words } from './words.js';

const $ = (id) => document.getElementById(id);
export const PIPE_STEP_TERMS = ['t_stage_ms', 't_hop_ms', 't_step_ms'];
const PIPE_COST_TERMS = ['cost_usd_per_mtok'];
const noExplain = (label) => `${label}: a pipelined step (chalk decode --pp) has no per-term explanation`;

/// "PP2 x (TP8), 16 chips": the replica line of the views (`rc` is replica_choice).
export const stagesWords = (rc, chips) => `${rc.choice.layout} on ${chips} chips`;

/// Headline tiles, TTFT and the busiest stage's memory at the page's batch, context and
/// prompt. `fields` is the deployment with chips and pp.
export async function pipelineDecode({ api, fields, state, draw, data }) {
  const [j, p] = await Promise.all([api('/api/decode', { ...fields, batch: state.batch, context: state.context }),
    api('/api/prefill', { ...fields, prompt: state.prompt })]);
  data.decode = j;
  data.prefill = p;
  const row = j.rows[0];
  const tile = (key, label, unit, value = row[key]) => ({ key, label, value, unit, explanation: null, title: noExplain(label) });
  numberButtons($('headline'), [
    tile('t_step_ms', 'decode step (a token through every stage)', 'ms'),
    tile('t_step_roofline_ms', 'roofline (lower bound)', 'ms'),
    tile('t_stage_ms', 'one stage', 'ms'),
    tile('t_hop_ms', 'stage-to-stage hop', 'ms'),
    tile('tok_per_s_per_user', 'per user', 'tok/s'),
    tile('tok_per_s_per_chip', 'per chip', 'tok/s'),
    // A batch the stages' HBM does not hold gets no price (review 2 H3), though the pipelined
    // decode row carries one (chalk decode --pp 2 -n 16 -b 256 on 405B: memory_fits false, $2.68).
    row.memory_fits === false ? tile('cost_usd_per_mtok', 'cost', `$/Mtok: batch ${state.batch.toLocaleString('en-US')} does not fit in the stages' HBM`, null)
      : tile('cost_usd_per_mtok', 'cost', '$/Mtok'),
    tile('ttft_ms', `TTFT, ${state.prompt.toLocaleString('en-US')}-token prompt`, 'ms', p.rows[0].ttft_ms),
  ]);
  // The busiest stage: its weights and KV against its chips' HBM, the reserve held back.
  const pl = j.pipeline;
  const limit = pl.chips_per_stage * j.hardware.hbm_gb_per_chip;
  const reserve = (j.assumptions.memory_reserve_fraction ?? 0) * limit;
  const parts = [
    { component: `weights (${pl.layers_per_stage} layers)`, gb: row.stage_weights_gb, order: 0 },
    { component: `KV cache (${state.batch} x ${state.context.toLocaleString('en-US')} tokens)`, gb: row.stage_kv_gb, order: 1 },
    { component: 'reserve (activations, runtime)', gb: reserve, order: 2 },
  ];
  data.memory = { parts, limit };
  const gb = (key, label, value) => ({ key, label, value, unit: 'GB', explanation: null });
  numberButtons($('memory-numbers'), [gb('hbm_total_gb', `HBM of one stage (${pl.chips_per_stage} chips)`, limit),
    gb('weights_gb', 'weights of the busiest stage', row.stage_weights_gb), gb('kv_cache_gb', 'KV cache of the busiest stage', row.stage_kv_gb)]);
  const hbm = `HBM of one stage, ${pl.chips_per_stage} x ${j.hardware.hbm_gb_per_chip} GB = ${limit.toLocaleString('en-US', { maximumSignificantDigits: 4 })} GB`;
  await draw('memory', '#view-memory', memoryChart(parts, limit, hbm));
}

/// Step and cost against batch: `chalk serving sweep`'s own batches (to the batch the
/// stages' HBM holds), and the slider's batch's cost and speed where the sweep has it.
export async function pipelineSweep({ api, fields, state, draw, data }) {
  const j = await api('/api/serving/sweep', { ...fields, context: state.context });
  data.sweep = j;
  data.balance = null;
  data.sweepBatches = j.rows.map((r) => r.batch).join(',');
  const b = state.batch.toLocaleString('en-US');
  const at = j.rows.find((r) => r.batch === state.batch);
  const full = j.rows[j.rows.length - 1];
  numberButtons($('sweep-numbers'), [
    ...(at ? ['cost_usd_per_mtok', 'tok_per_s_per_user', 'tok_per_s_per_chip'].map((k) => ({ key: k, label: `${words(k)} at batch ${b}`, value: at[k], unit: k === 'cost_usd_per_mtok' ? '$/Mtok' : 'tok/s', explanation: null })) : []),
    { key: 'max_batch_at_context', label: 'batch that fills the stages\' HBM', value: full.batch, unit: `sequences, ${Number(full.cost_usd_per_mtok.toPrecision(4))} $/Mtok`, explanation: null },
  ]);
  const title = `${j.pipeline.pp} stages of ${j.pipeline.chips_per_stage} chips (chalk serving sweep); the last batch fills their HBM`;
  await draw('step', '#view-step', termChart(termRows(j.rows, 'batch', PIPE_STEP_TERMS), 'batch (sequences)', 'ms per step', state.batch, 0, title));
  await draw('cost', '#view-cost', termChart(termRows(j.rows, 'batch', PIPE_COST_TERMS), 'batch (sequences)', 'USD per 1M tokens', state.batch, 0, title));
}
