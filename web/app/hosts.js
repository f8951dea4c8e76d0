// The "What hosts charge" view's table (app.js's updateHosts), a pure function of
// `chalk prices compare`'s JSON (docs/prices.md "Comparing hosts").

const esc = (s) => String(s ?? '').replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
// Four significant figures, as the CLI's table: a host's 1,844 tok/s reads 1,844, not 1,840.
const n = (v) => (typeof v === 'number' ? Number(v.toPrecision(4)).toLocaleString('en-US') : '-');

/// One row per host offer: its price and speed beside the page's system at that speed (the
/// offer's first system, the one the page asked for), or why that system has no figure.
export function hostsTable(j) {
  const rows = j.rows.map((o) => {
    const r = o.systems[0];
    const cells = r.why_not ? `<td colspan="5">${esc(r.why_not)}</td>`
      : `<td>${r.chips} x, batch ${r.batch}</td><td data-key="blended_cost_usd_per_mtok">${n(r.blended_cost_usd_per_mtok)}</td><td data-key="margin_at_full_utilization">${n(r.margin_at_full_utilization)}</td><td data-key="break_even_utilization">${n(r.break_even_utilization)}</td><td>${r.break_even_batch ?? '-'}</td>`;
    // The weights' format the costs assume beside the host, as `chalk prices compare` names the
    // row ("DeepInfra (fp8)"): equal speeds at unequal costs read explained (review 6 M3).
    const host = o.weights_dtype && o.weights_dtype !== 'checkpoint' ? `${o.provider} (${o.weights_dtype})` : o.provider;
    return `<tr><td title="${esc(o.price_source)}">${esc(host)}</td><td>${o.speed_assumed ? `${n(o.assumed_tok_per_s_per_user)} (assumed)` : n(o.host_tok_per_s_per_user)}</td><td data-key="blended_usd_per_mtok">${n(o.blended_usd_per_mtok)}</td>${cells}</tr>`;
  });
  return `<table><tr><th>host</th><th>tok/s/user</th><th>$/Mtok blend</th><th>replica here</th><th>cost blend</th><th>margin</th><th>break-even util</th><th>b-e batch</th></tr>${rows.join('')}</table>`;
}
