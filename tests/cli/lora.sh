# `--lora` in `chalk simulate` and `chalk plan` (docs/simulator.md 1.9): the JSON's adapter
# figures against hand derivations, the trace column `adapter`, and bad specs as one-line
# errors naming the flag (exit 2).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(-m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 60 --input 256 --output 16)
"$CHALK" simulate "${base[@]}" --json > "$tmp/none.json" || fail "simulate without --lora"
"$CHALK" simulate "${base[@]}" --lora 4:16,max-loras:4 --json > "$tmp/lora.json" || fail "simulate --lora"
python3 - "$tmp/none.json" "$tmp/lora.json" <<'PY' || fail "lora figures"
import json, sys
none, d = (json.load(open(f)) for f in sys.argv[1:3])
assert none["details"][0]["lora"] is None, none["details"][0]["lora"]
l = d["details"][0]["lora"]
# Llama 3.1 8B, r 16 on all seven projections: 41,943,040 parameters x 2 B; 4 slots.
assert l["adapter_bytes"] == 83886080 and l["adapter_hbm_bytes"] == 4 * 83886080, l
assert l["lora_rank"] == 16 and l["max_loras"] == 4 and l["lora_targets"] == "q+k+v+o+gate+up+down", l
# One load over HGX H100's PCIe Gen5 x16: 83,886,080 / 64e9 = 1.31072 ms.
assert l["host_fetch_gb_per_s_per_chip"] == 64 and abs(l["adapter_load_s"] - 1.31072e-3) < 1e-12, l
# 4 adapters in 4 slots: each loaded once, never evicted.
assert l["adapter_loads"] == 4 and l["adapter_evictions"] == 0, l
assert abs(l["adapter_load_total_s"] - 4 * 1.31072e-3) < 1e-12 and l["lora_gemm_s"] > 0 and l["lora_steps"] > 0, l
# The same arrivals and lengths, each step longer: the run's busy time grows.
a, b = none["rows"][0], d["rows"][0]
assert b["tpot_p50_ms"] > a["tpot_p50_ms"], (a["tpot_p50_ms"], b["tpot_p50_ms"])
PY
"$CHALK" simulate "${base[@]}" --lora 4:16 | grep -q "^lora        aggregated: 4 adapters of rank 16 (q+k+v+o+gate+up+down), 83.89 MB each" || fail "simulate text lacks the lora line"
# A trace names adapters in its last column; --lora states how many and their rank.
printf 'arrival_s,input_tokens,output_tokens,adapter\n0,128,8,0\n0.1,128,8,3\n0.2,128,8,\n' > "$tmp/t.csv"
expect_ok simulate -m llama-3.1-8b -H h100-sxm -n 1 --trace "$tmp/t.csv" --lora 4:8
expect_error "--trace: names LoRA adapters (column adapter); add --lora N:RANK stating them" simulate -m llama-3.1-8b -H h100-sxm -n 1 --trace "$tmp/t.csv"
expect_error "--lora: states 2 adapters, but the trace names adapter 3; expected N above every adapter id" simulate -m llama-3.1-8b -H h100-sxm -n 1 --trace "$tmp/t.csv" --lora 2:8
# An unstated max-loras is not echoed as 1 (simulate runs one slot, plan searches it; review 4 L1).
"$CHALK" simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 20 --input 256 --output 16 --lora 4:16 --json | python3 -c "
import json, sys; t = json.load(sys.stdin)['traffic']
assert t.endswith('; LoRA adapters 4:16,targets:q+k+v+o+gate+up+down'), t" || fail "simulate --lora: max-loras echoed though unstated"
# plan runs each candidate with the adapters and names them with the traffic.
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 2 --requests 40 --input 256 --output 16 --budget-chips 1 --ttft-slo-ms 2000 --lora 4:16,max-loras:2 --json > "$tmp/plan.json" || fail "plan --lora"
python3 - "$tmp/plan.json" <<'PY' || fail "plan --lora traffic"
import json, sys
t = json.load(open(sys.argv[1]))["traffic"]
assert t.endswith("; LoRA adapters 4:16,max-loras:2,targets:q+k+v+o+gate+up+down"), t
l = json.load(open(sys.argv[1]))["lora"]
# A stated max-loras is planned alone: 2 slots of 83,886,080 bytes on the one chip.
assert l["max_loras"] == 2 and not l["max_loras_searched"] and [t["max_loras"] for t in l["max_loras_tried"]] == [2], l
f = l["lora_figures"]
assert f["adapter_hbm_bytes_per_chip"] == 2 * 83886080 and f["adapter_loads"] >= 4, l
PY
# Without max-loras the plan searches vLLM's --max-loras: 1, 2, 4 (= the adapters), each a
# whole plan; the choice is the least $/hour meeting the SLO (ties: TTFT), printed and in JSON.
lplan=("plan" -m llama-3.1-8b -H h100-sxm --rate 5 --requests 60 --input 256 --output 16 --budget-chips 1 --replica-chips 1 --max-seqs-candidates 64 --modes aggregated --ttft-slo-ms 100 --lora 4:16)
"$CHALK" "${lplan[@]}" --json > "$tmp/search.json" || fail "plan --lora search exited $?"
python3 - "$tmp/search.json" <<'PY' || fail "plan --lora search JSON"
import json, sys
j = json.load(open(sys.argv[1]))
l = j["lora"]
assert l["max_loras_searched"] and [t["max_loras"] for t in l["max_loras_tried"]] == [1, 2, 4], l
met = [t for t in l["max_loras_tried"] if t["meets_slo"]]
# One chip either way: the chosen has the least TTFT at the percentile among the values that met.
assert l["max_loras"] == min(met, key=lambda t: (t["cost_usd_per_hour"], t["ttft_at_percentile_ms"]))["max_loras"], l
f = l["lora_figures"]
assert f["adapter_hbm_bytes_per_chip"] == l["max_loras"] * 83886080, l
# 4 adapters, at most 4 slots: each loaded at least once.
assert f["adapter_loads"] >= 4 and f["adapter_misses_per_s"] > 0 and f["lora_gemm_s"] > 0, l
assert not l["max_loras_tried"][0]["meets_slo"] and l["max_loras_tried"][0]["why_none"], l["max_loras_tried"][0]
# The launch files serve the chosen slots, rank 16 and all 4 adapters in host memory.
files = {f["path"]: f["text"] for e in j["launch"] for f in e["files"]}
v, g = files["vllm/serve.sh"], files["sglang/serve.sh"]
for want in ["--enable-lora \\\n", "--max-loras %d \\\n" % l["max_loras"], "--max-lora-rank 16 \\\n", "--max-cpu-loras 4 \\\n", "--lora-modules $LORA_MODULES"]:
    assert want in v, (want, v)
for want in ["--max-loras-per-batch %d \\\n" % l["max_loras"], "--max-lora-rank 16 \\\n", "--max-loaded-loras 4 \\\n", "--lora-paths $LORA_PATHS"]:
    assert want in g, (want, g)
PY
"$CHALK" "${lplan[@]}" | grep -q "^lora        max-loras [24] chosen of 1, 2, 4 (the least \$/hour meeting the SLO): 4 adapters of rank 16" || fail "plan text lacks the lora line"
# Errors: one line, exit 2, naming the flag.
expect_error "--lora: got '8:12'; RANK '12' must be one of vLLM's max_lora_rank values" simulate "${base[@]}" --lora 8:12
expect_error "--lora: got '8:16,max-loras:9'; max-loras 9 exceeds the 8 adapters" simulate "${base[@]}" --lora 8:16,max-loras:9
expect_error "--lora: got 'x'; the first item must be N:RANK" plan -m llama-3.1-8b -H h100-sxm --rate 2 --budget-chips 1 --ttft-slo-ms 500 --lora x
expect_error "--lora: targets gate, up, down on MoE layers (fused-MoE LoRA) are not modelled" simulate -m mixtral-8x7b -H h100-sxm -n 2 --rate 1 --requests 5 --lora 2:16
expect_error "--lora: names one traffic's adapters, which a day plan does not draw; --rate-curve gives the day's rates" plan -m llama-3.1-8b -H h100-sxm --budget-chips 1 --ttft-slo-ms 500 --rate-curve "$tmp/none.csv" --lora 2:16
# A measured LoRA overhead (issue 31): vLLM PR #11267 (github.com/vllm-project/vllm/pull/11267,
# 2024-12-17, "benchmark_throughput : Add LoRA"), Llama-2-7b-hf on 1 x A100, 1,000 ShareGPT
# prompts offline: 2,693.62 output tok/s without LoRA, 1,787.78 with one rank-8 adapter
# (--enable-lora --max-loras 1 --max-lora-rank 8): 0.6637 of the base. The run's own figures
# give its mean lengths: 2,693.62 / 11.45 req/s = 235 out, (5,509.93 - 2,693.62) / 11.45 = 246
# in. chalk, the same 1,000 requests at t = 0 on one A100 80GB (the PR names no memory size),
# as vLLM V0 of December 2024 ran them: --engine vllm-0.6.5, max_num_seqs 256, chunked prefill
# off for a 4,096-token model and so max_num_batched_tokens max(4096, 2048) (V0's
# SchedulerConfig). LoRA costs each step with adapter tokens its bytes (per decode token and
# layer x + 2r + 2y over the seven projections, 120,688 elements x 2 B x 32 = 7.72 MB) and its
# kernels: V0's punica wrapper runs a zeroed buffer, a shrink and an expand per slice, 21 a
# layer, 672 a step, each at the 6.3 us kernel floor: 4.23 ms a step (src/sim/lora.cc,
# lora_kernel_plan). chalk: 4,008.7 and 3,618.5 tok/s, 0.9027: +36.0% off the measured ratio
# (it was +45.1% with the bytes alone). docs/simulator.md 1.9, "Against a measurement", says
# what is left.
{ echo "arrival_s,input_tokens,output_tokens"; yes "0,246,235" | head -n 1000; } > "$tmp/b.csv"
{ echo "arrival_s,input_tokens,output_tokens,adapter"; yes "0,246,235,0" | head -n 1000; } > "$tmp/a.csv"
m7=("simulate" -m llama-2-7b -H a100-80gb -n 1 --max-sequences 256 --json)
v0=(--engine vllm-0.6.5 --max-batched-tokens 4096 --chunked-prefill off)
"$CHALK" "${m7[@]}" "${v0[@]}" --trace "$tmp/b.csv" > "$tmp/m0.json" || fail "llama-2-7b without LoRA"
"$CHALK" "${m7[@]}" "${v0[@]}" --trace "$tmp/a.csv" --lora 1:8 > "$tmp/m1.json" || fail "llama-2-7b with LoRA"
# vLLM V1's LoRA (PR #11613, 2024-12-30, same machine and traffic, one adapter at max-loras
# 4): 2,577.68 tok/s, 0.957 of the V0 base above (no V1 base was published beside it). chalk's
# current vLLM (lora_shrink/lora_expand, 12 kernels a layer) with the adapter: 4,065.8 tok/s,
# 1.014 of chalk's V0 base, +6.0% off.
"$CHALK" "${m7[@]}" --trace "$tmp/a.csv" --lora 1:8 > "$tmp/m2.json" || fail "llama-2-7b with LoRA, current vLLM"
python3 - "$tmp/m0.json" "$tmp/m1.json" "$tmp/m2.json" <<'PY' || fail "measured LoRA overhead"
import json, sys
b, l, v1 = (json.load(open(f))["rows"][0]["output_tok_per_s"] for f in sys.argv[1:4])
ratio, measured = l / b, 1787.78 / 2693.62
assert 0.89 < ratio < 0.92, ratio
# The miss, as a guard: chalk's ratio is at most 37% above the measured one (it is 36.0%).
assert ratio / measured - 1 < 0.37, (ratio, measured)
# V1 with LoRA over the V0 base: at most 7% above the measured 0.957 (it is 6.0%).
assert v1 / b / (2577.68 / 2693.62) - 1 < 0.07, (v1 / b, 2577.68 / 2693.62)
PY
