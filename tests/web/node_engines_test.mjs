// Every package web/package-lock.json pins runs on the Node.js that Debian 12 ships (issue 28).
// The README's set-up installs Debian's nodejs (18.20.4+dfsg-1~deb12u1 in bookworm and
// bookworm-security, `apt-cache policy nodejs`) where no npm is on the PATH, and only the
// Debian and npm registries are reachable, so a package that declares `engines.node` >= 20
// (playwright-core from 1.62, vega-lite from 6.4.3, yargs 18) breaks the test command on a
// fresh machine even when a newer Node on the CI machine hides it. The range is matched with
// npm's own semver (web/node_modules/semver, in the lock through vega-embed).
// Run: node tests/web/node_engines_test.mjs SRC   (ctest: web.node_engines)
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const DEBIAN12_NODE = '18.20.4';
const src = process.argv[2];
if (!src) { console.error('usage: node_engines_test.mjs SRC'); process.exit(2); }
const lockPath = path.resolve(src, 'web/package-lock.json');
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const semverDir = path.resolve(src, 'web/node_modules/semver');
if (!existsSync(semverDir)) { console.log('FAIL: no web/node_modules/semver: run npm ci --prefix web (scripts/setup does)'); process.exit(1); }
const semver = createRequire(path.resolve(src, 'web/package.json'))('semver');

const check = (packages, node) => {
  const bad = [];
  let ranged = 0;
  for (const [where, pkg] of Object.entries(packages)) {
    if (!where) continue;                        // the root project
    const range = pkg.engines && (typeof pkg.engines === 'object' ? pkg.engines.node : undefined);
    if (!range) continue;
    ranged++;
    if (!semver.satisfies(node, range)) bad.push(`${where.replace(/^node_modules\//, '')} ${pkg.version} needs node ${range}`);
  }
  return { bad, ranged };
};

// Self-check: the check catches the pin that broke the fresh machine (playwright-core 1.65.1).
const planted = check({ 'node_modules/playwright-core': { version: '1.65.1', engines: { node: '>=20' } } }, DEBIAN12_NODE);
if (planted.bad.length !== 1) { console.log('FAIL: the check let playwright-core 1.65.1 (node >=20) through'); process.exit(1); }

const { bad, ranged } = check(lock.packages || {}, DEBIAN12_NODE);
if (bad.length) {
  console.log(`FAIL: web/package-lock.json pins packages that do not run on Debian 12's Node.js ${DEBIAN12_NODE}:`);
  for (const b of bad) console.log(`  ${b}`);
  process.exit(1);
}
console.log(`node engines: all ${Object.keys(lock.packages).length - 1} packages pinned (${ranged} with an engines.node range) accept Node.js ${DEBIAN12_NODE}`);
