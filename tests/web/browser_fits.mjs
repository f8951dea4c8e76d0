// The page's "cheapest" chips and unpriced batches (review 2 H2, H3, M4) in the browser, for
// browser_test.mjs (which passes its browser, server URL and helpers; N is what the page
// prices at a batch: `prices forward -b`'s replica, the least $/Mtok among the sizes that hold it).
import assert from 'node:assert/strict';

export async function fitsChecks({ browser, url, check, cli, N, close }) {
  // Review 2 H2/H3: "cheapest" is the least $/Mtok at the slider's batch, and a batch past HBM
  // gets no price in any tile, at the three widths. Views not under test are stubbed.
  const p5 = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
  await check('the chips slider\'s "cheapest" prices the slider\'s batch; a batch past HBM has no price in any tile (700/1280/1400 px)', async () => {
    await p5.route(/\/api\/(prefill|serving\/(frontier|modes)|layouts|prices\/(infer|compare)|train\/|simulate)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    const wait = async () => p5.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1 && document.body.dataset.state === 'ready', null, { timeout: 30000 });
    // Llama 3.1 8B on H100 at batch 256, fp8 KV: 1 chip holds at most 197 sequences at 4096
    // tokens ((80 x 0.9 - 16.06 GB) / (256 x 4096 x 65,536 B / 256)), so the page prices 2,
    // the cheapest that holds 256, not the memory-full choice.
    await p5.goto(`${url}/?model=llama-3.1-8b&hardware=h100-sxm&batch=256&kv=fp8`);
    await wait();
    const A = ['-m', 'llama-3.1-8b', '-H', 'h100-sxm', '-s', '4096', '--kv-dtype', 'fp8'];
    const n = N(...A, '-b', '256');
    assert.match(await p5.textContent('#chips-out'), new RegExp(`^cheapest at batch 256: ${n[1]} \\(runner-up \\d+, \\$[\\d.]+/Mtok\\)$`));
    const row = cli('decode', ...A, ...n, '-b', '256').rows[0];
    assert.ok(row.memory_fits);
    close(Number(await p5.getAttribute('#headline button[data-key="cost_usd_per_mtok"]', 'data-value')), row.cost_usd_per_mtok, 'headline cost');
    // Qwen3-235B on MI300X at 16,384 tokens: 8 chips hold 248 sequences, so batch 256 fits no
    // replica within the domain: the headline, the sweep tile and the explanation price nothing.
    await p5.goto(`${url}/?model=qwen3-235b-a22b&hardware=mi300x&batch=256&context=16384`);
    await wait();
    assert.match(await p5.textContent('#chips-out'), /batch 256 fits none/);
    assert.equal(await p5.getAttribute('#headline button[data-key="cost_usd_per_mtok"]', 'data-value'), '');
    assert.equal(await p5.getAttribute('#sweep-numbers button[data-key="cost_usd_per_mtok"]', 'data-value'), '');
    assert.match(await p5.textContent('#sweep-numbers'), /batch 256 does not fit in HBM/);
    assert.doesNotMatch(await p5.textContent('#sweep-numbers'), /throughput per chip at batch/);
    await p5.click('#headline button[data-key="cost_usd_per_mtok"]');
    assert.match(await p5.textContent('#explain-body h3'), /^cost_usd_per_mtok = - /);
    assert.match(await p5.textContent('#explain-body .substituted'), /does not fit on 8 chips \(at most 248 sequences\): no price/);
    for (const width of [700, 1280, 1400]) {
      await p5.setViewportSize({ width, height: 1000 });
      const over = await p5.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(over <= 0, `${width} px: ${over} px of horizontal overflow`);
      assert.ok(await p5.isVisible('#sweep-numbers button[data-key="cost_usd_per_mtok"]'), `${width} px: the sweep's cost tile`);
    }
  });
  await p5.close();
}
