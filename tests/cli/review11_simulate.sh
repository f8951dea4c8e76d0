# Review 11's simulate findings (/tmp/review11-findings.md; docs/simulator.md, "Keeping up" and
# "Replicas for a rate"): H1 a run behind one LoRA slot said nothing and the sizing took it as
# serving the rate; M1 a missed SLO went unsaid; M2 --disaggregate ignored the rate.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
m8=(-m llama-3.1-8b -H h100-sxm)
m70=(-m llama-3.1-70b -H h100-sxm)
# H1: one slot (vLLM's default --max-loras 1) for 8 adapters on 1 H100 at --rate 5: requests of
# the other adapters wait for the running one, a standing queue of ~100 at 40% of the probe's
# 12.3 req/s. Before: warnings [] (TTFT p50 19.7 s). The run's own records: Q = 20.2 s mean wait
# against S = 3.22 s of service; offered 5.15 req/s x 200 tokens = 1,030 tok/s, served 971.
"$CHALK" simulate "${m8[@]}" -n 1 --rate 5 --lora 8:16 --json > "$tmp/h1n.json" || fail "simulate -n 1 --lora 8:16"
# The sizing: each max-loras value sized for --rate 10 and run; one slot falls behind (before:
# 1 chip x 2 replicas "that serve --rate 10", TTFT p50 18 s), eight keep up on 1 chip x 1.
"$CHALK" simulate "${m8[@]}" --rate 10 --lora 8:16 --json > "$tmp/h1.json" || fail "simulate --rate 10 --lora 8:16"
# A stated max-loras is kept: no search.
"$CHALK" simulate "${m8[@]}" --rate 10 --lora 8:16,max-loras:2 --json > "$tmp/h1s.json" || fail "simulate max-loras:2"
"$CHALK" simulate "${m8[@]}" --rate 10 --json > "$tmp/calm.json" || fail "simulate --rate 10"
python3 - "$tmp" <<'PY' || fail "H1: keeping up"
import json, sys
t = sys.argv[1]
n, j, s, calm = (json.load(open(f"{t}/{x}.json")) for x in ("h1n", "h1", "h1s", "calm"))
d = n["details"][0]
assert not d["keeps_up"] and not d["overloaded"], d
assert abs(d["offered_output_tok_per_s"] - 1030) < 2, d["offered_output_tok_per_s"]
w = [x for x in n["warnings"] if "FALLS BEHIND" in x]
assert len(w) == 1 and "requests waited 20.2 s in the queue on average, longer than the 3.22 s" in w[0], n["warnings"]
assert "1 LoRA slot for 8 adapters" in w[0] and "chalk plan --lora" in w[0], w
c = j["max_loras_choice"]
assert c["max_loras"] == 8 and [x["max_loras"] for x in c["max_loras_tried"]] == [1, 2, 4, 8], c
assert not c["max_loras_tried"][0]["keeps_up"] and c["max_loras_tried"][-1]["keeps_up"], c
assert j["details"][0]["lora"]["max_loras"] == 8 and j["details"][0]["keeps_up"], j["details"][0]
r = j["rows"][0]
assert (r["replica_chips"], r["replicas"]) == (1, 1) and r["ttft_p50_ms"] < 500, r
assert j["warnings"] == [], j["warnings"]
assert s["max_loras_choice"] is None and s["details"][0]["lora"]["max_loras"] == 2, s["max_loras_choice"]
# A run that keeps up says nothing: Q 0.04 s against S 3.47 s.
assert calm["details"][0]["keeps_up"] and calm["warnings"] == [] and calm["max_loras_choice"] is None, calm["warnings"]
PY
# The page's traffic view asks the API the same: its 200 requests of 2,048 in / 200 out at 5 req/s.
"$CHALK" simulate "${m8[@]}" -n 1 --rate 5 --requests 200 --input 2048 --output 200 --lora 8:16 --json \
  | python3 -c "import json,sys; w=json.load(sys.stdin)['warnings']; assert any('FALLS BEHIND' in x for x in w), w" || fail "H1: the page's case"

# M1: 70B at --rate 20 with p99 500 / 50 ms: sized for the rate (4 x 4 chips), TPOT p99 77.2 ms;
# 31.2% of 2,000 requests meet both, goodput 6.17 of 20.6 req/s. Before: warnings [], and the
# goodput and SLO columns were among the hidden ones.
slo=(--rate 20 --slo-percentile 99 --ttft-slo-ms 500 --tpot-slo-ms 50)
"$CHALK" simulate "${m70[@]}" "${slo[@]}" --json > "$tmp/m1.json" || fail "simulate with an SLO"
COLUMNS=100 "$CHALK" simulate "${m70[@]}" "${slo[@]}" > "$tmp/m1.txt" || fail "simulate with an SLO (text)"
python3 - "$tmp/m1.json" <<'PY' || fail "M1: the SLO missed"
import json, sys
j = json.load(open(sys.argv[1]))
w = [x for x in j["warnings"] if "misses the SLO" in x]
assert len(w) == 1 and "TPOT p99 77.2 ms > 50 ms; 31.2% of requests meet it (goodput 6.17 of 20.6 req/s)" in w[0], j["warnings"]
assert "run chalk plan to size for the SLO" in w[0], w
assert abs(j["rows"][0]["slo_attainment"] - 0.3125) < 1e-9, j["rows"][0]["slo_attainment"]
PY
grep -q "goodput req/s  SLO met" "$tmp/m1.txt" || fail "M1: the SLO columns are hidden in the text table"
COLUMNS=100 "$CHALK" simulate "${m8[@]}" --rate 10 | grep -qE "^ +mode .*SLO met" && fail "M1: the SLO column shown without an SLO"

# M2: 70B --disaggregate at --rate 8: before, 1 x 2 chips a pool, OVERLOADED at 1.17 req/s. Now
# each pool the cheapest size x count at its own phase: prefill 3 x 2 chips (one replica's
# prefill capacity 4.728 req/s: 8.24 <= 0.8 x 3 x 4.728 = 11.3), decode 1 x 4 chips.
"$CHALK" simulate "${m70[@]}" --rate 8 --disaggregate --json > "$tmp/m2.json" || fail "simulate --disaggregate --rate 8"
"$CHALK" simulate "${m70[@]}" --rate 8 --disaggregate --prefill-replicas 1 --json > "$tmp/m2s.json" || fail "simulate --prefill-replicas 1"
python3 - "$tmp/m2.json" "$tmp/m2s.json" <<'PY' || fail "M2: pools for the rate"
import json, sys
j, s = (json.load(open(p)) for p in sys.argv[1:3])
p, d = j["rate_choice"], j["decode_rate_choice"]
assert (p["rate_chosen"]["chips"], p["rate_chosen"]["replicas"]) == (2, 3), p
assert abs(p["rate_chosen"]["capacity_req_per_s"] - 4.728) < 0.01, p
assert (d["rate_chosen"]["chips"], d["rate_chosen"]["replicas"]) == (4, 1) and d["rate_runner_up"] is not None, d
r = j["rows"][0]
assert (r["replica_chips"], r["replicas"], r["decode_replica_chips"], r["decode_replicas"]) == (2, 3, 4, 1), r
assert not j["details"][0]["overloaded"] and j["details"][0]["keeps_up"] and j["warnings"] == [], j["warnings"]
assert j["replicas_why"].startswith("prefill pool 3 replicas of 2 chips: the fewest that serve --rate 8 req/s"), j["replicas_why"]
# A stated pool keeps what it states: the smallest replica, as before.
assert s["rate_choice"] is None and s["decode_rate_choice"] is None and s["rows"][0]["replicas"] == 1, s["rate_choice"]
PY
"$CHALK" simulate "${m70[@]}" --rate 8 --disaggregate | grep -q "^decode      4 chips x 1 replica, \$9.400/hour: the cheapest" \
  || fail "M2: no decode line"
echo "review11_simulate: all passed"
