// The page opened from a hand-edited URL, for browser_test.mjs (which passes its browser,
// server URL and helpers): an unknown model named once, and a model wider than one domain.
import assert from 'node:assert/strict';

export async function urlChecks({ browser, url, check, cli, NW }) {
  // A hand-edited URL with a model the server does not know: one error, naming it, once
  // (it was printed by every view, seven times and more). Then, on the same page (one page
  // load less), DeepSeek-V3 picked: it needs more HBM than one 8-chip H100 domain, and the
  // frontier spans the smallest replica that holds it (what the other views price) and its
  // doubles, and says so, where it was blank and asked for --replica-chips, a flag the page
  // lacks. Only the views under test run there (the others are answered "skipped" at once).
  const p3 = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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
  await check('DeepSeek-V3 on H100: the frontier on replicas that hold it = chalk serving frontier, said under the chart', async () => {
    await p3.route(/\/api\/(decode|prefill|serving\/(sweep|balance)|layouts|prices\/(infer|compare)|train\/|simulate)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    const before = await p3.evaluate(() => window.chalk.updates);
    await p3.selectOption('#model', 'deepseek-v3');
    await p3.waitForFunction((k) => window.chalk.updates > k && document.body.dataset.state === 'ready', before, { timeout: 30000 });
    assert.ok((await p3.evaluate(() => window.chalk.errors)).every((e) => /not under test/.test(e)), 'frontier or modes failed');
    assert.match(p3.url(), /model=deepseek-v3/);
    const D = ['-m', 'deepseek-v3', '-H', 'h100-sxm', '-s', '4096'];
    const n = Number(NW(...D)[1]);
    assert.equal(n, 16);  // 674.7 GB of weights + 10% reserve: more than 8 x 80 GB, within 16 x 80 GB
    const c = cli('serving', 'frontier', ...D, '--replica-chips', `${n},${2 * n},${4 * n}`).rows.filter((r) => r.on_frontier !== false);
    const rows = await p3.evaluate(() => window.chalk.views.frontier.data('rows'));
    assert.ok(rows.length > 0);
    assert.deepEqual(rows.map((r) => [r.chips, r.batch, r.cost_usd_per_mtok]), c.map((r) => [r.chips, r.batch, r.cost_usd_per_mtok]));
    assert.match(await p3.textContent('#frontier-note'), /no replica within one scale-up domain holds the model: replicas of 16, 32, 64 chips/);
  });
  await p3.close();
}
