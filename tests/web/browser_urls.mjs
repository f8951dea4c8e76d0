// The page opened from a hand-edited URL, for browser_test.mjs (which passes its browser,
// server URL and helpers): an unknown model named once, and a model wider than one domain.
import assert from 'node:assert/strict';

export async function urlChecks({ browser, url, check, cli, NW, close }) {
  // A hand-edited URL with a model the server does not know: one error, naming it, once
  // (it was printed by every view, seven times and more). Then, on the same page (one page
  // load less), DeepSeek-V3 picked: it needs more HBM than one 8-chip H100 domain, and the
  // frontier spans the smallest replica that holds it (what the other views and `serving
  // frontier` price), and says so, where it was blank and asked for --replica-chips, a flag
  // the page lacks. Only the views under test run there (the others are answered "skipped" at once).
  const p3 = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const stub = (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' });
  const FRONTIER_ONLY = /\/api\/(decode|prefill|serving\/(sweep|balance)|layouts|prices\/(infer|compare)|train\/|simulate)/;
  await check('a bad URL names the unknown model once; a system alias (h100) selects its system', async () => {
    await p3.goto(`${url}/?model=no-such-model&hardware=h100`);
    await p3.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 30000 });
    const text = await p3.textContent('#error');
    assert.equal(text.split('no-such-model').length - 1, 1, text);
    assert.match(text, /^model: unknown model 'no-such-model'/);
    assert.equal((await p3.evaluate(() => window.chalk.errors)).length, 1);
    // `chalk decode -H h100` reads h100-sxm: so does the page (review 2 L6: the select was blank).
    assert.equal(await p3.inputValue('#hardware'), 'h100-sxm');
    assert.doesNotMatch(p3.url(), /hardware=h100(&|$)/);  // rewritten: h100-sxm, the default, leaves the URL
  });
  await check('DeepSeek-V3 on H100: the frontier and modes on the replica that holds it = chalk serving frontier / modes, said under the chart', async () => {
    await p3.route(FRONTIER_ONLY, stub);
    const before = await p3.evaluate(() => window.chalk.updates);
    // Review 3 L17: chips set on one model are not kept for the next (512 GB200 chips became 512 L4).
    await p3.$eval('#chips', (el) => { el.value = '4'; el.dispatchEvent(new Event('input')); });
    assert.equal(await p3.evaluate(() => window.chalk.state.chips), 8);
    await p3.selectOption('#model', 'deepseek-v3');
    await p3.waitForFunction((k) => window.chalk.updates > k && document.body.dataset.state === 'ready', before, { timeout: 30000 });
    assert.ok((await p3.evaluate(() => window.chalk.errors)).every((e) => /not under test/.test(e)), 'frontier or modes failed');
    assert.match(p3.url(), /model=deepseek-v3/);
    const D = ['-m', 'deepseek-v3', '-H', 'h100-sxm', '-s', '4096'];
    const n = Number(NW(...D)[1]);
    assert.equal(n, 16);  // 674.7 GB of weights + 10% reserve: more than 8 x 80 GB, within 16 x 80 GB
    // Review 7 H3: the frontier and modes are `serving frontier` / `modes` by default (16 chips,
    // the replica the other views price), not --replica-chips 16,32,64, whose floor (64 chips,
    // $0.308/Mtok) was no command's default beside the CLI's $0.698.
    const c = cli('serving', 'frontier', ...D).rows.filter((r) => r.on_frontier !== false);
    assert.ok(c.every((r) => r.chips === n), 'serving frontier priced other sizes');
    const rows = await p3.evaluate(() => window.chalk.views.frontier.data('rows'));
    assert.ok(rows.length > 0);
    assert.deepEqual(rows.map((r) => [r.chips, r.batch, r.cost_usd_per_mtok]), c.map((r) => [r.chips, r.batch, r.cost_usd_per_mtok]));
    const floor = cli('serving', 'modes', ...D).modes.slow_mode.cheapest.cost_usd_per_mtok;
    close(Number(await p3.getAttribute('#modes button[data-key="slow mode (cost floor)"]', 'data-value')), floor, 'slow mode = chalk serving modes');
    assert.match(await p3.textContent('#frontier-note'), /no replica within one scale-up domain holds the model: replicas of 16 chips, the smallest that holds it/);
    // Review 7 M3: the plan's chip budget opens at that replica, not the form's 4 (which the plan refused).
    assert.equal(await p3.inputValue('#plan-budget-chips'), '16');
    assert.equal(await p3.evaluate(() => window.chalk.state.chips), 0);
    assert.doesNotMatch(p3.url(), /chips=/);
  });
  // Issue 30's H1 on the page: Llama 3.1 405B in bf16 on H100 (no 8-chip domain holds it) is
  // priced as the CLI prices it by default, PP2 x (TP8) on 16 chips, not TP16 across two hosts.
  await check('Llama 3.1 405B on H100: headline, memory and batch charts on PP2 x (TP8) = chalk decode --pp 2, serving sweep, prices forward', async () => {
    await p3.unroute(FRONTIER_ONLY);
    await p3.route(/\/api\/(serving\/balance|layouts|prices\/(infer|compare)|train\/|simulate)/, stub);
    const before = await p3.evaluate(() => window.chalk.updates);
    // At batch 256, past the 156 the stages' HBM holds (moved in the same update).
    await p3.$eval('#batch', (el) => { el.value = '8'; el.dispatchEvent(new Event('input')); });
    await p3.selectOption('#model', 'llama-3.1-405b');
    await p3.waitForFunction((k) => window.chalk.updates > k && document.body.dataset.state === 'ready', before, { timeout: 60000 });
    assert.deepEqual((await p3.evaluate(() => window.chalk.errors)).filter((e) => !/not under test/.test(e)), []);
    const A = ['-m', 'llama-3.1-405b', '-H', 'h100-sxm'];
    const fwd = cli('prices', 'forward', ...A).replica_choice;
    assert.equal(fwd.pp, 2);
    assert.equal(await p3.evaluate(() => window.chalk.pp), 2);
    assert.match(await p3.textContent('#chips-out'), /^PP2 x \(TP8\), 16 chips/);
    const P = [...A, '-n', '16', '--pp', '2'];
    const row = cli('decode', ...P, '-b', '256', '-s', '4096').rows[0];
    const tile = async (k) => Number(await p3.getAttribute(`#headline button[data-key="${k}"]`, 'data-value'));
    for (const k of ['t_step_ms', 't_stage_ms', 't_hop_ms', 'tok_per_s_per_user', 'tok_per_s_per_chip']) close(await tile(k), row[k], k);
    // The pipelined row prices a batch that does not fit; the page does not (review 2 H3).
    assert.equal(row.memory_fits, false);
    assert.equal(await p3.getAttribute('#headline button[data-key="cost_usd_per_mtok"]', 'data-value'), '');
    assert.match(await p3.textContent('#headline button[data-key="cost_usd_per_mtok"]'), /batch 256 does not fit in the stages' HBM/);
    close(await tile('ttft_ms'), cli('prefill', ...P, '--prompt', '8192').rows[0].ttft_ms, 'TTFT');
    close(Number(await p3.getAttribute('#memory-numbers button[data-key="weights_gb"]', 'data-value')), row.stage_weights_gb, 'stage weights');
    // The batch charts are `chalk serving sweep`'s default table, ending at prices forward's batch and price ($3.877/Mtok at 156).
    const sweep = cli('serving', 'sweep', ...A, '-s', '4096').rows;
    for (const v of ['step', 'cost']) {
      const pts = await p3.evaluate((n) => window.chalk.views[n].data('rows'), v);
      assert.ok(pts.length >= sweep.length, `${v}: ${pts.length} points`);
      for (const r of pts) close(r.value, sweep.find((x) => x.batch === r.x)[r.key], `${v} ${r.key} at batch ${r.x}`);
    }
    const cost = (await p3.evaluate(() => window.chalk.views.cost.data('rows'))).filter((r) => r.key === 'cost_usd_per_mtok');
    const last = cost.reduce((a, b) => (b.x > a.x ? b : a));
    assert.equal(last.x, fwd.choice.batch);
    close(last.value, fwd.choice.cost_usd_per_mtok, 'cost at the batch that fills HBM');
    // The frontier and its modes price the same PP2 x (TP8) replicas, as chalk serving frontier
    // and modes do by default (review 6 H1: the page sent --replica-chips 16,32,64 and priced
    // TP16 across hosts, a cost floor of $13.27/Mtok where the CLI's is $3.877).
    const fr = cli('serving', 'frontier', ...A, '-s', '4096').rows.filter((r) => r.on_frontier !== false);
    const pts = await p3.evaluate(() => window.chalk.views.frontier.data('rows'));
    assert.deepEqual(pts.map((r) => [r.chips, r.batch, r.cost_usd_per_mtok]), fr.map((r) => [r.chips, r.batch, r.cost_usd_per_mtok]));
    assert.ok(fr.every((r) => r.pp === 2), 'the CLI frontier has replicas without stages');
    const slow = cli('serving', 'modes', ...A, '-s', '4096').modes.slow_mode.cheapest;
    close(Number(await p3.getAttribute('#modes button[data-key="slow mode (cost floor)"]', 'data-value')), slow.cost_usd_per_mtok, 'slow mode');
    close(slow.cost_usd_per_mtok, fwd.choice.cost_usd_per_mtok, 'slow mode = the batch that fills the stages\' HBM');
    assert.match(await p3.textContent('#frontier-note'), /every replica is 2 pipeline stages, as the other views price PP2 x \(TP8\)/);
    assert.doesNotMatch(await p3.textContent('#frontier-note'), /without stages/);
  });
  // Review 3 L6: a system the training model cannot run on says why inside the training view.
  await check('Llama 3.1 8B on L4: the training view says why it has no figures, inside it', async () => {
    await p3.unroute(/\/api\/(serving\/balance|layouts|prices\/(infer|compare)|train\/|simulate)/);
    await p3.route(/\/api\/(prefill|serving\/(sweep|balance|frontier|modes)|layouts|prices\/(infer|compare)|simulate)/, stub);
    const before = await p3.evaluate(() => window.chalk.updates);
    await p3.selectOption('#model', 'llama-3.1-8b');
    await p3.selectOption('#hardware', 'l4');
    await p3.waitForFunction((k) => window.chalk.updates > k && document.body.dataset.state === 'ready' && window.chalk.state.hardware === 'l4', before, { timeout: 60000 });
    assert.match(await p3.textContent('#train-plan'), /^no training figures on this system: hardware: l4 states no scale-out bandwidth/);
    assert.doesNotMatch(await p3.textContent('#error'), /scale-out/);
  });
  await p3.close();
}
