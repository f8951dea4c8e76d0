// Helpers the page's browser tests share (browser_test.mjs and the views' modules): the
// overprint finder, the CLI's --json, and the chips the page prices with its slider at
// "cheapest" (issue 30 item 1).
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';

// Axis and legend labels whose boxes overlap, in every vega chart of the page.
export const OVERLAPS = () => {
  const bad = [];
  for (const svg of document.querySelectorAll('svg')) {
    for (const group of svg.querySelectorAll('.role-axis, .role-legend')) {
      const boxes = [...group.querySelectorAll('text')].filter((t) => t.textContent && t.getAttribute('opacity') !== '0' && getComputedStyle(t).opacity !== '0')
        .map((t) => ({ t: t.textContent, r: t.getBoundingClientRect() }));
      for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].r, b = boxes[j].r;
        if (a.width && b.width && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) bad.push(`${svg.parentElement.id}: '${boxes[i].t}' over '${boxes[j].t}'`);
      }
    }
  }
  return bad;
};
/// `cli(...args)`: `chalk ... --json`, parsed. `N(...args)`: ['-n', chips] for what the page
/// prices at its batch slider's batch ('-b' in args, else the page's 64): the replica_choice
/// of `chalk prices forward -b B` (cheapest_serving_replica: the cheapest size within the
/// scale-up domain whose HBM holds B; issue 30 item 1), which the page asks /api/prices/forward
/// for (web/app/replica.js). `NW(...args)`: `serving window`'s choice alone, the most tok/s per
/// chip at the memory-full batch (the traffic and frontier pages, whose price calls are
/// stubbed out, fall back to it). `close(a, b, what)`: equal to 1e-9 relative.
export function replicaHelpers(chalk) {
  const cli = (...args) => JSON.parse(execFileSync(chalk, [...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
  const NW = (...args) => ['-n', String(cli('serving', 'window', ...args).replica_choice.choice.chips)];
  const N = (...argsIn) => {
    const at = argsIn.indexOf('-b');
    const batch = at >= 0 ? argsIn[at + 1] : '64';
    const args = at >= 0 ? [...argsIn.slice(0, at), ...argsIn.slice(at + 2)] : argsIn;
    return ['-n', String(cli('prices', 'forward', ...args, '-b', batch, '--allow-infeasible').replica_choice.choice.chips)];
  };
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: page ${a}, CLI ${b}`);
  return { cli, N, NW, close };
}
