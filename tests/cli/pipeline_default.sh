# Review 2 H1 (issue 30): a model no scale-up domain holds is priced, by default, on the layout
# `chalk layouts` ranks first on the smallest replica that holds it: pipeline stages across
# domains with tensor parallelism within each, not tensor parallelism over the scale-out
# network. Llama 3.1 405B in bf16 (811.7 GB) on H100 SXM: one 8-chip domain has 640 GB, so 16
# chips; PP2 x (TP8) at 168.4 tok/s per chip beats TP16's 49.19.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

M=(-m llama-3.1-405b -H h100-sxm)
fwd=$("$CHALK" prices forward "${M[@]}" --json) || fail "prices forward --json"
one=$("$CHALK" prices forward "${M[@]}" --pp 1 --json) || fail "prices forward --pp 1 --json"
lay=$("$CHALK" layouts "${M[@]}" --json) || fail "layouts --json"
swp=$("$CHALK" serving sweep "${M[@]}" --json) || fail "serving sweep --json"
# serving window prices the pipeline too (serving_pipeline_default.sh); with a lever (sparse
# attention, priced without stages) it runs one replica and names the pipeline.
win=$("$CHALK" serving window "${M[@]}" --sparse-top-k 2048 --json) || fail "serving window --json"
python3 - "$fwd" "$one" "$lay" "$swp" "$win" <<'PY' || fail "405B on H100 defaults to the pipeline layouts ranks first"
import json, sys
fwd, one, lay, swp, win = (json.loads(x) for x in sys.argv[1:])
c = fwd["replica_choice"]
assert c["pp"] == 2 and c["choice"]["chips"] == 16 and c["choice"]["layout"] == "PP2 x (TP8)", c
assert c["runner_up"]["layout"] == "attention TP16, FFN TP16 without stages", c["runner_up"]
# 168.4 tok/s per chip at $2.35 per chip-hour: 2.35 / 3600 / 168.4 x 1e6 = $3.877/Mtok, against
# TP16's 49.19 tok/s per chip, 2.35 / 3600 / 49.19 x 1e6 = $13.27.
assert abs(c["choice"]["cost_usd_per_mtok"] - 3.877) < 0.005, c["choice"]
assert abs(c["runner_up"]["cost_usd_per_mtok"] - 13.27) < 0.01, c["runner_up"]
f = fwd["forward"]
# The headline is the pipeline's, at the batch its stages' HBM holds: 16 chips x $2.35/h x the
# cycle (the time between a user's tokens) / batch.
assert f["decode_batch"] == c["choice"]["batch"] == 156, f
hand = 16 * 2.35 / 3600 * f["decode_t_step_ms"] / 1000 / f["decode_batch"] * 1e6
assert abs(f["output_cost_usd_per_mtok"] - hand) < 1e-6 and abs(hand - 3.877) < 0.005, (f, hand)
assert fwd["pipeline"]["pp"] == 2 and fwd["pipeline"]["chips_per_stage"] == 8 and fwd["assumptions"]["chips"] == 16, fwd["pipeline"]
assert f["memory_fits"] is True
# --pp 1: one replica without stages, TP16 across two hosts, the pipeline named as the runner-up.
c1 = one["replica_choice"]
assert c1["pp"] == 1 and c1["runner_up"]["layout"] == "PP2 x (TP8)", c1
assert abs(one["forward"]["output_cost_usd_per_mtok"] - 13.27) < 0.01, one["forward"]
# layouts ranks the pipeline first and its replica line says the same.
assert lay["replica_choice"]["pp"] == 2 and lay["rows"][0]["layout"] == "PP2 x (TP8)", lay["rows"][0]
assert abs(lay["rows"][0]["cost_usd_per_mtok"] - c["choice"]["cost_usd_per_mtok"]) < 1e-9
# serving sweep: the pipelined decode table of `decode --pp 2 -n 16`, ending at the batch HBM holds.
assert swp["command"] == "serving sweep" and swp["pipeline"]["pp"] == 2 and swp["replica_choice"]["pp"] == 2, swp["pipeline"]
last = swp["rows"][-1]
assert last["batch"] == 156 and last["memory_fits"] and abs(last["cost_usd_per_mtok"] - c["choice"]["cost_usd_per_mtok"]) < 1e-9, last
# Review 4 M6: one set of columns whatever the layout. The pipeline's rows carry the sweep's
# chips, bound, per-term times (the busiest stage's step on one microbatch) and costs; each
# term's cost is its share of that step times the row's cost.
for k in ("chips", "bound", "t_compute_ms", "t_weights_ms", "t_comm_ms", "cost_weights_usd_per_mtok", "pp", "t_stage_ms", "stage_busy"):
    assert k in swp["columns"], k
# The stage's weight fetch (17.4 ms) outlasts its compute (9.8 ms): weights-bound.
assert last["chips"] == 16 and last["pp"] == 2 and last["bound"] == "weights" and last["t_weights_ms"] > last["t_compute_ms"], last
assert abs(last["cost_weights_usd_per_mtok"] - last["cost_usd_per_mtok"] * last["t_weights_ms"] / last["t_stage_ms"]) < 1e-9, last
# A command that prices no pipeline (here: a lever) says so and names the --pp -n of the commands that do.
cw = win["replica_choice"]
assert cw["pp"] == 1 and cw["runner_up"]["layout"] == "PP2 x (TP8)", cw
assert ("this command runs one replica without stages here: --pp 2 -n 16 of chalk decode, prefill, serving sweep, prices forward or simulate "
        "prices the pipeline") in cw["why"], cw["why"]
PY
# Review 4 M6: serving sweep without stages carries the pipeline columns, one stage of one
# microbatch: the same columns as the 405B pipeline's rows.
"$CHALK" serving sweep -m llama-3.1-8b -H h100-sxm -b 8 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); r = j['rows'][0]
assert r['pp'] == 1 and r['microbatch'] == 8 and r['t_hop_ms'] == 0 and r['stage_busy'] == 1 and r['t_stage_ms'] == r['t_step_ms'] == r['t_pass_ms'], r
print(' '.join(j['columns']))" > "$tmp/cols8b" || fail "serving sweep without stages carries the pipeline columns"
python3 -c "import json, sys; print(' '.join(json.loads(sys.argv[1])['columns']))" "$swp" | cmp -s - "$tmp/cols8b" \
  || fail "serving sweep has one set of columns for 8B and 405B"

# Review 4 H1, M2: decode and prefill take the pipeline too (decode by its latency rule: the
# smallest replica, 16 chips, where PP2 x (TP8) is also the faster batch-1 step).
dec=$("$CHALK" decode "${M[@]}" -b 1,156 --json) || fail "decode --json"
pre=$("$CHALK" prefill "${M[@]}" -p 1024 --json) || fail "prefill --json"
python3 - "$dec" "$pre" <<'PY' || fail "405B decode and prefill default to the pipeline"
import json, sys
dec, pre = (json.loads(x) for x in sys.argv[1:])
c = dec["replica_choice"]
assert c["pp"] == 2 and c["rule"] == "smallest" and c["choice"]["layout"] == "PP2 x (TP8)", c
assert c["runner_up"]["layout"] == "attention TP16, FFN TP16 without stages", c["runner_up"]
one, full = dec["rows"]
assert dec["pipeline"]["pp"] == 2 and dec["pipeline"]["chips_per_stage"] == 8 and dec["assumptions"]["chips"] == 16, dec["pipeline"]
# Batch 1: one microbatch, so TPOT = the pass = 2 stage steps + the hop + the ids sent back:
# 2 x 21.94 + 0.014 + 0.01 = 43.90 ms, faster than TP16 across the hosts (48.9 ms, review 4 M2).
assert one["microbatches"] == 1 and one["t_step_ms"] == one["t_pass_ms"], one
assert 0 < one["t_step_ms"] - (2 * one["t_stage_ms"] + one["t_hop_ms"]) < 0.05 and abs(one["t_step_ms"] - 43.90) < 0.05, one
# Batch 156, the batch `layouts` ranks: 16 x $2.35/h x TPOT / 156, its $3.877/Mtok.
hand = 16 * 2.35 / 3600 * full["t_step_ms"] / 1000 / 156 * 1e6
assert abs(full["cost_usd_per_mtok"] - hand) < 1e-6 and abs(hand - 3.877) < 0.005, (full, hand)
cp = pre["replica_choice"]
assert cp["pp"] == 2 and pre["pipeline"]["chips_per_stage"] == 8, cp
r = pre["rows"][0]
# One 1,024-token prompt through two stages: TTFT = 2 stage steps + one hop = 2 x 105.56 + 0.94
# = 212.1 ms (review 4 H1: the same as -n 16 --pp 2, against TP16's 574 ms), $1.077/Mtok in.
# The stage step was 100.07 ms before the norm and SwiGLU kernels paid their HBM traffic
# (engine/memory_kernels.h): per layer on a TP8 rank, 2 norms of 1024 x 8 x 16384 B = 134.2 MB,
# 46.05 us at 3.35 TB/s x 0.87 (39.75 over the 6.3 us floor), SwiGLU 1024 x 6 x 6656 B =
# 40.9 MB, 14.03 us (7.73 over); rotary (17 heads, 8.9 MB) under its floor: 87.2 us x 63 layers
# a stage = +5.49 ms ($1.021 -> $1.077).
assert r["pp"] == 2 and abs(r["ttft_ms"] - (2 * r["t_stage_ms"] + r["t_hop_ms"])) < 1e-6 and abs(r["ttft_ms"] - 212.06) < 0.05, r
assert abs(r["cost_usd_per_mtok"] - 1.077) < 0.001, r
PY
# Stated chips wider than a domain take the stages `layouts` ranks first on them (review 4 L6).
"$CHALK" serving sweep "${M[@]}" -n 32 -b 8 | tr -s ' \n' ' ' | grep -q "32 chips span 4 scale-up domains of 8: PP4 x (TP8), the layout \`chalk layouts\` ranks first on them" \
  || fail "serving sweep -n 32 takes the pipeline layouts ranks first"
# The text names both layouts on the replica line.
"$CHALK" prices forward "${M[@]}" --wide | tr -s ' \n' ' ' | grep -q "chosen: PP2 x (TP8), 16 chips at batch 156 (fills HBM): decode 168.4 tok/s per chip" \
  || fail "prices forward's replica line names the pipeline"
# --pp N stated: that pipeline, the chips split over its stages.
"$CHALK" prices forward "${M[@]}" -n 16 --pp 2 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['replica_choice'] is None and j['pipeline']['pp'] == 2 and j['pipeline']['chips_per_stage'] == 8, j['pipeline']" || fail "prices forward -n 16 --pp 2"
# A model one domain holds keeps one replica (Llama 3.1 70B on 8 H100: no stages).
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['replica_choice']['pp'] == 1 and 'pipeline' not in j, j['replica_choice']" || fail "70B gains no pipeline"

# Bad input: one line naming the flag.
expect_error "--pp: must be >= 1 stage, got 0" prices forward "${M[@]}" --pp 0
expect_error "--pp: must be >= 1 stage, got -1" serving sweep "${M[@]}" --pp -1
expect_error "--explain: explains a step without a pipeline; give --pp 1 with it (--pp 2 chosen)" serving sweep "${M[@]}" --pp 2 --explain
# Review 4 M7: stated chips too few for their stages are counted as the user gave them.
expect_error "--chips: 8 chips in 2 stages of 4 x H100 SXM cannot hold llama-3.1-405b's weights: each stage holds 63 of 126 layers" decode "${M[@]}" -n 8 --pp 2
expect_error "the smallest pipeline of 2 stages that holds them is -n 16 --pp 2 (8 chips a stage); or --weights fp8 holds them on these 8 chips" prices forward "${M[@]}" -n 8 --pp 2
expect_error "--chips: 15 chips do not split into --pp 2 equal stages" prices forward "${M[@]}" -n 15 --pp 2

# Issue 30: `simulate` and `plan` run pipeline stages (docs/simulator.md 1.10).
# simulate --pp 2 on 16 chips, one request at a time: TTFT = vLLM's 6.908 ms of fixed work per
# request + prefill --pp 2's TTFT of one 2,000-token prompt (2 x the 63-layer stage's prefill +
# one send); TPOT = the mean of decode --pp 2's t_pass over contexts 2,000..2,048, the value at
# 2,024 (linear in the context).
sim=$("$CHALK" simulate "${M[@]}" -n 16 --pp 2 --rate 0.01 --requests 5 --input 2000 --output 50 --json) || fail "simulate --pp 2"
pre=$("$CHALK" prefill "${M[@]}" -n 16 --pp 2 --prompt 2000 --batch 1 --json) || fail "prefill --pp 2"
dec=$("$CHALK" decode "${M[@]}" -n 16 --pp 2 --batch 1 --context 2024 --json) || fail "decode --pp 2"
auto=$("$CHALK" simulate "${M[@]}" --rate 0.01 --requests 5 --input 2000 --output 50 --json) || fail "simulate 405B by default"
# plan within 32 H100 at 2 req/s: PP2 x (TP8) replicas, never TP16 across hosts; one replica
# misses TPOT p90 <= 100 ms (prompt chunks share its steps), two meet it.
plan=$("$CHALK" plan "${M[@]}" --budget-chips 32 --rate 2 --requests 200 --input 2000 --output 200 --ttft-slo-ms 3000 --tpot-slo-ms 100 --json) \
  || fail "plan 405B within 32 H100"
python3 - "$sim" "$pre" "$dec" "$auto" "$plan" <<'PY' || fail "simulate and plan run 405B on H100 as PP2 x (TP8)"
import json, sys
sim, pre, dec, auto, plan = (json.loads(x) for x in sys.argv[1:])
r = sim["rows"][0]
assert sim["engine"]["pp"] == 2 and sim["pipeline"]["chips_per_stage"] == 8 and r["chips"] == 16, (sim["engine"], r)
ttft = 6.908 + pre["rows"][0]["ttft_ms"]
assert abs(r["ttft_p50_ms"] - ttft) < 1e-6, (r["ttft_p50_ms"], ttft)
assert abs(r["tpot_p50_ms"] - dec["rows"][0]["t_pass_ms"]) < 1e-6 * r["tpot_p50_ms"], (r["tpot_p50_ms"], dec["rows"][0])
# Without -n and --pp: the pipeline `layouts` ranks first, as prices forward and serving sweep choose.
assert auto["engine"]["pp"] == 2 and auto["replica_choice"]["pp"] == 2 and auto["rows"][0]["chips"] == 16, auto["replica_choice"]
assert abs(auto["rows"][0]["ttft_p50_ms"] - r["ttft_p50_ms"]) < 1e-6, auto["rows"][0]
b = plan["best"]
assert b["pp"] == 2 and b["replica_chips"] == 16 and b["layout"] == "PP2 x (TP8)" and b["chips"] <= 32 and b["meets_slo"], b
assert b["tpot_at_percentile_ms"] <= 100 and b["ttft_at_percentile_ms"] <= 3000, b
# No row reports a latency or a throughput it did not measure: null, or positive.
for row in plan["rows"]:
    for k in ("ttft_at_percentile_ms", "tpot_at_percentile_ms", "tok_per_s_per_chip"):
        assert row[k] is None or row[k] > 0, row
vllm = next(e for e in plan["launch"] if e["engine"] == "vllm")
serve = next(f["text"] for f in vllm["files"] if f["path"] == "vllm/serve.sh")
assert "--pipeline-parallel-size 2 \\\n  --tensor-parallel-size 8 \\\n" in serve and "--tensor-parallel-size 16" not in serve, serve
PY
expect_error "--pp: must be >= 1 stage, got 0" simulate "${M[@]}" --pp 0 --rate 1 --requests 5
expect_error "--pp: stages an aggregated replica; drop --disaggregate or --pp" simulate "${M[@]}" --pp 2 --disaggregate --rate 1 --requests 5

# `prices forward --pp 1` keeps one replica without stages under its speed floor, even where
# the speed search's cheapest answer is a pipeline (review 4 M5 made cheapest_replica_at_speed
# return PP2 x (TP8) for 405B on H100): TP16 on all 16 chips, never one 8-chip stage priced
# as the whole model.
"$CHALK" prices forward "${M[@]}" --pp 1 --min-tok-per-s-per-user 15 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); a = j['assumptions']
assert a['chips'] == 16 and a['sharding'].startswith('layout: searched: attention TP16, FFN TP16'), a
assert j['model']['params_total'] > 4e11, j['model']
" || fail "prices forward --pp 1 priced a pipeline stage as the model"

# Review 2 L8: chips no engine splits the model over name the heads and the nearest sizes
# (Llama 3.1 70B: 64 heads; 3 divides neither them nor the 8 KV heads; 2 and 4 do).
expect_error "--chips: 3 chips cannot split llama-3.1-70b: TP3 does not divide the 64 attention heads; -n 2 or -n 4" decode -m llama-3.1-70b -H h100 -n 3
# Review 2 L5: scaleup's notes wrap whole, no line left holding "(a pipeline's".
"$CHALK" scaleup | grep -q "^ *(a pipeline's *$" && fail "scaleup wraps inside a parenthesis"
exit 0
