// The price views, split from app.js by concept: what a price sheet reveals (`chalk prices
// infer`) and hosts' prices beside chalk's cost (`chalk prices compare`). Each takes the
// page's fields and writes its JSON into `data` (window.chalk.data), as training.js does.
import { api } from './api.js';
import { numberButtons } from './explain.js';
import { words, quantityWords } from './words.js';
import { hostsTable } from './hosts.js';

const $ = (id) => document.getElementById(id);

/// What the price sheet reveals, on the page's model and system as stand-in (review 7 M2: the
/// sheet alone priced the CLI's default, DeepSeek-V3 on GB200, unnamed): `chalk prices infer
/// SHEET -m MODEL -H SYSTEM`, its replica the command's own.
export async function updatePrices({ base, sheet, data }) {
  const j = await api('/api/prices/infer', { ...base, sheet, explain: true });
  data.prices = j;
  const esc = (s) => String(s ?? '').replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
  // Four significant figures however small (review 3 L7: 0.00012 printed as 0).
  const n = (v) => (typeof v === 'number' ? Number(v.toPrecision(4)).toLocaleString('en-US', { maximumSignificantDigits: 4 }) : esc(v));
  const d = j.deployment;
  const standIn = `<p id="prices-stand-in" class="note">stand-in for the tiers and (e): ${esc(d.model.name)} on ${d.assumptions.chips} ${esc(d.hardware.chip)} chip${d.assumptions.chips === 1 ? '' : 's'} of ${esc(d.hardware.name)} (the page's model and system)</p>`;
  $('view-prices').innerHTML = `${standIn}<div id="prices-numbers" class="numbers small"></div><table class="wrap"><tr><th></th><th>quantity</th><th>value</th><th>range</th><th>how</th></tr>${j.rows.map((r) =>
    `<tr><td>(${esc(r.inference)})</td><td>${esc(quantityWords(r.quantity))} ${esc(r.subject)}</td><td data-key="${esc(r.quantity)}">${n(r.value)}</td><td>${n(r.low)} - ${n(r.high)}</td><td>${esc(r.note)}</td></tr>`).join('')}</table>`;
  // The central figures explained (chalk/prices/explain.h): click for formula and inputs.
  numberButtons($('prices-numbers'), (j.explanations ?? []).map((x) => ({ key: x.key, label: words(x.key), value: x.result, unit: x.unit, explanation: x })));
}

/// Hosts' prices for the page's model beside its cost on the page's system at each host's
/// speed (`chalk prices compare`, docs/prices.md "Comparing hosts"); a model without a host
/// sheet says so instead of failing the page.
export async function updateHosts({ upload, model, hardware, data }) {
  const el = $('view-hosts');
  if (upload) { el.textContent = 'an uploaded config has no hosts: pick a built-in model'; return; }
  let j;
  try {
    j = await api('/api/prices/compare', { model, hardware });
  } catch (e) {
    if (e.status === 400 && e.field === 'model' && /no host sheet/.test(e.message)) { el.textContent = e.message.replace(/^model: /, ''); return; }
    throw e;
  }
  data.hosts = j;
  el.innerHTML = hostsTable(j);
}
