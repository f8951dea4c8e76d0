// API tests of `chalk web` (issue 18): every endpoint answers the JSON its CLI command
// prints under --json for the same inputs, and conforms to web/openapi.json; every error
// is a 4xx with a JSON error naming the field; no file outside the embedded set is served.
// Run: node tests/web/api_test.mjs CHALK SRC   (ctest: web.api)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { startServer, raw, conform } from './server.mjs';

const [chalk, src] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(`${src}/web/openapi.json`, 'utf8'));
const server = await startServer(chalk);
let failures = 0;
const check = async (name, fn) => {
  try { await fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
};

async function call(method, path, body) {
  const r = await raw(server.port, method, path, body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  assert.match(r.headers['content-type'] || '', /json|javascript|html|css/, `${path}: content type ${r.headers['content-type']}`);
  return { ...r, json: r.headers['content-type'].includes('json') ? JSON.parse(r.body) : undefined };
}

function schemaOf(path, method, status) {
  const op = doc.paths[path]?.[method.toLowerCase()];
  const r = op?.responses?.[String(status)];
  assert.ok(r, `${method} ${path}: web/openapi.json describes no ${status} response`);
  return r.content['application/json'].schema;
}

function conforms(path, method, r) {
  const problems = conform(r.json, schemaOf(path, method, r.status), doc);
  assert.deepEqual(problems.slice(0, 5), [], `${method} ${path} ${r.status} does not conform to web/openapi.json`);
}

/// The CLI arguments a request body stands for ("--batch=1,64", "--explain").
function cliArgs(words, body, positional) {
  const args = [...words];
  for (const [k, v] of Object.entries(body)) {
    if (k === positional) args.push(String(v));
    else if (v === true) args.push(`--${k.replaceAll('_', '-')}`);
    else if (k === 'phase' && Array.isArray(v)) args.push(...v.map((item) => `--phase=${item}`));  // a repeatable flag: one per item
    else if (k === 'batches') args.push(`--batches=${JSON.stringify(v)}`);  // a JSON field: the JSON text itself
    else args.push(`--${k.replaceAll('_', '-')}=${Array.isArray(v) ? v.join(',') : v}`);  // kv_dtype is --kv-dtype
  }
  return [...args, '--json'];
}

// Every endpoint: a small request, its answer equal to the CLI's --json, conforming.
const CASES = [
  ['GET', '/api/models', ['models']], ['GET', '/api/hardware', ['hardware']], ['GET', '/api/prices/list', ['prices', 'list']],
  ['POST', '/api/decode', ['decode'], { model: 'llama-3.1-70b', hardware: 'h100-sxm', batch: '1,64', context: 8192, explain: true }],
  ['POST', '/api/decode', ['decode'], { model: 'deepseek-v3', hardware: 'gb200-nvl72', batch: [1, 256], kv_dtype: 'fp8' }],
  ['POST', '/api/prefill', ['prefill'], { model: 'llama-3.1-70b', hardware: 'h100-sxm', prompt: 1024, explain: true }],
  ['POST', '/api/serving/sweep', ['serving', 'sweep'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: '1,64' }],
  ['POST', '/api/serving/balance', ['serving', 'balance'], { model: 'llama-3.1-8b', hardware: 'h100-sxm' }],
  ['POST', '/api/serving/window', ['serving', 'window'], { model: 'llama-3.1-8b', hardware: 'h100-sxm' }],
  ['POST', '/api/serving/frontier', ['serving', 'frontier'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: '1,64', 'replica-chips': '1,2' }],
  ['POST', '/api/serving/modes', ['serving', 'modes'], { model: 'llama-3.1-70b', hardware: 'h100-sxm' }],
  ['POST', '/api/layouts', ['layouts'], { model: 'deepseek-v3', hardware: 'gb200-nvl72', chips: 8 }],
  ['POST', '/api/prices/infer', ['prices', 'infer'], { sheet: 'gemini-1.5-pro' }, 'sheet'],
  ['POST', '/api/prices/forward', ['prices', 'forward'], { model: 'llama-3.1-8b', hardware: 'h100-sxm' }],
  ['POST', '/api/prices/forward', ['prices', 'forward'], { model: 'llama-3.1-70b', hardware: 'h100-sxm', batch: 64, context: 4096, allow_infeasible: true }],
  ['POST', '/api/prices/compare', ['prices', 'compare'], { model: 'gpt-oss-120b', hardware: 'h100-sxm,tpu-v5p', 'prefix-hit-rate': 0.5 }],
  ['POST', '/api/validate', ['validate'], {}],
  ['POST', '/api/train/step', ['train', 'step'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 8, dp: 8, zero: 2 }],
  ['POST', '/api/train/memory', ['train', 'memory'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 8, dp: 8, zero: 2 }],
  ['POST', '/api/train/layouts', ['train', 'layouts'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 64, limit: 3, all: true }],
  ['POST', '/api/train/run', ['train', 'run'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', tokens: 1e12, chips: 64, mfu: 0.4 }],
  ['POST', '/api/train/run', ['train', 'run'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', phase: ['name=a,tokens=1e12,chips=8', 'name=b,tokens=2e12,chips=16'] }],
  ['POST', '/api/train/chinchilla', ['train', 'chinchilla'], { flops: 1e24, params: 8e9, tokens: 15e12 }],
  ['POST', '/api/train/equilibrium', ['train', 'equilibrium'], { model: 'llama-3.1-70b', hardware: 'h100-sxm' }],
  ['POST', '/api/train/moe', ['train', 'moe'], { 'expert-share': 0.5 }],
  ['POST', '/api/serving/sweep', ['serving', 'sweep'], { model: 'llama-3.1-70b', hardware: 'h100-sxm', batch: '1,64', explain: true }],
  ['POST', '/api/serving/balance', ['serving', 'balance'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', context: 128, explain: true }],
  ['POST', '/api/train/step', ['train', 'step'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 16, dp: 4, pp: 4, explain: true }],
  ['POST', '/api/train/memory', ['train', 'memory'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 16, dp: 4, pp: 4, explain: true }],
  ['POST', '/api/simulate', ['simulate'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 10, requests: 300 }],
  ['POST', '/api/plan', ['plan'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 10, requests: 300, 'ttft-slo-ms': 500, 'budget-chips': 4 }],
  // Speculative decoding in a plan (review 7 M5): simulate's options, the verdict against plain decode, the drafter's launch flags.
  ['POST', '/api/plan', ['plan'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 2, requests: 100, 'tpot-slo-ms': 50, 'budget-chips': 1, draft: 3, acceptance: 0.8, drafter: 'eagle3' }],
  ['POST', '/api/step', ['step'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 1, prefill: '512:0,256:1024', decode: '1024x32' }],
  ['POST', '/api/step', ['step'], { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 1, batches: [
    { prefill: [[512, 1024]], decode: [2000, 3000] },
    { prefill_requests: [{ progress_index: 1024, num_new_prefill_tokens: 512 }], decode_requests: [{ progress_index: 2000, num_new_decode_tokens: 1 }, { progress_index: 3000, num_new_decode_tokens: 1 }] },
    { reqs: [{ extend_length: 512, past_kv_length: 1024 }, { extend_length: 1, past_kv_length: 2000 }, { extend_length: 1, past_kv_length: 3000 }] }] }],
];
const covered = new Set();
for (const [method, path, words, body, positional] of CASES) {
  covered.add(path);
  await check(`${method} ${path} ${body ? JSON.stringify(body) : ''} = chalk ${words.join(' ')} --json`, async () => {
    const r = await call(method, path, body);
    assert.equal(r.status, 200, r.body.slice(0, 300));
    conforms(path, method, r);
    const cli = JSON.parse(execFileSync(chalk, cliArgs(words, body || {}, positional), { encoding: 'utf8', maxBuffer: 1 << 26 }));
    assert.deepEqual(r.json, cli);
  });
}
await check('train run: each item of a list of phases is its own phase (joined with commas they merged)', async () => {
  const r = await call('POST', '/api/train/run', { phase: ['name=a,tokens=1e12,chips=8', 'name=b,tokens=2e12,chips=16'] });
  assert.equal(r.status, 200, r.body.slice(0, 300));
  assert.deepEqual(r.json.rows.map((p) => [p.phase, p.tokens, p.chips]), [['a', 1e12, 8], ['b', 2e12, 16]]);
});
// Explanations: each figure's result is the number the same answer reports.
const post = async (path, body) => { const r = await call('POST', path, body); assert.equal(r.status, 200, r.body.slice(0, 300)); return r.json; };
// Issue 30 item 1: the page's replica (web/app/replica.js asks this) is prices forward's at the
// batch. Llama 3.1 70B bf16 on H100, batch 64 x 4096 tokens: 64 x 4096 x 327,680 B of KV = 85.9
// GB beside 141.1 GB of weights exceeds 2 x 80 GB; 4 and 8 chips read the same bytes in all and 8
// pays the per-step all-reduces and kernel floor on twice the chips: 4 (TP4), 8 the runner-up,
// priced as `decode -n 4 -b 64` prices it.
await check('prices forward at the page\'s batch: 70B on H100 at batch 64 is 4 chips, 8 the runner-up, at decode -n 4\'s cost', async () => {
  const f = await post('/api/prices/forward', { model: 'llama-3.1-70b', hardware: 'h100-sxm', batch: 64, context: 4096, allow_infeasible: true });
  const rc = f.replica_choice;
  assert.deepEqual([rc.rule, rc.pp, rc.choice.chips, rc.choice.batch, rc.choice.memory_full, rc.runner_up.chips, rc.runner_up.batch], ['cheapest', 1, 4, 64, false, 8, 64]);
  assert.ok(rc.runner_up.cost_usd_per_mtok > rc.choice.cost_usd_per_mtok, JSON.stringify(rc));
  assert.match(rc.why, /whose HBM holds batch 64 \(-b\)/);
  const d = await post('/api/decode', { model: 'llama-3.1-70b', hardware: 'h100-sxm', chips: 4, batch: 64, context: 4096 });
  assert.equal(f.forward.output_cost_usd_per_mtok, d.rows[0].cost_usd_per_mtok);
  assert.equal(rc.choice.cost_usd_per_mtok, d.rows[0].cost_usd_per_mtok);
});
const figures = (xs) => Object.fromEntries(xs.map((x) => [x.key, x]));
await check('step: the simulator\'s own steps (one request, 512 in, 2 out: its TTFT less the request overhead is the prefill step, its TPOT the decode step at 512)', async () => {
  const sim = JSON.parse(execFileSync(chalk, ['simulate', '-m', 'llama-3.1-8b', '-H', 'h100-sxm', '-n', '1', '--rate', '1', '--requests', '1',
    '--input', '512', '--output', '2', '--json'], { encoding: 'utf8' }));
  const j = await post('/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 1, batches: [{ prefill: [[512, 0]] }, { decode: [512] }] });
  const row = sim.rows[0];
  const overhead_ms = 6.908;  // vLLM's fixed work per request outside the GPU (policy.h kEngineRequestOverheadS; tests/cli/simulate.sh)
  // One request alone: TTFT = overhead + one prefill step; TPOT = the one decode step. Equal
  // to the last bits the subtractions keep (1e-9 relative).
  assert.ok(Math.abs(row.ttft_p50_ms - overhead_ms - j.rows[0].t_step_ms) < 1e-9 * row.ttft_p50_ms, `${row.ttft_p50_ms} - ${overhead_ms} vs ${j.rows[0].t_step_ms}`);
  assert.ok(Math.abs(row.tpot_p50_ms - j.rows[1].t_step_ms) < 1e-9 * row.tpot_p50_ms, `${row.tpot_p50_ms} vs ${j.rows[1].t_step_ms}`);
});
await check('step: 4,096 batches in one request, each its own row (the API takes up to 16,384)', async () => {
  const batches = Array.from({ length: 4096 }, (_, i) => ({ decode: [1 + (i % 2048)] }));
  const j = await post('/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 1, batches });
  assert.equal(j.rows.length, 4096);
  assert.ok(j.rows[2047].t_step_ms > j.rows[0].t_step_ms);
  assert.equal(j.rows[2048].t_step_ms, j.rows[0].t_step_ms);
});
await check('sweep explanations = the rows they explain (cost per Mtok, per term, tok/s per user and per chip)', async () => {
  const j = await post('/api/serving/sweep', { model: 'llama-3.1-70b', hardware: 'h100-sxm', batch: '1,64', explain: true });
  assert.equal(j.explanations.length, j.rows.length);
  for (const row of j.rows) {
    const x = figures(j.explanations.find((e) => e.batch === row.batch && e.context_tokens === row.context_tokens).figures);
    for (const k of ['cost_usd_per_mtok', 'cost_compute_usd_per_mtok', 'cost_weights_usd_per_mtok', 'cost_kv_usd_per_mtok', 'cost_comm_usd_per_mtok',
      'cost_overhead_usd_per_mtok', 'tok_per_s_per_user', 'tok_per_s_per_chip']) assert.equal(x[k].result, row[k], `${k} at batch ${row.batch}`);
    // $/Mtok = price x chips / (tokens per hour / 1e6), from the inputs shown.
    const c = Object.fromEntries(x.cost_usd_per_mtok.inputs.map((i) => [i.symbol, i.value]));
    assert.ok(Math.abs(c.price * c.n / (c['tok/h'] / 1e6) - row.cost_usd_per_mtok) < 1e-9 * row.cost_usd_per_mtok);
  }
});
await check('balance explanations = its balance points', async () => {
  const j = await post('/api/serving/balance', { model: 'llama-3.1-8b', hardware: 'h100-sxm', context: 128, explain: true });
  const x = figures(j.explanations);
  for (const k of ['lecture_batch_peak', 'lecture_batch_effective', 'batch_with_kv']) assert.equal(x[k].result, j.balance[k], k);
});
await check('decode memory explanations = its memory and rows', async () => {
  const j = await post('/api/decode', { model: 'llama-3.1-70b', hardware: 'h100-sxm', chips: 2, batch: 64, explain: true });
  const x = figures(j.explanations[0].figures);
  for (const k of ['hbm_total_gb', 'weights_gb', 'reserve_gb']) assert.equal(x[k].result, j.memory[k], k);
  assert.equal(x.max_batch_at_context.result, j.rows[0].max_batch_at_context);
  assert.ok(Math.abs(x.kv_cache_gb.result - 64 * 4096 * x.kv_bytes_per_token.result / 1e9) < 1e-9, 'KV = B S KV/token');
});
await check('training explanations = train step and train memory', async () => {
  const f = { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 16, dp: 4, pp: 4, explain: true };
  const st = await post('/api/train/step', f);
  const x = figures(st.explanations);
  for (const k of ['t_step_s', 'bubble_fraction', 'tok_per_s', 'mfu']) assert.equal(x[k].result, st.rows[0][k], k);
  assert.ok(Math.abs(st.rows[0].bubble_fraction - 3 / st.rows[0].microbatches) < 1e-12, '1F1B bubble (p - 1) / m');
  const mem = await post('/api/train/memory', f);
  const y = figures(mem.explanations);
  for (const k of ['weights_gb', 'gradients_gb', 'optimizer_gb', 'activations_gb', 'total_gb']) assert.equal(y[k].result, mem[k], k);
});
await check('layouts explanation = the first row of the ranking', async () => {
  const j = await post('/api/layouts', { model: 'deepseek-v3', hardware: 'gb200-nvl72', chips: 8, explain: true });
  assert.equal(j.explanations[0].figures[0].result, j.rows[0].tok_per_s_per_chip);
});
await check('concurrent requests each get their own answer (no shared options)', async () => {
  const bodies = [];
  for (let i = 0; i < 24; i++) bodies.push(['/api/decode', { model: i % 2 ? 'llama-3.1-8b' : 'llama-3.1-70b', hardware: 'h100-sxm', batch: 1 + i, context: 1024 * (1 + (i % 3)) }]);
  for (let i = 0; i < 8; i++) bodies.push(['/api/serving/sweep', { model: 'llama-3.1-8b', hardware: i % 2 ? 'h200' : 'h100-sxm', batch: `1,${2 ** (i + 1)}` }]);
  const serial = [];
  for (const [p, b] of bodies) serial.push(await post(p, b));
  const parallel = await Promise.all(bodies.map(([p, b]) => post(p, b)));
  parallel.forEach((j, i) => assert.deepEqual(j, serial[i], `request ${i} ${JSON.stringify(bodies[i][1])}`));
});
await check('every path in web/openapi.json is tested', () => {
  assert.deepEqual(Object.keys(doc.paths).filter((p) => !covered.has(p)), []);
});
await check('every documented request field is a field the server knows', async () => {
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!ops.post) continue;
    for (const field of Object.keys(ops.post.requestBody.content['application/json'].schema.properties)) {
      // Fields are read in key order (sorted): a probe "~" after the field is refused as
      // unknown only if the field before it was known, and no command runs.
      const r = await call('POST', path, { [field]: null, '~': 1 });
      assert.equal(r.status, 400);
      assert.equal(r.json.field, '~', `${path}: documented field ${field}: ${r.body}`);
    }
  }
});

// Every error: status, a JSON error naming the field, conforming to the Error schema.
const ERRORS = [
  ['malformed JSON', 'POST', '/api/decode', '{"model": "llama-3.1-8b",', 400, 'body'],
  ['body not an object', 'POST', '/api/decode', '[1, 2]', 400, 'body'],
  ['unknown field', 'POST', '/api/decode', { model: 'llama-3.1-8b', bacth: 4 }, 400, 'bacth'],
  ['short alias refused', 'POST', '/api/decode', { b: 4 }, 400, 'b'],
  ['output flag refused', 'POST', '/api/decode', { csv: true }, 400, 'csv'],
  ['file-writing flag refused', 'POST', '/api/plan', { model: 'llama-3.1-8b', 'ttft-slo-ms': 500, 'budget-chips': 1, 'launch-dir': '/tmp/x' }, 400, 'launch-dir'],
  ['file-reading flag refused', 'POST', '/api/plan', { model: 'llama-3.1-8b', 'ttft-slo-ms': 500, 'budget-chips': 1, 'rate-curve': '/etc/hostname' }, 400, 'rate-curve'],
  ['unknown model', 'POST', '/api/decode', { model: 'llama-9-900b' }, 400, 'model'],
  ['a repo id whose architecture differs (aliases.json refuses it)', 'POST', '/api/decode', { model: 'mistralai/Mistral-7B-v0.1' }, 400, 'model'],
  ['model as a path', 'POST', '/api/decode', { model: '/etc/passwd' }, 400, 'model'],
  ['model as a relative path', 'POST', '/api/prefill', { model: '../data/models/hf/llama-3.1-8b.json' }, 400, 'model'],
  ['unknown hardware', 'POST', '/api/decode', { hardware: 'h9000' }, 400, 'hardware'],
  ['price sheet as a path', 'POST', '/api/prices/infer', { sheet: '/etc/passwd' }, 400, 'sheet'],
  ['absurd batch', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: 1e12 }, 400, 'batch'],
  ['negative batch', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: -4 }, 400, 'batch'],
  ['batch with a suffix', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: '8k' }, 400, 'batch'],
  ['zero chips', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 0 }, 400, 'chips'],
  ['efficiency above 1', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', 'matmul-efficiency': 7 }, 400, 'matmul-efficiency'],
  ['NaN-like number', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', 'hbm_efficiency': 'nan' }, 400, 'hbm_efficiency'],
  ['flag given a string', 'POST', '/api/decode', { model: 'llama-3.1-8b', roofline: 'yes' }, 400, 'roofline'],
  ['nested object value', 'POST', '/api/decode', { batch: { a: 1 } }, 400, 'batch'],
  ['value looks like a flag', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', context: '--json' }, 400, 'context'],
  ['bad KV format', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', 'kv-dtype': 'fp3' }, 400, 'kv-dtype'],
  ['bad KV format, the documented snake_case key', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', kv_dtype: 'fp3' }, 400, 'kv_dtype'],
  ['uploaded config missing a field', 'POST', '/api/decode', { model_config: { model_type: 'llama', num_hidden_layers: 2 }, hardware: 'h100-sxm' }, 400, 'model_config'],
  ['uploaded config not an object', 'POST', '/api/decode', { model_config: 'llama' }, 400, 'model_config'],
  ['model and model_config', 'POST', '/api/decode', { model: 'llama-3.1-8b', model_config: {} }, 400, 'model_config'],
  ['train with bad degree', 'POST', '/api/train/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', chips: 8, dp: 3 }, 400, null],
  ['simulate: too many requests for the API', 'POST', '/api/simulate', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 10, requests: 1e6 }, 400, 'requests'],
  ['simulate: a trace file is never read', 'POST', '/api/simulate', { model: 'llama-3.1-8b', hardware: 'h100-sxm', trace: '/etc/passwd' }, 400, 'trace'],
  ['simulate: no traffic stated', 'POST', '/api/simulate', { model: 'llama-3.1-8b', hardware: 'h100-sxm' }, 400, 'rate'],
  ['simulate: negative rate', 'POST', '/api/simulate', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: -3 }, 400, 'rate'],
  ['plan: chip budget over the API bound', 'POST', '/api/plan', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 10, 'ttft-slo-ms': 500, 'budget-chips': 100000 }, 400, 'budget-chips'],
  ['plan: no budget (a field the request lacks is named in snake_case)', 'POST', '/api/plan', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 10, 'ttft-slo-ms': 500 }, 400, 'budget_chips'],
  ['step: a bad batch spec', 'POST', '/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', decode: '1024y32' }, 400, 'decode'],
  ['step: negative tokens', 'POST', '/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batches: [{ prefill: [[-5, 0]] }] }, 400, 'batches[0].prefill[0].tokens'],
  ['step: a context beyond the model', 'POST', '/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batches: [{ decode: [200000] }] }, 400, 'batches[0].decode[0]'],
  ['step: batches as a file name', 'POST', '/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batches: '/etc/passwd' }, 400, 'batches'],
  ['step: too many batches', 'POST', '/api/step', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batches: Array(16385).fill({ decode: [1] }) }, 413, 'batches'],
  ['plan: an acceptance beyond 1', 'POST', '/api/plan', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 2, 'tpot-slo-ms': 50, 'budget-chips': 1, draft: 3, acceptance: 1.5, drafter: 'eagle3' }, 400, 'acceptance'],
  ['drafter as a path', 'POST', '/api/decode', { model: 'llama-3.1-8b', hardware: 'h100-sxm', draft: 2, acceptance: 0.8, drafter: '/etc/passwd' }, 400, 'drafter'],
  ['unknown path', 'GET', '/api/nothing', undefined, 404, 'path'],
  ['unknown page', 'GET', '/nothing.html', undefined, 404, 'path'],
  ['GET on a POST endpoint', 'GET', '/api/decode', undefined, 405, 'method'],
  ['POST on a GET endpoint', 'POST', '/api/models', {}, 405, 'method'],
  ['query on a GET endpoint', 'GET', '/api/models?names=/etc/passwd', undefined, 400, 'names'],
];
for (const [name, method, path, body, status, field] of ERRORS) {
  await check(`${name}: ${status}`, async () => {
    const r = await call(method, path, body);
    assert.equal(r.status, status, r.body.slice(0, 300));
    assert.equal(typeof r.json.error, 'string');
    assert.ok(!r.json.error.includes('\n'), 'one line');
    // An uploaded config's fault names the field inside it too: "model_config: hidden_size".
    if (field) assert.ok(r.json.field === field || r.json.field.startsWith(`${field}: `), `field ${r.json.field}, expected ${field}: ${r.json.error}`);
    if (doc.paths[path.split('?')[0]]) conforms(path.split('?')[0], method === 'GET' && doc.paths[path.split('?')[0]].post ? 'POST' : method === 'POST' && doc.paths[path].get ? 'GET' : method, r);
  });
}
await check('names users type: a repo id and an R1 distill reach the built-in model; a refusal says why', async () => {
  for (const [typed, want] of [['meta-llama/Llama-3.3-70B-Instruct', 'llama-3.3-70b'], ['deepseek-ai/DeepSeek-R1-Distill-Llama-70B', 'llama-3.3-70b'],
                               ['Qwen/Qwen2.5-72B-Instruct', 'qwen2.5-72b']]) {
    const r = await call('POST', '/api/decode', { model: typed, hardware: 'h100-nvl', batch: 1 });
    assert.equal(r.status, 200, r.body.slice(0, 300));
    assert.equal(r.json.model.name, want, typed);
  }
  const r = await call('POST', '/api/decode', { model: 'mistralai/Mistral-7B-v0.1' });
  assert.equal(r.json.field, 'model');
  assert.ok(r.json.error.includes('4,096-token sliding window'), r.json.error);
});
await check('errors name request fields in snake_case, never CLI flags', async () => {
  // 70B weights (141 GB) on one 80 GB H100: the CLI says "--chips: ...; --allow-infeasible
  // prints the figures anyway"; the API names the fields a request would use (issue 30 review L3).
  const r = await call('POST', '/api/decode', { model: 'llama-3.1-70b', hardware: 'h100-sxm', chips: 1 });
  assert.equal(r.status, 400, r.body.slice(0, 300));
  assert.equal(r.json.field, 'chips');
  assert.ok(!r.json.error.includes('--'), r.json.error);
  assert.ok(r.json.error.includes('allow_infeasible'), r.json.error);
  for (const field of Object.keys(doc.paths['/api/decode'].post.requestBody.content['application/json'].schema.properties)) {
    assert.ok(!field.includes('-'), `documented field ${field} is not snake_case`);
  }
});
await check('body over 1 MiB: 413', async () => {
  const big = JSON.stringify({ model: 'llama-3.1-8b', pad: 'x'.repeat((1 << 20) + 10) });
  const r = await call('POST', '/api/decode', big);
  assert.equal(r.status, 413);
  assert.equal(r.json.field, 'body');
});
await check('an uploaded config gives the built-in model\'s figures', async () => {
  const config = JSON.parse(readFileSync(`${src}/data/models/hf/llama-3.1-8b.json`, 'utf8'));
  const fields = { hardware: 'h100-sxm', batch: '1,64', context: 4096 };
  const up = await call('POST', '/api/decode', { ...fields, model_config: config });
  const built = await call('POST', '/api/decode', { ...fields, model: 'llama-3.1-8b' });
  assert.equal(up.status, 200, up.body.slice(0, 300));
  conforms('/api/decode', 'POST', up);
  assert.deepEqual(up.json.rows, built.json.rows);
});

// Nothing outside the embedded set: traversal in every spelling reaches a 404.
for (const p of ['/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2fetc%2fpasswd', '/vendor/../../CMakeLists.txt', '/app.js/../../README.md',
  '//etc/passwd', '/index.html%00.js', '/web/app/app.js', '/CMakeLists.txt', '/.git/config', '/%5c..%5c..%5cetc%5cpasswd']) {
  await check(`no file at ${p}`, async () => {
    const r = await call('GET', p);
    assert.equal(r.status, 404, r.body.slice(0, 200));
    assert.ok(!/root:|cmake_minimum_required|\[core\]/.test(r.body));
  });
}
await check('the page and the libraries are served', async () => {
  for (const p of ['/', '/index.html', '/app.js', '/charts.js', '/style.css', '/openapi.json', '/vendor/vega.min.js', '/vendor/vega-lite.min.js', '/vendor/vega-embed.min.js']) {
    const r = await call('GET', p);
    assert.equal(r.status, 200, p);
  }
  const spec = await call('GET', '/openapi.json');
  assert.deepEqual(spec.json, doc);
});

server.stop();
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures ? 1 : 0);
