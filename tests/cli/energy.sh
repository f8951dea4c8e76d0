# Serving energy (issue 31, item 7; docs/formulas.md, "Energy"): J per output token and per
# request in simulate, plan and prices forward; --pue, --host-w-per-chip and --chip-power-w
# and their errors (exit 2, one line naming the flag, the value and the range).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

sim="simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 100 --input 512 --output 64"
expect_error "--pue: must be >= 1 (facility energy / IT energy), got 0.5" $sim --pue 0.5
expect_error "--pue: expected a finite number, got 'nan'" $sim --pue nan
expect_error "--host-w-per-chip: must be in [0, 1e+06] W per chip (0 = chips only), got -1" $sim --host-w-per-chip -1
expect_error "--chip-power-w: expected a positive power in W per chip (leave it out for the catalog's TDP), got -700" $sim --chip-power-w -700
# 0 W is no chip's draw: an error, not the catalog's "no chip power" note (H100 has 700 W).
expect_error "--chip-power-w: expected a positive power in W per chip (leave it out for the catalog's TDP), got 0" $sim --chip-power-w 0
expect_error "--chip-power-w: expected a positive power" prices forward -m llama-3.1-8b -H h100-sxm --chip-power-w 0
# A PUE beyond any data centre's (the industry average is 1.56) is a typo.
expect_error "--pue: must be in [1, 3] (facility energy / IT energy; industry average 1.56), got 1e+09" $sim --pue 1e9
expect_error "--pue: must be in [1, 3]" prices forward -m llama-3.1-8b -H h100-sxm --pue 3.5
expect_ok $sim --pue 3
# The L4's memory is GDDR6: the energy line says what streams.
"$CHALK" simulate -m llama-3.1-8b -H l4 --rate 1 --requests 20 --input 512 --output 64 | grep -q "GDDR6-bound" || fail "L4 energy line lacks GDDR6-bound"
"$CHALK" $sim | grep -q "HBM-bound 420 W" || fail "H100 energy line lacks HBM-bound 420 W"
expect_error "--pue: must be >= 1" plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 50 --input 512 --output 64 --budget-chips 1 --ttft-slo-ms 500 --pue 0.9
expect_error "--host-w-per-chip: must be in [0, 1e+06]" prices forward -m llama-3.1-8b -H h100-sxm --host-w-per-chip 2e6
expect_error "--pue: must be >= 1" prices forward -m llama-3.1-8b -H h100-sxm --pue 0

# The same run chips only, then with the host and the PUE: the facility figure is
# (chips + host W x chips x duration) x PUE, checked against the run's own duration and
# mean chip draw: E = (P_mean + 350) x chips x D x 1.2.
"$CHALK" $sim --json > "$tmp/a.json" || fail "simulate --json"
"$CHALK" $sim --json --host-w-per-chip 350 --pue 1.2 > "$tmp/b.json" || fail "simulate --json --pue"
python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' || fail "simulate energy"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ra, rb = a["rows"][0], b["rows"][0]
e = a["energy"]
assert abs(e["chip_idle_w"] - 115) < 1e-9 and abs(e["chip_memory_busy_w"] - 420) < 1e-9 and e["chip_compute_busy_w"] == 700, e
assert e["pue"] == 1 and e["host_w_per_chip"] == 0, e
# Chip draw between idle and TDP.
w = a["details"][0]["mean_chip_power_w"]
assert 115 <= w <= 700, w
# kWh = J per request x finished / 3.6e6 = J per output token x 100 x 64 / 3.6e6 (every request finished).
assert ra["finished"] == 100, ra
assert abs(ra["energy_kwh"] * 3.6e6 - ra["energy_j_per_output_token"] * 100 * 64) < 1e-6 * ra["energy_kwh"] * 3.6e6, ra
assert abs(ra["energy_j_per_request"] - 64 * ra["energy_j_per_output_token"]) < 1e-9 * ra["energy_j_per_request"], ra
# The host and the PUE: E_b = (E_a + 350 W x 1 chip x D) x 1.2, D = E_a / (P_mean x 1 chip).
ea = ra["energy_kwh"] * 3.6e6
d = ea / w
eb = (ea + 350 * d) * 1.2
assert abs(rb["energy_kwh"] * 3.6e6 - eb) < 1e-6 * eb, (rb["energy_kwh"] * 3.6e6, eb)
PY

# The table: J/out tok shown at 100 columns; CSV carries all three columns.
out=$(COLUMNS=100 "$CHALK" $sim) || fail "simulate table"
printf '%s\n' "$out" | grep -q "J/out tok" || fail "simulate table lacks J/out tok: $out"
printf '%s\n' "$out" | grep -q "^energy      per chip idle 115 W, HBM-bound 420 W, compute-bound 700 W; chips only" || fail "simulate lacks the energy line"
awk 'length > 100 { exit 1 }' <<<"$out" || fail "simulate table wider than 100 columns"
"$CHALK" $sim --csv | head -1 | grep -q "energy_j_per_output_token,energy_j_per_request,energy_kwh" || fail "simulate --csv lacks energy columns"

# plan: cost and energy in the chosen row.
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 100 --input 512 --output 64 --budget-chips 2 --ttft-slo-ms 500 --json > "$tmp/p.json" || fail "plan --json"
python3 - "$tmp/p.json" <<'PY' || fail "plan energy"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["best"]
assert b["cost_usd_per_hour"] > 0 and b["energy_j_per_output_token"] > 0 and b["energy_kwh"] > 0, b
assert j["energy"]["pue"] == 1, j["energy"]
PY

# prices forward: the decode step's J per output token. With PUE 2 exactly twice.
j1=$("$CHALK" prices forward -m llama-3.1-8b -H h100-sxm -n 1 -b 64 --json) || fail "prices forward --json"
j2=$("$CHALK" prices forward -m llama-3.1-8b -H h100-sxm -n 1 -b 64 --json --pue 2) || fail "prices forward --json --pue 2"
python3 - "$j1" "$j2" <<'PY' || fail "prices forward energy"
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
ea, eb = a["rows"][0]["energy_j_per_output_token"], b["rows"][0]["energy_j_per_output_token"]
assert 0 < ea and abs(eb - 2 * ea) < 1e-9 * eb, (ea, eb)
# Bounded by idle and TDP: 1 chip x P x t_step / 64 tokens with 115 <= P <= 700 W.
t = a["forward"]["decode_t_step_ms"] / 1e3
assert 115 * t / 64 * (1 - 1e-9) <= ea <= 700 * t / 64 * (1 + 1e-9), (ea, t)
PY
COLUMNS=100 "$CHALK" prices forward -m llama-3.1-8b -H h100-sxm -n 1 -b 64 | grep -q "the decode step: .* J per output token" || fail "prices forward text lacks J per output token"
# A system without a TDP: no energy figures (null), and a stated one gives them.
"$CHALK" prices forward -m llama-3.1-8b -H tpu-v5e --json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["energy"] is None and j["rows"][0]["energy_j_per_output_token"] is None, j["energy"]' || fail "tpu-v5e energy not null"
"$CHALK" prices forward -m llama-3.1-8b -H tpu-v5e --chip-power-w 200 --json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["rows"][0]["energy_j_per_output_token"] > 0' || fail "--chip-power-w gives no energy"
echo "energy: all passed"
