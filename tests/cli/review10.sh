# Review 10 (a new user's answers): M1 simulate given a rate sizes the deployment by its
# $/hour, M2 decode -b leads with a replica that holds the batches asked, L5 and L8 in
# src/sim/plan_test.cc and tests/cli/plan_draft.sh, H1 in src/sim/launch_flags_test.cc (LaunchPorts);
# here also the H1 scripts of a real plan, started as written.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# M1: Llama 3.1 8B on H100 at --rate 5 (2,000 requests of 2,048 in / 200 out by default). One
# H100 rents $2.35/hour; its capacity with a full queue, mu_1 = about 16 req/s (review 10), so
# N = ceil(5.15 / (0.8 x 16)) = 1 replica of 1 chip, $2.35/hour. The cost floor's size (2 chips
# at the batch that fills HBM) ran before at $4.70/hour: a replica of 2 chips costs at least
# that, so it is the runner-up (simulated) and 4 and 8 chips are priced out unsimulated.
"$CHALK" simulate -m llama-3.1-8b -H h100-sxm --rate 5 --json > "$tmp/m1.json" || fail "simulate --rate 5 --json"
python3 - "$tmp/m1.json" <<'PY' || fail "simulate --rate 5: not the cheapest size x count"
import json, sys
j = json.load(open(sys.argv[1]))
row = j["rows"][0]
assert row["chips"] == 1 and row["replicas"] == 1, row
rc = j["rate_choice"]
ch, ru = rc["rate_chosen"], rc["rate_runner_up"]
assert ch["chips"] == 1 and ch["replicas"] == 1 and abs(ch["cost_usd_per_hour"] - 2.35) < 1e-9, rc
assert 0.8 * ch["capacity_req_per_s"] >= 5, rc  # the capacity rule: one replica at 80% serves the rate
assert ru["chips"] == 2 and ru["replicas"] == 1 and abs(ru["cost_usd_per_hour"] - 4.70) < 1e-9, rc
assert rc["sizes_priced_out"] == [4, 8], rc
assert j["replica_choice"] is None, j["replica_choice"]  # the cost floor's note no longer describes what runs
assert j["replicas_why"].startswith("1 replica of 1 chip: the fewest that serve --rate 5 req/s"), j["replicas_why"]
PY
out=$("$CHALK" simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 200 | tr '\n' ' ' | tr -s ' ')
printf '%s\n' "$out" | grep -q "replica 1 chip x 1 replica, \$2.350/hour: the cheapest replica size x count that serves --rate 5 req/s (replicas line); runner-up 2 chips x 1 replica, \$4.700/hour" \
  || fail "simulate --rate 5: the replica line does not name the choice and the runner-up: $out"
# A rate far below one replica's capacity takes the smallest size too (review: --rate 0.0001 took 2 chips).
"$CHALK" simulate -m llama-3.1-8b -H h100-sxm --rate 0.0001 --requests 40 --json \
  | python3 -c "import json,sys; j=json.load(sys.stdin); r=j['rows'][0]; assert (r['chips'], r['replicas']) == (1, 1), r" \
  || fail "simulate --rate 0.0001: not one chip"

# M2: Llama 3.1 70B (141 GB of bf16 weights, 327,680 B of KV a token: 80 layers x 8 KV heads x
# 128 x 2 x 2 B) at 8,192 tokens. Batch 64 needs 64 x 8192 x 327,680 B = 171.8 GB of KV: on 4
# H100, 4 x 72 GB (0.9 x 80) - 141 = 147 GB holds less, on 8, 576 - 141 = 435 GB holds it.
# Batch 256 needs 687 GB, more than any replica within the 8-GPU domain holds. So the replica
# is 8 chips (not the 2 that hold batch 1 only), the note says why, and batch 256 fits no replica.
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -b 1,64,256 -s 8192 --json > "$tmp/m2.json" || fail "decode -b 1,64,256 --json"
python3 - "$tmp/m2.json" <<'PY' || fail "decode -b: the replica does not hold the batches asked"
import json, sys
j = json.load(open(sys.argv[1]))
n = j["replica_choice"]
assert n["choice"]["chips"] == 8 and n["choice"]["batch"] == 64, n
assert "holds batch 64 at 8192 tokens" in n["why"], n["why"]
fits = {r["batch"]: r["memory_fits"] for r in j["rows"]}
assert fits == {1: True, 64: True, 256: False}, fits
PY
# Without -b the default batches and the smallest replica stay (2 chips).
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --json | python3 -c "import json,sys; n=json.load(sys.stdin)['replica_choice']; assert n['choice']['chips'] == 2, n" \
  || fail "decode without -b: not the smallest replica"

# L2: the README's figures of the defaults are the binary's (review 10: they were review 9's).
# prices forward's headline: 8 H100 at batch 303, 8 x $2.35/h / 3600 x 39.95 ms / 303 =
# $0.6885/Mtok, x4 at a host's markup $2.754; its cost floor (serving sweep's replica) batch
# 320, $0.6745. simulate --rate 5 and decode -b: M1 and M2 above.
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm --json > "$tmp/l2.json" || fail "prices forward --json"
python3 - "$tmp/l2.json" "$SRC/README.md" <<'PY' || fail "README: a default's figure is not the binary's"
import json, re, sys
j = json.load(open(sys.argv[1])); readme = re.sub(r"\s+", " ", open(sys.argv[2]).read())
fw, n = j["forward"], j["replica_choice"]
head = f"8 H100 at batch {fw['decode_batch']}, ${fw['output_cost_usd_per_mtok']:.4f}/Mtok of cost, ${4 * fw['output_cost_usd_per_mtok']:.3f} at a host's x4 markup"
assert head in readme, head
floor = n["runner_up"]
cf = f"Llama 3.1 70B on {floor['chips']} H100 at batch {floor['batch']}, ${floor['cost_usd_per_mtok']:.4f}/Mtok out"
assert cf in readme, cf
for want in ["an 8B model at `--rate 5`: one H100, $2.35/hour; 2 chips $4.70", "8 H100 hold batch 64, no replica within the domain holds 256"]:
    assert want in readme, want
PY
