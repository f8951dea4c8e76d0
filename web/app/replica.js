// The replica every view prices with the chips slider at "cheapest" (issue 30), and the
// pipeline the CLI prices where no replica within one scale-up domain holds the model.
//
// The page asks the command itself, never a rule of its own: `/api/prices/forward` at the
// batch slider's batch and the context slider's context, whose replica_choice is the one
// library rule (cheapest_serving_replica, chalk/serving/serving_speed.h) that `chalk prices
// forward -b B -s S` prints: the cheapest replica size within the scale-up domain whose HBM
// holds the batch, each at that batch, and the runner-up (Llama 3.1 70B on H100 at batch 64:
// 4 chips, 8 the runner-up; issue 30 item 1, where the page had a rule of its own and
// `prices forward` another). Asked with allow_infeasible, so a batch no size holds is the
// memory-full choice's replica with the batch said not to fit, not a 400 (review 3 L4).
// Where no size within the domain holds the model, replica_choice.pp > 1: the pipeline
// `chalk layouts` ranks first (Llama 3.1 405B on H100: PP2 x (TP8) on 16 chips, as `chalk
// prices forward` and `chalk serving sweep` price it; issue 30's H1). A system without a
// price (the command refuses) falls back to `/api/serving/window`'s choice, the most tok/s
// per chip at the memory-full batch.

/// "8, $1.190/Mtok": a replica point of the CLI's note (the runner-up beside the choice).
function pointWords(p) {
  const cost = typeof p.cost_usd_per_mtok === 'number' ? `, $${p.cost_usd_per_mtok.toPrecision(4)}/Mtok` : '';
  return `${p.chips}${cost}`;
}

/// The replica for `fields` (the deployment without chips) at `batch` and `context`:
/// {chips, pp, replica_choice, runner_up, label}. chips 0: the commands' own default (no
/// choice came back); pp 1: no pipeline stages. `priced`: false for a system without a
/// price, which `prices forward` refuses (not asked: no 400 in the console).
export async function chooseReplica(api, fields, batch, context, priced = true) {
  const out = { chips: 0, pp: 1, replica_choice: null, runner_up: null, label: '' };
  const b = batch.toLocaleString('en-US');
  const f = priced ? await api('/api/prices/forward', { ...fields, batch, context, allow_infeasible: true }).catch(() => null) : null;
  const rc = f?.replica_choice;
  if (rc && rc.choice?.chips > 0) {
    Object.assign(out, { chips: rc.choice.chips, pp: rc.pp, replica_choice: rc, runner_up: rc.runner_up });
    if (rc.pp > 1) {
      out.label = `${rc.choice.layout}, ${out.chips} chips (as chalk prices forward)`;
    } else if (rc.choice.batch === batch && rc.rule === 'cheapest') {
      out.label = `cheapest at batch ${b}: ${out.chips}${rc.runner_up ? ` (runner-up ${pointWords(rc.runner_up)})` : ''}`;
    } else if (rc.rule === 'cheapest') {
      out.label = `${out.chips} (batch ${b} fits none)`;
    } else {
      out.label = `smallest that holds it: ${out.chips}`;
    }
    return out;
  }
  const w = await api('/api/serving/window', { ...fields, context });
  const wc = w.replica_choice;
  if (!(wc?.choice.chips > 0)) return out;
  Object.assign(out, { chips: wc.choice.chips, replica_choice: wc, runner_up: wc.runner_up });
  out.label = `most tok/s per chip: ${out.chips}`;
  return out;
}

/// The replica sizes the frontier spans: by default those within the scale-up domain (the
/// commands' own); the chips slider's size alone when it is set (`sliderChips` > 0). Where no
/// replica within the domain holds the model (replica_sizes empty) no sizes are sent either:
/// `chalk serving frontier` and `modes` then price the replica the other views price, the
/// smallest that holds it (DeepSeek-V3 on H100: 16 chips, cost floor $0.698/Mtok, as `chalk
/// serving modes` prints; review 7 H3: the page sent 16,32,64 and its floor, 64 chips at
/// $0.308, was no command's default), or its pipeline stages (Llama 3.1 405B on H100: PP2 x
/// (TP8), $3.877/Mtok at its cost floor, as the headline; review 6 H1). The note says which.
export function frontierSizes(sliderChips, replica) {
  if (sliderChips > 0) return { sizes: [sliderChips], note: `replicas of ${sliderChips} chips (the chips slider; move it to "cheapest" for every size)` };
  const rc = replica?.replica_choice;
  if (!rc || rc.replica_sizes.length > 0 || !(replica.chips > 0)) return { sizes: null, note: '' };
  if (replica.pp > 1) return { sizes: null, note: `no replica within one scale-up domain holds the model: every replica is ${replica.pp} pipeline stages, as the other views price ${rc.choice.layout} (chalk serving frontier's default)` };
  return { sizes: null, note: `no replica within one scale-up domain holds the model: replicas of ${replica.chips} chips, the smallest that holds it, as the other views and chalk serving frontier price it (the chips slider picks another size)` };
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
