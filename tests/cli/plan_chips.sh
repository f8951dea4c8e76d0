# The planner choosing chip types as well as counts (issue 31 item 6; docs/simulator.md,
# "Planning over chip types"): `chalk plan -H A,B` plans every (prefill chip, decode chip)
# pair at each chip's catalog price, prints the choice and the runner-up, and refuses lists
# it cannot price or whose pools cannot exchange KV, in one line naming the flag (exit 2).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Llama 3.1 8B, light traffic, one-chip replicas: on h100-sxm ($2.35) and h200 ($4.54) one
# chip of either meets TPOT <= 30 ms, so the choice is one H100 aggregated ($2.35/hour) and
# the runner-up one H200 ($4.54); a mixed pair needs two chips (a prefill and a decode one).
plan=("plan" -m llama-3.1-8b -H h100-sxm,h200 --rate 2 --requests 40 --input 512 --output 64 --budget-chips 2 --tpot-slo-ms 30 --replica-chips 1 --max-seqs-candidates 64)
"$CHALK" "${plan[@]}" --json > "$tmp/p.json" || fail "plan over chip types exited $?"
python3 - "$tmp/p.json" <<'PY' || fail "plan over chip types: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
b, n = j["best"], j["next_best"]
assert j["hardware"] is None and j["hardware_choices"] == ["h100-sxm", "h200"], j["hardware_choices"]
assert (b["prefill_hardware"], b["decode_hardware"], b["chips"], b["mode"]) == ("h100-sxm", "h100-sxm", 1, "aggregated"), b
assert abs(b["cost_usd_per_hour"] - 2.35) < 1e-9, b
assert (n["decode_hardware"], n["chips"]) == ("h200", 1) and abs(n["cost_usd_per_hour"] - 4.54) < 1e-9, n
pairs = {(p["prefill_hardware"], p["decode_hardware"]): p for p in j["chip_pairs"]}
assert len(pairs) == 4, pairs
# h200 prefill, h100 decode: disaggregated, 1 + 1 chips: $4.54 + $2.35 = $6.89 per hour.
m = pairs[("h200", "h100-sxm")]
assert m["meets_slo"] and m["chips"] == 2 and abs(m["cost_usd_per_hour"] - 6.89) < 1e-9, m
assert j["rows"][0] == b and j["rows"][1] == n and len(j["rows"]) == 4, j["rows"]
PY
"$CHALK" "${plan[@]}" > "$tmp/p.txt" || fail "plan over chip types (text) exited $?"
grep -qF "chosen: h100-sxm prefill, h100-sxm decode" "$tmp/p.txt" || fail "plan text lacks the choice: $(cat "$tmp/p.txt")"
grep -qF "runner-up: h200 prefill, h200 decode" "$tmp/p.txt" || fail "plan text lacks the runner-up"

expect_error "--hardware: 'h800-sxm' has no price per chip-hour in the catalog; the choice among chip types is by dollars: drop it or give a hardware file with usd_per_chip_hour" \
  "${plan[@]/h100-sxm,h200/h100-sxm,h800-sxm}"
expect_error "--hardware: 'l4' states no scale-out network, so its pools cannot exchange KV with another system's; drop it or plan it alone" \
  "${plan[@]/h100-sxm,h200/h100-sxm,l4}"
expect_error "--hardware: 'h200' is listed twice in 'h200,h200'" "${plan[@]/h100-sxm,h200/h200,h200}"
expect_error "--budget-usd-per-hour: a dollar budget buys a different number of chips of each type; state a chip budget when choosing among chip types" \
  "${plan[@]}" --budget-usd-per-hour 20
expect_error "--price-usd-per-chip-hour: prices one chip type; choosing among chip types takes each system's catalog price" \
  "${plan[@]}" --price-usd-per-chip-hour 2
expect_error "--chip-power-w: states one chip's power; with several chip types in --hardware each takes its catalog power" "${plan[@]}" --chip-power-w 500
expect_error "--launch-dir: launch files are written for one chip type; plan the chosen one alone with -H NAME" "${plan[@]}" --launch-dir "$tmp/l"
# No pair meets an impossible TPOT: exit 4, the report printed all the same.
"$CHALK" "${plan[@]/30/0.1}" > "$tmp/none.txt" 2> "$tmp/none.err"; rc=$?
[ "$rc" -eq 4 ] || fail "plan over chip types with no deployment exited $rc, expected 4"
grep -qF "no pair of h100-sxm, h200 meets the SLO within 2 chips" "$tmp/none.txt" || fail "no-deployment text: $(cat "$tmp/none.txt")"
