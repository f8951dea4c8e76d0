# `chalk simulate` and `chalk plan`: outputs that hold real figures, and one-line errors
# naming the flag for every bad input.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(-m llama-3.1-8b -H h100-sxm -n 1)

# Low load: TTFT p50 equals `chalk prefill`'s TTFT of the same prompt (one request at a time)
# plus the engine's fixed work per request outside the GPU (vLLM: 6.908 ms, policy.h
# kEngineRequestOverheadS).
ttft=$("$CHALK" prefill "${base[@]}" -p 1024 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["ttft_ms"])')
"$CHALK" simulate "${base[@]}" --rate 0.01 --requests 20 --input 1024 --output 1 --json > "$tmp/low.json" || fail "simulate --json"
python3 - "$tmp/low.json" "$ttft" <<'PY' || fail "low-load TTFT is not the prefill's"
import json, sys
j = json.load(open(sys.argv[1])); r = j["rows"][0]
want = float(sys.argv[2]) + 6.908
assert abs(r["ttft_p50_ms"] - want) < 1e-6 * want, (r["ttft_p50_ms"], want)
assert r["finished"] == 20 and r["rejected"] == 0
d = j["details"][0]
assert d["kv_blocks_leaked"] == 0
assert abs(d["little_l"] - d["little_lambda_per_s"] * d["little_w_s"]) < 1e-9 * d["little_l"]
PY
# Table, CSV and the disaggregated comparison.
out=$("$CHALK" simulate "${base[@]}" --rate 10 --requests 300 --input 1024 --output 128 --ttft-slo-ms 300 --tpot-slo-ms 20) || fail "simulate table"
printf '%s\n' "$out" | grep -q "^aggregated" || fail "simulate table lacks the aggregated row: $out"
[ "$(printf '%s\n' "$out" | grep -E '^ *mode  |^aggregated' | awk '{ if (length($0) > 100) print }' | wc -l)" -eq 0 ] || fail "simulate table wider than 100 columns"
csv=$("$CHALK" simulate "${base[@]}" --rate 10 --requests 300 --input 1024 --output 128 --disaggregate --compare --csv) || fail "simulate --csv"
[ "$(printf '%s\n' "$csv" | wc -l)" -eq 3 ] || fail "disaggregated --compare --csv should print a header and two rows: $csv"
printf '%s\n' "$csv" | head -1 | grep -q "ttft_p99_ms" || fail "CSV header lacks ttft_p99_ms"
# A trace file, and its errors with line numbers.
printf 'arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,200,20\n' > "$tmp/ok.csv"
expect_ok simulate "${base[@]}" --trace "$tmp/ok.csv"
printf 'arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,abc,20\n' > "$tmp/bad.csv"
expect_error "$tmp/bad.csv: line 3: input_tokens: expected an integer 1..10000000, got 'abc'" simulate "${base[@]}" --trace "$tmp/bad.csv"
printf 'arrival_s,input_tokens\n' > "$tmp/head.csv"
expect_error "$tmp/head.csv: line 1: expected the header 'arrival_s,input_tokens,output_tokens'" simulate "${base[@]}" --trace "$tmp/head.csv"
expect_error "--trace: gives the arrivals; drop --rate" simulate "${base[@]}" --trace "$tmp/ok.csv" --rate 2
expect_error "--trace: $tmp/missing.csv: cannot read file" simulate "${base[@]}" --trace "$tmp/missing.csv"
# Prefix caching over token-structured traffic (docs/simulator.md 1.6): 40 requests 1 s apart
# at most (rate 1, a few ms each, so each finds the cache its predecessors left), one system
# prompt of 1,000 tokens: every request after the first finds floor(1000 / 16) x 16 = 992
# tokens (vLLM's 16-token blocks) of its 1,000 + 24 = 1,024: 39 x 992 / (40 x 1,024) = 0.94453.
"$CHALK" simulate "${base[@]}" --rate 1 --requests 40 --input 24 --output 8 --shared-prefix 1000:1 --json > "$tmp/prefix.json" || fail "simulate --shared-prefix"
python3 - "$tmp/prefix.json" <<'PY' || fail "prefix cache hit rate"
import json, sys
d = json.load(open(sys.argv[1]))["details"][0]
p = d["prefix_cache"]
assert abs(p["cached_token_fraction"] - 39 * 992 / (40 * 1024)) < 1e-12, p
assert p["kv_blocks_evicted"] == 0 and d["kv_blocks_leaked"] == 0 and d["routing"] == "round-robin", d
PY
"$CHALK" simulate "${base[@]}" --rate 1 --requests 40 --input 24 --output 8 --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["details"][0]["prefix_cache"] is None' || fail "prefix_cache should be null without token structure"
expect_error "--shared-prefix: got '1000'; expected TOKENS:GROUPS[:S]" simulate "${base[@]}" --rate 1 --shared-prefix 1000
expect_error "--sessions: got '8:0'; expected N:TURNS" simulate "${base[@]}" --rate 1 --sessions 8:0
expect_error "--prefix-hit-rate: is the simple mode of prefix caching" simulate "${base[@]}" --rate 1 --shared-prefix 1000:2 --prefix-hit-rate 0.5
expect_error "--shared-prefix: shapes synthetic traffic" simulate "${base[@]}" --trace "$tmp/ok.csv" --shared-prefix 1000:2
expect_error "--routing: expected round-robin or cache-aware, got 'random'" simulate "${base[@]}" --rate 1 --routing random
# Bad traffic, policy and SLO flags.
expect_error "--rate: state the traffic" simulate "${base[@]}"
expect_error "--rate: must be a positive number, got -1" simulate "${base[@]}" --rate -1
expect_error "--rate: give --rate or --rate-per-min, not both" simulate "${base[@]}" --rate 1 --rate-per-min 60
expect_error "--arrivals: expected poisson or gamma, got 'uniform'" simulate "${base[@]}" --rate 1 --arrivals uniform
expect_error "--cv: gamma arrivals need a coefficient of variation" simulate "${base[@]}" --rate 1 --arrivals gamma
expect_error "--cv: sets gamma arrivals' burstiness; add --arrivals gamma" simulate "${base[@]}" --rate 1 --cv 3
expect_error "--cv: burstiness (coefficient of variation of the gaps) must be in (0, 100], got -2" simulate "${base[@]}" --rate 1 --arrivals gamma --cv -2
expect_error "--requests: must be 1..10000000, got 0" simulate "${base[@]}" --rate 1 --requests 0
expect_error "--input: uniform lengths need 1 <= MIN <= MAX <= 10000000, got 9..3" simulate "${base[@]}" --rate 1 --input uniform:9:3
expect_error "--output: got 'lots'; expected N, uniform:MIN:MAX or lognormal:MEAN:SIGMA[:MAX]" simulate "${base[@]}" --rate 1 --output lots
expect_error "--output: lognormal sigma must be in (0, 5], got 0" simulate "${base[@]}" --rate 1 --output lognormal:100:0
expect_error "--engine: unknown engine policy 'tgi'; expected vllm, sglang or trtllm" simulate "${base[@]}" --rate 1 --engine tgi
expect_error "--engine: 'vllm-0.1x': expected NAME or NAME-X.Y[.Z]" simulate "${base[@]}" --rate 1 --engine vllm-0.1x
expect_error "--block-size: must be 1..1024 tokens per KV block, got 0" simulate "${base[@]}" --rate 1 --block-size 0
expect_error "--max-sequences: must be 1..1048576 running requests, got 0" simulate "${base[@]}" --rate 1 --max-seqs 0
expect_error "--max-batched-tokens: must be 1..1048576 tokens per step, got -4" simulate "${base[@]}" --rate 1 --max-batched-tokens -4
expect_error "--chunked-prefill: expected on or off, got 'yes'" simulate "${base[@]}" --rate 1 --chunked-prefill yes
expect_error "--kv-admission: expected to_completion or on_demand, got 'lazy'" simulate "${base[@]}" --rate 1 --kv-admission lazy
# KV admission: trtllm reserves each request's whole KV at admission (GUARANTEED_NO_EVICT),
# vllm takes it on demand; the flag overrides the engine's. 600 requests of 1000 + 1000
# arriving together: reserved, no preemption, and never more running than on demand.
for a in trtllm:to_completion trtllm,on_demand:on_demand vllm:on_demand; do
  spec=${a%%:*}; want=${a##*:}; engine=${spec%%,*}; flag=()
  [[ "$spec" == *,* ]] && flag=(--kv-admission "${spec##*,}")
  "$CHALK" simulate "${base[@]}" --rate 1000 --requests 600 --input 1000 --output 1000 --engine "$engine" "${flag[@]}" --json > "$tmp/adm.json" || fail "simulate --engine $engine ${flag[*]}"
  python3 - "$tmp/adm.json" "$want" <<'PY' || fail "kv_admission $a"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine"]["kv_admission"] == sys.argv[2], j["engine"]
if sys.argv[2] == "to_completion":
    assert j["rows"][0]["preemptions"] == 0, j["rows"][0]
PY
done
expect_error "--prefix-hit-rate: must be a fraction in [0, 1), got 1" simulate "${base[@]}" --rate 1 --prefix-hit-rate 1
expect_error "--ttft-slo-ms: must be a positive number of milliseconds, got 0" simulate "${base[@]}" --rate 1 --ttft-slo-ms 0
expect_error "--slo-percentile: must be in [50, 99.9], got 100" simulate "${base[@]}" --rate 1 --slo-percentile 100
expect_error "--replicas: must be >= 1" simulate "${base[@]}" --rate 1 --replicas 0
expect_error "--compare: applies to disaggregated serving: add --disaggregate" simulate "${base[@]}" --rate 1 --compare
expect_error "--chips" simulate -m llama-3.1-70b -H h100-sxm -n 1 --rate 1
# Disaggregated pool sizes name their own flag (they fell back to --chips at 0).
expect_error "--prefill-chips: must be >= 1, got 0" simulate "${base[@]}" --rate 1 --disaggregate --prefill-chips 0
expect_error "--decode-chips: must be >= 1, got -3" simulate "${base[@]}" --rate 1 --disaggregate --decode-chips -3
expect_error "--decode-chips: applies to disaggregated serving: add --disaggregate" simulate "${base[@]}" --rate 1 --decode-chips 2
# Mixed chips (docs/simulator.md): H200 prefill, B200 decode, one chip each. Hand-derived:
# Llama 3.1 8B bf16 KV is 32 layers x 2 x 8 heads x 128 x 2 B = 131,072 B/token; a
# 1,024-token prompt 134,217,728 B over the scale-out network (two systems share no NVLink)
# at the slower NIC, 50 GB/s x 0.73125 achieved x 1 chip, after one 9.3 us hop:
# 9.3e-6 + 134,217,728 / 36.5625e9 s = 3.68021 ms. Cost: 1 x $4.54 + 1 x $6.03 = $10.57/hour.
mixed=(-m llama-3.1-8b -H h100-sxm --rate 2 --requests 100 --input 1024 --output 32 --disaggregate --prefill-chips 1 --decode-chips 1)
"$CHALK" simulate "${mixed[@]}" --prefill-hardware h200 --decode-hardware b200 --json > "$tmp/mixed.json" || fail "simulate mixed chips"
python3 - "$tmp/mixed.json" <<'PY' || fail "mixed chips: KV transfer or cost"
import json, sys
j = json.load(open(sys.argv[1])); r = j["rows"][0]; d = j["details"][0]
want = (9.3e-6 + 134217728 / 36.5625e9) * 1e3
assert abs(r["kv_transfer_ms"] - want) < 1e-9 * want, (r["kv_transfer_ms"], want)
assert abs(r["kv_transfer_bytes"] - 134217728) < 1e-6, r["kv_transfer_bytes"]
assert abs(d["cost_usd_per_hour"] - 10.57) < 1e-9, d["cost_usd_per_hour"]
assert d["prefill_hardware"] == "h200" and d["decode_hardware"] == "b200", d
assert "1 x 1 chip h200" in r["layout"] and "1 x 1 chip b200" in r["layout"], r["layout"]
PY
text=$("$CHALK" simulate "${mixed[@]}" --prefill-hardware h200 --decode-hardware b200) || fail "simulate mixed chips text"
printf '%s\n' "$text" | grep -q "^pools       prefill on h200, decode on b200: " || fail "mixed chips text lacks the pools line: $text"
printf '%s\n' "$text" | grep -q '\$10.57/hour (each pool' || fail "mixed chips text lacks the cost: $text"
printf '%s\n' "$text" | grep -q "^hardware    1 x B200" || fail "mixed chips header should describe the decode pool's system: $text"
# A model that fits no replica of one side names that side's flag.
expect_error "--prefill-hardware: h100-sxm: --chips: 1 x H100 SXM cannot hold llama-3.1-70b's weights" \
  simulate -m llama-3.1-70b -H h200 --rate 1 --requests 10 --disaggregate --prefill-hardware h100-sxm --prefill-chips 1
# Two systems share only the scale-out network: one that states none is refused.
expect_error "l4: scale_out.gb_per_s_per_direction: the system states no scale-out network" \
  simulate -m llama-3.1-8b -H h200 --rate 1 --requests 10 --disaggregate --decode-hardware l4
# The same chip on both sides, named, is the disaggregated run exactly (but the layout names it).
"$CHALK" simulate "${mixed[@]}" --json > "$tmp/dis1.json" || fail "simulate disaggregated"
"$CHALK" simulate "${mixed[@]}" --prefill-hardware h100-sxm --decode-hardware h100-sxm --json > "$tmp/same.json" || fail "simulate same-chip mixed"
python3 - "$tmp/dis1.json" "$tmp/same.json" <<'PY' || fail "same-chip mixed run differs from the disaggregated one"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
ra, rb = a["rows"][0], b["rows"][0]
for k in ra:
    if k != "layout": assert ra[k] == rb[k], (k, ra[k], rb[k])
assert a["details"][0]["cost_usd_per_hour"] == b["details"][0]["cost_usd_per_hour"]
assert a["details"][0]["prefill_hardware"] == "h100-sxm" and a["details"][0]["decode_hardware"] == "h100-sxm"
PY
expect_error "--prefill-hardware: applies to disaggregated serving: add --disaggregate" simulate "${base[@]}" --rate 1 --prefill-hardware h200
expect_error "--compare: compares pools on the same chips" simulate "${mixed[@]}" --decode-hardware b200 --compare
expect_error "--price-usd-per-chip-hour: prices one chip type" simulate "${mixed[@]}" --decode-hardware b200 --price-usd-per-chip-hour 2
expect_error "--decode-hardware: no-such-chip" simulate "${mixed[@]}" --decode-hardware no-such-chip
# Without chunked prefill a prompt must fit one step: vLLM refuses to start otherwise.
expect_error "--max-batched-tokens: is 100, below a 2048-token prompt with chunked prefill off" simulate "${base[@]}" --rate 1 --input 2048 --max-batched-tokens 100 --chunked-prefill off
# Plan: a deployment that meets the SLO, and launch files with the engines' flags (plan_launch.sh).
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 20 --requests 300 --input 1024 --output 128 --budget-chips 4 \
  --ttft-slo-ms 500 --tpot-slo-ms 30 --json > "$tmp/plan.json" || fail "plan --json"
python3 - "$tmp/plan.json" <<'PY' || fail "plan output"
import json, sys
j = json.load(open(sys.argv[1])); b = j["best"]
assert b is not None and b["meets_slo"] is True, b
assert b["ttft_at_percentile_ms"] <= 500 and b["tpot_at_percentile_ms"] <= 30, b
assert b["chips"] <= 4
files = {f["path"]: f["text"] for e in j["launch"] for f in e["files"]}
assert "--tensor-parallel-size" in files["vllm/serve.sh"] and "--max-num-seqs" in files["vllm/serve.sh"], files
assert "--max-running-requests" in files["sglang/serve.sh"] and "--tp_size" in files["trtllm/serve.sh"], files
assert len(j["rows"]) >= 1
# The targets it planned for, as simulate states them (docs/output-schema.md, SLO targets).
assert j["slo"] == {"ttft_slo_ms": 500, "tpot_slo_ms": 30, "percentile": 90}, j["slo"]
# Simulated with vLLM's KV on demand: TensorRT-LLM's options state MAX_UTILIZATION.
assert j["engine"] == "vllm" and j["kv_admission"] == "on_demand", (j["engine"], j["kv_admission"])
assert "capacity_scheduler_policy: MAX_UTILIZATION" in files["trtllm/extra_llm_api_options.yaml"], files
PY
# Deployments were simulated but none met the SLO: the report (the Pareto front and why_none;
# the web API answers it with best null) and exit status 4 (tests/cli/sim_knobs.sh). Nothing
# to simulate is an error below.
out=$("$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 100 --budget-chips 1 --tpot-slo-ms 0.1 --wide 2>/dev/null); rc=$?
[ "$rc" -eq 4 ] || fail "plan without a solution exited $rc, expected 4"
printf '%s\n' "$out" | grep -q "no deployment: no deployment within 1 chips meets TPOT p90 <= 0.1 ms" || fail "plan does not say why: $out"
# Budgets that hold nothing say so: $1/h buys no $2.35 chip; 16-chip replicas exceed 8 chips;
# 0 chips is no budget; DeepSeek-V3 needs 16 H100s (docs/formulas.md, Defaults).
p=(-m llama-3.1-8b -H h100-sxm --rate 5 --requests 20 --ttft-slo-ms 1000)
expect_error '--budget-usd-per-hour: $1 per hour buys no chip of h100-sxm at $2.35 per chip-hour; expected at least 2.35' plan "${p[@]}" --budget-usd-per-hour 1
expect_error "--replica-chips: every replica size an engine can run among those stated exceeds the budget of 8 chips" plan "${p[@]}" --budget-chips 8 --replica-chips 16
expect_error "--budget-chips: must be >= 1 chip, got 0" plan "${p[@]}" --budget-chips 0
expect_error "--budget-chips: must be at most 8192 chips (one deployment of one model; plan a share of the traffic per 8192), got 100000" plan "${p[@]}" --budget-chips 100000
expect_error "--budget-chips: the smallest replica of deepseek-v3 that an engine can run and that holds its weights and one sequence" plan -m deepseek-v3 -H h100-sxm --rate 5 --requests 20 --ttft-slo-ms 1000 --budget-chips 8
# A replica size no engine runs (TP3 splits neither 32 heads nor FFN 14336) is refused, not
# simulated as attention TP1 x 3 under FFN TP3 with launch files for three replicas.
expect_error "--replica-chips: no engine runs llama-3.1-8b on a replica of 3: TP3 does not divide the 32 attention heads" plan "${p[@]}" --budget-chips 8 --replica-chips 3
# A prompt beyond the model's context: rejected, as vLLM refuses it, with the warning decode
# and prefill give, in "warnings".
# simulate refuses traffic none of which fits (review 7 M1: every request was rejected with
# exit 0); --allow-infeasible keeps the study of the rejections.
expect_error "--input: every request is beyond llama-3.1-8b's maximum context of 131072 tokens (the shortest: 200000 prompt + 16 output tokens" \
  simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 3 --input 200000 --output 16
for cmd in simulate plan; do
  extra=(--allow-infeasible); [ "$cmd" = plan ] && extra=(--budget-chips 8 --ttft-slo-ms 100000 --modes aggregated)
  "$CHALK" $cmd -m llama-3.1-8b -H h100-sxm --rate 5 --requests 3 --input 200000 --output 16 "${extra[@]}" --json > "$tmp/long.json" 2>/dev/null
  python3 - "$tmp/long.json" <<'PY' || fail "$cmd: no max_position_embeddings warning"
import json, sys
j = json.load(open(sys.argv[1]))
# Fixed lengths (--input 200000 --output 16): the longest request's context is 200016.
want = "context 200016 exceeds llama-3.1-8b's max_position_embeddings 131072: 3 of 3 requests rejected"
assert any(w.startswith(want) for w in j["warnings"]), j["warnings"]
if "results" in j:
    r = j["rows"][0]
    assert r["rejected"] == 3 and r["finished"] == 0, r
    # No request finished: no percentile exists (null, never 0 ms); without an SLO there is
    # no attainment (null: simulate here states none), with one none met it (0).
    assert all(r[k] is None for k in ("ttft_p50_ms", "tpot_p90_ms", "e2e_p99_ms", "queue_mean_ms")), r
    slo = j.get("slo")
    assert r["slo_attainment"] == (None if slo and slo["ttft_slo_ms"] is None and slo["tpot_slo_ms"] is None else 0), r
PY
done
# CSV keeps stdout a table and puts the same warnings on stderr (they were dropped).
"$CHALK" simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 3 --input 200000 --output 16 --allow-infeasible --csv > "$tmp/long.csv" 2> "$tmp/long.err" || fail "simulate --csv"
grep -q "^chalk: warning: context 200016 exceeds llama-3.1-8b's max_position_embeddings 131072: 3 of 3 requests rejected" "$tmp/long.err" || fail "simulate --csv: no warning on stderr: $(cat "$tmp/long.err")"
[ "$(wc -l < "$tmp/long.csv")" -eq 2 ] && head -1 "$tmp/long.csv" | grep -q "^mode,chips," || fail "simulate --csv: stdout is not the table: $(cat "$tmp/long.csv")"
# decode refuses a context beyond the model's (review 2 L11); --allow-infeasible prices it, warned.
expect_error "--context: 200000 tokens is beyond llama-3.1-8b's maximum context of 131072 tokens" decode -m llama-3.1-8b -H h100-sxm -s 200000
expect_error "--prompt: 131073 tokens is beyond llama-3.1-8b's maximum context of 131072 tokens" prefill -m llama-3.1-8b -H h100-sxm -p 131000 --prefix 73
# The same rule in every command that takes --context and --allow-infeasible (sweep's
# largest context of its list; it only warned).
for c in "serving sweep -s 1024,200000" "serving balance -s 200000" "serving window -s 200000" "prices forward -s 200000"; do
  # shellcheck disable=SC2086
  expect_error "--context: 200000 tokens is beyond llama-3.1-8b's maximum context of 131072 tokens" $c -m llama-3.1-8b -H h100-sxm
done
"$CHALK" serving sweep -m llama-3.1-8b -H h100-sxm -s 200000 --allow-infeasible --csv > /dev/null 2>&1 || fail "serving sweep --allow-infeasible"
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -s 200000 --allow-infeasible --csv 2>&1 >/dev/null | grep -q "^chalk: warning: context 200000 exceeds llama-3.1-8b's max_position_embeddings 131072" || fail "decode --csv: no warning on stderr"
# Disaggregated with only a TPOT target: the prefill pool keeps up with the arrivals, and the
# output says what was searched (it searched nothing before).
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 20 --requests 200 --input 1024 --output 256 --tpot-slo-ms 20 --budget-chips 8 \
  --modes disaggregated --json > "$tmp/dis.json" || fail "plan --modes disaggregated"
python3 - "$tmp/dis.json" <<'PY' || fail "plan --modes disaggregated without a TTFT target"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["evaluated"] > 0 and len(j["searched"]) == 1, j["searched"]
assert "no TTFT target: the smallest that keeps up with the arrivals" in j["searched"][0], j["searched"]
PY
expect_error "--ttft-slo-ms: state a TTFT or a TPOT target" plan -m llama-3.1-8b -H h100-sxm --rate 5 --budget-chips 2
expect_error "--budget-chips: state a chip budget or --budget-usd-per-hour" plan -m llama-3.1-8b -H h100-sxm --rate 5 --ttft-slo-ms 100
expect_error "--budget-usd-per-hour: must be a positive number, got -3" plan -m llama-3.1-8b -H h100-sxm --rate 5 --ttft-slo-ms 100 --budget-usd-per-hour -3
expect_error "--chips: the plan chooses the chips per replica" plan -m llama-3.1-8b -H h100-sxm -n 2 --rate 5 --ttft-slo-ms 100 --budget-chips 2
expect_error "--modes: expected both, aggregated or disaggregated, got 'x'" plan -m llama-3.1-8b -H h100-sxm --rate 5 --ttft-slo-ms 100 --budget-chips 2 --modes x
expect_error "--replica-chips: must be in 1..1048576, got 0" plan -m llama-3.1-8b -H h100-sxm --rate 5 --ttft-slo-ms 100 --budget-chips 2 --replica-chips 0
expect_error "--tp: the plan searches the parallel layouts itself" plan -m llama-3.1-8b -H h100-sxm --rate 5 --ttft-slo-ms 100 --budget-chips 2 --tp 2
expect_error "--two-batch-overlap: the plan searches the parallel layouts itself, two micro-batches among them" plan -m deepseek-v3 -H h200 --rate 5 --ttft-slo-ms 1000 --budget-chips 8 --two-batch-overlap
# Overload said out loud (issue 30): arrivals beyond what the saturated replica serves get a
# warning with both rates; SLO attainment is empty (null) without an SLO, a number with one.
"$CHALK" simulate "${base[@]}" --rate 1000 --requests 300 --input 1024 --output 64 --json > "$tmp/over.json" || fail "simulate overload"
"$CHALK" simulate "${base[@]}" --rate 0.5 --requests 30 --input 1024 --output 64 --ttft-slo-ms 500 --json > "$tmp/calm.json" || fail "simulate calm"
python3 - "$tmp/over.json" "$tmp/calm.json" <<'PY' || fail "overload warning or SLO attainment wrong"
import json, sys
over, calm = (json.load(open(p)) for p in sys.argv[1:3])
d = over["details"][0]
assert d["overloaded"] and d["capacity_req_per_s"] * 1.05 < d["arrival_req_per_s"], d
assert any("OVERLOADED: arrivals of" in w and "req/s exceed the deployment's capacity of about" in w for w in over["warnings"]), over["warnings"]
assert over["rows"][0]["slo_attainment"] is None, over["rows"][0]["slo_attainment"]
assert not calm["details"][0]["overloaded"] and not any("OVERLOADED" in w for w in calm["warnings"])
assert calm["rows"][0]["slo_attainment"] == 1.0, calm["rows"][0]["slo_attainment"]
PY
"$CHALK" simulate "${base[@]}" --rate 1000 --requests 300 --input 1024 --output 64 | grep -q "^warning     aggregated: OVERLOADED" \
  || fail "simulate text: no overload warning"
echo "simulate: all passed"
