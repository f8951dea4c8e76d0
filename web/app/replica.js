// The replica every view prices with the chips slider at "cheapest" (issue 30), and the
// pipeline the CLI prices where no replica within one scale-up domain holds the model.
//
// The page asks the commands themselves, never a rule of its own:
// - `/api/serving/window`'s replica_choice: the replica sizes within the domain it compared;
// - among those, the least $/Mtok at the batch slider's batch of those that hold it
//   (review 2 H2: DeepSeek-V3 on GB200 at batch 64 was priced on the 64 chips chosen at their
//   memory-full batch, $16.28/Mtok, where 8 chips cost $3.82); each size asked with
//   allow_infeasible, so a size that cannot hold the weights is a row with memory_fits false,
//   not a 400 in the browser's console on every load (review 3 L4);
// - where no size within the domain holds it (replica_sizes empty), `/api/serving/sweep`'s
//   replica_choice: the layout `chalk layouts` ranks first on the smallest replica that
//   holds it, with its pipeline stages (replica_choice.pp; apps/chalk/pipeline_cli.h
//   chosen_pipeline). Llama 3.1 405B on H100: PP2 x (TP8) on 16 chips, as `chalk prices
//   forward` and `chalk serving sweep` price it (tests/cli/pipeline_default.sh), where the
//   page priced TP16 across two hosts (issue 30's H1).

/// The replica for `fields` (the deployment without chips) at `batch` and `context`:
/// {chips, pp, replica_choice, chips_at_batch, label}. chips 0: the commands' own default
/// (no choice came back); pp 1: no pipeline stages.
export async function chooseReplica(api, fields, batch, context) {
  const w = await api('/api/serving/window', { ...fields, context });
  const rc = w.replica_choice;
  const out = { chips: rc ? rc.choice.chips : 0, pp: 1, replica_choice: rc, chips_at_batch: null, label: '' };
  if (!(out.chips > 0)) return out;
  const b = batch.toLocaleString('en-US');
  const sizes = rc.replica_sizes ?? [];
  if (sizes.length === 0) {
    // Where the sweep refuses (a lever it prices without stages), the window's replica stands.
    const s = await api('/api/serving/sweep', { ...fields, batch, context }).catch(() => null);
    const sc = s?.replica_choice;
    if (sc && sc.pp > 1) {
      out.replica_choice = sc;
      out.chips = sc.choice.chips;
      out.pp = sc.pp;
      out.label = `${sc.choice.layout}, ${out.chips} chips (as chalk prices forward)`;
      return out;
    }
    out.label = `smallest that holds it: ${out.chips}`;
    return out;
  }
  const rows = await Promise.all(sizes.map((n) => api('/api/decode', { ...fields, chips: n, batch, context, allow_infeasible: true })
    .then((j) => ({ n, row: j.rows[0] }), () => null)));
  const priced = rows.filter((r) => r && r.row.memory_fits && typeof r.row.cost_usd_per_mtok === 'number')
    .sort((x, y) => x.row.cost_usd_per_mtok - y.row.cost_usd_per_mtok);
  out.chips_at_batch = priced.map((r) => ({ chips: r.n, cost_usd_per_mtok: r.row.cost_usd_per_mtok }));
  if (priced.length > 0) {
    out.chips = priced[0].n;
    out.label = `cheapest at batch ${b}: ${out.chips}`;
  } else {
    out.label = `${out.chips} (batch ${b} fits none)`;
  }
  return out;
}

/// The replica sizes the frontier spans: by default those within the scale-up domain (the
/// commands' own); the chips slider's size alone when it is set (`sliderChips` > 0); and where
/// no replica within the domain holds the model (DeepSeek-V3 on 8 H100: replica_sizes empty),
/// the smallest that does, as the other views price it, and its double and quadruple, said
/// under the chart, rather than a blank chart asking for --replica-chips. With pipeline
/// stages chosen (`pp` > 1) no sizes are sent: `chalk serving frontier` and `modes` then price
/// every replica as those stages themselves (Llama 3.1 405B on H100: PP2 x (TP8), $3.877/Mtok
/// at its cost floor, as the headline), where --replica-chips 16,32,64 priced each size as one
/// replica without stages, TP16 across hosts at $13.27/Mtok (review 6 H1).
export function frontierSizes(sliderChips, replica) {
  if (sliderChips > 0) return { sizes: [sliderChips], note: `replicas of ${sliderChips} chips (the chips slider; move it to "cheapest" for every size)` };
  const rc = replica?.replica_choice;
  if (!rc || rc.replica_sizes.length > 0 || !(replica.chips > 0)) return { sizes: null, note: '' };
  if (replica.pp > 1) return { sizes: null, note: `no replica within one scale-up domain holds the model: every replica is ${replica.pp} pipeline stages, as the other views price ${rc.choice.layout} (chalk serving frontier's default)` };
  const sizes = [1, 2, 4].map((k) => k * replica.chips);
  return { sizes, note: `no replica within one scale-up domain holds the model: replicas of ${sizes.join(', ')} chips (the smallest that holds it, as the other views, and its doubles; the chips slider picks one)` };
}

/// An explanation with its chips input sourced as the page chose them: the API's "--chips, or
/// the smallest replica that holds the model" is the CLI's default, not the page's (review 3
/// L14: "n 4 chips ... the smallest replica that holds the model" beside chips "cheapest at
/// batch 64", where the smallest is 2). `label` is the chips control's text.
export function chipsSource(x, sliderChips, label) {
  if (!x?.inputs) return x;
  const inputs = x.inputs.map((i) => (i.symbol === 'n' && i.unit === 'chips' && /^--chips/.test(i.source ?? '')
    ? { ...i, source: sliderChips > 0 ? `the chips slider (chalk decode -n ${i.value})` : `the page's chips, ${label} (chalk decode -n ${i.value} gives these figures)` } : i));
  return { ...x, inputs };
}
