// The plan view (issue 31) and the price views of the page, for browser_test.mjs, which
// passes its page (loaded with Llama 3.1 8B on H100 for the plan; on H200 with fp8 KV for
// the prices) and helpers; each check compares the page with `chalk ... --json`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

export async function planChecks({ page, check, cli, M }) {
  await check('plan view: the chosen deployment, the Pareto table and the launch file = chalk plan (issue 31)', async () => {
    const form = { rate: '10', input: '1000', output: '200', 'ttft-slo-ms': '500', 'tpot-slo-ms': '50', 'budget-chips': '2' };  // 2 chips: 12 deployments, 0.06 s of CPU
    for (const [k, v] of Object.entries(form)) await page.fill(`#plan-${k}`, v);
    await page.click('#plan-run');
    await page.waitForFunction(() => Number(document.body.dataset.plans || 0) >= 1, null, { timeout: 30000 });
    assert.equal(await page.textContent('#plan-error'), '');
    const j = await page.evaluate(() => window.chalk.data.plan);
    const c = cli('plan', ...M, ...Object.entries(form).flatMap(([k, v]) => [`--${k}`, v]), '--requests', '200');
    assert.ok(c.best && c.rows.length > 1, 'the CLI plans a deployment and a table');
    assert.deepEqual(j.best, c.best);
    assert.deepEqual(j.rows, c.rows);
    // The table lists every row, the chosen one marked; the choice in words; the launch file shown is the CLI's first (vLLM's serve.sh).
    const costs = await page.$$eval('#plan-table td[data-key="cost_usd_per_hour"]', (ts) => ts.length);
    assert.equal(costs, c.rows.length);
    assert.equal(await page.$$eval('#plan-table tr.chosen', (ts) => ts.length), 1);
    assert.match(await page.textContent('#plan-best'), new RegExp(`^chosen: ${c.best.mode}: ${c.best.replicas} x ${c.best.replica_chips} chips`));
    assert.equal(await page.textContent('#plan-launch'), c.launch[0].files[0].text);
    assert.deepEqual(await page.$$eval('#plan-file option', (os) => os.map((o) => o.textContent)), c.launch.flatMap((l) => l.files.map((f) => f.path)));
    assert.ok(await page.isVisible('#plan-file'));
    assert.match(c.launch[0].files[0].text, /vllm serve/);
  });
  await check('plan view with drafts: the page sends --draft, --acceptance, --drafter and shows the verdict = chalk plan (review 7 M5)', async () => {
    const form = { rate: '2', input: '1000', output: '200', 'ttft-slo-ms': '2000', 'tpot-slo-ms': '50', 'budget-chips': '1', draft: '3', acceptance: '0.8' };
    for (const [k, v] of Object.entries(form)) await page.fill(`#plan-${k}`, v);
    await page.selectOption('#plan-drafter', 'eagle3');
    const before = Number(await page.evaluate(() => document.body.dataset.plans || 0));
    await page.click('#plan-run');
    await page.waitForFunction((n) => Number(document.body.dataset.plans || 0) > n, before, { timeout: 30000 });
    assert.equal(await page.textContent('#plan-error'), '');
    const j = await page.evaluate(() => window.chalk.data.plan);
    const c = cli('plan', ...M, ...Object.entries(form).flatMap(([k, v]) => [`--${k}`, v]), '--drafter', 'eagle3', '--requests', '200');
    assert.deepEqual(j.levers, c.levers);
    assert.deepEqual(j.speculation_verdict, c.speculation_verdict);
    assert.equal(c.levers.drafter, 'eagle3');
    const verdict = c.speculation_verdict.speculation_pays ? 'it pays' : c.speculation_verdict.speculation_faster ? 'it is faster, not cheaper' : 'it does not pay';
    assert.match(await page.textContent('#plan-best'), /; drafting 3 a step \(2\.952 kept\): TPOT p90 .* without drafts .*: it /);
    assert.ok((await page.textContent('#plan-best')).includes(`: ${verdict}`), `the page's verdict is not chalk plan's (${verdict})`);
    assert.match(c.launch[0].files[0].text, /--speculative-config/);
    await page.fill('#plan-draft', '0');  // later checks plan without drafts
    await page.selectOption('#plan-drafter', '');
  });
}

export async function priceChecks({ page, check, cli, chalk, close }) {
  await check('price inferences = chalk prices infer on the page\'s model and system', async () => {
    // Review 7 M2: the sheet alone priced the CLI's default stand-in (DeepSeek-V3 on GB200), unnamed.
    const S = ['gemini-1.5-pro', '-m', 'llama-3.1-8b', '-H', 'h200', '--kv-dtype', 'fp8'];
    const j = cli('prices', 'infer', ...S);
    const c = j.rows;
    assert.deepEqual(await page.evaluate(() => window.chalk.data.prices.rows), c);
    assert.equal(j.deployment.model.name, 'llama-3.1-8b');
    assert.match(await page.textContent('#prices-stand-in'), /^stand-in for the tiers and \(e\): llama-3\.1-8b on 1 H200 SXM chip of h200 \(the page's model and system\)$/);
    const cells = await page.$$eval('#view-prices td[data-key]', (ts) => ts.map((t) => t.dataset.key));
    assert.deepEqual(cells, c.map((f) => f.quantity));
    // Review L1: each quantity in the words of the CLI's own table, never its snake_case key.
    const text = execFileSync(chalk, ['prices', 'infer', ...S, '-q'], { encoding: 'utf8' });
    const labels = await page.$$eval('#view-prices tr', (trs) => trs.slice(1).map((tr) => tr.cells[1].textContent));
    assert.equal(labels.length, c.length);
    labels.forEach((l, i) => {
      const w = l.slice(0, l.length - (c[i].subject ? c[i].subject.length + 1 : 1)).trim();
      assert.ok(!/_/.test(w) && text.includes(w), `'${w}' (${c[i].quantity}) is not a label of chalk prices infer's table`);
    });
    assert.ok(labels.some((l) => l.startsWith('KV bytes per token')));
    // Review 3 L7: a small figure kept its digits (0.000123 printed as 0).
    const values = await page.$$eval('#view-prices td[data-key]', (ts) => ts.map((t) => t.textContent));
    c.forEach((f, i) => { if (typeof f.value === 'number' && f.value !== 0) assert.notEqual(values[i], '0', `${f.quantity} ${f.value}`); });
    assert.ok(c.some((f) => typeof f.value === 'number' && f.value !== 0 && Math.abs(f.value) < 5e-4), 'no small figure to check');
    // The KV bytes per token it reads from the price step explain themselves, = the CLI's figure.
    await page.click('#prices-numbers button[data-key="kv_bytes_per_token"]');
    const shown = await page.$eval('#explain-body h3', (h) => h.dataset.key);
    assert.equal(shown, 'kv_bytes_per_token');
    const x = cli('prices', 'infer', ...S, '--explain').explanations.find((e) => e.key === 'kv_bytes_per_token');
    close(x.result, c.find((f) => f.quantity === 'kv_bytes_per_token').value, 'explained KV bytes per token');
  });
  await check('hosts beside their cost = chalk prices compare', async () => {
    await page.waitForFunction(() => window.chalk.data.hosts?.rows[0].systems[0].system === 'h200');
    const c = cli('prices', 'compare', '-m', 'llama-3.1-8b', '-H', 'h200');
    assert.deepEqual(await page.evaluate(() => window.chalk.data.hosts), c);
    const cells = await page.$$eval('#view-hosts td[data-key="blended_usd_per_mtok"]', (ts) => ts.length);
    assert.equal(cells, c.rows.length);
    // No host of Llama 3.1 8B states a speed: each row says the speed it was compared at is assumed.
    const assumed = await page.$$eval('#view-hosts td', (ts) => ts.filter((t) => / \(assumed\)$/.test(t.textContent)).length);
    assert.equal(assumed, c.rows.filter((o) => o.speed_assumed).length);
    assert.ok(assumed > 0);
    // Each host named as the CLI's table names it, with the weights' format its costs assume
    // ("DeepInfra (fp8)"; review 6 M3: the page dropped it, so equal speeds had unexplained costs).
    const names = await page.$$eval('#view-hosts tr td:first-child', (ts) => ts.map((t) => t.textContent));
    assert.deepEqual(names, c.rows.map((o) => (o.weights_dtype === 'checkpoint' ? o.provider : `${o.provider} (${o.weights_dtype})`)));
    assert.ok(c.rows.some((o) => o.weights_dtype !== 'checkpoint'), 'no host of the model states a quantization: the check above proves nothing');
  });
}
