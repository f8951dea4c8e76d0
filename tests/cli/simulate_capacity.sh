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
# M6: a rate and no -n: the fewest 2-chip replicas that serve it at 80% of one's capacity.
"$CHALK" simulate "${m70[@]}" --rate 5 "${len[@]}" --json > "$tmp/m6.json" || fail "simulate --rate 5 without -n"
"$CHALK" simulate "${m70[@]}" --rate 5 "${len[@]}" --replicas 2 --json > "$tmp/m6r.json" || fail "simulate --replicas 2"
python3 - "$tmp/m6.json" "$tmp/m6r.json" <<'PY' || fail "replicas for the rate"
import json, math, sys
j, k = (json.load(open(p)) for p in sys.argv[1:3])
row, det = j["rows"][0], j["details"][0]
n = row["replicas"]
one = det["capacity_req_per_s"] / n
assert n == math.ceil(det["arrival_req_per_s"] / (0.8 * one)), (n, det)
assert n > 1 and not det["overloaded"], (n, det)
assert j["replicas_why"].startswith(f"{n} replicas of 2 chips: the fewest that serve --rate 5 req/s"), j["replicas_why"]
assert k["rows"][0]["replicas"] == 2 and k["replicas_why"] is None, k["rows"][0]
PY
"$CHALK" simulate "${m70[@]}" --rate 5 "${len[@]}" | grep -q "^replicas    [0-9]* replicas of 2 chips: the fewest that serve --rate 5 req/s" \
  || fail "simulate text: no replicas line"
echo "simulate_capacity: all passed"
