// The training view while its plan is searched (review 4 L0/M6: 20 s under load with an
// empty view), for browser_test.mjs (which passes its browser, server URL and helpers).
import assert from 'node:assert/strict';

export async function trainingChecks({ browser, url, check }) {
  const p = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await check('the training view says "computing" while its plan is searched, then shows the plan', async () => {
    // Views not under test are stubbed; /api/train/layouts is held until the view has been read.
    await p.route(/\/api\/(prefill|serving\/(frontier|modes)|layouts|prices\/(infer|compare)|simulate)/,
      (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error": "not under test", "field": "test"}' }));
    let release;
    const held = new Promise((r) => { release = r; });
    await p.route(/\/api\/train\/layouts/, async (route) => { await held; await route.continue(); });
    await p.goto(`${url}/?model=llama-3.1-8b&hardware=h100-sxm&train_chips=64`);
    await p.waitForFunction(() => /computing the best training plan on 64 chips/.test(document.getElementById('train-plan').textContent), null, { timeout: 30000 });
    assert.equal(await p.getAttribute('#train-plan >> xpath=..', 'aria-busy'), 'true');
    release();
    await p.waitForFunction(() => /^best plan on 64 chips: /.test(document.getElementById('train-plan').textContent), null, { timeout: 60000 });
    assert.equal(await p.getAttribute('#train-plan >> xpath=..', 'aria-busy'), null);
    assert.ok(await p.isVisible('#train-numbers button[data-key="mfu"]'), 'the MFU tile');
  });
  await p.close();
}
