// The page's traffic view (`chalk simulate`) in the browser, for browser_test.mjs (which
// passes its browser, server URL and helpers): the rate it opens at, the API's warnings and the
// LoRA field.
import assert from 'node:assert/strict';

export async function trafficChecks({ browser, url, check, cli, N, close }) {
  // Review M2: the traffic view opened on an overloaded default (Llama 3.1 70B on 8 H100 at
  // 4 req/s, capacity about 3.0) and hid the API's warning. Llama 3.1 8B on 2 H100 (serving
  // window's cheapest, the page's choice with /api/prices/forward stubbed out) with
  // 32,768-token prompts overloads at the default 2 req/s; the page
  // opens at the largest power of two within 80% of the capacity the API reports, and shows
  // OVERLOADED beside the chart when the user moves the rate there. Views not under test are
  // answered "skipped" at once.
  const p4 = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await check('traffic: opens below the capacity the API reports; shows the API\'s OVERLOADED warning beside the chart', async () => {
    await p4.route(/\/api\/(decode|prefill|serving\/(sweep|balance|frontier|modes)|layouts|prices\/(infer|compare|forward)|train\/)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    await p4.goto(`${url}/?model=llama-3.1-8b&hardware=h100-sxm&prompt=32768`);
    await p4.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1 && document.body.dataset.state === 'ready', null, { timeout: 30000 });
    const S = ['simulate', '-m', 'llama-3.1-8b', '-H', 'h100-sxm', ...N('-m', 'llama-3.1-8b', '-H', 'h100-sxm', '-s', '4096'), '--requests', '200', '--input', '32768', '--output', '200'];
    const over = cli(...S, '--rate', '2');
    assert.ok(over.details[0].overloaded && over.warnings.some((w) => /OVERLOADED/.test(w)), 'the default 2 req/s is not overloaded here');
    // capacity about 1.16 req/s: 0.8 x 1.16 = 0.93, the power of two below it 0.5 req/s
    const rate = 2 ** Math.floor(Math.log2(0.8 * over.details[0].capacity_req_per_s));
    assert.equal(rate, 0.5);
    assert.equal(await p4.evaluate(() => window.chalk.data.simulate_rate), rate);
    assert.equal(await p4.inputValue('#rate'), '-1');
    const at = cli(...S, '--rate', String(rate));
    assert.deepEqual(at.warnings, []);
    assert.ok(!at.details[0].overloaded);
    close(await p4.evaluate(() => window.chalk.data.simulate.rows[0].ttft_p99_ms), at.rows[0].ttft_p99_ms, 'TTFT p99 at the rate opened');
    assert.match(await p4.textContent('#sim-warnings'), /^2 req\/s overloads this deployment \(capacity about 1\.\d\d req\/s\): the page opens at 0\.5 req\/s/);
    // The user's own rate is kept, overloaded, and the API's warning stands beside the chart.
    await p4.$eval('#rate', (el) => { el.value = '1'; el.dispatchEvent(new Event('input')); });
    await p4.waitForFunction(() => window.chalk.data.simulate_rate === 2 && document.body.dataset.state === 'ready', null, { timeout: 30000 });
    assert.equal(await p4.textContent('#sim-warnings'), over.warnings.join('\n'));
    const box = await p4.$eval('#sim-warnings', (el) => { const w = el.getBoundingClientRect(), c = document.getElementById('view-simulate').getBoundingClientRect(); return { h: w.height, gap: c.top - w.bottom }; });
    assert.ok(box.h > 10 && box.gap >= 0 && box.gap < 20, `warning box ${JSON.stringify(box)}`);
  });
  await p4.close();
  // Review 2 L10: where even the slider's lowest rate (1/4 req/s) overloads the deployment
  // (Llama 3.1 405B on its cheapest H100 replica, capacity about 0.2 req/s), the page says so
  // instead of implying 0.25 req/s is served.
  const p5 = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await check('traffic: a capacity below the slider\'s lowest rate is said, not implied served', async () => {
    await p5.route(/\/api\/(decode|prefill|serving\/(sweep|balance|frontier|modes)|layouts|prices\/(infer|compare|forward)|train\/)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    // 32,768-token prompts: about 0.08 req/s on 16 H100 as PP2 x (TP8) (`chalk simulate --input 32768`).
    await p5.goto(`${url}/?model=llama-3.1-405b&hardware=h100-sxm&prompt=32768`);
    await p5.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1 && document.body.dataset.state === 'ready', null, { timeout: 60000 });
    const capacity = await p5.evaluate(() => window.chalk.data.simulate.details[0].capacity_req_per_s);
    assert.ok(capacity < 0.25, `capacity ${capacity} req/s: this case needs one below the slider's 0.25`);
    assert.equal(await p5.evaluate(() => window.chalk.data.simulate_rate), 0.25);
    assert.match(await p5.textContent('#sim-warnings'), /the page opens at the slider's lowest rate, 0\.25 req\/s, which overloads it too/);
  });
  await p5.close();
  // Issue 31: the traffic view's LoRA field passes --lora to the API as typed and says what
  // the adapters cost; the field stays within the page at the three widths the layout check uses.
  const p6 = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await check('traffic: the LoRA field runs simulate --lora, shows the adapters\' cost and fits at 700, 1280 and 1400 px', async () => {
    await p6.route(/\/api\/(decode|prefill|serving\/(sweep|balance|frontier|modes)|layouts|prices\/(infer|compare|forward)|train\/)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    await p6.goto(`${url}/?model=llama-3.1-8b&hardware=h100-sxm&rate=1&prompt=1024&lora=4:16`);
    await p6.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1 && document.body.dataset.state === 'ready', null, { timeout: 30000 });
    const S = ['simulate', '-m', 'llama-3.1-8b', '-H', 'h100-sxm', ...N('-m', 'llama-3.1-8b', '-H', 'h100-sxm', '-s', '4096'), '--requests', '200', '--input', '1024', '--output', '200', '--rate', '1', '--lora', '4:16'];
    const l = await p6.evaluate(() => window.chalk.data.simulate.details[0].lora);
    assert.deepEqual(l, cli(...S).details[0].lora);
    // One Llama 3.1 8B adapter of rank 16 on all seven projections: 41,943,040 x 2 B.
    assert.equal(l.adapter_bytes, 83886080);
    assert.match(await p6.textContent('#sim-summary'), /; LoRA 4 adapters of rank 16, 83\.89 MB each, 1 in HBM: \d+ loads, /);
    assert.equal(await p6.inputValue('#lora'), '4:16');
    // Enter in the box applies it in place: no navigation, the batch and context as set (review 4 H2).
    await p6.evaluate(() => { window.kept = 1; });
    await p6.press('#lora', 'Enter');
    await p6.waitForTimeout(300);
    assert.equal(await p6.evaluate(() => window.kept), 1, 'Enter in the LoRA box reloaded the page');
    assert.equal(await p6.evaluate(() => `${window.chalk.state.batch},${window.chalk.state.context}`), '64,4096');
    for (const width of [700, 1280, 1400]) {
      await p6.setViewportSize({ width, height: 1000 });
      const box = await p6.$eval('#lora', (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, w: r.width, page: document.documentElement.clientWidth }; });
      assert.ok(box.w > 40 && box.left >= 0 && box.right <= box.page, `LoRA field at ${width} px: ${JSON.stringify(box)}`);
    }
  });
  await p6.close();
  // Review 11 H1: behind one LoRA slot, 8 adapters at 5 req/s on one H100 queue for 13.5 s on
  // average (output 647 of 932 tok/s offered) and the page said nothing. The API's keep-up
  // check (docs/simulator.md, "Keeping up") warns FALLS BEHIND, and the page shows it beside the
  // chart, as chalk simulate prints it for the same request.
  const p7 = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await check('traffic: a run behind its LoRA slots shows the API\'s FALLS BEHIND warning', async () => {
    await p7.route(/\/api\/(decode|prefill|serving\/(sweep|balance|frontier|modes)|layouts|prices\/(infer|compare|forward)|train\/)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    await p7.goto(`${url}/?model=llama-3.1-8b&hardware=h100-sxm&rate=5&prompt=2048&lora=8:16`);
    await p7.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1 && document.body.dataset.state === 'ready', null, { timeout: 30000 });
    const S = ['simulate', '-m', 'llama-3.1-8b', '-H', 'h100-sxm', ...N('-m', 'llama-3.1-8b', '-H', 'h100-sxm', '-s', '4096'), '--requests', '200', '--input', '2048', '--output', '200', '--rate', '5', '--lora', '8:16'];
    const c = cli(...S);
    assert.ok(!c.details[0].keeps_up && c.warnings.some((w) => /FALLS BEHIND/.test(w) && /1 LoRA slot for 8 adapters/.test(w)), `chalk simulate: ${c.warnings}`);
    assert.equal(await p7.evaluate(() => window.chalk.data.simulate.details[0].keeps_up), false);
    assert.equal(await p7.textContent('#sim-warnings'), c.warnings.join('\n'));
    // Beside the output served, what was offered: 200 requests x 200 tokens at about 4.66 req/s.
    assert.match(await p7.textContent('#sim-summary'), /; output [\d,.]+ tok\/s of the 932\.3 tok\/s offered;/);
  });
  await p7.close();
}
