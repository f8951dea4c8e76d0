# chalk calibrate (issue 29): vLLM benchmark JSON in, an engine profile out, and the profile
# taken by simulate, plan and validate; each bad input a one-line error naming the field.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Three `vllm bench serve --save-result` files (the keys vLLM writes, trimmed), Llama 3.1 8B on
# one H100, 512 tokens in and 64 out at 1, 4 and 8 requests/s: test inputs, not measurements.
run() {  # run FILE RATE TTFT_MS TPOT_MS E2E_MS
  cat > "$1" <<JSON
{"date": "20260101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 30,
 "request_rate": $2, "burstiness": 1.0, "max_concurrency": null, "duration": 31.2, "completed": 30,
 "total_input_tokens": 15360, "total_output_tokens": 1920, "mean_ttft_ms": $3, "median_ttft_ms": $3,
 "p99_ttft_ms": $3, "mean_tpot_ms": $4, "mean_itl_ms": $4, "mean_e2el_ms": $5}
JSON
}
run "$tmp/r1.json" 1 40 8 550
run "$tmp/r2.json" 4 42 8.2 560
run "$tmp/r3.json" 8 45 8.5 590
setup=(-m llama-3.1-8b -H h100-sxm -n 1 --engine vllm --max-requests 30)
out=$("$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "${setup[@]}" --fit request_overhead_s -o "$tmp/p.json" --json) \
  || fail "calibrate exited $?"
python3 - "$out" "$tmp/p.json" <<'PY' || fail "calibrate output"
import json, sys
j = json.loads(sys.argv[1]); p = json.load(open(sys.argv[2]))
c = {x["name"]: x for x in j["rows"]}
assert j["runs"] == 3 and j["residuals"] == 12, j  # 3 runs x TTFT, TPOT, ITL, E2E
assert c["request_overhead_s"]["fitted"] and not c["kernel_floor_s"]["fitted"], c
assert c["request_overhead_s"]["uncertainty_s"] > 0, c
assert p["format"] == "chalk-engine-profile/1" and p["engine"] == "vllm" and p["fitted"] == ["request_overhead_s"], p
assert abs(p["constants"]["request_overhead_s"] - c["request_overhead_s"]["value_s"]) < 1e-12
assert j["median_abs_error_left_out_fraction"] is not None
PY
# Text: figures in us under names without the JSON keys' "_s" (review 8 L2: host_s_per_sequence
# stood in the (us) columns and the notes said "allreduce_latency_s: not asked for").
txt=$("$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "${setup[@]}" --fit request_overhead_s) || fail "calibrate text exited $?"
printf '%s\n' "$txt" | grep -Eq "(_s |_s_per_|_s:)" && fail "calibrate text names a constant in s beside us: $txt"
printf '%s\n' "$txt" | grep -q "^ *host_per_sequence " || fail "calibrate text lacks host_per_sequence: $txt"
printf '%s\n' "$txt" | grep -q "^note        allreduce_latency: not asked for" || fail "calibrate note names allreduce_latency_s: $txt"
# The profile applied: simulate's TTFT moves with the fitted overhead; validate says it applied it.
"$CHALK" simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 2 --requests 50 --input 512 --output 64 --engine-profile "$tmp/p.json" --json \
  | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["engine_profile"]["engine"] == "vllm", j["engine_profile"]' \
  || fail "simulate --engine-profile"
"$CHALK" simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 2 --requests 50 --input 512 --output 64 --engine-profile "$tmp/p.json" \
  | grep -q "^profile     $tmp/p.json" || fail "simulate prints no profile line"
printf '%s\n' "id,kind,model,hardware,chips,tp,engine,requests,request_rate_per_s,input_tokens,output_tokens,metric,value" \
  "T,serving,llama-3.1-8b,h100-sxm,1,1,vllm,30,2,512,16,ttft_ms,50" > "$tmp/m.csv"
v=$("$CHALK" validate "$tmp/m.csv" --engine-profile "$tmp/p.json") || fail "validate --engine-profile exited $?"
case "$v" in *"applied to 1 row(s)"*"without the engine profile"*) ;; *) fail "validate --engine-profile: $v";; esac
# Errors.
sed 's/"completed": 30/"completed": "thirty"/' "$tmp/r1.json" > "$tmp/bad.json"
expect_error "$tmp/bad.json: completed: expected an integer" calibrate "$tmp/bad.json" "$tmp/r2.json" "${setup[@]}"
expect_error "runs: 1 run cannot determine 1 constant" calibrate "$tmp/r1.json" "${setup[@]}" --fit request_overhead_s
sed 's/"model_id": "meta-llama\/Llama-3.1-8B-Instruct", //' "$tmp/r1.json" > "$tmp/noid1.json"
sed 's/"model_id": "meta-llama\/Llama-3.1-8B-Instruct", //' "$tmp/r2.json" > "$tmp/noid2.json"
expect_error "--model: $tmp/noid1.json does not say which model ran" calibrate "$tmp/noid1.json" "$tmp/noid2.json" -H h100-sxm
# vLLM's model_id names the model when -m does not, and refuses a -m of another architecture
# (review 2026-12-06: 8B runs fitted against llama-3.1-70b to a 224% median error).
"$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" -H h100-sxm -n 1 --engine vllm --max-requests 30 --fit request_overhead_s --json \
  | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['model']['name'] == 'llama-3.1-8b', j['model']" || fail "calibrate: model_id not taken"
expect_error "--model: $tmp/r1.json ran meta-llama/Llama-3.1-8B-Instruct (llama-3.1-8b), not llama-3.1-70b" \
  calibrate "$tmp/r1.json" "$tmp/r2.json" -m llama-3.1-70b -H h100-sxm -n 4
# Runs 20 times slower than any setup of these constants can make them: no profile.
for i in 1 2 3; do python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
for k in ('mean_ttft_ms', 'median_ttft_ms', 'p99_ttft_ms', 'mean_tpot_ms', 'mean_itl_ms', 'mean_e2el_ms'): j[k] *= 20
json.dump(j, open(sys.argv[2], 'w'))" "$tmp/r$i.json" "$tmp/slow$i.json"; done
expect_error "runs: the fit leaves a median error of" calibrate "$tmp/slow1.json" "$tmp/slow2.json" "$tmp/slow3.json" "${setup[@]}" -o "$tmp/never.json"
[ ! -e "$tmp/never.json" ] || fail "calibrate wrote a profile from an implausible fit"
expect_error "--hardware: $tmp/r1.json does not say which system ran" calibrate "$tmp/r1.json" "$tmp/r2.json" -m llama-3.1-8b
expect_error "--fit: unknown constant 'floor'" calibrate "$tmp/r1.json" "${setup[@]}" --fit floor
echo '{"format": "chalk-engine-profile/1", "engine": "sglang", "constants": {}}' > "$tmp/sg.json"
expect_error "--engine-profile: $tmp/sg.json was fitted for engine sglang" simulate -m llama-3.1-8b -H h100-sxm --rate 1 --engine-profile "$tmp/sg.json"
echo '{"format": "chalk-engine-profile/1", "engine": "vllm", "constants": {"request_overhead_s": 5}}' > "$tmp/big.json"
expect_error "$tmp/big.json: constants.request_overhead_s: must be in [0, 2] s, got 5" validate "$tmp/m.csv" --engine-profile "$tmp/big.json"
expect_error "$tmp/big.json: constants.request_overhead_s" plan -m llama-3.1-8b -H h100-sxm --rate 1 --ttft-slo-ms 500 --engine-profile "$tmp/big.json"
# The other engines' clients, told apart by content (tests/data/calibrate: each tool's layout,
# written for the tests): SGLang's JSONL (two runs), AIPerf's and genai-perf's exports.
D="$SRC/tests/data/calibrate"
out=$("$CHALK" calibrate "$D/sglang-bench-serving.jsonl" "$D/aiperf-profile_export_aiperf.json" "$D/genai-perf-profile_export_genai_perf.json" \
  -m llama-3.1-8b -H h100-sxm -n 1 --engine sglang --max-requests 20 --fit request_overhead_s --no-leave-one-out) || fail "calibrate of the clients' files exited $?"
case "$out" in *"read        1 aiperf, 1 genai-perf, 2 sglang bench_serving run(s)"*) ;; *) fail "calibrate formats: $out";; esac
# trtllm-bench states TP 2: the all-reduce latency is sensitive there (one run: too few to fit);
# vLLM's runs at TP 1 refuse it.
expect_error "runs: 1 run cannot determine 1 constant (allreduce_latency_s)" calibrate "$D/trtllm-bench-report.json" -m llama-3.1-8b -H h100-sxm \
  --max-requests 20 --fit allreduce_latency_s
expect_error "runs: none is tensor-parallel (TP > 1): allreduce_latency_s cannot be fitted" calibrate "$tmp/r1.json" "$tmp/r2.json" "${setup[@]}" \
  --fit allreduce_latency_s
echo '{"hello": 1}' > "$tmp/unknown.json"
expect_error "$tmp/unknown.json: unknown benchmark format (a JSON object of no client's keys); expected vllm bench serve" calibrate "$tmp/unknown.json" "${setup[@]}"
: > "$tmp/empty.json"
expect_error "$tmp/empty.json: empty; expected" calibrate "$tmp/empty.json" "${setup[@]}"
sed 's/"tp_size": 2/"tp_size": "two"/' "$D/trtllm-bench-report.json" > "$tmp/t.json"
expect_error "$tmp/t.json: world_info.tp_size: expected an integer, got \"two\"" calibrate "$tmp/t.json" "${setup[@]}"
# Review 7 L2: the text table prints microseconds, so it names each constant without the
# JSON key's "_s" ("request_overhead ... default (us) 6908", not "request_overhead_s").
txt=$("$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "${setup[@]}" --fit request_overhead_s) || fail "calibrate (text) exited $?"
printf '%s\n' "$txt" | grep -qE "^ *request_overhead +6908 " || fail "calibrate: no 'request_overhead 6908' row: $txt"
printf '%s\n' "$txt" | grep -qE "^ *request_overhead_s " && fail "calibrate: a constant in us named in s: $txt"
# --holdout half (issue 29's goal): runs at 1, 4 and 8/s of one deployment fit on 1 and 8/s and
# predict 4/s; each metric's median over the held-out run, with the defaults and the fit.
out=$("$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "${setup[@]}" --fit request_overhead_s --holdout half --json) \
  || fail "calibrate --holdout exited $?"
python3 - "$out" "$tmp" <<'PY' || fail "calibrate --holdout output"
import json, sys
j = json.loads(sys.argv[1]); h = j["holdout"]; t = sys.argv[2]
assert h["split"] == "half" and h["fit_runs"] == 2 and h["held_out_runs"] == 1, h
assert [r["source"] for r in j["run_errors"]] == [f"{t}/r1.json", f"{t}/r3.json"], j["run_errors"]
assert [r["source"] for r in h["run_errors"]] == [f"{t}/r2.json"], h["run_errors"]
assert [m["metric"] for m in h["metrics"]] == ["ttft_ms", "tpot_ms", "itl_ms", "e2e_s", "all"], h["metrics"]
assert [m["count"] for m in h["metrics"]] == [1, 1, 1, 1, 4], h["metrics"]
for m in h["metrics"]:
    assert set(m) == {"metric", "count", "median_abs_error_before_fraction", "median_abs_error_after_fraction"}, m
    assert m["median_abs_error_before_fraction"] >= 0 and m["median_abs_error_after_fraction"] >= 0, m
PY
"$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "${setup[@]}" --fit request_overhead_s --json \
  | python3 -c 'import json,sys; assert json.load(sys.stdin)["holdout"] is None' || fail "calibrate: holdout not null without --holdout"
txt=$("$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "${setup[@]}" --fit request_overhead_s --holdout half) \
  || fail "calibrate --holdout (text) exited $?"
case "$txt" in *"Held out (--holdout half): the fit above is over 2 of the 3 runs"*"$tmp/r2.json"*"e2e_s"*) ;; *) fail "calibrate --holdout text: $txt";; esac
expect_error "--holdout: unknown split 'halves'; expected half" calibrate "$tmp/r1.json" "$tmp/r2.json" "${setup[@]}" --holdout halves
expect_error "--holdout: half fits on 1 of the 2 runs: 1 run cannot determine 1 constant" calibrate "$tmp/r1.json" "$tmp/r2.json" "${setup[@]}" \
  --fit request_overhead_s --holdout half
expect_error "--holdout: half needs at least 2 runs, got 1" calibrate "$tmp/r1.json" "${setup[@]}" --fit request_overhead_s --holdout half
# Runs chalk simulate finds OVERLOADED at the defaults (1,000 req/s on one H100: the queue grows
# through the run) are left out of the --holdout fit; all of them: nothing to fit, exit 2.
run "$tmp/s1.json" 900 900 8 1500
run "$tmp/s2.json" 1000 900 8 1500
# Saturated as measured: 30 requests at 1/s with a mean TTFT of 20 s (a queue growing >= 1.3 s/s).
run "$tmp/q.json" 1 20000 8 20500
"$CHALK" calibrate "$tmp/r1.json" "$tmp/r2.json" "$tmp/r3.json" "$tmp/q.json" "${setup[@]}" --fit request_overhead_s --holdout half --json \
  | python3 -c 'import json,sys; h=json.load(sys.stdin)["holdout"]; s=h["saturated_runs"]
assert len(s) == 1 and s[0]["source"].endswith("q.json") and s[0]["note"].startswith("saturated as measured: arrivals 1 req/s > capacity"), s
assert h["fit_runs"] + h["held_out_runs"] == 3, h' || fail "calibrate --holdout: a saturated run not left out"
expect_error "--holdout: all 2 runs are saturated at the defaults (chalk simulate calls them OVERLOADED)" calibrate "$tmp/s1.json" "$tmp/s2.json" \
  "${setup[@]}" --fit request_overhead_s --holdout half
echo "calibrate: all passed"
