# Review 2 H1 (issue 30): a model no scale-up domain holds is priced, by default, on the layout
# `chalk layouts` ranks first on the smallest replica that holds it: pipeline stages across
# domains with tensor parallelism within each, not tensor parallelism over the scale-out
# network. Llama 3.1 405B in bf16 (811.7 GB) on H100 SXM: one 8-chip domain has 640 GB, so 16
# chips; PP2 x (TP8) at 168.4 tok/s per chip beats TP16's 49.19.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

M=(-m llama-3.1-405b -H h100-sxm)
fwd=$("$CHALK" prices forward "${M[@]}" --json) || fail "prices forward --json"
one=$("$CHALK" prices forward "${M[@]}" --pp 1 --json) || fail "prices forward --pp 1 --json"
lay=$("$CHALK" layouts "${M[@]}" --json) || fail "layouts --json"
swp=$("$CHALK" serving sweep "${M[@]}" --json) || fail "serving sweep --json"
win=$("$CHALK" serving window "${M[@]}" --json) || fail "serving window --json"
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
# A command that prices no pipeline says so and names the ones that do, with flags they take.
cw = win["replica_choice"]
assert cw["pp"] == 1 and cw["runner_up"]["layout"] == "PP2 x (TP8)", cw
assert "this command runs one replica without stages: chalk prices forward or chalk serving sweep prices the pipeline (--pp 2)" in cw["why"], cw["why"]
PY
# The text names both layouts on the replica line.
"$CHALK" prices forward "${M[@]}" --wide | tr -s ' \n' ' ' | grep -q "chosen PP2 x (TP8), 16 chips at batch 156 (fills HBM): decode 168.4 tok/s per chip" \
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
expect_error "--explain: explains a step without a pipeline; give --pp 1 with it (--pp 2 chosen)" serving sweep "${M[@]}" --explain
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
    for k in ("ttft_at_percentile_ms", "tpot_at_percentile_ms", "output_tok_per_s_per_chip"):
        assert row[k] is None or row[k] > 0, row
vllm = next(e for e in plan["launch"] if e["engine"] == "vllm")
serve = next(f["text"] for f in vllm["files"] if f["path"] == "vllm/serve.sh")
assert "--pipeline-parallel-size 2 \\\n  --tensor-parallel-size 8 \\\n" in serve and "--tensor-parallel-size 16" not in serve, serve
PY
expect_error "--pp: must be >= 1 stage, got 0" simulate "${M[@]}" --pp 0 --rate 1 --requests 5
expect_error "--pp: stages an aggregated replica; drop --disaggregate or --pp" simulate "${M[@]}" --pp 2 --disaggregate --rate 1 --requests 5

# Review 2 L8: chips no engine splits the model over name the heads and the nearest sizes
# (Llama 3.1 70B: 64 heads; 3 divides neither them nor the 8 KV heads; 2 and 4 do).
expect_error "--chips: 3 chips cannot split llama-3.1-70b: TP3 does not divide the 64 attention heads; -n 2 or -n 4" decode -m llama-3.1-70b -H h100 -n 3
# Review 2 L5: scaleup's notes wrap whole, no line left holding "(a pipeline's".
"$CHALK" scaleup | grep -q "^ *(a pipeline's *$" && fail "scaleup wraps inside a parenthesis"
exit 0
