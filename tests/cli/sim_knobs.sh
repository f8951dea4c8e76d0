# The scheduler's knobs in `chalk simulate` and `chalk plan` (issue 29 item 5): the token budget,
# the running-request cap and the HBM fraction for weights and KV (gpu_memory_utilization),
# checked, echoed in --json and written into every engine's launch files; and issue 30's
# leftovers: the KV block size in all three engines' files, --launch-dir '', --engine in any
# case, plan's exit status when no deployment meets the SLO.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(-m llama-3.1-8b -H h100-sxm -n 1)

# Bad knobs: one line naming the flag, the value and what was expected; exit 2.
expect_error "--gpu-memory-utilization: expected a fraction of HBM in (0, 1], got 1.2" simulate "${base[@]}" --rate 1 --gpu-memory-utilization 1.2
expect_error "--gpu-memory-utilization: expected a fraction of HBM in (0, 1], got 0" plan -m llama-3.1-8b -H h100-sxm --rate 1 --budget-chips 1 --ttft-slo-ms 1000 --gpu-memory-utilization 0
expect_error "--max-batched-tokens: is 8, below the 16-token KV block (block_size)" simulate "${base[@]}" --rate 1 --max-batched-tokens 8
expect_error "--memory-reserve excludes --gpu-memory-utilization" simulate "${base[@]}" --rate 1 --gpu-memory-utilization 0.8 --memory-reserve 0.2
# One cap and a list of caps to try contradict; an empty list is no list.
planq="plan -m llama-3.1-8b -H h100-sxm --rate 1 --requests 20 --budget-chips 1 --ttft-slo-ms 1000"
expect_error "--max-seqs-candidates: give either --max-sequences (one cap) or --max-seqs-candidates (caps to try), not both" $planq --max-sequences 32 --max-seqs-candidates 8,16
expect_error "--max-seqs-candidates: expected a comma list of integers, got ''" $planq --max-seqs-candidates ''
expect_error "--replica-chips: expected a comma list of integers, got ''" $planq --replica-chips ''
# The prompt-over-budget error names the engine simulated (TensorRT-LLM runs without chunked prefill).
expect_error "(TensorRT-LLM cannot schedule a whole prompt over max_num_tokens)" simulate "${base[@]}" --rate 1 --input 2048 --engine trtllm --max-batched-tokens 1024
expect_error "(vLLM refuses to start so)" simulate "${base[@]}" --rate 1 --input 2048 --engine vllm --max-batched-tokens 1024 --chunked-prefill off
expect_error "--launch-dir: is empty" plan -m llama-3.1-8b -H h100-sxm --rate 1 --requests 20 --budget-chips 1 --ttft-slo-ms 1000 --launch-dir ''

# The KV budget at gpu_memory_utilization 0.9 and 0.8 on one H100 (80 GB), Llama 3.1 8B in
# bf16 (8.03e9 params, 16.06e9 bytes of weights), KV 2 x 32 layers x 8 heads x 128 x 2 B =
# 131,072 B per token, 16-token blocks of 2,097,152 B. Every request is 30,000 + 2,000 tokens,
# and KV reserved to completion takes a request's 32,000 / 16 = 2,000 blocks at admission:
#   0.9: (72e9 - 16.06e9) / 2,097,152 = 26,674 blocks -> 26,674 / 2,000 = 13 running at most
#   0.8: (64e9 - 16.06e9) / 2,097,152 = 22,859 blocks -> 22,859 / 2,000 = 11 running at most
# (the cap, 1024, and the budget, 8192 tokens a step, never bind first). 40 requests arrive at
# once, so the batch sits at the KV limit while the queue lasts.
for u in 0.9 0.8; do
  "$CHALK" simulate "${base[@]}" --rate 1000 --requests 40 --input 30000 --output 2000 --kv-admission to_completion \
    --gpu-memory-utilization "$u" --json > "$tmp/sim$u.json" || fail "simulate --gpu-memory-utilization $u"
done
python3 - "$tmp/sim0.9.json" "$tmp/sim0.8.json" <<'PY' || fail "admitted sequences at 0.9 and 0.8"
import json, sys
for path, util, admitted in [(sys.argv[1], 0.9, 13), (sys.argv[2], 0.8, 11)]:
    j = json.load(open(path))
    e = j["engine"]
    assert e["gpu_memory_utilization"] == util and e["max_sequences"] == 1024 and e["max_batched_tokens"] == 8192, e
    assert "--gpu-memory-utilization" in e["source"], e["source"]
    peak = max(p["batch"] for p in j["details"][0]["occupancy"])
    assert peak == admitted, (util, peak)
PY
"$CHALK" simulate "${base[@]}" --rate 1 --requests 20 --max-sequences 7 --gpu-memory-utilization 0.85 --wide | grep -q "at most 7 running, KV taken on demand, 0.85 of HBM" \
  || fail "simulate text names the knobs"

# Any case for --engine, echoed by its canonical name.
"$CHALK" simulate "${base[@]}" --rate 1 --requests 20 --engine SGLang --json | python3 -c "
import json, sys; e = json.load(sys.stdin)['engine']; assert e['name'] == 'sglang' and e['block_size_tokens'] == 1, e" || fail "--engine SGLang"
"$CHALK" simulate "${base[@]}" --rate 1 --requests 20 --engine VLLM-0.10 --json | python3 -c "
import json, sys; e = json.load(sys.stdin)['engine']; assert e['name'] == 'vllm-0.10', e" || fail "--engine VLLM-0.10"
expect_error "--engine: unknown engine policy 'Tgi'" simulate "${base[@]}" --rate 1 --engine Tgi

# plan: the knobs reach every engine's launch files under the engines' own names.
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 2 --requests 100 --input 1000 --output 100 --ttft-slo-ms 2000 --budget-chips 2 \
  --modes aggregated --max-batched-tokens 4096 --max-sequences 48 --gpu-memory-utilization 0.8 --block-size 32 \
  --json --launch-dir "$tmp/launch" > "$tmp/plan.json" || fail "plan with knobs"
python3 - "$tmp/plan.json" "$tmp/launch" <<'PY' || fail "plan's knobs in its launch files"
import json, os, sys, yaml
j = json.load(open(sys.argv[1])); d = sys.argv[2]
assert j["gpu_memory_utilization"] == 0.8 and j["max_batched_tokens"] == 4096 and j["block_size_tokens"] == 32, j
assert j["best"]["max_sequences"] == 48, j["best"]
v = open(os.path.join(d, "vllm/serve.sh")).read()
for want in ["--gpu-memory-utilization 0.8 \\", "--max-num-seqs 48 \\", "--max-num-batched-tokens 4096 \\", "--block-size 32 \\"]:
    assert want in v, (want, v)
s = open(os.path.join(d, "sglang/serve.sh")).read()
for want in ["--mem-fraction-static 0.8 \\", "--max-running-requests 48 \\", "--chunked-prefill-size 4096 \\", "--page-size 32 \\"]:
    assert want in s, (want, s)
t = open(os.path.join(d, "trtllm/serve.sh")).read()
for want in ["--max_batch_size 48 \\", "--max_num_tokens 4096 \\"]:
    assert want in t, (want, t)
y = yaml.safe_load(open(os.path.join(d, "trtllm/extra_llm_api_options.yaml")))
kv = y["kv_cache_config"]
assert kv["tokens_per_block"] == 32, kv
# KV share of what the weights leave: (0.8 x 80e9 - 16.06e9) / (80e9 - 16.06e9) = 0.749
assert abs(kv["free_gpu_memory_fraction"] - 0.749) < 0.002, kv
PY

# plan exits 4 when it simulated deployments but none met the SLO, saying so in one line on
# stderr; the report (JSON best null) is printed all the same.
out=$("$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 2 --requests 50 --tpot-slo-ms 0.1 --budget-chips 1 --modes aggregated --json 2>"$tmp/err"); rc=$?
[ "$rc" -eq 4 ] || fail "plan with an SLO nothing meets exited $rc, expected 4"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "^chalk: plan: no deployment meets the SLO: .*(exit status 4)$" "$tmp/err" || fail "plan's stderr: $(cat "$tmp/err")"
printf '%s' "$out" | python3 -c "import json, sys; assert json.load(sys.stdin)['best'] is None" || fail "plan --json best"
"$CHALK" plan --help | grep -q "4 when none does" || fail "plan --help states exit status 4"
echo ok
