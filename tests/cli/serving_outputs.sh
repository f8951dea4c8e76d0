# `chalk serving`: tables, CSV and JSON keys with unit suffixes, and the HTML charts.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# CSV: every term apart, unit-suffixed keys; 17 powers of two from 1 to 65536.
"$CHALK" serving sweep -m llama-3.1-70b -H h200 --csv > "$tmp/sweep.csv" || fail "sweep --csv"
head -1 "$tmp/sweep.csv" | grep -q '^chips,batch,context_tokens,kv_read_tokens,t_compute_ms,t_weights_ms,t_kv_ms,t_operations_ms,t_comm_ms,t_overhead_ms,t_step_ms,bound,tok_per_s,tok_per_s_per_user,tok_per_s_per_chip,cost_usd_per_mtok,cost_compute_usd_per_mtok,cost_weights_usd_per_mtok,cost_kv_usd_per_mtok,cost_comm_usd_per_mtok,cost_overhead_usd_per_mtok,memory_fits$' \
  || fail "sweep CSV header: $(head -1 "$tmp/sweep.csv")"
[ "$(wc -l < "$tmp/sweep.csv")" -eq 18 ] || fail "sweep CSV has $(wc -l < "$tmp/sweep.csv") lines, expected 18"
# Every integer on request.
[ "$("$CHALK" serving sweep -m llama-3.1-8b -H h100-sxm -b 1,100 --every-integer --csv | wc -l)" -eq 101 ] || fail "--every-integer"
# JSON: the frontier is monotone (speed and cost rise together) and names its exclusions.
# Pinned on the roofline (--roofline): replicas of 1-5 H200 cannot hold 673.2 GB of weights.
"$CHALK" serving frontier --roofline -m deepseek-v3 -H h200 --json > "$tmp/frontier.json" || fail "frontier --json"
python3 - "$tmp/frontier.json" <<'PY' || fail "frontier JSON"
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["rows"]
assert len(rows) >= 5, len(rows)
for a, b in zip(rows, rows[1:]):
    assert b["tok_per_s_per_user"] > a["tok_per_s_per_user"] and b["cost_usd_per_mtok"] > a["cost_usd_per_mtok"], (a, b)
assert [e["chips"] for e in j["excluded_replicas"]] == [1, 2, 3, 4, 5], j["excluded_replicas"]
assert "weights 673.2 GB" in j["excluded_replicas"][0]["reason"]  # FP8 + an fp32 scale per 128x128 block
PY
# Modes: the fast- and slow-mode answers, as text and JSON (pinned on the roofline).
"$CHALK" serving modes --roofline -m llama-3.1-70b -H h200 > "$tmp/modes.txt" || fail "modes"
grep -q "2.5x the speed costs 1.35x the price" "$tmp/modes.txt" || fail "modes text: $(cat "$tmp/modes.txt")"
grep -q "what stops it" "$tmp/modes.txt" || fail "modes: no limit stated"
"$CHALK" serving modes --roofline -m llama-3.1-70b -H h200 --json | python3 -c "
import json,sys; m=json.load(sys.stdin)['modes']
assert abs(m['fast_mode'][0]['price_multiple'] - 1.3457) < 0.01, m['fast_mode']
assert m['budget'][1]['capped_by_fastest'] is True" || fail "modes JSON"
# Balance and window: the lecture's roofline quantities on one 8-GPU node (--roofline -n 8).
"$CHALK" serving balance --roofline -n 8 -m llama-3.1-70b -H h200 --json | python3 -c "
import json,sys; b=json.load(sys.stdin)['balance']
assert b['batch_without_kv'] == 198 and b['batch_with_kv'] is None and b['context_never_compute_bound_tokens'] == 2244, b" \
  || fail "balance JSON"
"$CHALK" serving window --roofline -n 8 -m llama-3.1-70b -H h200 --csv | grep -q '^4096,29.375,34.970[0-9]*,651,31.39[0-9]*,kv-cache' || fail "window CSV"
# Chart data (JSON) and the self-contained HTML page.
"$CHALK" serving plot -m llama-3.1-8b -H h100-sxm --json > "$tmp/chart.json" || fail "plot --json"
python3 -c "
import json,sys; d=json.load(open('$tmp/chart.json'))
assert d['format'] == 'chalk-serving-chart/1'
for k in ('batch_sweep','context_sweep','frontier','modes','balance','window','deployment'): assert k in d, k" || fail "chart data"
err=$("$CHALK" serving plot -m llama-3.1-8b -H h100-sxm -o "$tmp/chart.html" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 2 ] && printf '%s' "$err" | grep -q "built without the plotting library"; then
  echo "serving_outputs: HTML skipped: this build has no web/node_modules (run npm ci --prefix web)"
else
  [ $rc -eq 0 ] || fail "plot exited $rc: $err"
  grep -q '"format":"chalk-serving-chart/1"' "$tmp/chart.html" || fail "HTML lacks the chart data"
  grep -q 'vegaEmbed' "$tmp/chart.html" || fail "HTML lacks vega-embed"
  grep -q '__CHALK_CHART_DATA__\|/\*CHALK_VEGA_JS\*/' "$tmp/chart.html" && fail "HTML still has placeholders"
  ! grep -q 'src="http' "$tmp/chart.html" || fail "HTML loads a script from the network"
  [ "$(stat -c %s "$tmp/chart.html")" -gt 500000 ] || fail "HTML too small to hold the libraries"
fi
echo "serving_outputs: all passed"
# A budget below the cost floor is out of reach, not answered with a dearer point.
"$CHALK" serving modes --price-multiple 0.5 | grep -q "0.5x the price is out of reach" || fail "price below the floor"
"$CHALK" serving modes --price-multiple 0.5 --json | python3 -c "import json,sys; b=json.load(sys.stdin)['modes']['budget'][0]; assert b['below_floor'] is True, b" || fail "below_floor in JSON"
echo "serving_outputs: budgets passed"
# Serving commands warn where the figures rest on something false.
"$CHALK" serving balance --roofline -n 8 -m deepseek-v3 -H h100-sxm | grep -q "warning     the weights (673.2 GB) and reserve" || fail "weights-do-not-fit warning"
"$CHALK" serving balance -n 8 -m deepseek-v3 -H h100-sxm | grep -q "warning     the weights (.* GB) and reserve" || fail "weights-do-not-fit warning"
"$CHALK" serving sweep -m llama-3.1-8b -H h100-sxm -s 1048576 -b 1 | grep -q "exceeds llama-3.1-8b's max_position_embeddings 131072" || fail "context warning"
echo "serving_outputs: warnings passed"
"$CHALK" serving frontier --roofline --replica-chips 72,100 | grep -q "replicas of up to 100 chips span more than one scale-up domain of 72" || fail "scale-out warning in frontier"
echo "serving_outputs: frontier scale-out warning passed"
