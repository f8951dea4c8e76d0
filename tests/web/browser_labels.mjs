// The page's layout at three widths and its labels (browser_test.mjs runs these on its page
// once every view is drawn): nothing wider than the window, no clipped legend, no overprinted
// axis or legend label, and the same for `chalk serving plot`'s offline charts.
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { OVERLAPS } from './browser_lib.mjs';

/// `page`: the main page with every view drawn; `chalk`: the binary; `shot`: the screenshot's
/// path (its folder takes the serving plot's HTML), or undefined.
export async function labelChecks({ browser, page, check, chalk, shot }) {
  // The page at three widths (issue 30 item 6: 60 px of overflow at 1400 px, legends cut
  // off): nothing wider than the window, every chart inside its view, every legend label whole
  // (vega ends a cut label with "...") and inside its view; axis numbers without SI letters.
  await check('700, 1280 and 1400 px: no horizontal overflow, no clipped legend, axis numbers as "1,024" not "1.024k"', async () => {
    for (const width of [700, 1280, 1400]) {
      await page.setViewportSize({ width, height: 1000 });
      const r = await page.evaluate(() => {
        const bad = [];
        const sw = document.documentElement.scrollWidth;
        if (sw > window.innerWidth) bad.push(`scrollWidth ${sw} > ${window.innerWidth}`);
        for (const svg of document.querySelectorAll('figure svg')) {
          const f = svg.closest('figure').getBoundingClientRect(), b = svg.getBoundingClientRect();
          const id = svg.closest('.chart').id;
          if (b.left < f.left - 0.5 || b.right > f.right + 0.5) bad.push(`${id}: chart ${Math.round(b.left)}-${Math.round(b.right)} outside its view ${Math.round(f.left)}-${Math.round(f.right)}`);
          for (const t of svg.querySelectorAll('.role-legend text')) {
            const tb = t.getBoundingClientRect();
            if (/\u2026/.test(t.textContent) || tb.left < f.left || tb.right > Math.min(f.right, window.innerWidth)) bad.push(`${id}: legend '${t.textContent}' cut (${Math.round(tb.left)}-${Math.round(tb.right)})`);
          }
          for (const t of svg.querySelectorAll('.role-axis-label text')) if (/^-?[\d.,]+[kMGmµun]$/.test(t.textContent)) bad.push(`${id}: axis label '${t.textContent}'`);
        }
        // Review L1: the price sheet's table fits its view and its "how" column reads as lines of words.
        const pv = document.getElementById('view-prices');
        if (pv.scrollWidth > pv.clientWidth + 1) bad.push(`prices table ${pv.scrollWidth} px wide in a ${pv.clientWidth} px view`);
        for (const td of pv.querySelectorAll('tr td:last-child')) if (td.getBoundingClientRect().width < 150) { bad.push(`prices "how" cell ${Math.round(td.getBoundingClientRect().width)} px wide`); break; }
        // Review 3 L9: from 1,280 px two columns of charts (one column left 40% of the window empty).
        const top = (id) => document.getElementById(id).closest('figure').getBoundingClientRect().top;
        if (window.innerWidth >= 1280 && top('view-step') !== top('view-cost')) bad.push('one column of views');
        const batches = [...document.querySelectorAll('#view-step .role-axis-label text')].map((t) => t.textContent);
        if (!batches.includes('1,024')) bad.push(`batch axis ${batches.join(' ')}`);
        return bad;
      });
      assert.deepEqual(r, [], `at ${width} px`);
    }
    await page.setViewportSize({ width: 1500, height: 1300 });
  });
  await check('axis and legend labels never overprint', async () => {
    const overlaps = await page.evaluate(OVERLAPS);
    assert.deepEqual(overlaps, []);
  });
  await check('`chalk serving plot`: no overprinted labels, legends list drawn terms, HBM limit marked', async () => {
    const html = `${shot ? shot.replace(/[^/]*$/, '') : '/tmp/'}serving-plot-test.html`;
    execFileSync(chalk, ['serving', 'plot', '-m', 'llama-3.1-8b', '-H', 'h100-sxm', '--replica-chips', '1,2', '-o', html]);
    const p2 = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
    await p2.goto(`file://${html}`);
    await p2.waitForFunction(() => document.querySelectorAll('svg .role-axis').length >= 8, null, { timeout: 20000 });
    await p2.waitForTimeout(300);
    assert.deepEqual(await p2.evaluate(OVERLAPS), []);
    const legend = await p2.$$eval('#latency .role-legend-label text', (ts) => ts.map((t) => t.textContent));
    assert.ok(!legend.includes('communication') || legend.length > 0);
    // Text laid over the plots (not axis, legend or title labels).
    const marks = await p2.$$eval('svg .mark-text text', (ts) => ts.filter((t) => !t.closest('.role-legend, .role-axis, .role-title')).map((t) => t.textContent));
    assert.ok(marks.some((t) => /HBM full/.test(t)), `no HBM limit label among ${marks.join(' | ')}`);
    assert.ok(!marks.some((t) => /x price|x speed|cost floor|baseline/.test(t)), 'mode names laid over the plot');
    // Axis numbers as the page writes them (review 2 M7: "200m" on a ms axis, "1k" batches).
    const ticks = await p2.$$eval('svg .role-axis-label text', (ts) => ts.map((t) => t.textContent).filter((t) => t));
    assert.ok(ticks.length > 10 && ticks.every((t) => /^-?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?$/.test(t)), `SI or odd ticks: ${ticks.filter((t) => !/^-?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?$/.test(t)).join(' ')}`);
    await p2.close();
  });
}
