# Review 2 of issue 30 (high H3, medium M3/M4, the hint of H1): a batch that does not fit is
# never priced, in any command; the advice names the -n that holds each row; hints name a
# command that takes the flag they name.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

# H3, prices forward: 8 H100 hold at most 324 sequences of Llama 3.1 70B at 4096 tokens
# ((8 x 80 x 0.9 - 141.1 GB) / (4096 x 327,680 B) = 324.1): batch 1024 is an error, not a
# $2.169/Mtok headline; 8 chips is the whole scale-up domain, so the advice is to split.
expect_error "--batch: batch 1024 at context 4096 does not fit on 8 x H100 SXM (at most 324 sequences); no replica within the 8-chip scale-up domain holds it: split the batch over replicas" \
  prices forward -m llama-3.1-70b -H h100-sxm -n 8 --batch 1024
# Batch 2 on 2 chips fits ((160 x 0.9 - 141.1) GB / 1.342 GB = 2.1): still priced.
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm -n 2 --batch 2 --json | python3 -c "
import json, sys; f = json.load(sys.stdin)['forward']
assert f['memory_fits'] and f['output_cost_usd_per_mtok'] > 0, f" || fail "prices forward batch that fits"
# --allow-infeasible still prints the figures for study.
expect_ok prices forward -m llama-3.1-70b -H h100-sxm -n 8 --batch 1024 --allow-infeasible

# H3, serving sweep: batch 512 does not fit on 8 H100 (324): no $/Mtok in any cost column,
# and one warning names it; batch 64 keeps its price.
"$CHALK" serving sweep -m llama-3.1-70b -H h100-sxm -n 8 -b 64,512 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
r = {x['batch']: x for x in j['rows']}
assert r[64]['memory_fits'] and r[64]['cost_usd_per_mtok'] > 0, r[64]
assert not r[512]['memory_fits'], r[512]
for k in ('cost_usd_per_mtok', 'cost_compute_usd_per_mtok', 'cost_weights_usd_per_mtok', 'cost_kv_usd_per_mtok'):
    assert r[512][k] is None, (k, r[512][k])
assert len(j['warnings']) == 1 and 'batch 512 at 4096 tokens does not fit on 8 x H100 SXM' in j['warnings'][0], j['warnings']
" || fail "serving sweep prices a batch that does not fit"
# The sweep's explanations of that row have no cost entry either (the page's tile reads them).
"$CHALK" serving sweep -m llama-3.1-70b -H h100-sxm -n 8 -b 512 --explain --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
keys = [x['key'] for x in j['explanations'][0]['figures']]
assert 'tok_per_s_per_chip' in keys and not any(k.startswith('cost_') for k in keys), keys
" || fail "serving sweep explains a price for a batch that does not fit"

# M4, decode --explain: batch 64 on 2 H100 (at most 2 sequences) explains no price. -n 2: with
# -b alone decode takes the smallest replica that holds batch 64 (review 10 M2: 4 chips).
out=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 2 -b 64 --explain)
printf '%s\n' "$out" | grep -q "^cost_usd_per_mtok = - USD per 1M tokens: no price" || fail "decode --explain prices batch 64 on 2 H100"
printf '%s\n' "$out" | grep -q "batch 64 at 4096 tokens does not fit on 2 chips (at most 2 sequences): no price" || fail "decode --explain says why"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 2 -b 64 --explain --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
x = [f for f in j['explanations'][0]['figures'] if f['key'] == 'cost_usd_per_mtok'][0]
assert x['result'] is None and j['rows'][0]['cost_usd_per_mtok'] is None, x
" || fail "decode --explain JSON prices batch 64 on 2 H100"
# A batch that fits is still explained with its price (batch 2 on 2 chips).
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -b 2 --explain | grep -q "^cost_usd_per_mtok = [0-9]" || fail "decode --explain of a fitting batch"

# M3: the advice names the -n that holds each row. At 8192 tokens one sequence of Llama 3.1
# 70B holds 8192 x 327,680 B = 2.68 GB of KV: 4 H100 hold (288 - 141.1) / 2.68 = 54, 8 hold
# (576 - 141.1) / 2.68 = 162, so batch 64 needs -n 8 and batch 256 no replica in the domain.
# -n 2 states the 2 chips (without it -b takes the 8 that hold batch 64: review 10 M2).
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 2 -b 1,64,256 -s 8192 --json | python3 -c "
import json, sys; w = [x for x in json.load(sys.stdin)['warnings'] if 'do not fit' in x]
assert len(w) == 1, w
assert '-n 8 holds batch 64 at 8192 tokens; no replica within the 8-chip scale-up domain holds batch 256 at 8192 tokens' in w[0], w[0]
" || fail "decode's warning names -n 8 for batch 64"

# H1's hint: a command without --pp names one that has it, with the chips.
"$CHALK" layouts -m llama-3.1-405b -H h100-sxm --json | python3 -c "
import json, sys; d = json.load(sys.stdin)
s = json.dumps(d)
assert ': --pp 2' not in s, 'hint names --pp alone'
" || fail "layouts hint names a flag layouts lacks"
# prices forward now prices that pipeline by default (tests/cli/pipeline_default.sh); a command
# that prices none (serving window with a lever, priced without stages) names the commands that do, with the flag they take.
"$CHALK" serving window -m llama-3.1-405b -H h100-sxm --sparse-top-k 2048 --wide | tr -s " \n" " " | grep -q "PP2 x (TP8) (above) ranks first on these chips in \`chalk layouts\`; this command runs one replica without stages here: --pp 2 -n 16 of chalk decode, prefill, serving sweep, prices forward or simulate prices the pipeline" || fail "serving window does not name the pipeline layouts ranks first"

# M2: README's `layouts --objective latency --batch 64` ranks layouts. 2 H100 hold 4 sequences
# of Llama 2 70B at 4096 tokens ((144 - 138 GB) / 1.34 GB); 4 hold (288 - 138) / 1.34 = 111,
# so the smallest replica for batch 64 is 4 chips, said in the replica line.
"$CHALK" layouts -m llama-2-70b -H h100-sxm --objective latency --batch 64 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['chips'] == 4, j['chips']
rc = j['replica_choice']
assert rc['choice']['chips'] == 4 and 'holds batch 64 at 4096 tokens (2 chips hold 4)' in rc['why'], rc
assert j['rows'][0]['fits'] is True and j['rows'][0]['layout'] == 'TP4', j['rows'][0]
" || fail "layouts --objective latency --batch 64 picks no replica that holds the batch"

# M1: prefill's replica states the figures it was chosen on, so it is never dearer than its
# runner-up. Once the decode cost floor (64 chips at batch 3,776, where the TTFT layout's
# batch 68 read $50.29/Mtok); since review 5 M1 the cheapest per prompt token: DeepSeek-V3
# (671 GB in FP8) on GB200 at batch 1 of 32,768 tokens needs 8 chips (4 x 186 GB x 0.9 = 670
# GB usable), and each size above pays more all-reduce per prompt token: 8 chips, its
# prefill's cost n x price x TTFT / tokens, cheaper than 16.
"$CHALK" prefill --json | python3 -c "
import json, sys; j = json.load(sys.stdin); rc = j['replica_choice']
c, r = rc['choice'], rc['runner_up']
assert rc['rule'] == 'cheapest_prefill' and c['cost_usd_per_mtok'] <= r['cost_usd_per_mtok'], (c, r)
assert (c['chips'], c['batch'], c['prompt_tokens'], r['chips']) == (8, 1, 32768, 16), (c, r)
assert abs(c['cost_usd_per_mtok'] - 8 * 4.54 / 3600 * c['ttft_ms'] / 1e3 / 32768 * 1e6) < 1e-9 * c['cost_usd_per_mtok'], c
" || fail "prefill's cheapest replica dearer than its runner-up"

# M6: `train step -n N` alone runs the fastest plan of N chips that fits, the plan `train
# layouts -n N` ranks first (Llama 3.1 8B on 16 H100: DP16 ZeRO-3, 0.3502 s, 30.33 GB),
# instead of refusing "--dp x --tp x --pp x --cp = 1".
"$CHALK" train layouts -m llama-3.1-8b -H h100-sxm -n 16 --limit 1 --json > "${TMPDIR:-/tmp}/r2_layouts.$$.json"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 16 --json | python3 -c "
import json, sys; s = json.load(sys.stdin)['rows'][0]
r = json.load(open(sys.argv[1]))['rows'][0]
assert s['plan'] == r['plan'] and s['chips'] == 16, (s['plan'], r['plan'])
assert abs(s['t_step_s'] - r['t_step_s']) <= 1e-9 * r['t_step_s'], (s['t_step_s'], r['t_step_s'])
" "${TMPDIR:-/tmp}/r2_layouts.$$.json" || fail "train step -n 16 alone is not train layouts' best plan"
rm -f "${TMPDIR:-/tmp}/r2_layouts.$$.json"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 16 | grep -q "^chosen      the fastest plan of these 16 chips that fits" || fail "train step -n 16 says why"
# No plan of 2 H100 holds Llama 3.1 70B's training state: exit 2 naming the smallest cluster.
expect_error "--chips: no plan of 2 chips holds llama-3.1-70b; the smallest cluster with a plan that fits is 32 x H100 SXM" \
  train step -m llama-3.1-70b -H h100-sxm -n 2
# Degrees that do not multiply to -n stay an error.
expect_error "--chips: 4 chips, but --dp x --tp x --pp x --cp = 2 x 1 x 1 x 1 = 2" train step --dp 2 -n 4

# M8: a dense model's replica wider than the domain is one TP copy of the weights, as decode -n
# lays it: Llama 3.1 405B on 16 H100 holds 811.8 GB (not 2 x TP8 copies, 1,623.5 GB), and its
# memory-full point equals decode -n 16's (batch 80, $13.27/Mtok).
"$CHALK" serving frontier -m llama-3.1-405b -H h100-sxm --replica-chips 16 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
full = [r for r in j['rows'] if r['chips'] == 16 and r['batch'] == 80]
assert full and abs(full[0]['cost_usd_per_mtok'] - 13.27) < 0.01, full
" || fail "serving frontier cannot price 405B on 16 H100"
