// `chalk web` holds under abuse (issue 28 §2-3): a deep body, a slow-client flood, work
// over the request budget and another site's requests each get a clean refusal, and the
// server answers a normal request within a second afterwards. Also HTTP framing (405, HEAD,
// Content-Length with chunked, oversized chunked, %ff, bad UTF-8) and no file a request
// names (a HuggingFace repo id is never resolved from the local cache).
// Loopback only; every loop is bounded; the server is stopped at the end.
// Run: node tests/web/abuse_test.mjs CHALK SRC   (ctest: web.abuse)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, raw } from './server.mjs';

const [chalk, src] = process.argv.slice(2);
// A HuggingFace cache holding a different "meta-llama/Llama-3.1-8B" (2 layers): a request
// naming that repo id must get the built-in model, never this file.
const hf = mkdtempSync(join(tmpdir(), 'chalk-abuse-hf-'));
const snap = join(hf, 'hub', 'models--meta-llama--Llama-3.1-8B', 'snapshots', 'abc');
mkdirSync(snap, { recursive: true });
mkdirSync(join(hf, 'hub', 'models--meta-llama--Llama-3.1-8B', 'refs'), { recursive: true });
writeFileSync(join(hf, 'hub', 'models--meta-llama--Llama-3.1-8B', 'refs', 'main'), 'abc');
const cfg = JSON.parse(readFileSync(`${src}/data/models/hf/llama-3.1-8b.json`, 'utf8'));
writeFileSync(join(snap, 'config.json'), JSON.stringify({ ...cfg, num_hidden_layers: 2 }));
// A small step budget and deadline, so that over-budget work is reached quickly even under ASan.
const server = await startServer(chalk, ['--request-steps', '300000', '--request-seconds', '3'], { ...process.env, HF_HOME: hf });
const { port } = server;
let failures = 0;
const check = async (name, fn) => {
  try { await fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
};
const post = (path, body, headers = {}) => raw(port, 'POST', path, typeof body === 'string' ? body : JSON.stringify(body), headers);
const NORMAL = { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: 8 };

/// A normal request still answers 200 with figures (the server is not dead or wedged; how
/// fast is bench/bench_web.cc's, not a wall clock's under a shared machine's load).
async function answersNormally() {
  const r = await post('/api/decode', NORMAL);
  assert.equal(r.status, 200, r.body.slice(0, 200));
  assert.ok(JSON.parse(r.body).rows[0].tok_per_s > 0);
}

/// Bytes sent as written on a fresh connection; resolves with what came back before the
/// server closed it (or `ms` passed).
function rawBytes(bytes, ms = 5000) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => { s.destroy(); resolve(out); }, ms);
    s.on('data', (d) => { out += d.toString('latin1'); });
    s.on('close', () => { clearTimeout(timer); resolve(out); });
    s.on('error', (e) => { clearTimeout(timer); e.code === 'ECONNRESET' ? resolve(out) : reject(e); });
    s.write(bytes);
  });
}
const statusOf = (text) => Number((text.match(/^HTTP\/1\.1 (\d+)/) || [])[1]);
/// A refusal as web/openapi.json describes it: the status, JSON {error, field}, the error
/// one line starting with its field. Returns the parsed body.
function refused(r, status, field) {
  assert.equal(r.status, status, r.body.slice(0, 300));
  assert.match(r.headers['content-type'], /application\/json/);
  const j = JSON.parse(r.body);
  assert.deepEqual(Object.keys(j).sort(), ['error', 'field']);
  assert.equal(j.field, field, j.error);
  assert.ok(j.error.startsWith(`${field}: `) && !j.error.includes('\n'), j.error);
  return j;
}

await check('deep body: 70,000 nested arrays in a field (it killed the server) is a 400 naming the body', async () => {
  const r = await post('/api/decode', `{"batch": ${'['.repeat(70000)}${']'.repeat(70000)}}`);
  assert.match(refused(r, 400, 'body').error, /nested deeper than 64/);
  const c = await post('/api/decode', `{"hardware": "h100-sxm", "model_config": ${'{"a":'.repeat(30000)}1${'}'.repeat(30000)}}`);
  assert.equal(c.status, 400);
  await answersNormally();
});

await check('over budget: 20,000 requests of 60k tokens in and out is refused up front (413, requests)', async () => {
  const r = await post('/api/simulate', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 1000, requests: 20000, input: 60000, output: 60000 });
  // The rate sizes the replica by the cheapest rule (review 8 H1), which holds 35 of these
  // 120k-token sequences at once: 20,000 x 60,000 outputs / 35 = 3.43e7 steps, plus 1.46e5 for
  // prompts, times 2 (the run and its saturated-capacity probe) = 6.89e7.
  assert.match(refused(r, 413, 'requests').error, /implies about 6\.89e\+07 simulator steps \(.*3\.43e\+07 for outputs with 35 decoding at once.*times 2 simulations\)/);
  const b = await post('/api/simulate', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 10, requests: 20000, 'max-batched-tokens': 1, 'block-size': 1 });
  assert.match(refused(b, 413, 'max-batched-tokens').error, /raise max-batched-tokens/);
  await answersNormally();
});

await check('over budget: lists whose product asks for more than 16,384 rows are refused up front (413, the longest list)', async () => {
  const batch = Array.from({ length: 256 }, (_, i) => i + 1);
  const context = Array.from({ length: 128 }, (_, i) => 1024 * (i + 1));
  const r = await post('/api/serving/sweep', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch, context });
  assert.match(refused(r, 413, 'batch').error, /about 32768 rows \(batch 256 x context 128\)/);
  // Ranges count their powers of two: 1:65536 is 17 batches.
  const ok = await post('/api/serving/sweep', { model: 'llama-3.1-8b', hardware: 'h100-sxm', batch: '1:65536', context: context.slice(0, 64) });
  assert.equal(ok.status, 200, ok.body.slice(0, 200));
  assert.equal(JSON.parse(ok.body).rows.length, 17 * 64);
  await answersNormally();
});

await check('over budget while running: a plan at its caps stops at the step budget (503, request)', async () => {
  const r = await post('/api/plan', { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 50, requests: 5000, 'ttft-slo-ms': 500, 'budget-chips': 256 });
  assert.match(refused(r, 503, 'request').error, /stopped (after 300000 simulator steps|at the web API's 3 s limit)/);
  await answersNormally();
});

// The page's plan form (web/app/plan.js) sends what a user types: each field at an extreme
// is refused in one line naming it, up front where a limit says so, and the server answers
// normally after each.
await check('hostile plans from the page\'s form: extreme fields refused, one line each (400 or 413)', async () => {
  const form = { model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 4, input: 1000, output: 200, ttft_slo_ms: 1000, tpot_slo_ms: 50, budget_chips: 8, requests: 200 };
  // A prompt past the CLI's bound (1..10,000,000 tokens).
  assert.match(refused(await post('/api/plan', { ...form, input: 1e8 }), 400, 'input').error, /length must be 1\.\.10000000 tokens, got 100000000/);
  // Requests and chips past the API's caps (5,000 and 256).
  assert.match(refused(await post('/api/plan', { ...form, requests: 1e9 }), 400, 'requests').error, /at most 5000 through the web API/);
  assert.match(refused(await post('/api/plan', { ...form, budget_chips: 1e6 }), 400, 'budget_chips').error, /at most 256 through the web API/);
  // Candidate lists whose product is past the rows bound: refused before any simulation.
  const caps = Array.from({ length: 4000 }, (_, i) => i + 1);
  assert.match(refused(await post('/api/plan', { ...form, replica_chips: [1, 2, 4, 8, 16], max_seqs_candidates: caps }), 413, 'max_seqs_candidates').error,
    /about 20000 rows .*shorten max_seqs_candidates/);
  await answersNormally();
});

await check('abandoned requests: work whose client has gone stops (no CPU a second later)', async () => {
  // A server whose budget would let these plans run for a minute.
  const big = await startServer(chalk, ['--request-steps', '100000000', '--request-seconds', '60']);
  const cpuSeconds = () => {
    const f = readFileSync(`/proc/${big.proc.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;  // utime + stime, in clock ticks of 1/100 s
  };
  try {
    const body = JSON.stringify({ model: 'llama-3.1-8b', hardware: 'h100-sxm', rate: 50, requests: 5000, 'ttft-slo-ms': 500, 'budget-chips': 256 });
    const head = `POST /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const socks = [];
    for (let i = 0; i < 2; i++) { const s = net.connect(big.port, '127.0.0.1'); s.on('error', () => {}); s.write(head + body); socks.push(s); }
    // Until the plans have used half a second of CPU (at most 10 s on a loaded machine).
    for (let i = 0; i < 100 && cpuSeconds() < 0.5; i++) await new Promise((r) => setTimeout(r, 100));
    const busy = cpuSeconds();
    socks.forEach((s) => s.destroy());
    await new Promise((r) => setTimeout(r, 300));
    const before = cpuSeconds();
    await new Promise((r) => setTimeout(r, 1000));
    const idle = cpuSeconds() - before;
    assert.ok(busy >= 0.5, `the plans never ran (${busy} s of CPU)`);
    assert.ok(idle < 0.2, `${idle} s of CPU in the second after the clients left`);
  } finally {
    big.stop();
  }
  await answersNormally();
});

await check('slow-client flood: 16 connections sending a header line every second do not starve it', async () => {
  const socks = [];
  for (let i = 0; i < 16; i++) { const s = net.connect(port, '127.0.0.1'); s.on('error', () => {}); s.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n'); socks.push(s); }
  for (let k = 0; k < 3; k++) {
    await new Promise((r) => setTimeout(r, 1000));
    socks.forEach((s) => s.write(`X-Slow-${k}: 1\r\n`));
    await answersNormally();
  }
  socks.forEach((s) => s.destroy());
  await new Promise((r) => setTimeout(r, 300));  // the server sees them close
});

await check('connection cap: one client holds at most 32 connections; the rest get 503 at once', async () => {
  const socks = [], answers = [];
  for (let i = 0; i < 40; i++) {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => { got += d; });
    s.on('error', () => {});
    answers.push(() => got);
    socks.push(s);
  }
  await new Promise((r) => setTimeout(r, 500));
  const refused = answers.filter((a) => a().startsWith('HTTP/1.1 503'));
  // At least 8: connections a previous check closed may still count for a moment.
  assert.ok(refused.length >= 8 && refused.length < 40, `${refused.length} refused`);
  assert.match(refused[0](), /too many open connections/);
  socks.forEach((s) => s.destroy());
  await new Promise((r) => setTimeout(r, 200));
  await answersNormally();
});

await check('cross-origin: a text/plain POST, a foreign Origin or Host are refused, and no work runs', async () => {
  const plain = await raw(port, 'POST', '/api/simulate', undefined, { 'Content-Type': 'text/plain' });
  refused(plain, 415, 'Content-Type');
  const t = await rawBytes(`POST /api/decode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
  assert.equal(statusOf(t), 415);
  const origin = await post('/api/decode', NORMAL, { Origin: 'https://evil.example' });
  refused(origin, 403, 'Origin');
  const nul = await post('/api/decode', NORMAL, { Origin: 'null' });
  refused(nul, 403, 'Origin');
  const host = await post('/api/decode', NORMAL, { Host: 'evil.example' });
  refused(host, 403, 'Host');
  const same = await post('/api/decode', NORMAL, { Origin: `http://127.0.0.1:${port}`, Host: `localhost:${port}` });
  assert.equal(same.status, 200);
  await answersNormally();
});

await check('HTTP: OPTIONS, PUT and DELETE on API paths are 405; HEAD / answers like GET /', async () => {
  for (const m of ['OPTIONS', 'PUT', 'DELETE']) {
    const r = await raw(port, m, '/api/decode', m === 'PUT' ? '{}' : undefined);
    refused(r, 405, 'method');
    assert.equal(r.headers.allow, 'POST');
  }
  const get = await raw(port, 'GET', '/');
  const head = await raw(port, 'HEAD', '/');
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-type'], get.headers['content-type']);
  assert.equal(head.headers['content-length'], get.headers['content-length']);
  assert.equal(head.body, '');
});

await check('HTTP: Content-Length with chunked is refused; an oversized chunked body is 413', async () => {
  const both = await rawBytes('POST /api/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n' +
    'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n');
  assert.equal(statusOf(both), 400, both.slice(0, 200));
  assert.match(both, /Transfer-Encoding/);
  const twice = await rawBytes('POST /api/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n' +
    'Content-Length: 40\r\nConnection: close\r\n\r\n{}');
  assert.equal(statusOf(twice), 400, twice.slice(0, 200));
  assert.match(twice, /"field":"Content-Length"/);
  const hosts = await rawBytes('GET /api/models HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
  assert.equal(statusOf(hosts), 400, hosts.slice(0, 200));
  const chunk = 'x'.repeat(1 << 16);
  const chunks = `${(1 << 16).toString(16)}\r\n${chunk}\r\n`.repeat(20) + '0\r\n\r\n';
  const big = await rawBytes('POST /api/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n' +
    `Connection: close\r\n\r\n${chunks}`);
  assert.equal(statusOf(big), 413, big.slice(0, 200));
  await answersNormally();
});

await check('HTTP: %ff in a path and bad UTF-8 in a name are 400, never 500; no header carries exception text', async () => {
  const ff = await raw(port, 'GET', '/api/%ff');
  refused(ff, 400, 'path');
  const badKey = await rawBytes(Buffer.concat([Buffer.from('POST /api/decode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 9\r\nConnection: close\r\n\r\n{"'), Buffer.from([0xff, 0xfe]), Buffer.from('": 1}')]));
  assert.equal(statusOf(badKey), 400, badKey.slice(0, 200));
  // A name of 59 ASCII letters and then "é": cut at 60 bytes, it once split the character.
  const cut = await post('/api/decode', `{"${'a'.repeat(59)}é": 1}`);
  assert.equal(refused(cut, 400, `${'a'.repeat(59)}...`).field.length, 62);
  for (const r of [ff, cut]) assert.ok(!Object.keys(r.headers).some((h) => /exception/i.test(h)), JSON.stringify(r.headers));
});

await check('no file a request names: a HF repo id is the built-in model, not the local cache; no server path in answers', async () => {
  const repo = await post('/api/decode', { ...NORMAL, model: 'meta-llama/Llama-3.1-8B' });
  const built = await post('/api/decode', NORMAL);
  assert.equal(repo.status, 200, repo.body.slice(0, 200));
  assert.deepEqual(JSON.parse(repo.body).rows, JSON.parse(built.body).rows);
  assert.ok(!repo.body.includes(hf), 'the cache path leaked');
  // The CLI does read that cache (so the comparison above means something).
  const cli = JSON.parse(execFileSync(chalk, ['decode', '--model', 'meta-llama/Llama-3.1-8B', '--hardware', 'h100-sxm', '--batch', '8', '--json'],
    { encoding: 'utf8', env: { ...process.env, HF_HOME: hf } }));
  assert.notDeepEqual(cli.rows, JSON.parse(built.body).rows);
  const up = await post('/api/decode', { hardware: 'h100-sxm', model_config: { model_type: 'llama', num_hidden_layers: 2 } });
  assert.equal(up.status, 400);
  assert.ok(!/\/tmp|chalk-web-/.test(up.body), up.body);
});

server.stop();
rmSync(hf, { recursive: true, force: true });
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures ? 1 : 0);
