# Several models on one cluster (issue 31 item 5; docs/simulator.md, "Fleets"): `chalk fleet`
# reads a fleet file, plans each model within its own SLO on the cheapest system listed, sums
# the fleet, exits 4 when a model has no deployment, and names every bad input in one line.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

printf 'model,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms\nllama-3.1-8b,2,60,512,32,500,\nqwen2.5-7b,1,40,256,32,,50\n' > "$tmp/f.csv"
"$CHALK" fleet "$tmp/f.csv" -H h100-sxm,h200 --budget-chips 2 --modes aggregated --json > "$tmp/f.json" || fail "fleet exited $?"
python3 - "$tmp/f.json" <<'PY' || fail "fleet JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["all_met"] and len(j["rows"]) == 2, j
# Each 8B-class model fits one chip and meets its SLO on either system; H100 rents for less.
assert all(r["system"] == "h100-sxm" and r["chips"] == 1 and r["meets_slo"] is True for r in j["rows"]), j["rows"]
assert j["chips"] == 2 and abs(j["cost_usd_per_hour"] - sum(r["cost_usd_per_hour"] for r in j["rows"])) < 1e-9, j
assert j["rows"][0]["ttft_at_percentile_ms"] <= 500 and j["rows"][1]["tpot_at_percentile_ms"] <= 50, j["rows"]
PY
"$CHALK" fleet "$tmp/f.csv" -H h100-sxm --budget-chips 2 --modes aggregated | grep -qF 'fleet       2 chips, $4.700/hour' || fail "fleet text lacks its total"
# A dollar budget below the two models' cheapest: exit 4, the report printed, the reason on stderr.
"$CHALK" fleet "$tmp/f.csv" -H h100-sxm --budget-usd-per-hour 3 --modes aggregated > "$tmp/over.txt" 2> "$tmp/over.err"; rc=$?
[ "$rc" -eq 4 ] || fail "fleet over budget exited $rc, expected 4"
grep -q "over the budget" "$tmp/over.err" || fail "fleet over budget: stderr lacks the reason: $(cat "$tmp/over.err")"
printf 'model,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms\nllama-3.1-8b,0,60,512,32,500,\n' > "$tmp/bad.csv"
expect_error "line 2: rate_per_s: expected a number > 0 (requests per second), got '0'" fleet "$tmp/bad.csv" --budget-chips 2
expect_error "--budget-chips: state a chip budget per model or --budget-usd-per-hour" fleet "$tmp/f.csv"
expect_error "--budget-chips: must be in 1..8192, got 0" fleet "$tmp/f.csv" --budget-chips 0
expect_error "--modes: expected both, aggregated or disaggregated, got 'some'" fleet "$tmp/f.csv" --budget-chips 2 --modes some
expect_error "file: give a fleet file" fleet --budget-chips 2
expect_error "--slo-percentile: must be in [50, 99.9], got 10" fleet "$tmp/f.csv" --budget-chips 2 --slo-percentile 10
err=$("$CHALK" fleet "$tmp/f.csv" --budget-usd-per-hour -1 2>&1 >/dev/null)
[ "$err" = "chalk: error: --budget-usd-per-hour: must be a positive number, got -1" ] || fail "fleet --budget-usd-per-hour -1: '$err'"
