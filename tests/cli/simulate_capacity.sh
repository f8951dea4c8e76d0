# `chalk simulate`'s capacity and replica count (review 7 M10 and M6; docs/simulator.md,
# "Capacity" and "Replicas for a rate"): overload is said whenever arrivals exceed the
# saturated capacity by more than its uncertainty, and a rate with no -n runs the fewest
# replicas that serve it at 80% of their capacity.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
m70=(-m llama-3.1-70b -H h100-sxm)
len=(--input 2048 --output 200)

# M10: one 8-chip replica, the review's rates. The capacity comes from the probe, not from
# the run, so it is the same at every rate (same lengths, same first requests).
for r in 11 10 5; do
  "$CHALK" simulate "${m70[@]}" -n 8 --rate "$r" "${len[@]}" --json > "$tmp/r$r.json" || fail "simulate --rate $r"
done
python3 - "$tmp" <<'PY' || fail "overload against the saturated capacity"
import json, sys
d = {r: json.load(open(f"{sys.argv[1]}/r{r}.json")) for r in (11, 10, 5)}
det = {r: j["details"][0] for r, j in d.items()}
cap = det[5]["capacity_req_per_s"]
for r in (11, 10):
    assert det[r]["capacity_req_per_s"] == cap, (r, det[r]["capacity_req_per_s"], cap)
for r, x in det.items():
    # The rule: arrivals above capacity + uncertainty are overloaded.
    if x["arrival_req_per_s"] > x["capacity_req_per_s"] + x["capacity_uncertainty_req_per_s"]:
        assert x["overloaded"], x
    said = any("OVERLOADED" in w and f"arrivals of" in w for w in d[r]["warnings"])
    assert said == x["overloaded"], (r, said, x)
    assert d[r]["replicas_why"] is None and d[r]["rows"][0]["replicas"] == 1  # -n keeps one replica
assert det[11]["overloaded"], det[11]   # 11.33 req/s, as the review measured
assert not det[5]["overloaded"], det[5]  # half the capacity: stable
assert 0 < det[5]["capacity_uncertainty_req_per_s"] < 0.1 * cap, det[5]  # 10.28 +- 0.71 when written
PY
# M6, review 8 H1 and review 10 M1: a rate and no -n: the cheapest replica size x count in
# $/hour, each size with as many replicas as serve the rate at 80% of one's saturated capacity
# (for 70B on H100 the 4-chip TP4, as the cost floor's cheapest_replica also finds).
# Before review 8 the size was the smallest (2 chips), 12 of them at --rate 5 at 42 output
# tok/s per chip and 11.8 J/out tok, where one 4-chip replica serves 5 req/s at 254 and 2.02.
# At --rate 10 (10.3 req/s of arrivals) one 4-chip replica's capacity, about 6.5 req/s,
# x 0.8 = 5.2 serves half: 2 replicas.
"$CHALK" simulate "${m70[@]}" --rate 10 "${len[@]}" --json > "$tmp/m6.json" || fail "simulate --rate 10 without -n"
"$CHALK" simulate "${m70[@]}" --rate 5 "${len[@]}" --json > "$tmp/m6one.json" || fail "simulate --rate 5 without -n"
"$CHALK" simulate "${m70[@]}" --rate 5 "${len[@]}" --replicas 2 --json > "$tmp/m6r.json" || fail "simulate --replicas 2"
python3 - "$tmp/m6.json" "$tmp/m6r.json" "$tmp/m6one.json" <<'PY' || fail "replicas for the rate"
import json, math, sys
j, k, o = (json.load(open(p)) for p in sys.argv[1:4])
# --replicas 2 states the count: the cost floor's size (4 chips, runner-up 8) as before. A rate
# alone: the cheapest size x count for it (review 10 M1), here the same 4 chips: 2-chip replicas
# serve about 0.56 req/s each (23 of them at --rate 10, $108.1/hour against 2 x 4 chips'
# $18.80), and an 8-chip replica rents at least what the choice does, so it is not simulated.
c = k["replica_choice"]
assert c["rule"] == "cheapest" and c["choice"]["chips"] == 4 and c["runner_up"]["chips"] == 8, c
for x, n in ((j, 2), (o, 1)):
    assert x["replica_choice"] is None, x["replica_choice"]
    rc = x["rate_choice"]
    assert (rc["rate_chosen"]["chips"], rc["rate_chosen"]["replicas"]) == (4, n) and rc["rate_runner_up"]["chips"] == 2, rc
    assert rc["sizes_priced_out"] == [8], rc
row, det = j["rows"][0], j["details"][0]
n = row["replicas"]
one = det["capacity_req_per_s"] / n
assert n == math.ceil(det["arrival_req_per_s"] / (0.8 * one)) == 2, (n, det)
assert row["chips"] == 4 * n and not det["overloaded"], (row["chips"], det)
# One meaning of chips (review 8 M2): the rows and assumptions count all 8 chips, replica_chips
# one replica's 4 (assumptions.chips was 4, the replica, beside the rows' 8).
assert row["replica_chips"] == 4 and (j["assumptions"]["chips"], j["assumptions"]["replica_chips"]) == (8, 4), (row, j["assumptions"])
assert j["replicas_why"].startswith("2 replicas of 4 chips: the fewest that serve --rate 10 req/s"), j["replicas_why"]
r1 = o["rows"][0]
assert r1["replicas"] == 1 and r1["chips"] == 4, r1
assert r1["tok_per_s_per_chip"] > 200, r1  # 254; the 12 x 2-chip pool made 42.3
assert k["rows"][0]["replicas"] == 2 and k["rows"][0]["chips"] == 8 and k["replicas_why"] is None, k["rows"][0]
PY
"$CHALK" simulate "${m70[@]}" --rate 10 "${len[@]}" | grep -q "^replicas    2 replicas of 4 chips: the fewest that serve --rate 10 req/s" \
  || fail "simulate text: no replicas line"
echo "simulate_capacity: all passed"
