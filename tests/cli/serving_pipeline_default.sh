# Review 5 M1: every serving command defaults to a deployment an operator runs. Llama 3.1 405B
# in bf16 (811.7 GB) on H100 SXM: no replica within one 8-GPU domain (576 GB usable) holds it,
# so `serving frontier`, `modes` and `plot` (which exited 2) and `balance` and `window` (which
# priced TP16 across two hosts) price PP2 x TP8, as `serving sweep`, `decode` and `prices
# forward` do (tests/cli/pipeline_default.sh): 2 stages of 8 chips, the pipeline's HBM-full
# point batch 156 at 168.4 tok/s per chip = 2.35 / 3600 / 168.4 x 1e6 = $3.877 per Mtok.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

M=(-m llama-3.1-405b -H h100-sxm)
fr=$("$CHALK" serving frontier "${M[@]}" --json) || fail "serving frontier exited $?"
mo=$("$CHALK" serving modes "${M[@]}" --json) || fail "serving modes exited $?"
pl=$("$CHALK" serving plot "${M[@]}" --json) || fail "serving plot exited $?"
ba=$("$CHALK" serving balance "${M[@]}" --json) || fail "serving balance exited $?"
wi=$("$CHALK" serving window "${M[@]}" --json) || fail "serving window exited $?"
python3 - "$fr" "$mo" "$pl" "$ba" "$wi" <<'PY' || fail "405B on H100: serving commands price PP2 x TP8"
import json, sys
fr, mo, pl, ba, wi = (json.loads(x) for x in sys.argv[1:])
for name, j in (("frontier", fr), ("modes", mo), ("plot", pl["deployment"]), ("balance", ba), ("window", wi)):
    p = j["pipeline"]
    assert p["pp"] == 2 and p["chips_per_stage"] == 8 and p["layers_per_stage"] == 63, (name, p)
    assert "no replica within" in p["why"], (name, p["why"])
# frontier: every row 16 chips in 2 stages; the cost floor the HBM-full batch 156 at $3.877,
# the figure prices forward and layouts rank first (another code path: pipeline_default.sh).
for r in fr["rows"]:
    assert r["chips"] == 16 and r["pp"] == 2 and r["microbatches"] == min(2, r["batch"]), r
    # a user waits for both stages: the cycle is at least 2 stage steps
    assert r["t_step_ms"] >= 2 * r["t_stage_ms"] and abs(r["tok_per_s_per_user"] * r["t_step_ms"] / 1e3 - 1) < 1e-9, r
    assert abs(r["cost_usd_per_mtok"] - 16 * 2.35 / 3600 * r["t_step_ms"] / 1e3 / r["batch"] * 1e6) < 1e-9, r
floor = fr["rows"][0]
assert floor["batch"] == 156 and floor["memory_full"] is True and abs(floor["cost_usd_per_mtok"] - 3.877) < 0.005, floor
# Each stage tries 1, 2, 4, 8 chips; 1, 2 and 4 hold no stage (their weights exceed HBM), so the
# pipelines tried are 2, 4, 8 and 16 chips, and 16 is priced.
# The fastest frontier point is batch 2, not 1: two microbatches of one sequence each ride
# the same pass as one sequence alone (the cycle is max(pass, 2 stage steps) = the pass), at
# twice the tokens per chip, so batch 1 is dominated.
assert fr["rows"][-1]["batch"] == 2 and fr["replica_sizes"] == [2, 4, 8, 16], fr["replica_sizes"]
assert [e["chips"] for e in fr["excluded_replicas"]] == [2, 4, 8], fr["excluded_replicas"]
for k in ("pp", "microbatches", "microbatch", "t_stage_ms", "t_hop_ms", "t_pass_ms", "stage_busy"):
    assert k in fr["columns"], k
# modes: the cost floor is the same point.
c = mo["modes"]["slow_mode"]["cheapest"]
assert c["chips"] == 16 and c["pp"] == 2 and c["batch"] == 156 and abs(c["cost_usd_per_mtok"] - 3.877) < 0.005, c
assert all(r["pp"] == 2 for r in mo["rows"]), mo["rows"]
# plot: its frontier and modes are the pipeline's.
assert pl["frontier"]["frontier"][0]["batch"] == 156 and pl["modes"]["slow_mode"]["cheapest"]["pp"] == 2, pl["frontier"]["frontier"][0]
# balance and window: the busiest stage, its HBM holding the pipeline's 156 sequences; the
# window's step is the cycle a user waits and its cost the pipeline's floor again.
assert ba["assumptions"]["chips"] == 16 and ba["replica_choice"]["pp"] == 2, ba["assumptions"]["chips"]
w = wi["windows"][0]
assert w["max_batch_at_context"] == 156 and abs(w["cost_usd_per_mtok"] - 3.877) < 0.005, w
assert abs(w["tok_per_s_per_user"] * w["t_step_ms"] / 1e3 - 1) < 1e-9 and w["t_step_roofline_ms"] <= w["t_step_ms"], w
PY
# People read the pipeline on its own line.
"$CHALK" serving frontier "${M[@]}" | grep -q "^pipeline    2 stages x 8 chips = 16 chips" || fail "frontier text: no pipeline line"
"$CHALK" serving modes "${M[@]}" | grep -q "^pipeline    2 stages x 8 chips = 16 chips" || fail "modes text: no pipeline line"
# A model one domain holds keeps replicas without stages: pp 1 on every row.
"$CHALK" serving frontier -m llama-3.1-8b -H h100-sxm -b 1,64 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert 'pipeline' not in j and all(r['pp'] == 1 and r['t_hop_ms'] == 0 and r['t_stage_ms'] == r['t_step_ms'] for r in j['rows']), j['rows'][0]
" || fail "8B frontier: pp 1"
# --replica-chips still prices the replicas it names, without stages (review 2 M8's 16 chips).
"$CHALK" serving frontier "${M[@]}" --replica-chips 16 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert 'pipeline' not in j and all(r['pp'] == 1 for r in j['rows'])
" || fail "--replica-chips 16: no stages"
# A lever is priced without a pipeline: the frontier then prices the smallest replica that
# holds the model as one replica (16 chips across two domains), as `serving sweep` does.
"$CHALK" serving frontier "${M[@]}" --draft 1 --acceptance 0.8 --drafter none --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert 'pipeline' not in j and all(r['pp'] == 1 and r['chips'] == 16 for r in j['rows']), j['rows'][0]
" || fail "--draft: 16 chips without stages"
expect_error "--replica-chips: no replica size fits llama-3.1-405b" serving frontier "${M[@]}" --replica-chips 8
