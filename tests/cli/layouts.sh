# chalk layouts: ranked layouts as JSON and CSV, and its error paths.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
# Llama 2 70B, FP8, offline serving on one DGX H100 (MLPERF41-L70B-H100x8's setting):
# two-chip replicas win (src/engine/layout_search_test.cc derives the batches).
# The steady state reads the mean context 512 + 290 / 2 = 657 without being told (-s).
out=$("$CHALK" layouts -m llama-2-70b -H h100-sxm -n 8 --weights fp8 --kv-dtype fp8 --prompt 512 --output 290 --json) || fail "layouts --json"
python3 - "$out" <<'PY' || fail "layouts --json content"
import json, sys
j = json.loads(sys.argv[1])
assert j["context_tokens"] == 657, j["context_tokens"]
ls = j["rows"]
assert j["chips"] == 8 and j["objective"] == "throughput"
assert [l["layout"] for l in ls] == ["TP2 x 4 replicas", "TP4 x 2 replicas", "TP8", "TP1 x 8 replicas"], ls
# One meaning of chips (review 8 M2): every row's deployment is the 8 chips asked, whatever
# its replica; replica_chips is one replica's (was the rows' only chips key).
assert [(l["chips"], l["replica_chips"], l["replicas"]) for l in ls] == [(8, 2, 4), (8, 4, 2), (8, 8, 1), (8, 1, 8)], ls
assert ls[0]["batch_per_replica"] == 692 and ls[3]["batch_per_replica"] == 23
assert all(a["tok_per_s_per_chip"] >= b["tok_per_s_per_chip"] for a, b in zip(ls, ls[1:]))
assert ls[0]["cost_usd_per_mtok"] > 0
PY
csv=$("$CHALK" layouts -m deepseek-v3 -H gb200-nvl72 -n 72 --csv) || fail "layouts --csv"
[ "$(printf '%s\n' "$csv" | head -1 | cut -d, -f1-5)" = "batch,rank,layout,chips,replica_chips" ] || fail "csv header"
printf '%s\n' "$csv" | sed -n 2p | grep -q "DP-attention" || fail "DeepSeek-V3 on NVL72: data-parallel attention should rank first"
# The CSV's rows are the layouts that fit, as the table's and the JSON's (review 10 L3); the
# others, with why, are the second table of --all.
! printf '%s\n' "$csv" | grep -q ",false," || fail "layouts --csv lists a layout that does not fit"
"$CHALK" layouts -m deepseek-v3 -H gb200-nvl72 -n 72 --all --wide | sed -n '/^Layouts that do not fit/,$p' | grep -q "673.2 GB" \
  || fail "a layout that does not fit says why"  # FP8 with its block scales
"$CHALK" layouts -m llama-3.1-8b -H h100-sxm -n 8 --objective latency --batch 8 | grep -q "ranked by latency" || fail "latency table"
expect_error "--objective: expected throughput or latency, got 'cost'" layouts --objective cost
expect_error "--output: steady-state serving needs both --prompt and --output above 0 (or neither), got 100 and 0" layouts --prompt 100
expect_error "--prompt: steady-state serving needs both" layouts --prompt 0 --output 290
expect_error "--context: steady-state serving reads the mean context prompt + output / 2 = 1536, got 4096" layouts --prompt 1024 --output 1024 -s 4096
expect_ok layouts --prompt 1024 --output 1024 -s 1536
expect_error "not expected: 8 --tp" layouts --tp 8   # the layout is what layouts searches
expect_error "--chips: Value -1 not in range 1 to 1048576" layouts --chips -1
expect_error "--chips: Value 0 not in range 1 to 1048576" layouts -n 0
expect_error "--batch: expected an integer, got '0.5'" layouts -b 0.5
expect_error "--batch: a range a:b needs 1 <= a <= b, got '8:1'" layouts -b 8:1
expect_error "--batch: must be in 0..1000000000, got -1" layouts -b -1
expect_error "--batch: ranks the layouts once per batch: at most 64 batches, got 65" layouts -b "$(seq -s, 1 65)"
expect_error "--batch: the latency objective compares layouts at one batch" layouts --objective latency -b 0
expect_error "--matmul-efficiency: must be a fraction in (0, 1]" layouts --matmul-efficiency 1.5
expect_error "--compute: H100 SXM has no dense fp4 matmul rate" layouts -H h100-sxm --compute fp4
# Nothing fits: exit 2 naming the first layout's reason and the smallest replica that fits
# (review 7 M1: exit 0 with no rows). Llama 3.1 405B's 811.7 GB of bf16 weights over 8 H100
# (72 GB usable each, 576 GB) leave no room; 16 chips hold them, beyond the 8-GPU host, so a
# 2-stage pipeline. --all keeps the study: a warning and every layout with its reason, exit 0.
expect_error "--chips: no layout of llama-3.1-405b on 8 x H100 SXM fits at context 4096 (TP1 x 8 replicas: weights 811.7 GB leave no room for one sequence's KV in 72.0 GB usable HBM); the smallest replica that holds the weights and one sequence is 16 chips (-n 16), beyond the 8-chip scale-up domain: a pipeline of 2 stages" \
  layouts -m llama-3.1-405b -H h100-sxm -n 8
expect_error "--chips: no layout of palm-540b on 8 x TPU v4 fits" layouts -m palm-540b -H tpu-v4 -n 8
out=$("$CHALK" layouts -m palm-540b -H tpu-v4 -n 8 --all) || fail "layouts --all with nothing fitting exits 0"
printf '%s\n' "$out" | grep -q "warning     no layout fits" || fail "no-fit warning"
# Latency defaults to one user; a fixed batch counts its sequences over every chip.
"$CHALK" layouts -m llama-2-70b -H h100-sxm -n 8 --objective latency --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['batch'] == 1, j['batch']
l = j['rows'][0]
assert l['layout'] == 'TP8', l
assert abs(l['tok_per_s_per_chip'] - l['tok_per_s_per_user'] / 8) < 1e-6 * l['tok_per_s_per_user']
" || fail "latency at one user"
expect_error "--kv-dtype" layouts --kv-dtype fp9
# No --chips, ranked for latency: the smallest replica an engine can run the model on, as
# decode takes (issue 11). Llama 2 70B in FP8 is 69.0 GB of weights; one H100 holds 80 x 0.9
# = 72 GB, and one sequence's FP8 KV at the mean context 657 is 80 layers x 8 KV heads x 128
# x 2 x 1 B x 657 = 0.108 GB: one chip. In BF16 (138 GB) two chips (144 GB usable), as decode
# says.
"$CHALK" layouts -m llama-2-70b -H h100-sxm --weights fp8 --kv-dtype fp8 --prompt 512 --output 290 --objective latency --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['chips'] == 1 and j['replica_choice']['rule'] == 'smallest', j['chips']
assert [l['layout'] for l in j['rows']] == ['TP1'], j['rows']
" || fail "layouts default chips at latency, fp8"
n_layouts=$("$CHALK" layouts -m llama-2-70b -H h100-sxm --objective latency --json | python3 -c "import json,sys; print(json.load(sys.stdin)['chips'])")
n_decode=$("$CHALK" decode -m llama-2-70b -H h100-sxm -b 1 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['assumptions']['chips'])")
[ "$n_layouts" = 2 ] && [ "$n_decode" = 2 ] || fail "llama-2-70b bf16 on H100: layouts $n_layouts and decode $n_decode chips, expected 2 and 2"
# Ranked for throughput (the default objective), the cheapest replica size, as `prices
# forward` and `serving sweep` take (issue 30): in FP8 2 H100 (692 sequences fill them at 657
# tokens, 5,884 decode tok/s per chip) beat 4 (2,029 sequences, 5,078 tok/s per chip).
n_layouts=$("$CHALK" layouts -m llama-2-70b -H h100-sxm --weights fp8 --kv-dtype fp8 --prompt 512 --output 290 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['chips'])")
n_prices=$("$CHALK" prices forward -m llama-2-70b -H h100-sxm --weights fp8 --kv-dtype fp8 -s 657 --min-tok-per-s-per-user 0 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['assumptions']['chips'])")
[ "$n_layouts" = 2 ] && [ "$n_prices" = 2 ] || fail "llama-2-70b fp8 on H100 for throughput: layouts $n_layouts and prices forward $n_prices chips, expected 2 and 2"
# The batch takes decode's syntax: a list or a:b powers of two, each batch ranked apart. At
# latency one replica of the 8B model on one H100 runs 1, 2, 4 sequences: each step is
# longer than the last (more KV and FLOPs), and tok/s/chip = batch / step.
"$CHALK" layouts -m llama-3.1-8b -H h100-sxm -b 1:4 --objective latency --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['batches'] == [1, 2, 4] and j['batch'] == 1, (j['batches'], j['batch'])
rows = j['rows']
assert [r['batch'] for r in rows] == [1, 2, 4], rows
assert all(r['rank'] == 1 for r in rows)
steps = [r['t_step_ms'] for r in rows]
assert steps[0] < steps[1] < steps[2], steps
for r in rows:
    assert abs(r['tok_per_s_per_chip'] - r['batch'] * 1000 / r['t_step_ms']) < 1e-6 * r['tok_per_s_per_chip'], r
" || fail "layouts -b 1:4"
"$CHALK" layouts -m llama-3.1-8b -H h100-sxm -b 1,8 --csv | head -1 | grep -q "^batch,rank,layout" || fail "several batches: the CSV leads with the batch"
# A model that does not fit one scale-up domain: Llama 3.1 405B bf16 (811 GB) on 16 H100 (8
# per domain) gets a pipeline of two one-domain stages ranked, ahead of TP16 across domains.
"$CHALK" layouts -m llama-3.1-405b -H h100-sxm -n 16 --context 4096 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
names = [l['layout'] for l in j['rows'] if l['fits']]
assert names[0] == 'PP2 x (TP8)', names
assert not any(l['replica_chips'] <= 8 and l['fits'] for l in j['rows']), j['rows']
" || fail "layouts: pipelined layout for a model larger than one domain"
# Rejected layouts carry their memory (docs/output-schema.md): DeepSeek-V3 on one H200 of a
# TP1 x 8 split needs its 673.2 GB of weights, the 10% reserve of 141 GB (14.1 GB) and one
# sequence's latent at 4096 tokens (576 x 61 x 2 x 4096 = 0.288 GB): 687.6 GB per chip, over
# its 141 GB. Fitting layouts fill HBM to at most 141 GB.
"$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --json | python3 -c "
import json, re, sys
j = json.load(sys.stdin)
cap = j['hardware']['hbm_gb_per_chip']
assert cap == 141.0, cap
for r in j['rows']:
    assert 0 < r['memory_gb'] <= cap * (1 + 1e-9), r
rej = {r['layout']: r for r in j['rejected_layouts']}
one = rej['attention TP1, EP1 x 8 replicas']
w = float(re.search(r'weights ([0-9.]+) GB', one['why_not']).group(1))
assert abs(one['memory_gb'] - (w + 14.1 + 576 * 61 * 2 * 4096 / 1e9)) < 0.06, (one, w)
for r in rej.values():
    assert 'memory_gb' in r and r['memory_gb'] > cap, r
" || fail "layouts: rejected layouts carry memory_gb"
echo "layouts: all passed"
# Review 5 L7: layouts takes --eplb as plan, simulate and decode do, prices every layout under
# it and states it ("moe_routing", the "experts" line). DeepSeek-V3 on 8 H200 ranks DP
# attention with EP8 first at the batch HBM holds (720); under a learned router's skew with
# experts in order the busiest of 8 EP ranks gets 1.37x the mean share, so its tok/s per chip
# falls below uniform routing's (1889.9 -> 1852.5) and equals decode's on that layout and batch.
no=$("$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --eplb no --json) || fail "layouts --eplb no"
uni=$("$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --json) || fail "layouts"
dec=$("$CHALK" decode -m deepseek-v3 -H h200 -n 8 --tp 1 --ep 8 --eplb no -b 720 --json) || fail "decode --eplb no"
python3 - "$no" "$uni" "$dec" <<'PY' || fail "layouts --eplb no: priced and stated"
import json, sys
no, uni, dec = (json.loads(x) for x in sys.argv[1:])
r, u, d = no["rows"][0], uni["rows"][0], dec["rows"][0]
assert r["layout"] == u["layout"] == "DP-attention, EP8" and r["batch_per_replica"] == 720, (r, u)
assert "busiest of 8 EP ranks gets 1.37x" in no["moe_routing"] and no["moe_routing"].startswith("a learned router"), no["moe_routing"]
assert uni["moe_routing"].startswith("uniform independent top-k routing"), uni["moe_routing"]
assert r["tok_per_s_per_chip"] < u["tok_per_s_per_chip"], (r, u)
assert abs(r["tok_per_s_per_chip"] - d["tok_per_s_per_chip"]) < 1e-9 * d["tok_per_s_per_chip"], (r, d)
PY
"$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --eplb yes | grep -q "^experts     a learned router's skew with EPLB" || fail "layouts --eplb yes: no experts line"
expect_error "--eplb: 'yes' places routed experts; llama-3.1-8b has none" layouts -m llama-3.1-8b -H h100-sxm --eplb yes
expect_error "--eplb: 'maybe' is not yes" layouts -m deepseek-v3 -H h200 --eplb maybe
