# Published traces through `chalk simulate --trace` (docs/file-formats.md, "Published
# traces"; fixtures in tests/data/traces/ with their sources) and a day planned by hour
# (`chalk plan --rate-curve`, docs/simulator.md "Planning a day"): formats named, skipped rows
# warned, Mooncake's shared blocks hit the prefix cache, and one-line errors.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(-m llama-3.1-8b -H h100-sxm -n 1)
data="$SRC/tests/data/traces"

# Mooncake's excerpt replayed whole: 7 requests, the last finding the first's 10 blocks of
# 512 tokens cached: 5,120 / 43,083 prompt tokens = 0.11884 (src/sim/trace_formats_test.cc).
"$CHALK" simulate "${base[@]}" --trace "$data/mooncake-synthetic-2543-2549.jsonl" --json > "$tmp/mc.json" || fail "simulate a Mooncake trace"
python3 - "$tmp/mc.json" <<'PY' || fail "Mooncake replay"
import json, sys
j = json.load(open(sys.argv[1])); r = j["rows"][0]
assert r["finished"] == 7 and r["rejected"] == 0, r
c = j["details"][0]["prefix_cache"]
assert abs(c["cached_token_fraction"] - 5120 / 43083) < 1e-9, c
assert "(Mooncake JSONL)" in j["traffic"], j["traffic"]
PY
# Azure 2023, verbatim: 6 requests over 18:17:04.5191470 - 18:17:03.9799600 = 0.5392 s,
# prompts (4808 + 3180 + 110 + 7433 + 34 + 374) / 6 = 2656.5 tokens on average, outputs
# (10 + 8 + 27 + 14 + 12 + 14) / 6 = 14.17.
"$CHALK" simulate "${base[@]}" --trace "$data/azure-2023-code-head.csv" --json > "$tmp/az.json" || fail "simulate an Azure trace"
python3 - "$tmp/az.json" <<'PY' || fail "Azure replay"
import json, sys
j = json.load(open(sys.argv[1])); t = j["traffic"]
assert t.startswith("6 requests, trace ") and "(Azure LLM inference trace)" in t, t
assert "over 0.5392 s; input mean 2656 tokens" in t and "output mean 14.17" in t, t
assert j["rows"][0]["finished"] == 6
PY
# BurstGPT's failed request (0 response tokens) skipped, with a warning.
"$CHALK" simulate "${base[@]}" --trace "$data/burstgpt-layout.csv" --json > "$tmp/bg.json" || fail "simulate a BurstGPT trace"
python3 - "$tmp/bg.json" <<'PY' || fail "BurstGPT replay"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["rows"][0]["finished"] == 3, j["rows"][0]
assert any("1 rows with 0 prompt or 0 generated tokens skipped" in w for w in j["warnings"]), j["warnings"]
PY
printf 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,-3,1,1,API log\n' > "$tmp/bad-burst.csv"
expect_error "$tmp/bad-burst.csv: line 2: Request tokens: expected an integer 0..10000000, got '-3'" simulate "${base[@]}" --trace "$tmp/bad-burst.csv"

# A day by hour: hours 0-11 at 1 request/s, 12-23 at 20/s on one-chip replicas; the day's
# cost is the sum over hours of each hour's cost per hour (x 1 h), its chip-hours the sum of
# chips; the busy hours take what `plan --rate 20` chooses (2 replicas when this was written).
{ echo "hour,rate_per_s"; for h in $(seq 0 23); do [ "$h" -lt 12 ] && echo "$h,1" || echo "$h,20"; done; } > "$tmp/day.csv"
day=(-m llama-3.1-8b -H h100-sxm --requests 300 --input 2048 --output 128 --budget-chips 4 --ttft-slo-ms 500 --tpot-slo-ms 30 --replica-chips 1 --modes aggregated)
"$CHALK" plan "${day[@]}" --rate-curve "$tmp/day.csv" --json > "$tmp/day.json" || fail "plan --rate-curve"
"$CHALK" plan "${day[@]}" --rate 20 --json > "$tmp/busy.json" || fail "plan --rate 20"
python3 - "$tmp/day.json" "$tmp/busy.json" <<'PY' || fail "day plan"
import json, sys
d = json.load(open(sys.argv[1])); busy = json.load(open(sys.argv[2]))
rows = d["rows"]
assert [r["hour"] for r in rows] == list(range(24))
assert rows[0]["request_rate_per_s"] == 1 and rows[12]["request_rate_per_s"] == 20
# The busy hours take the single-rate plan's choice at 20/s, more chips than the quiet ones'.
assert rows[12]["chips"] == busy["best"]["chips"] and rows[12]["replicas"] == busy["best"]["replicas"], (rows[12], busy["best"])
assert abs(d["cost_usd_per_day"] - sum(r["cost_usd_per_hour"] for r in rows)) < 1e-9 * d["cost_usd_per_day"]
assert d["chip_hours"] == 12 * rows[0]["chips"] + 12 * rows[12]["chips"]
assert rows[12]["chips"] > rows[0]["chips"], (rows[0], rows[12])
PY
# The curve from a trace's time of day: BurstGPT's fixture keeps 3 requests, at 5 s, 45 s and
# 86,520 s (00:02:00 of the second day) from the first midnight; it covers hour 0 for
# 3,600 - 5 + 120 = 3,715 s with all 3, and every other hour with none: 3 / 3,715 req/s.
"$CHALK" plan "${day[@]}" --rate-curve "$data/burstgpt-layout.csv" --json > "$tmp/bday.json" || fail "plan --rate-curve TRACE"
python3 - "$tmp/bday.json" <<'PY' || fail "day plan from a trace"
import json, sys
d = json.load(open(sys.argv[1])); rows = d["rows"]
assert abs(rows[0]["request_rate_per_s"] - 3 / 3715) < 1e-12, rows[0]
assert all(r["request_rate_per_s"] == 0 and r["mode"] == "none" for r in rows[1:])
assert "(by hour of day from the BurstGPT trace's 3 requests)" in d["traffic"], d["traffic"]
PY
expect_error "--rate-curve: $data/mooncake-synthetic-2543-2549.jsonl is a Mooncake JSONL trace, which states no time of day" plan "${day[@]}" --rate-curve "$data/mooncake-synthetic-2543-2549.jsonl"
expect_error "--rate: states one rate; --rate-curve gives the day's rates" plan "${day[@]}" --rate-curve "$tmp/day.csv" --rate 2
expect_error "--launch-dir: writes one deployment's files" plan "${day[@]}" --rate-curve "$tmp/day.csv" --launch-dir "$tmp/l"
printf 'hour,rate_per_s\n25,1\n' > "$tmp/bad-day.csv"
expect_error "$tmp/bad-day.csv: line 2: hour: expected an integer 0..23 not listed before, got '25'" plan "${day[@]}" --rate-curve "$tmp/bad-day.csv"
expect_error "--rate-curve: $tmp/none.csv: cannot read file" plan "${day[@]}" --rate-curve "$tmp/none.csv"
echo "traces: ok"
