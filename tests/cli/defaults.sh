# Issue 30: with no -n, every command that states a cost or a throughput prices a deployment
# an operator would run (the cheapest replica size and its memory-full batch, chosen by the
# frontier's search), prints the choice and the runner-up, and never leads with a row that
# does not fit; `decode` (and `layouts --objective latency`) keep the smallest replica, say
# so, and name the cheapest. Each choice is re-priced here by `decode` on the stated
# deployment, so the figures the choice prints are checked against another code path.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Before: 2 H100 at batch 2, $84.59/Mtok out (4 x $21.15 of cost). Now the cheapest size of
# 1, 2, 4, 8 H100 at 4,096 tokens: 8 H100 (TP8) at their cheapest batch. HBM holds 324
# sequences, but vLLM pads 324 to its graph of 336; 320, a captured size, steps in 41.186 ms
# (with vLLM's custom all-reduce for TP8's decode-sized messages, and the dense GEMMs at their
# per-rank shape, engine/dense_gemm.h: 38.986 ms before), 41.330 ms since each of a layer's 2
# norms moves 320 x 8 x 8192 B = 21.0 MB, 7.195 us at 3.35 TB/s x 0.87, 0.895 over the 6.3 us
# kernel floor (engine/memory_kernels.h; x 2 x 80 layers = +0.143 ms): cost = 8 x $2.35/h /
# 3600 x 41.330 ms / 320 = $0.67448/Mtok, the headline at cost (x4 before review 9 M3, $2.698) (review L7: the memory-full batch is not
# always the cheapest); runner-up 4 H100 (109). That is the cost floor, priced with no speed
# floor (--min-tok-per-s-per-user 0); the default headline asks 25 tok/s per user (below).
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --min-tok-per-s-per-user 0 --json > "$tmp/fwd.json" || fail "prices forward --json"
python3 - "$tmp/fwd.json" <<'PY' || fail "prices forward default deployment"
import json, sys
j = json.load(open(sys.argv[1]))
c, f, a = j["replica_choice"], j["forward"], j["assumptions"]
assert c["rule"] == "cheapest" and c["context_tokens"] == 4096 and c["replica_sizes"] == [1, 2, 4, 8], c
assert a["chips"] == 8 == c["choice"]["chips"], (a["chips"], c)
assert f["decode_batch"] == 320 == c["choice"]["batch"] and f["memory_fits"] and c["choice"]["memory_full"] is False, f
cost = 8 * 2.35 / 3600 * f["decode_t_step_ms"] / 1e3 / 320 * 1e6
assert abs(f["output_cost_usd_per_mtok"] - cost) < 1e-9 * cost, (f, cost)
assert abs(f["output_cost_usd_per_mtok"] - 0.67448) < 1e-4, f
assert abs(c["choice"]["cost_usd_per_mtok"] - f["output_cost_usd_per_mtok"]) < 1e-12, c
out = j["rows"][0]["output_usd_per_mtok"]
assert abs(out - cost) < 1e-9 * out and abs(out - 0.67448) < 1e-4, out  # the headline is the cost (review 9 M3; x4 was $2.698)
r = c["runner_up"]
assert r["chips"] == 4 and r["batch"] == 109 and r["cost_usd_per_mtok"] > c["choice"]["cost_usd_per_mtok"], r
PY
out=$("$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --min-tok-per-s-per-user 0) || fail "prices forward"
printf '%s\n' "$out" | grep -q "^replica     8 chips: the cheapest replica size at context 4096" || fail "prices forward does not say which replica: $out"
printf '%s\n' "$out" | grep -q "runner-up: 4 chips at batch 109" || fail "prices forward does not name the runner-up"
printf '%s\n' "$out" | grep -q "DOES NOT FIT" && fail "prices forward's default does not fit"

# Review 3 M4: the headline is a service a host sells, the cheapest replica and batch that
# stream a speed floor, not the memory-full batch. At 50 tok/s per user (the speed `prices
# compare` assumes for a host that states none) and compare's decode context, 3000 + 1000 / 2 =
# 3500, both pick 8 H100 (TP8) at batch 104: the step is 19.96 ms <= 1 / 50 s and batch 105's
# is over 20 ms (decode re-prices both); cost = 8 x $2.35/h / 3600 x 19.959 ms / 104 =
# $1.0022/Mtok. The memory-full choice is the runner-up, cheaper and slower.
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm -s 3500 --min-tok-per-s-per-user 50 --json > "$tmp/f50.json" || fail "prices forward -s 3500"
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm --weights bf16 --json > "$tmp/c50.json" || fail "prices compare"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 8 -b 104,105 -s 3500 --json > "$tmp/d50.json" || fail "decode -b 104,105"
python3 - "$tmp/f50.json" "$tmp/c50.json" "$tmp/d50.json" <<'PY' || fail "prices forward's speed floor"
import json, sys
f, c, d = (json.load(open(a)) for a in sys.argv[1:])
ch, fw = f["replica_choice"], f["forward"]
p = ch["choice"]
assert ch["min_tok_per_s_per_user"] == 50 == fw["min_tok_per_s_per_user"] and fw["speed_floor_met"] is True, (ch, fw)
assert p["chips"] == 8 and p["batch"] == 104 == fw["decode_batch"] and p["memory_full"] is False, p
assert 1000 / 20 <= fw["tok_per_s_per_user"] == p["tok_per_s_per_user"], fw
r0, r1 = d["rows"]
assert r0["tok_per_s_per_user"] >= 50 > r1["tok_per_s_per_user"], (r0["tok_per_s_per_user"], r1["tok_per_s_per_user"])
assert abs(r0["t_step_ms"] - fw["decode_t_step_ms"]) < 1e-9, (r0["t_step_ms"], fw)
cost = 8 * 2.35 / 3600 * fw["decode_t_step_ms"] / 1e3 / 104 * 1e6
assert abs(fw["output_cost_usd_per_mtok"] - cost) < 1e-9 * cost and abs(cost - 1.0022) < 1e-4, (fw, cost)
r = ch["runner_up"]
assert r["batch"] > p["batch"] and r["cost_usd_per_mtok"] < p["cost_usd_per_mtok"] and r["tok_per_s_per_user"] < 50, r
# prices compare prices a host that states no speed on the same replica, batch and cost.
assumed = [o for o in c["rows"] if o["speed_assumed"]]
assert assumed and c["workload"]["assumed_tok_per_s_per_user"] == 50 and c["workload"]["context_tokens"] == 3500, c["workload"]
for o in assumed:
    s = o["systems"][0]
    assert (s["chips"], s["batch"]) == (8, 104) and abs(s["output_cost_usd_per_mtok"] - cost) < 1e-9 * cost, (o["provider"], s)
PY
out=$("$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --wide) || fail "prices forward --wide"
# The default floor, 25 tok/s per user (MLPerf Inference's interactive TPOT limit, 40 ms;
# kDefaultMinTokPerSPerUser): batch 303's step is 39.95 ms, batch 304's 40.004 ms (39.92 before its
# 2 norms a layer moved 304 x 8 x 8192 B = 19.9 MB, 6.84 us, 0.54 over the 6.3 us floor:
# x 2 x 80 = +0.086 ms; engine/memory_kernels.h).
printf '%s\n' "$out" | tr -s ' \n' ' ' | grep -q "chosen: 8 chips at batch 303 (the largest at 25 tok/s per user or more)" || fail "replica line: $out"
printf '%s\n' "$out" | tr -s ' \n' ' ' | grep -q "without the speed floor (the cost floor, for offline batch work): 8 chips at batch 320" \
  || fail "the memory-full runner-up is not labelled: $out"
# With -n and no -b: the largest batch at the floor on those chips (the same 303 at 4096).
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm -n 8 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); f = j['forward']
assert j['replica_choice'] is None and f['decode_batch'] == 303 and f['tok_per_s_per_user'] >= 25, f" || fail "prices forward -n 8 floor"
# Nothing reaches the default floor: Llama 3.1 70B bf16 on L4 (300 GB/s a card; 141 GB of
# weights over 8 cards: >= 59 ms a step) keeps the memory-full batch and says so; a stated
# floor out of reach is an error.
"$CHALK" prices forward -m llama-3.1-70b -H l4 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); f, c = j['forward'], j['replica_choice']
assert f['speed_floor_met'] is False and c['min_tok_per_s_per_user'] is None and f['decode_batch'] == c['choice']['batch'], (f, c)
assert f['tok_per_s_per_user'] < 25, f" || fail "70B on L4: the default floor out of reach"
expect_error "--min-tok-per-s-per-user: no replica of llama-3.1-70b on l4 reaches 50 tok/s per user; the fastest is 13.3 tok/s per user (8 chips at batch 1); a lower floor, or 0 for none" \
  prices forward -m llama-3.1-70b -H l4 --min-tok-per-s-per-user 50
expect_error "--min-tok-per-s-per-user: must be >= 0 tok/s per user (0: no floor), got -1" prices forward --min-tok-per-s-per-user -1
# Stated chips are honoured, and no choice is reported.
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm -n 2 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); assert j['assumptions']['chips'] == 2 and j['replica_choice'] is None, j['replica_choice']" \
  || fail "prices forward -n 2 is not 2 chips"

# Every pricing command: a choice that fits and is priced, re-priced by decode on the stated
# replica (same cost and speed; one more sequence does not fit: the batch fills HBM).
check() {
  local name="$1" rule="$2"; shift 2
  "$CHALK" "$@" --json > "$tmp/$name.json" || fail "chalk $* --json exited $?"
  python3 - "$tmp/$name.json" "$rule" > "$tmp/$name.args" <<'PY' || fail "$name: default deployment"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["replica_choice"]
assert c is not None and c["rule"] == sys.argv[2], c
p = c["choice"]
assert isinstance(p["memory_full"], bool) and p["batch"] >= 1 and p["cost_usd_per_mtok"] is not None and p["tok_per_s_per_chip"] > 0, p
chips = j["deployment"]["assumptions"]["chips"] if "deployment" in j else j.get("assumptions", {}).get("chips", j.get("chips"))
assert chips == p["chips"], (chips, p)
if c["rule"] == "cheapest" and c["runner_up"]:
    assert c["runner_up"]["chips"] != p["chips"] and c["runner_up"]["cost_usd_per_mtok"] >= p["cost_usd_per_mtok"] * (1 - 1e-9), c
if c["rule"] == "smallest" and c["runner_up"]:
    assert c["runner_up"]["chips"] > p["chips"] and c["runner_up"]["cost_usd_per_mtok"] < p["cost_usd_per_mtok"], c
# Tables of steps (sweep, prefill): every row fits (balance's rows are quantities).
for row in j["rows"] if j["command"] in ("serving sweep", "serving balance", "serving window", "prefill") else []:
    assert row.get("memory_fits", True), row
print(p["chips"], p["batch"], c["context_tokens"], p["cost_usd_per_mtok"], p["tok_per_s_per_chip"], int(p["memory_full"]))
PY
  read -r chips batch ctx cost per_chip full < "$tmp/$name.args"
  local model="" hw="" prev=""
  for x in "$@"; do
    [ "$prev" = "-m" ] && model="$x"
    [ "$prev" = "-H" ] && hw="$x"
    prev="$x"
  done
  "$CHALK" decode -m "$model" -H "$hw" -n "$chips" -b "$batch,$((batch + 1))" -s "$ctx" --json | python3 -c "
import json, sys
rows = json.load(sys.stdin)['rows']
# The batch that fills HBM: one more does not fit; a smaller cheaper one: one more costs more.
assert rows[0]['memory_fits'] and (not rows[1]['memory_fits'] if $full else rows[1]['cost_usd_per_mtok'] > rows[0]['cost_usd_per_mtok']), rows
assert abs(rows[0]['cost_usd_per_mtok'] - $cost) < 1e-9 * $cost, rows[0]
assert abs(rows[0]['tok_per_s_per_chip'] - $per_chip) < 1e-9 * $per_chip, rows[0]
" || fail "$name: decode -n $chips -b $batch does not reproduce the choice"
}
check forward cheapest prices forward -m llama-3.1-70b -H h100-sxm --min-tok-per-s-per-user 0
check forward_moe cheapest prices forward -m deepseek-v3 -H gb200-nvl72 --min-tok-per-s-per-user 0
check sweep cheapest serving sweep -m llama-3.1-70b -H h200
check balance cheapest serving balance -m llama-3.1-70b -H h200
check window cheapest serving window -m llama-3.1-70b -H h200
check plot cheapest serving plot -m llama-3.1-70b -H h200
check layouts cheapest layouts -m llama-3.1-70b -H h100-sxm
check decode smallest decode -m llama-3.1-70b -H h100-sxm
check layouts_latency smallest layouts -m llama-3.1-70b -H h100-sxm --objective latency
# With a rate and no -n, simulate takes the cheapest replica size x count for the rate in
# $/hour (review 10 M1; review 8 H1 took the cost floor's size): rate_choice, not replica_choice.
# 70B on H100 at 1 req/s: one 2-chip replica (2 x $2.35 = $4.70/hour) serves it (capacity
# about 2.5 req/s: 0.8 x 2.5 >= 1), and a 4-chip replica costs at least $9.40.
"$CHALK" simulate -m llama-3.1-70b -H h100-sxm --rate 1 --requests 20 --input 512 --output 32 --json > "$tmp/simulate.json" \
  || fail "simulate --rate 1 --json"
python3 - "$tmp/simulate.json" <<'PY' || fail "simulate: default deployment for a rate"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["replica_choice"] is None, j["replica_choice"]
c = j["rate_choice"]["rate_chosen"]
assert (c["chips"], c["replicas"]) == (2, 1) and abs(c["cost_usd_per_hour"] - 4.70) < 1e-9, c
assert j["assumptions"]["replica_chips"] == 2 and j["rows"][0]["chips"] == 2, j["rows"][0]
PY

# prefill: the replica cheapest per prompt token (review 5 M1), not the decode cost floor at
# the longest prompt, which put Llama 3.1 8B's 1,024-token row on a communication-bound TP8
# ($0.0502/Mtok, TTFT 9.84 ms) where one H100 costs a third. Compared at batch 1 of the
# longest default prompt, 32,768 tokens, over 1, 2, 4, 8 chips: prefill is compute-bound, so
# each prompt token costs about the same FLOPs on any size, and TP's all-reduces and each
# chip's kernel floors make it dearer on more chips; 1 chip wins. Its cost per prompt token
# is n x price x TTFT / tokens = 1 x $2.35/3600 s x TTFT / 32,768 (x 1e6 per Mtok).
"$CHALK" prefill -m llama-3.1-8b -H h100-sxm --json > "$tmp/pre8.json" || fail "prefill 8B --json"
for n in 1 2 4 8; do "$CHALK" prefill -m llama-3.1-8b -H h100-sxm -n $n -p 1024,32768 --json > "$tmp/pre8_$n.json" || fail "prefill -n $n"; done
python3 - "$tmp" <<'PY' || fail "prefill's default replica is not the cheapest per prompt token"
import json, sys
t = sys.argv[1]
j = json.load(open(f"{t}/pre8.json"))
c = j["replica_choice"]
p, r = c["choice"], c["runner_up"]
assert c["rule"] == "cheapest_prefill" and c["replica_sizes"] == [1, 2, 4, 8], c
assert (p["chips"], p["batch"], p["prompt_tokens"]) == (1, 1, 32768) and j["assumptions"]["chips"] == 1, p
assert abs(p["cost_usd_per_mtok"] - 2.35 / 3600 * p["ttft_ms"] / 1e3 / 32768 * 1e6) < 1e-9 * p["cost_usd_per_mtok"], p
rows = {x["prompt_tokens"]: x for x in j["rows"]}
assert abs(rows[32768]["ttft_ms"] - p["ttft_ms"]) < 1e-9 * p["ttft_ms"], (rows[32768], p)
# Each size stated: none is cheaper per prompt token at 32,768 tokens, and the 1,024-token row
# is priced as `-n 1` prices it, a third of TP8's.
cost = {n: {x["prompt_tokens"]: x["cost_usd_per_mtok"] for x in json.load(open(f"{t}/pre8_{n}.json"))["rows"]} for n in (1, 2, 4, 8)}
assert all(cost[n][32768] >= p["cost_usd_per_mtok"] * (1 - 1e-9) for n in cost), cost
assert r["chips"] == 2 and abs(r["cost_usd_per_mtok"] - cost[2][32768]) < 1e-9 * cost[2][32768], (r, cost[2])
assert abs(rows[1024]["cost_usd_per_mtok"] - cost[1][1024]) < 1e-9 * cost[1][1024] and cost[8][1024] > 3 * cost[1][1024], cost
PY
out=$("$CHALK" prefill -m llama-3.1-8b -H h100-sxm) || fail "prefill 8B"
printf '%s\n' "$out" | tr '\n' ' ' | tr -s ' ' | grep -q "replica 1 chip: the replica cheapest per prompt token of 1, 2, 4, 8 chips at batch 1 of 32768-token prompts" \
  || fail "prefill does not say why 1 chip: $out"
# The largest batch priced must fit: Llama 3.1 70B, batch 1 and 16 of 32,768-token prompts
# (16 x 32,768 x 327,680 B = 172 GB of KV beside 141 GB of weights): no replica below 8 H100
# (576 GB usable) holds them, 4 (288 GB) does not; every row fits.
"$CHALK" prefill -m llama-3.1-70b -H h100-sxm -b 1,16 -p 32768 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); c = j['replica_choice']
assert c['rule'] == 'cheapest_prefill' and c['choice']['chips'] == 8 and all(r['memory_fits'] for r in j['rows']), (c, j['rows'])
" || fail "prefill's default replica does not hold its largest batch"

# decode: the smallest replica (2 H100) for latency questions, and the cheapest beside it.
out=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm -b 1) || fail "decode"
printf '%s\n' "$out" | grep -q "^replica     2 chips: the smallest replica that holds the weights and one sequence" || fail "decode does not say why 2 chips: $out"
printf '%s\n' "$out" | grep -q "cheapest: 8 chips at batch 320 (cheaper than the 324 that fill HBM" || fail "decode does not name the cheapest replica"
# Its default batches never show a row that does not fit (review 2026-12-06: 4 of 5 did,
# one at $0.43/Mtok): 2 H100 hold 2 sequences of 4,096 tokens, so the list is 1, 2, said so.
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert [r['batch'] for r in j['rows']] == [1, 2], [r['batch'] for r in j['rows']]
assert all(r['memory_fits'] for r in j['rows']), j['rows']
assert any('the default batches stop at 2' in w for w in j['warnings']), j['warnings']
" || fail "decode's default batches show rows that do not fit"
# Batches asked for are shown, fitting or not (-n 2: without it -b takes the 4 chips that hold
# batch 64, review 10 M2).
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 2 -b 1,64 --json | python3 -c "
import json, sys
rows = json.load(sys.stdin)['rows']
assert [(r['batch'], r['memory_fits']) for r in rows] == [(1, True), (64, False)], rows
" || fail "decode -b 1,64 drops a row"

# No replica within the scale-up domain holds DeepSeek-V3 (671 GB in FP8) on 8 x 80 GB H100:
# the smallest replica beyond it, 16 chips, and the output says why.
"$CHALK" prices forward -m deepseek-v3 -H h100-sxm --json | python3 -c "
import json, sys
c = json.load(sys.stdin)['replica_choice']
# 673.2 GB of weights against 8 x 80 = 640 GB; the layout search ranks DP-attention EP16 above
# any pipeline there, so no stages (pp 1).
assert c['rule'] == 'smallest' and c['choice']['chips'] == 16 and c['pp'] == 1, c
assert c['why'] == 'no replica within the 8-chip scale-up domain holds deepseek-v3 (673.2 GB of weights; one domain has 640.0 GB of HBM), so the smallest replica that does', c['why']
" || fail "deepseek-v3 on h100: fallback beyond the domain"
echo "defaults: all passed"

# Rows the user asks for that the replica cannot hold are named in one warning and are not
# priced (review 2026-12-06: decode -b 1,64,256 -s 8192 printed $0.760/Mtok on 2 H100 whose
# KV cache alone would need 256 x 8192 x 327,680 B = 687 GB). Llama 3.1 70B's KV per token:
# 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 327,680 B. On 2 H100 (TP2) batch 64 needs
# 64 x 8192 x 327,680 B = 172 GB beyond the 160 GB; 8 H100 (TP8, 640 GB less 141 GB of
# weights and the reserve) hold it, 4 (320 GB: 320 - 141 - reserve < 172) do not.
# -n 2 states the 2 H100 (without it -b takes the 8 that hold batch 64: review 10 M2).
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 2 -b 1,64 -s 8192 --json > "$tmp/unfit.json" || fail "decode -b 1,64"
python3 - "$tmp/unfit.json" <<'PY' || fail "decode prices a row that does not fit"
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["batch"]: r for r in j["rows"]}
assert rows[1]["memory_fits"] is True and rows[1]["cost_usd_per_mtok"] > 0, rows[1]
assert rows[64]["memory_fits"] is False and rows[64]["cost_usd_per_mtok"] is None, rows[64]
w = [x for x in j["warnings"] if "do not fit" in x or "does not fit" in x]
assert len(w) == 1 and "batch 64 at 8192 tokens does not fit on 2 x H100 SXM" in w[0] and "-n 8 holds it" in w[0], w
PY
out=$("$CHALK" prefill -m llama-3.1-70b -H h100-sxm -n 2 -p 32768 -b 1,4) || fail "prefill -n 2 -p 32768"
printf '%s\n' "$out" | grep -q "batch 1 at 32768 tokens, batch 4 at 32768 tokens do not fit on 2 x H100 SXM" || fail "prefill does not name its rows that do not fit: $out"
