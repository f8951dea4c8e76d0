# Issue 30 item 1: one replica rule for a cost at a stated batch. `prices forward -b B` with no
# -n prices the cheapest replica size whose HBM holds B (cheapest_serving_replica), with the
# runner-up; the page's cost headline asks the same command through /api/prices/forward.
# `decode` keeps the smallest replica, for latency, and says so.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
M=(-m llama-3.1-70b -H h100-sxm)
# Llama 3.1 70B bf16 on H100 at batch 64 x 4096 tokens: KV 80 layers x 2 x 8 KV heads x 128 x
# 2 B = 327,680 B/token, 64 x 4096 of them 85.9 GB beside 141.1 GB of weights: more than 2 x
# 80 GB, so 2 chips cannot hold it. 4 and 8 chips read the same 227 GB per step in all (the
# same n x T_memory), and 8 pay the per-step all-reduces and kernel floor on twice the chips:
# 4 chips (TP4) at batch 64, 8 the runner-up, and 4's cost is what `decode -n 4 -b 64` prints.
fwd=$("$CHALK" prices forward "${M[@]}" -b 64 -s 4096 --json) || fail "prices forward -b 64 exited $?"
dec=$("$CHALK" decode "${M[@]}" -n 4 -b 64 -s 4096 --json) || fail "decode -n 4 -b 64 exited $?"
python3 - "$fwd" "$dec" <<'PY' || fail "prices forward -b 64: replica and cost"
import json, sys
f, d = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rc = f["replica_choice"]
assert (rc["choice"]["chips"], rc["choice"]["batch"], rc["runner_up"]["chips"], rc["runner_up"]["batch"]) == (4, 64, 8, 64), rc
assert rc["choice"]["memory_full"] is False and rc["runner_up"]["memory_full"] is False, rc
assert rc["runner_up"]["cost_usd_per_mtok"] > rc["choice"]["cost_usd_per_mtok"], rc
assert f["forward"]["decode_batch"] == 64 and f["forward"]["output_cost_usd_per_mtok"] == d["rows"][0]["cost_usd_per_mtok"], (f["forward"], d["rows"][0])
PY
txt=$("$CHALK" prices forward "${M[@]}" -b 64 -s 4096 | tr '\n' ' ' | tr -s ' ') || fail "prices forward -b 64 (text) exited $?"
for want in "replica 4 chips: the cheapest replica size at context 4096 of 1, 2, 4, 8 chips whose HBM holds batch 64 (-b)" \
            "chosen: 4 chips at batch 64 (the batch asked, -b): decode" "runner-up: 8 chips at batch 64 (the batch asked, -b): decode"; do
  case "$txt" in *"$want"*) ;; *) fail "prices forward -b 64: no '$want' in: $txt";; esac
done
# Without -b, the same function at 25 tok/s per user: 8 chips, as before (README).
"$CHALK" prices forward "${M[@]}" --json | python3 -c "
import json, sys; rc = json.load(sys.stdin)['replica_choice']
assert rc['choice']['chips'] == 8 and rc['min_tok_per_s_per_user'] == 25, rc" || fail "prices forward: the speed floor's replica moved"
# -n still states the chips; a batch no size holds is refused with the sizes that would.
"$CHALK" prices forward "${M[@]}" -n 8 -b 64 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); assert j['replica_choice'] is None and j['forward']['decode_batch'] == 64, j['replica_choice']" \
  || fail "prices forward -n 8 -b 64: not 8 chips as stated"
expect_error "--batch: batch 100000 at context 4096 does not fit on 8 x H100" prices forward "${M[@]}" -b 100000
# decode keeps the smallest replica for a latency question, and says so.
# Review 9 M2: it said "the fastest small-batch step", and it is the slowest: 70B at batch 1
# reads 141 GB of weights over 2, 4 or 8 H100s (2 x 3.35 x 0.87 = 5.8 TB/s: about 24 ms of
# weights on 2 chips, 12 on 4; chalk: 29.7, 17.7, 11.7 ms). The line says what it is.
out=$("$CHALK" decode "${M[@]}" -b 1 | tr '\n' ' ' | tr -s ' ')
printf '%s\n' "$out" | grep -q "replica 2 chips: the smallest replica that holds the weights and one sequence: the fewest chips, for latency per replica (a larger -n steps faster at small batch)" \
  || fail "decode: the smallest-replica rule is not stated: $out"
printf '%s\n' "$out" | grep -q "fastest" && fail "decode: the smallest replica is called fastest: $out"
"$CHALK" decode "${M[@]}" -b 1 --json | python3 -c "
import json, subprocess, sys
two = json.load(sys.stdin)['rows'][0]['t_step_ms']
four = json.loads(subprocess.run(['$CHALK', 'decode', '-m', 'llama-3.1-70b', '-H', 'h100-sxm', '-b', '1', '-n', '4', '--json'], capture_output=True, text=True).stdout)['rows'][0]['t_step_ms']
assert four < 0.75 * two, (two, four)" || fail "decode: 4 chips do not step faster than the default 2 at batch 1"
# Review 7 M7: with --tp 2 and no -n, 2 chips are the smallest replica that runs TP2, not the
# smallest that holds Llama 3.1 8B (1 chip: 16.1 GB of weights in 80 GB), and the line says so.
"$CHALK" decode -m llama-3.1-8b -H h100 --tp 2 | tr '\n' ' ' | tr -s ' ' | grep -q "replica 2 chips: the smallest replica that runs --tp 2 and holds the weights and one sequence" \
  || fail "decode --tp 2: the replica line does not name --tp 2"
"$CHALK" decode -m llama-3.1-8b -H h100 | tr '\n' ' ' | tr -s ' ' | grep -q "replica 1 chip: the smallest replica that holds the weights and one sequence" \
  || fail "decode: the 8B's smallest replica is not 1 chip"
