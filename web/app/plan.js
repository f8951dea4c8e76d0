// The plan view (issue 31, "plan on the page"): a traffic (rate, prompt and output tokens),
// its SLOs (TTFT and TPOT at the 90th percentile) and a chip budget, sent to `/api/plan`,
// which runs `chalk plan` (the same function, its --json): the chosen deployment, the
// Pareto table of the deployments it tried (cost against latency, apps/chalk/cmd_plan.cc)
// and the launch files it writes for each engine. The plan runs when asked (its button),
// never on every slider move: it simulates the traffic on every candidate deployment. The
// page sends 200 requests a simulation (the CLI's default is 1,000) and opens with a budget
// of 4 chips: the form's defaults for Llama 3.1 8B on H100 (4 req/s, 1,000 + 200 tokens)
// took 0.50 s of CPU on a loaded 2-core machine (8 chips: 1.27 s, 30 deployments more); the
// API bounds the rest (5,000 requests, 256 chips, and its request budget: docs/web.md).
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
const num = (v) => (typeof v === 'number' ? Number(v.toPrecision(4)).toLocaleString('en-US', { maximumSignificantDigits: 4 }) : '-');

/// Requests per simulation the page asks for (`requests`).
export const PLAN_REQUESTS = 200;

/// The form's fields as the API names them (chalk plan's flags): {rate, input, output,
/// ttft_slo_ms, tpot_slo_ms, budget_chips}, numbers as typed (the API names a bad one), and
/// with drafts per step above 0 speculative decoding as `chalk plan --draft` takes it
/// ({draft, acceptance, drafter}: an empty acceptance is the drafter's published one, an
/// empty drafter the model's MTP module).
export function planFields() {
  const f = {};
  for (const k of ['rate', 'input', 'output', 'ttft_slo_ms', 'tpot_slo_ms', 'budget_chips']) {
    const v = $(`plan-${k.replace(/_/g, '-')}`).value.trim();
    if (v !== '') f[k] = Number(v);
  }
  const draft = $('plan-draft').value.trim();
  if (draft !== '' && Number(draft) !== 0) {
    f.draft = Number(draft);
    const a = $('plan-acceptance').value.trim();
    if (a !== '') f.acceptance = Number(a);
    if ($('plan-drafter').value !== '') f.drafter = $('plan-drafter').value;
  }
  return { ...f, requests: PLAN_REQUESTS };
}

/// The verdict as chalk plan words it (apps/chalk/plan_outputs.cc): drafts pay when only they
/// meet the SLO or they cost less; at the same cost with a lower TPOT they are faster, not
/// cheaper (speculation_faster, review 10 L8).
function verdictWords(v) {
  if (v.speculation_pays) return 'it pays';
  return v.speculation_faster ? 'it is faster, not cheaper' : 'it does not pay';
}

/// "; drafting (3 a step, 2.952 kept): TPOT p90 9.1 ms against 21 ms without, pays": what
/// speculation_verdict says, or '' for a plan without drafts.
function draftWords(j) {
  const v = j.speculation_verdict;
  if (!v) return '';
  const side = (x) => (x ? `${num(x.tpot_at_percentile_ms)} ms on ${x.chips} chips` : 'no deployment');
  return `; drafting ${v.draft_tokens} a step (${num(v.tokens_kept_per_step)} kept): TPOT p${j.slo.percentile} ${side(v.with_drafts)}, without drafts ${side(v.without_drafts)}: ${verdictWords(v)}`;
}

/// "2 x 4 chips (attention TP4, FFN TP4), at most 64 running": one deployment in words.
function deploymentWords(r) {
  const agg = `${r.replicas} x ${r.replica_chips} chips (${r.layout})`;
  const pools = r.mode === 'disaggregated' ? `prefill ${agg}, decode ${r.decode_replicas} x ${r.decode_replica_chips} chips (${r.decode_layout})` : agg;
  return `${r.mode}: ${pools}, at most ${r.max_sequences} running`;
}

/// The answer drawn: the choice, the table, the launch files (one shown at a time).
function showPlan(j) {
  const b = j.best;
  const p = j.slo.percentile;
  $('plan-best').textContent = b
    ? `chosen: ${deploymentWords(b)}; ${b.chips} chips, ${num(b.cost_usd_per_hour)} $/hour; TTFT p${p} ${num(b.ttft_at_percentile_ms)} ms, TPOT p${p} ${num(b.tpot_at_percentile_ms)} ms`
    : `no deployment within the budget meets the SLO: ${j.why_none}`;
  $('plan-best').textContent += draftWords(j);
  const same = (r) => b && ['mode', 'chips', 'replica_chips', 'replicas', 'max_sequences', 'layout', 'decode_layout'].every((k) => r[k] === b[k]);
  $('plan-table').innerHTML = `<table><tr><th>deployment</th><th>chips</th><th>$/hour</th><th>TTFT p${p} ms</th><th>TPOT p${p} ms</th><th>tok/s per chip</th><th>meets SLO</th></tr>${j.rows.map((r) =>
    `<tr${same(r) ? ' class="chosen"' : ''}><td>${esc(deploymentWords(r))}</td><td data-key="chips">${r.chips}</td><td data-key="cost_usd_per_hour">${num(r.cost_usd_per_hour)}</td><td data-key="ttft_at_percentile_ms">${num(r.ttft_at_percentile_ms)}</td>` +
    `<td data-key="tpot_at_percentile_ms">${num(r.tpot_at_percentile_ms)}</td><td>${num(r.tok_per_s_per_chip)}</td><td>${r.meets_slo ? 'yes' : 'no'}</td></tr>`).join('')}</table>`;
  const files = (j.launch ?? []).flatMap((l) => l.files.map((f) => ({ ...f, checked_at: l.checked_at })));
  const pick = $('plan-file');
  pick.innerHTML = files.map((f, i) => `<option value="${i}">${esc(f.path)}</option>`).join('');
  const show = () => {
    const f = files[Number(pick.value)];
    $('plan-launch').textContent = f ? f.text : 'no launch files: no deployment was chosen';
  };
  pick.closest('label').hidden = files.length === 0;
  pick.onchange = show;
  show();
}

/// Wires the form. `fields()` is the page's deployment without chips (model or upload,
/// hardware, formats); `data.plan` keeps the last answer. refresh(): the page's deployment
/// moved, so a shown plan is stale: it is cleared and the form says so.
/// `note()`: a line the page adds under the status (the replica the other views price has
/// pipeline stages that chalk plan does not simulate), or ''.
export function planView({ api, fields, data, note = () => '' }) {
  let asked = null;
  const budget = $('plan-budget-chips');
  const opening = Number(budget.value);  // the form's 4
  let typed = false;
  budget.addEventListener('input', () => { typed = true; });
  const run = async () => {
    const body = { ...fields(), ...planFields() };
    asked = JSON.stringify(fields());
    $('plan-status').textContent = 'planning...';
    $('plan-error').textContent = '';
    try {
      const j = await api('/api/plan', body);
      data.plan = j;
      data.plan_request = body;
      $('plan-status').textContent = [`${j.traffic}; ${j.evaluated} deployments tried (${j.simulations} simulations)`, note()].filter(Boolean).join('; ');
      showPlan(j);
    } catch (e) {
      data.plan = null;
      $('plan-status').textContent = '';
      $('plan-error').textContent = e.message;
    }
    document.body.dataset.plans = Number(document.body.dataset.plans || 0) + 1;
  };
  $('plan-run').addEventListener('click', run);
  return {
    /// The budget opens at the replica the other views price where that is more than the
    /// form's 4 chips, unless the user typed one (review 7 M3: DeepSeek-V3 on GB200 needs 8, and
    /// the plan refused the form's own default).
    budgetAtLeast(chips) {
      if (!typed) budget.value = String(Math.max(opening, chips > 0 ? chips : 0));
    },
    refresh() {
      if (asked === null || asked === JSON.stringify(fields())) return;
      asked = null;
      data.plan = null;
      for (const id of ['plan-best', 'plan-table', 'plan-launch', 'plan-file', 'plan-error']) $(id).textContent = '';
      $('plan-file').closest('label').hidden = true;
      $('plan-status').textContent = 'the model or system changed: plan again';
    },
  };
}
