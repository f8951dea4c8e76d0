# `chalk decode --pp` and `chalk prefill --pp`: pipelines in inference (lecture 47:12-1:18:33;
# engine/pipeline.h). The numbers show the lecture's conclusions; bad flags give one-line errors.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

# Llama 3.1 70B, 8 H100 per stage, 8 sequences per microbatch at 4096 tokens: one domain,
# then 2 and 4 stages with every stage busy (microbatches = pp).
one=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 8 -b 8 -s 4096 --json) || fail "decode --json"
two=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 16 --pp 2 -b 16 -s 4096 --json) || fail "decode --pp 2 --json"
four=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 32 --pp 4 -b 32 -s 4096 --json) || fail "decode --pp 4 --json"
python3 - "$one" "$two" "$four" <<'PY' || fail "pipeline decode figures"
import json, sys
one, two, four = (json.loads(x) for x in sys.argv[1:])
r1, r2, r4 = one["rows"][0], two["rows"][0], four["rows"][0]
assert two["pipeline"]["pp"] == 2 and two["pipeline"]["chips_per_stage"] == 8 and two["assumptions"]["chips"] == 16, two["pipeline"]
assert two["pipeline"]["layers_per_stage"] == 40, two["pipeline"]
assert r2["microbatch"] == 8 and r4["microbatch"] == 8 and r4["microbatches"] == 4, (r2, r4)
# Capacity, not speed: a token's time does not fall with more stages ...
assert r2["t_step_ms"] > r1["t_step_ms"] and r4["t_step_ms"] > r2["t_step_ms"], (r1["t_step_ms"], r2["t_step_ms"], r4["t_step_ms"])
assert r2["t_hop_ms"] > 0
# ... while the replica's tokens/s grows with the work in flight.
assert r4["tok_per_s"] > 3 * r1["tok_per_s"], (r1["tok_per_s"], r4["tok_per_s"])
# KV per domain stays the same (8 x 4096 x 327,680 B = 10.74 GB); weights per domain fall.
assert abs(r4["stage_kv_gb"] - 10.737) < 0.01, r4["stage_kv_gb"]
assert r4["stage_weights_gb"] < 0.3 * one["memory"]["weights_gb"], (r4["stage_weights_gb"], one["memory"]["weights_gb"])
assert r4["memory_fits"] is True
PY

# A pipeline pays when the model does not fit: Llama 3.1 405B in bf16 (812 GB) on one 8 x H100 domain
# does not; two stages of 8 do.
python3 - "$("$CHALK" decode -m llama-3.1-405b -H h100-sxm -n 16 --pp 2 -b 16 -s 4096 --weights bf16 --json)" <<'PY' || fail "405B pipeline"
import json, sys
r = json.loads(sys.argv[1])["rows"][0]
assert r["memory_fits"] is True and 400 < r["stage_weights_gb"] < 420, r
PY
# 405B in bf16 on one 8-GPU domain does not fit: an error naming the smallest replica that
# does (issue 30), and the table only with --allow-infeasible.
expect_error "--chips: 8 x H100 SXM cannot hold llama-3.1-405b's weights" decode -m llama-3.1-405b -H h100-sxm -n 8 -b 16 -s 4096 --weights bf16
"$CHALK" decode -m llama-3.1-405b -H h100-sxm -n 8 -b 16 -s 4096 --weights bf16 --wide --allow-infeasible | grep -q "WEIGHTS DO NOT FIT" || fail "405B on one domain should not fit"

# Prefill: a lone prompt is never faster through more stages; the CSV and the table print.
p1=$("$CHALK" prefill -m llama-3.1-70b -H h100-sxm -n 8 -p 8192 --json) || fail "prefill --json"
p2=$("$CHALK" prefill -m llama-3.1-70b -H h100-sxm -n 16 --pp 2 -p 8192 --json) || fail "prefill --pp --json"
python3 - "$p1" "$p2" <<'PY' || fail "pipeline prefill figures"
import json, sys
a, b = (json.loads(x)["rows"][0] for x in sys.argv[1:])
assert b["ttft_ms"] > a["ttft_ms"], (a["ttft_ms"], b["ttft_ms"])
PY
"$CHALK" prefill -m llama-3.1-70b -H h100-sxm --pp 2 -p 1024 --csv | head -1 | grep -q "^batch,prompt_tokens,prefix_tokens,t_compute_ms,.*,memory_fits,pp,microbatches,microbatch,t_stage_ms,t_hop_ms,stage_weights_gb,stage_kv_gb$" || fail "prefill --pp --csv header"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --pp 2 -b 8 | grep -q "pipeline    2 stages x" || fail "decode --pp table"

expect_error "--pp: expected 1 to 80 stages" decode -m llama-3.1-70b -H h100-sxm --pp 81
expect_error "--pp: must be >= 1 stage, got 0" decode -m llama-3.1-70b -H h100-sxm --pp 0
expect_error "--microbatches: must be >= 1, got 0" decode -m llama-3.1-70b -H h100-sxm --pp 2 --microbatches 0
expect_error "--chips: 12 chips do not split into --pp 8 equal stages" decode -m llama-3.1-70b -H h100-sxm --pp 8 -n 12
expect_error "--prefix: must be in 0.." prefill -m llama-3.1-70b -H h100-sxm --pp 2 --prefix -1

# QA: TPOT is the time between one user's tokens. Llama 3.1 405B over 2 x 8 H100, 64
# sequences in 8 microbatches of 8: a stage runs 8 microbatch steps of t_s between two steps
# of one microbatch, so TPOT = max(pass, 8 t_s) = 8 t_s (about 8 x 25.7 = 206 ms, not the
# 2 t_s + hops = 51 ms pass), and tok/s/user = 1000 / TPOT ms. The roofline of the same
# pipeline (mechanisms off, sends at wire rate) is a lower bound of both TPOT and TTFT.
q=$("$CHALK" decode -m llama-3.1-405b -H h100-sxm --pp 2 -n 16 -b 64 --microbatches 8 --json) || fail "decode --microbatches 8 --json"
qp=$("$CHALK" prefill -m llama-3.1-405b -H h100-sxm --pp 2 -n 16 -b 1,8 -p 2048 --microbatches 4 --json) || fail "prefill --pp --json"
python3 - "$q" "$qp" <<'PY' || fail "pipeline TPOT = the time between a user's tokens"
import json, sys
d, p = (json.loads(x) for x in sys.argv[1:])
r = d["rows"][0]
assert r["microbatches"] == 8 and r["microbatch"] == 8, r
assert abs(r["t_step_ms"] - 8 * r["t_stage_ms"]) < 1e-9 * r["t_step_ms"], r
assert r["t_pass_ms"] < 3 * r["t_stage_ms"] < r["t_step_ms"], r
assert abs(r["tok_per_s_per_user"] * r["t_step_ms"] - 1000) < 1e-6, r
assert abs(r["tok_per_s"] - 64 * r["tok_per_s_per_user"]) < 1e-6 * r["tok_per_s"], r
assert 0 < r["t_step_roofline_ms"] <= r["t_step_ms"], r
for x in p["rows"]:
    assert 0 < x["ttft_roofline_ms"] <= x["ttft_ms"], x
PY
"$CHALK" decode -m llama-3.1-405b -H h100-sxm --pp 2 -n 16 -b 64 --microbatches 8 --csv | head -1 | grep -q ",t_step_ms,t_step_roofline_ms,.*,t_stage_ms,t_hop_ms,t_pass_ms,stage_busy," ||
  fail "decode --pp --csv columns"

# --microbatches only means something through pipeline stages: without --pp it is refused
# (it used to run a one-stage "pipeline" at a quarter of the throughput, silently).
expect_error "--microbatches: 8 given without --pp N (N > 1)" decode -m llama-3.1-8b -H h100-sxm -b 64 --microbatches 8
expect_error "--microbatches: 2 given without --pp N (N > 1)" prefill -m llama-3.1-8b -H h100-sxm --microbatches 2
# The header says the microbatches the rows use: 2 sequences cannot fill 4 microbatches.
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --pp 2 --microbatches 4 -b 2 --wide | grep -q "; 2 microbatches in flight;" ||
  fail "decode --pp header: microbatches in flight as the rows use them"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --pp 2 --microbatches 4 -b 2,64 --wide | grep -q "; 2 to 4 microbatches in flight (4 asked" ||
  fail "decode --pp header: a range of microbatches"
