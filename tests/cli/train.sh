# chalk train step|memory|layouts: outputs as JSON and CSV, and the error paths.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
# GPT-3 175B on 64 A100, TP8 PP8 1F1B, 64 microbatches: bubble (p-1)/m = 7/64.
out=$("$CHALK" train step -m gpt-3-175b -H a100-80gb --tp 8 --pp 8 -B 64 -s 2048 --json) || fail "train step --json"
python3 - "$out" <<'PY' || fail "train step --json content"
import json, sys
j = json.loads(sys.argv[1])
s = j["rows"][0]
assert j["model"]["name"] == "gpt-3-175b" and j["hardware"]["name"] == "a100-80gb" and s["chips"] == 64 and s["microbatches"] == 64, s
assert abs(s["bubble_fraction"] - 7 / 64) < 1e-9, s["bubble_fraction"]
assert s["memory_fits"] is True and "fits" not in s  # one fit key across commands (review L3)
assert 0 < s["mfu"] <= s["hfu"] < 0.87, s  # never above the A100's matmul efficiency
assert abs(s["tok_per_s"] - 64 * 2048 / s["t_step_s"]) < 1e-6 * s["tok_per_s"]
assert abs(s["tok_per_s_per_chip"] * 64 - s["tok_per_s"]) < 1e-6 * s["tok_per_s"]
assert "TP8 inside a scale-up domain" in j["placement"] and "PP8 across the scale-out network" in j["placement"]
PY
# One stage: no bubble. Interleaved v = 2 halves 1F1B's.
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --zero 2 -B 64 --json | python3 -c "
import json, sys; s = json.load(sys.stdin)['rows'][0]; assert s['bubble_fraction'] == 0 and s['t_bubble_s'] == 0, s" || fail "one stage has no bubble"
"$CHALK" train step -m gpt-3-175b -H a100-80gb --tp 8 --pp 8 -B 64 -s 2048 --schedule interleaved --virtual-stages 2 --json | python3 -c "
import json, sys; s = json.load(sys.stdin)['rows'][0]; assert abs(s['bubble_fraction'] - 7 / 128) < 1e-9, s" || fail "interleaved bubble"
# DualPipe: 3p/2 - 1 = 5 chunk pairs of rank 0 run unpaired (p = 4); other schedules none.
"$CHALK" train step -m gpt-3-175b -H a100-80gb --tp 8 --pp 4 --dp 2 -B 32 -s 2048 --schedule dualpipe --allow-infeasible --json | python3 -c "
import json, sys; s = json.load(sys.stdin)['rows'][0]; assert s['t_unpaired_s'] > 0, s
assert abs(s['t_step_s'] - (s['microbatches'] * (s['t_forward_s'] + s['t_backward_s']) + s['t_unpaired_s'] + s['t_bubble_s'] + s['t_dp_exposed_s'] + s['t_optimizer_s'])) < 0.02 * s['t_step_s'], s" || fail "dualpipe unpaired chunks"
"$CHALK" train step -m gpt-3-175b -H a100-80gb --tp 8 --pp 4 --dp 2 -B 32 -s 2048 --schedule dualpipe --allow-infeasible --wide | grep -q "+ 5 unpaired chunk pairs" || fail "dualpipe step line names the unpaired chunks"
"$CHALK" train step -m gpt-3-175b -H a100-80gb --tp 8 --pp 8 -B 64 -s 2048 --json | python3 -c "
import json, sys; s = json.load(sys.stdin)['rows'][0]; assert s['t_unpaired_s'] == 0, s" || fail "1f1b has no unpaired chunks"
# Memory: ZeRO-3 model states fall as 1/DP.
m8=$("$CHALK" train memory -m llama-3.1-70b -H h100-sxm --dp 8 --zero 3 -B 64 --allow-infeasible --json) || fail "train memory --json"
m16=$("$CHALK" train memory -m llama-3.1-70b -H h100-sxm --dp 16 --zero 3 -B 64 --allow-infeasible --json) || fail "train memory --json dp16"
python3 - "$m8" "$m16" <<'PY' || fail "ZeRO-3 states halve from DP8 to DP16"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
states = lambda j: j["weights_gb"] + j["gradients_gb"] + j["optimizer_gb"]
assert abs(states(a) / states(b) - 2) < 1e-9, (states(a), states(b))
assert isinstance(a["memory_fits"], bool) and a["largest_microbatch"] >= 0
assert abs(a["total_gb"] - sum(a[k] for k in ["weights_gb", "gradients_gb", "optimizer_gb", "zero3_buffers_gb", "activations_gb", "activation_working_gb"])) < 1e-9
PY
"$CHALK" train memory -m gpt-3-175b -H a100-80gb --tp 8 --pp 8 -B 64 -s 2048 --wide | grep -q "12 layers x 8 microbatches in flight (1f1b)" || fail "memory table"
csv=$("$CHALK" train memory -m gpt-3-175b -H a100-80gb --tp 8 --pp 8 -B 64 -s 2048 --csv) || fail "train memory --csv"
[ "$(printf '%s\n' "$csv" | head -1)" = "component,gb,detail" ] || fail "memory csv header"
# Layouts: fitting plans fastest first, the others with their memory.
lay=$("$CHALK" train layouts -m gpt-3-175b -H a100-80gb -n 64 -B 64 -s 2048 --limit 5 --json) || fail "train layouts --json"
python3 - "$lay" <<'PY' || fail "train layouts --json content"
import json, sys
j = json.loads(sys.argv[1])
fit, unfit = j["rows"], j["rejected_layouts"]
assert all(l["memory_fits"] for l in fit), j
assert len(fit) == 5 and len(unfit) == 5, j
# A plan that does not fit has no step: its figures are left out, never null.
assert all("t_step_s" not in l and "mfu" not in l for l in unfit), unfit
# Rejected rows carry the plan's name, chips, memory and why_not only (docs/output-schema.md).
assert all(set(l) == {"plan", "chips", "memory_gb", "why_not"} and l["chips"] == 64 for l in unfit), unfit
assert all(a["t_step_s"] <= b["t_step_s"] for a, b in zip(fit, fit[1:]))
assert all(l["why_not"].startswith("memory: ") and l["memory_gb"] > 80 for l in unfit)
assert j["plans_evaluated"] > j["plans_fitting"] > 0
PY
# Each row's plan as train step's flags (train_step_flags, issue 30 item 6: the page parsed
# the plan's name and read "TP32+SP" as TP3 without SP): the flags, with the document's
# global batch and sequence length, give train step the row's plan, step time and memory
# (the fastest of Megatron-LM's schedules: GPT-3 175B on 64 A100 DP2 TP4+SP PP8 (interleaved
# v2), ZeRO-3; DeepSeek-V3 on 1,024 GB200 DP1024 TP1 PP1 EP128, ZeRO-2).
for q in "-m gpt-3-175b -H a100-80gb -n 64 -B 64 -s 2048" "-m deepseek-v3 -H gb200-nvl72 -n 1024"; do
  # shellcheck disable=SC2086
  "$CHALK" train layouts $q --limit 1 --json | python3 -c "
import json, subprocess, sys
j = json.load(sys.stdin)
r = j['rows'][0]
f = r['train_step_flags']
assert set(f) == {'dp', 'tp', 'pp', 'cp', 'ep', 'etp', 'virtual_stages', 'schedule', 'zero', 'microbatch', 'recompute', 'recompute_modules', 'no_sp', 'reversible'}, f
args = [sys.argv[1], 'train', 'step', '-m', j['model']['name'], '-H', j['hardware']['name'], '-n', str(j['chips']), '-B', str(j['global_batch']), '-s', str(j['context_tokens']), '--json']
for k, v in f.items():
    flag = '--' + k.replace('_', '-')
    if v is True: args.append(flag)
    elif v not in (False, ''): args.append(f'{flag}={v}')
s = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)['rows'][0]
assert s['plan'] == r['plan'], (s['plan'], r['plan'])
assert abs(s['t_step_s'] - r['t_step_s']) <= 1e-9 * r['t_step_s'] and abs(s['memory_gb'] - r['memory_gb']) <= 1e-9 * r['memory_gb'], (s, r)
" "$CHALK" || fail "train layouts: train_step_flags do not reproduce the row ($q)"
done
"$CHALK" train layouts -m llama-3.1-8b -H h100-sxm -B 64 --pareto | grep -q "Pareto front" || fail "pareto"
"$CHALK" train layouts -m gpt-3-175b -H a100-80gb -n 64 -B 64 -s 2048 --csv | head -1 | grep -q "^rank,plan,memory_fits,t_step_s,mfu" || fail "layouts csv"
# Errors: one line naming the option, the value and what was expected.
expect_error "--tp: 3 does not divide the 64 query heads of llama-3.1-70b" train step --tp 3
expect_error "--chips: 4 chips, but --dp x --tp x --pp x --cp = 2 x 1 x 1 x 1 = 2" train step --dp 2 -n 4
expect_error "--schedule: expected gpipe, 1f1b, interleaved, zb-h1, zb-v or dualpipe, got 'zb-h3'" train step --schedule zb-h3
expect_error "--recompute: expected none, selective or full, got 'some'" train memory --recompute some
expect_error "--recompute-modules: unknown module 'attn'; expected a comma-separated subset of layernorm, mla_up_proj, moe_act" train memory --recompute-modules layernorm,attn
expect_error "--optimizer: expected adam16, adam18 or adam-bf16-moments" train step --optimizer adam8
expect_error "--zero: expected 0, 1, 2 or 3, got 4" train step --zero 4
expect_error "--pp: pp x chunks = 128 x 1 = 128 pipeline chunks, but llama-3.1-70b has only 82 slots" train step --pp 128 -n 128
expect_error "--global-batch: 12 sequences are not a multiple of dp x microbatch = 8 x 1 = 8" train step --dp 8 -B 12
expect_error "--ep: llama-3.1-70b has no routed experts" train step --dp 2 --ep 2
expect_error "--ep-dispatcher: expected deepep (flex, hybridep) or alltoall, got 'nccl'" train step --ep-dispatcher nccl
expect_error "--fp8-recipe: expected delayed, tensorwise, mxfp8 or blockwise, got 'current'" train step --compute fp8 --fp8-recipe current
expect_error "--fp8-recipe: tensorwise scales FP8 GEMMs; the plan's compute is bf16 (expected fp8)" train step --fp8-recipe tensorwise
# Current scaling's amax pass makes an FP8 step slower than delayed scaling's, and the JSON says which ran.
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --compute fp8 --fp8-recipe tensorwise --json | python3 -c "
import json, subprocess, sys; j = json.load(sys.stdin); assert j['fp8_recipe'] == 'tensorwise', j['fp8_recipe']
d = json.loads(subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True).stdout)
assert d['fp8_recipe'] == 'delayed' and d['rows'][0]['t_step_s'] < j['rows'][0]['t_step_s'], (d['rows'][0], j['rows'][0])" \
  "$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --compute fp8 --json || fail "fp8 recipe: tensorwise slower than delayed"
expect_error "--ep-overlap: with pp 2 needs the interleaved schedule" train step -m qwen3-30b-a3b --dp 4 --pp 2 --ep 4 --ep-overlap
expect_error "--ep: 3 does not divide the 256 routed experts" train step -m deepseek-v3 --dp 3 --ep 3
expect_error "--microbatch: the interleaved schedule needs microbatches per step (6) to be a multiple of pp (4)" train step --pp 4 --schedule interleaved --virtual-stages 2 -B 6
expect_error "--pp: dualpipe needs pp (2) and microbatches per step (3) even" train step --pp 2 --schedule dualpipe -B 3
# The explanation names the few-microbatch floor that sets a zero-bubble schedule's bubble (m = 1 < p = 4).
"$CHALK" train step -m llama-3.1-70b -H h100-sxm -n 32 --tp 8 --pp 4 -B 4 --schedule zb-v --explain --wide | grep -q "few-microbatch floor" || fail "zb-v explain names the floor"
expect_error "--microbatch: dualpipe needs at least 2 x pp = 8 microbatches per step, got 4" train step --pp 4 --schedule dualpipe -B 4
expect_error "--compute: A100 80GB SXM has no dense fp8 matmul rate" train step -H a100-80gb --compute fp8
expect_error "--dp: Value 0 not in range" train step --dp 0
expect_error "--chips: no valid plan of gpt-3-175b on 101 chips" train layouts -m gpt-3-175b -H a100-80gb -n 101 -B 64
expect_error "A subcommand is required" train

# The help says the default global batch, the one rule every train command uses (review 11 M3;
# help text wraps, so it is read with its lines joined).
"$CHALK" train layouts --help | tr '\n' ' ' | tr -s ' ' | grep -q "default: one per chip, at most 16.78M tokens (2^24, Llama 3 405B's batch))" \
  || fail "train layouts -B help"
"$CHALK" train step --help | tr '\n' ' ' | tr -s ' ' | grep -q "default: one per chip, at most 16.78M tokens (2^24, Llama 3 405B's batch), rounded down to a multiple of dp x microbatch" \
  || fail "train step -B help"
# No scale-out network: the true cause, as `train step` gives it (QA: "degrees must split ..." was wrong).
expect_error "hardware: l40s states no scale-out bandwidth" train layouts -n 256 -m llama-3.1-8b -H l40s
expect_error "crosses scale-up domains of 8 chips" train layouts -n 256 -m llama-3.1-70b -H l40s
# The overlap line describes the plan's schedule: only DualPipe hides EP and the PP sends;
# ZeRO-2 is a reduce-scatter and a parameter gather, not ZeRO-3's per-microbatch gathers.
dsv3="-m deepseek-v3 -H h800-sxm --dp 64 --pp 8 --cp 4 --ep 64 --zero 2 -B 15360 --compute fp8 --optimizer adam-bf16-moments"
# shellcheck disable=SC2086
ov=$("$CHALK" train step $dsv3 --schedule zb-v | tr -s ' \n' ' ')
case "$ov" in *"EP exposed ("*"--ep-overlap or --schedule dualpipe overlaps it); PP sends exposed"*"ZeRO-2 reduce-scatter"*) ;; *) fail "zb-v overlap line: $ov";; esac
case "$ov" in *"DualPipe hides"*|*"ZeRO-3"*) fail "zb-v overlap line claims DualPipe or ZeRO-3: $ov";; esac
# shellcheck disable=SC2086
"$CHALK" train step $dsv3 --schedule dualpipe | tr -s ' \n' ' ' | grep -q "DualPipe hides EP behind the paired chunk's compute" || fail "dualpipe overlap line"
# Accepted but doubtful plans say so: a sequence beyond max_position_embeddings (Llama 3.1 8B:
# 131,072) is a context extension, and a pipeline schedule with one stage changes nothing.
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --cp 8 -B 64 -s 262144 --allow-infeasible --json | python3 -c "
import json, sys; w = json.load(sys.stdin)['warnings']
assert w == ['sequence length 262144 exceeds llama-3.1-8b\'s max_position_embeddings 131072'], w" || fail "train step: no context warning"
"$CHALK" train memory -m llama-3.1-8b -H h100-sxm --dp 8 --zero 2 -s 4096 --schedule interleaved | grep -q "^warning     schedule interleaved with pp 1: one pipeline stage has no bubble to schedule" || fail "train memory: no one-stage schedule warning"
"$CHALK" train step -m qwen3-30b-a3b --dp 8 --ep 8 -B 8 --ep-dispatcher alltoall --allow-infeasible | grep -q "^warning     --ep-dispatcher alltoall: the expert group sits inside one scale-up domain" || fail "train step: no in-domain dispatcher warning"
"$CHALK" train layouts -m llama-3.1-8b -H h100-sxm -s 262144 --json | python3 -c "
import json, sys; assert any('max_position_embeddings 131072' in w for w in json.load(sys.stdin)['warnings'])" || fail "train layouts: no context warning"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --zero 2 -s 4096 --json | python3 -c "
import json, sys; assert json.load(sys.stdin)['warnings'] == []" || fail "train step: a warning on a plain plan"
# The step's parts in the JSON add up to t_step_s exactly (issue 33: the SM time hidden
# collectives take from compute had no field, and 2.197 s read as 2.179 s summed): microbatches
# x (fwd + bwd) + unpaired + bubble + DP exposed + DP SM contention + optimizer.
for plan in "-m llama-3.1-8b -H h100-sxm --dp 8 --zero 2" "-m llama-3.1-70b -H h100-sxm --tp 8 --pp 4 --dp 2 -B 64" \
            "-m llama-3.1-70b -H h100-sxm --tp 8 --pp 8 --dp 1 -B 1 --schedule zb-v" "-m llama-3.1-8b -H h100-sxm --dp 8 --zero 3"; do
  # shellcheck disable=SC2086
  "$CHALK" train step $plan --json | python3 -c "
import json, sys
s = json.load(sys.stdin)['rows'][0]
parts = (s['microbatches'] * (s['t_forward_s'] + s['t_backward_s']) + s['t_unpaired_s'] + s['t_bubble_s']
         + s['t_dp_exposed_s'] + s['t_dp_sm_contention_s'] + s['t_optimizer_s'])
assert abs(parts - s['t_step_s']) <= 1e-12 * s['t_step_s'], (parts, s['t_step_s'])
" || fail "train step $plan: the JSON parts do not add up to t_step_s"
done
# mfu_definition says what the code divides (issue 33): model FLOPs per token 6 N_matmul + 3 x
# causal attention, over the bf16 dense peak even when the GEMMs run in FP8. Causal attention
# per token is layers x 4 x heads x head_dim x (s + 1) / 2 (docs/formulas.md "Attention core
# FLOPs in training"): GPT-3 175B at s = 2048: 96 x 4 x 12288 x 1024.5 = 4.834e9; Llama 3.1 8B
# at s = 4096: 32 x 4 x 4096 x 2048.5 = 1.074e9. Peaks: A100 312, H100 989.4 TFLOP/s (bf16; the fp8 1,978.9 would halve it).
for case in "gpt-3-175b a100-80gb 2048 96 12288 312 --tp 8 --pp 8 -B 64" "llama-3.1-8b h100-sxm 4096 32 4096 989.4 --dp 8 --compute fp8"; do
  read -r model hw seq layers hattn peak rest <<<"$case"
  # shellcheck disable=SC2086
  "$CHALK" train step -m "$model" -H "$hw" -s "$seq" $rest --json | python3 -c "
import json, sys
j = json.load(sys.stdin); s = j['rows'][0]
seq, layers, hattn, peak = $seq, $layers, $hattn, $peak
per_token = 6 * j['model']['params_active_matmul'] + 3 * layers * 4 * hattn * (seq + 1) / 2
assert 'causal attention' in j['mfu_definition'] and 'bf16 dense peak' in j['mfu_definition'], j['mfu_definition']
assert abs(s['model_tflop_per_s_per_chip'] * 1e12 - per_token * s['tok_per_s_per_chip']) <= 1e-9 * per_token * s['tok_per_s_per_chip'], (s, per_token)
assert abs(s['mfu'] - s['model_tflop_per_s_per_chip'] / peak) <= 1e-12, (s['mfu'], s['model_tflop_per_s_per_chip'] / peak)
" || fail "train step -m $model: mfu and model_tflop_per_s_per_chip are not what mfu_definition says"
done
# DeepSeek-V3's published plan fits only with its memory savings (report 3.3.2): the recompute
# modules and FP8 storage of GEMM inputs (issue 33 item 7).
ds="-m deepseek-v3 -H h800-sxm --pp 16 --dp 128 --ep 64 --schedule dualpipe --zero 1 -B 15360 -s 4096 --compute fp8 --optimizer adam-bf16-moments"
# shellcheck disable=SC2086
expect_error "--chips: " train memory $ds  # a stated plan that does not fit exits 2, as train step
# shellcheck disable=SC2086
"$CHALK" train memory $ds --allow-infeasible --json | python3 -c "
import json, sys; assert not json.load(sys.stdin)['memory_fits']" || fail "train memory: DeepSeek-V3 fits without its savings"
# shellcheck disable=SC2086
"$CHALK" train memory $ds --recompute-modules layernorm,mla_up_proj,moe_act --json | python3 -c "
import json, sys; d = json.load(sys.stdin); assert d['memory_fits'], d['total_gb']; assert 'layernorm,mla_up_proj,moe_act' in d['plan']" \
  || fail "train memory: DeepSeek-V3's plan does not fit with its savings"
# Issue 30: the top plans are distinct. DeepSeek-V3 on 1,024 GB200 once listed one plan eight
# times under ZeRO stages and recomputation that changed neither step time nor memory; now a
# plan with an equal (step, memory) is folded into the simplest, counted in equivalent_plans,
# and so is one that differs only in ZeRO stage or recomputation at the same step time.
# (The 50 fastest: since issue 33's kernels the fastest eight differ in memory by ZeRO stage;
# the equal ones fold further down. Every schedule, as then: Megatron-LM's two alone fold none
# of the 50 fastest.)
"$CHALK" train layouts -m deepseek-v3 -H gb200-nvl72 -n 1024 --limit 50 --schedules all --json | python3 -c "
import json, re, sys
j = json.load(sys.stdin)
rows = j['rows']
assert len(rows) == 50, len(rows)
same = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b))
for i, r in enumerate(rows):
    for q in rows[:i]:
        assert not (same(q['t_step_s'], r['t_step_s']) and same(q['memory_gb'], r['memory_gb'])), (q['plan'], r['plan'])
        # Item 8: the ZeRO-1 twin of a ZeRO-2 plan at one step time is folded into it.
        layout = lambda p: re.sub(r', (ZeRO-[0-3]|recompute [a-z]+)', '', p)
        assert not (same(q['t_step_s'], r['t_step_s']) and layout(q['plan']) == layout(r['plan'])), (q['plan'], r['plan'])
assert j['equivalent_plans_folded'] == sum(r['equivalent_plans'] for r in rows) > 0, j['equivalent_plans_folded']
" || fail "train layouts: equal plans not folded"
out=$("$CHALK" train layouts -m deepseek-v3 -H gb200-nvl72 -n 1024 --limit 50 --schedules all) || fail "train layouts text"
printf '%s\n' "$out" | grep -q "^folded      [0-9]* more plans with the same step time as one listed" || fail "train layouts does not say what it folded: $out"
# MFU as a fraction in train step's text too (issue 30: 0.6 in train layouts, 60% in train
# step): the text's fraction is the JSON's mfu to 3 places, the percentage beside it.
text=$("$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2) || fail "train step text"
mfu=$("$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2 --json | python3 -c "import json,sys; m=json.load(sys.stdin)['rows'][0]['mfu']; print(f'{m:.3f} ({100 * m:.1f}%;')")
printf '%s\n' "$text" | grep -qF "MFU         $mfu" || fail "train step's MFU is not '$mfu': $text"
echo "train: all passed"
