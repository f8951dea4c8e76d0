// Shows one figure's explanation (the library's chalk/engine/explain.h, as --json gives it):
// the formula in symbols, the values put in with units and sources, the algebra, the result.
import { unitWords } from './words.js';

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
// An integer (bytes per token, parameters, layers) prints exactly with separators: 327,680,
// not 327,700, which reads as exact but is not (review 2 L13). Other numbers keep four
// significant figures; from 10,000 up in compact form (70.27K), so a rounded figure never
// looks like an exact one.
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumSignificantDigits: 4 });
const fmt = (v) => {
  if (v === null || v === undefined) return '-';  // no figure (a row that does not fit has no price)
  if (typeof v !== 'number') return esc(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 1e4) return compact.format(v);
  return Number(v.toPrecision(4)).toLocaleString('en-US', { maximumSignificantDigits: 4 });
};

export function showExplanation(x) {
  const box = document.getElementById('explain');
  const rows = x.inputs.map((i) => `<tr><td><code>${esc(i.symbol)}</code></td><td>${fmt(i.value)} ${esc(i.unit)}</td><td>${esc(i.name)}</td><td>${esc(i.source)}</td></tr>`).join('');
  document.getElementById('explain-body').innerHTML =
    `<h3 data-key="${esc(x.key)}">${esc(x.key)} = ${fmt(x.result)} ${esc(x.unit)}</h3><p>${esc(x.quantity)}</p>` +
    `<p><code class="formula">${esc(x.formula)}</code></p>` +
    `<table><tr><th>symbol</th><th>value</th><th>what</th><th>source</th></tr>${rows}</table>` +
    `<p class="substituted">= ${esc(x.substituted)}</p><p>source: ${esc(x.source)}</p>` + (x.note ? `<p>note: ${esc(x.note)}</p>` : '');
  box.hidden = false;
}

export function hideExplanation() { document.getElementById('explain').hidden = true; }

/// A figure as a tile shows it: a fraction as a percentage ("0.6408", "fraction" -> "64.1 %"),
/// other numbers to four significant figures with the unit in words (words.js).
export function display(value, unit) {
  if (value === null || value === undefined) return `- ${esc(unit ?? '')}`;
  if (unit === 'fraction' && typeof value === 'number') return `${fmt(Number((100 * value).toPrecision(3)))}%`;
  return `${fmt(value)} ${esc(unitWords(unit ?? ''))}`;
}

/// A row of clickable numbers; `figures` is [{key, label, value, unit, explanation?}]. The
/// button keeps the API's value in data-value; its text is the label and display().
export function numberButtons(el, figures) {
  el.innerHTML = '';
  for (const f of figures) {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.key = f.key;
    b.dataset.value = f.value ?? '';
    b.innerHTML = `${esc(f.label)}<b>${display(f.value, f.unit)}</b>`;
    if (f.explanation) b.addEventListener('click', () => showExplanation(f.explanation));
    else b.title = f.title ?? 'no explanation for this figure yet';
    el.appendChild(b);
  }
}
