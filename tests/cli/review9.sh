# Review 9 (a new user's answers): M3 prices forward's headline at cost, L1 help that
# documents only what a command takes, L2 what flagged an overload, M1 a trace sized as a
# rate. (H1, plan's steady state: src/sim/plan_test.cc; M2: replica_rule.sh; L3: layouts.sh.)
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# M3: 70B on 8 H100 at batch 303 x 4096 (review 9's check 2): 8 x $2.35/h / 3600 x 39.95 ms /
# 303 = $0.6885/Mtok out. The default headline is that cost (markup 1), near the hosts
# `prices compare` lists for the model, where x4 ($2.754) was 3-7x most of them; the host
# markup x4 is a second line.
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --json > "$tmp/fwd.json" || fail "prices forward --json"
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm --json > "$tmp/cmp.json" || fail "prices compare --json"
python3 - "$tmp/fwd.json" "$tmp/cmp.json" <<'PY' || fail "prices forward: the default headline is not the cost, near the hosts"
import json, sys
f = json.load(open(sys.argv[1]))
fw = f["forward"]
assert fw["markup"] == 1 and fw["utilization"] == 1 and fw["gross_margin"] == 0, fw
row = f["rows"][0]
out = row["output_usd_per_mtok"]
assert abs(out - fw["output_cost_usd_per_mtok"]) < 1e-9 * out, (row, fw)
assert abs(out - 8 * 2.35 / 3600 * fw["decode_t_step_ms"] / 1e3 / fw["decode_batch"] * 1e6) < 1e-9 * out, (out, fw)
hosts = sorted(r["output_usd_per_mtok"] for r in json.load(open(sys.argv[2]))["rows"] if r.get("output_usd_per_mtok"))
# The hosts' median output price: DeepInfra 0.40, Nebius 0.40, Cerebras 0.60, Together 0.88,
# Fireworks 0.90, Azure 3.54 -> (0.60 + 0.88) / 2 = $0.74; the cost is within 2x of it, x4 was 3.7x.
mid = (hosts[(len(hosts) - 1) // 2] + hosts[len(hosts) // 2]) / 2
assert mid / 2 <= out <= 2 * mid, (out, hosts)
PY
out=$("$CHALK" prices forward -m llama-3.1-70b -H h100-sxm | tr '\n' ' ' | tr -s ' ')
printf '%s\n' "$out" | grep -q "markup x1.000 = 1 / (utilization 1.00 x (1 - margin 0)): the cost" || fail "prices forward: the markup line: $out"
printf '%s\n' "$out" | grep -q "at utilization 0.500 and margin 0.500 (x4.000, --utilization and --margin): \$/Mtok in 0.9007, out 2.754" \
  || fail "prices forward: no second line at a host's markup: $out"
# A stated markup is the headline and needs no second line.
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --utilization 0.5 --margin 0.5 | tr '\n' ' ' | tr -s ' ' | grep -q "at utilization 0.500 and margin" \
  && fail "prices forward: the second line repeats a stated markup"

# L1: plan refuses -n, --tp, --ep and --two-batch-overlap (it chooses them); its help does not
# offer them. simulate's -n help says what simulate does with a rate: the cheapest size.
help=$("$CHALK" plan --help)
for flag in "-n,--chips" "--tp" "--ep" "--two-batch-overlap"; do
  printf '%s\n' "$help" | grep -q -- "^ *$flag\b" && fail "plan --help documents $flag, which plan refuses"
done
expect_error "--tp: the plan searches the parallel layouts itself" plan -m llama-3.1-8b -H h100-sxm --rate 1 --tpot-slo-ms 50 --budget-chips 2 --tp 2
"$CHALK" simulate --help | tr '\n' ' ' | tr -s ' ' | grep -q "with a --rate or a --trace, the replica size within the scale-up domain and count cheapest in \$/hour that serve the --rate or the --trace's mean rate" \
  || fail "simulate --help: -n's default is not the cheapest size with a rate"
"$CHALK" simulate --help | grep -q "for decode and simulate the smallest" && fail "simulate --help: -n still says the smallest"

# M1 and L2: the Azure code trace's head (tests/data/traces), 9.27 req/s of mean arrivals, on
# 70B / H100: before, the smallest replica (2 chips, capacity 2.50 req/s) ran alone and was
# OVERLOADED with "TTFT grows -1.00 s per second". Now the trace's mean rate sizes the replica
# and counts replicas as --rate does: N = ceil(9.27 / (0.8 x mu_1)).
"$CHALK" simulate -m llama-3.1-70b -H h100-sxm --trace "$SRC/tests/data/traces/azure-2023-code-head.csv" --json > "$tmp/trace.json" \
  || fail "simulate --trace --json"
python3 - "$tmp/trace.json" <<'PY' || fail "simulate --trace: not sized as a rate"
import json, math, sys
j = json.load(open(sys.argv[1]))
why = j["replicas_why"]
assert "the fewest that serve the trace's mean rate" in why, why
rc = j["rate_choice"]  # review 10 M1: the cheapest size x count for the rate
assert rc["rate_chosen"]["chips"] * rc["rate_chosen"]["replicas"] == j["rows"][0]["chips"], (rc, j["rows"][0])
assert not any("OVERLOADED" in w for w in j["warnings"]), j["warnings"]
PY
# L2: -n 2 keeps the smallest replica, which the capacity probe flags (9.27 req/s of arrivals
# against about 2.5 a replica serves with its queue full) while its TTFT does not grow with the
# arrival time (the trace's head is bursty): the warning says what flagged it, not a negative growth.
w=$("$CHALK" simulate -m llama-3.1-70b -H h100-sxm -n 2 --trace "$SRC/tests/data/traces/azure-2023-code-head.csv" 2>&1 | tr '\n' ' ' | tr -s ' ')
printf '%s\n' "$w" | grep -q "OVERLOADED" || fail "simulate -n 2 --trace: not flagged: $w"
printf '%s\n' "$w" | grep -q "TTFT grows -" && fail "simulate: an overload cites a negative growth: $w"
printf '%s\n' "$w" | grep -q "capacity measured with every replica's queue full" || fail "simulate: the overload does not say what flagged it: $w"

# L3: gpt-oss-120b on 8 H100, ranked at the batch each replica's HBM holds: rank 1 is the
# chosen replica (DP-attention EP8 on 8 chips, batch 3088) and the replica line gives its
# figures, not the cost rule's batch 3072 (11754 tok/s per chip beside rank 1's 11460).
"$CHALK" layouts -m gpt-oss-120b -H h100-sxm --json > "$tmp/lay.json" || fail "layouts --json"
python3 - "$tmp/lay.json" <<'PY' || fail "layouts: the replica line and its rank-1 row disagree"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["replica_choice"]["choice"]
top = [r for r in j["rows"] if r["rank"] == 1][0]
assert top["replicas"] == 1 and c["batch"] == top["batch_per_replica"], (c, top)
assert abs(c["tok_per_s_per_chip"] - top["tok_per_s_per_chip"]) < 1e-9 * top["tok_per_s_per_chip"], (c, top)
assert abs(c["cost_usd_per_mtok"] - top["cost_usd_per_mtok"]) < 1e-9 * top["cost_usd_per_mtok"], (c, top)
assert c["memory_full"], c
PY
