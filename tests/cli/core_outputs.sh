# The core commands' machine-readable outputs parse and hold the expected fields.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
# The roofline derivation below is of --roofline on 8 chips (one H100 node).
out=$("$CHALK" decode --roofline -n 8 --model llama-3.1-70b --hardware h100-sxm --batch 1,64 --context 2048 --json) || fail "decode --json"
python3 - "$out" <<'PY' || fail "decode --json content"
import json, sys
j = json.loads(sys.argv[1])
steps = j["rows"]
assert [s["batch"] for s in steps] == [1, 64], steps
# Llama 3.1 70B bf16 on 8 H100: (141.107 GB weights - 2.101 GB input table) / (8 x 3.35 TB/s x 0.87) = 5.962 ms at batch 1.
assert abs(steps[0]["t_weights_ms"] - 5.962) < 0.001, steps[0]
assert steps[0]["bound"] == "weights"
assert j["assumptions"]["chips"] == 8 and j["assumptions"]["kv_dtype"] == "bf16"
assert "MAMF" in j["assumptions"]["matmul_efficiency_source"]
PY
# Review 8 L3: on B200 the fraction is MAMF's 1745/2250 = 77.6% x the sustained clock 0.853
# (b200.json) = 66.2%, and the line says both factors, not only the 77.6% of its source.
"$CHALK" decode -m llama-3.1-8b -H b200 -b 1 | grep -A1 "^efficiency  matmul 66.2% of peak" | tr -s ' \n' ' ' \
  | grep -q "(77.6% measured x sustained clock 0.853; stas00/ml-engineering" || fail "B200 efficiency line omits the clock factor"
csv=$("$CHALK" decode --model llama-3.1-8b --hardware h100-sxm --batch 1:8 --csv) || fail "decode --csv"
[ "$(printf '%s\n' "$csv" | head -1 | cut -d, -f1-3)" = "batch,context_tokens,t_compute_ms" ] || fail "csv header: $(printf '%s\n' "$csv" | head -1)"
[ "$(printf '%s\n' "$csv" | wc -l)" -eq 5 ] || fail "1:8 should give batches 1,2,4,8"
"$CHALK" models --json | python3 -c "import json,sys; m={r['name']:r for r in json.load(sys.stdin)['rows']}; assert m['deepseek-v3']['kv_bytes_per_token']==70272" || fail "models --json"
"$CHALK" hardware --csv | grep -q '^h100-sxm,H100 SXM,989.4' || fail "hardware --csv"
# Issue 17's systems: dense peaks, derived figures by hand, topology, power and status.
"$CHALK" hardware --json | python3 -c "
import json, sys
h = {r['name']: r for r in json.load(sys.stdin)['rows']}
for n in ['l40s', 'h20', 'b300', 'gb300-nvl72', 'mi325x', 'mi355x', 'tpu-v5p', 'tpu-v6e', 'tpu-ironwood', 'trn2', 'trn2-ultraserver', 'rubin-nvl144', 'rubin-nvl576']:
    assert n in h, n
l = h['l40s']  # FP8 733 dense (1,466 sparse); 362.05 / 0.864 = 419 FLOP/B; 48 / 0.864 = 55.6 ms
assert l['fp8_tflop_per_s'] == 733 and abs(l['bf16_flop_per_byte'] - 419.04) < 0.01 and abs(l['hbm_sweep_ms'] - 55.556) < 0.001, l
assert l['scale_up_topology'] == 'pcie' and l['tdp_w'] == 350 and l['scale_out_gb_per_s_per_direction'] is None, l
assert abs(h['h20']['bf16_flop_per_byte'] - 37.0) < 1e-9 and abs(h['h20']['hbm_sweep_ms'] - 24.0) < 1e-9, h['h20']  # 148 / 4.0; 96 / 4.0
t = h['trn2-ultraserver']  # 4x4x4 NeuronLink torus, 1,280 GB/s both ways per chip
assert t['scale_up_domain_chips'] == 64 and t['scale_up_gb_per_s_per_direction'] == 640 and t['scale_up_topology'] == '3d-torus', t
assert h['tpu-v5p']['scale_up_topology'] == '3d-torus' and h['tpu-v6e']['scale_up_topology'] == '2d-torus'
assert h['b300']['fp4_tflop_per_s'] == 14000 and h['b300']['tdp_w'] == 1100 and h['b300']['scale_out_gb_per_s_per_direction'] == 100
assert [n for n, r in h.items() if r['status'] == 'announced'] == ['rubin-nvl144', 'rubin-nvl576'], h
assert all(r['status'] in ('shipping', 'announced') for r in h.values())
" || fail "hardware --json (issue 17 systems)"
# One key per quantity: hardware's rows use the hardware object's keys (hbm_gb_per_chip and
# hbm_tb_per_s_per_chip, not hbm_gb and hbm_tb_per_s), with the same H100 figures: 80 GB, 3.35 TB/s.
hw=$("$CHALK" hardware h100-sxm --json) || fail "hardware h100-sxm --json"
dec=$("$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1 --json) || fail "decode --json"
python3 - "$hw" "$dec" <<'PY' || fail "hardware --json keys are the hardware object's"
import json, sys
row = json.loads(sys.argv[1])['rows'][0]; obj = json.loads(sys.argv[2])["hardware"]
assert "hbm_gb" not in row and "hbm_tb_per_s" not in row, sorted(row)
for k, v in (("hbm_gb_per_chip", 80.0), ("hbm_tb_per_s_per_chip", 3.35)):
    assert row[k] == obj[k] == v, (k, row[k], obj[k])
PY
echo "core_outputs: all passed"
# A replica beyond the scale-up domain is flagged under --roofline: it has no scale-out term.
"$CHALK" decode --roofline -m llama-3.1-70b -H h100-sxm -n 16 -b 1 --json | python3 -c "import json,sys; w=json.load(sys.stdin)['warnings']; assert any('span 2 scale-up domains' in x for x in w), w" || fail "scale-out warning"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 8 -b 1 --json | python3 -c "import json,sys; w=json.load(sys.stdin)['warnings']; assert w == [], w" || fail "no warning within a domain"
# A --tp that splits heads no engine can split is an error (review 3 L15: `decode --tp 3 -n 3`
# priced TP3 of a 64-head model with exit 0); --allow-infeasible computes it, with a warning.
"$CHALK" decode --mechanisms --tp 72 -b 1 --allow-infeasible | grep -q "warning     TP72 does not divide the 128 attention heads" || fail "head-split warning"
expect_error "--tp: TP3 does not divide the 64 attention heads: vLLM and SGLang refuse this split; \`chalk layouts -n 3\` lists the ones that run" \
  decode -m llama-3.1-70b -H h100 --tp 3 -n 3
"$CHALK" decode --mechanisms --tp 8 -b 1 | grep -q "does not divide" && fail "TP8 splits 128 heads"
# Two micro-batches on SGL-H100-DECODE's setting (DeepSeek-V3 FP8 on 72 H100, 256 sequences
# per GPU at 2,000 tokens, FP8 dispatch): 83.6 ms per step, 3,062 tok/s per GPU (docs/formulas.md,
# Overlap; measured 2,785), against 102.3 ms without overlap (83.7 ms and 3,058 before vLLM's
# bf16 GEMMs streamed at their marginal rate: engine/matmul_rate.h).
sgl="decode --mechanisms --tp 1 -H h100-sxm -n 72 --weights fp8 --dispatch-dtype fp8 -b 18432 -s 2000 --json"
"$CHALK" $sgl --two-batch-overlap | python3 -c "
import json,sys; d=json.load(sys.stdin); s=d['rows'][0]
assert abs(s['t_step_ms'] - 85.64) < 0.05, s['t_step_ms']  # 83.61 before the experts' per-tile fixed cost
assert abs(s['tok_per_s_per_chip'] - 2989) < 2, s['tok_per_s_per_chip']
assert (s['bound'], s['governs']) == ('weights', 'communication'), s  # roofline term vs the engine step's largest share
assert abs(s['t_operations_ms'] + s['t_comm_ms'] + s['t_overhead_ms'] - s['t_step_ms']) < 1e-9, s  # the columns add up
assert 'dispatch 1 B/element, two micro-batches' in d['assumptions']['sharding'], d['assumptions']['sharding']" || fail "two-batch overlap"
"$CHALK" $sgl | python3 -c "import json,sys; s=json.load(sys.stdin)['rows'][0]; assert abs(s['t_step_ms'] - 104.48) < 0.05, s  # 104.28 before the routed experts' activation pass (engine/memory_kernels.h)" || fail "no overlap"
"$CHALK" decode --roofline -m llama-3.1-8b -H h100-sxm -b 1 --json | python3 -c "import json,sys; s=json.load(sys.stdin)['rows'][0]; assert s['governs'] == s['bound'] == 'weights', s" || fail "plain governs"
"$CHALK" decode --mechanisms --two-batch-overlap -m llama-3.1-8b -H h100-sxm -n 1 -b 1 | grep -q "no expert-parallel traffic to hide" || fail "overlap warning"
# CUDA graphs (docs/formulas.md, "CUDA graphs"): Llama 3.1 8B on one H100 under vLLM's sizes.
# Batch 100 replays the graph of 104 tokens; 600 (> 512) runs eagerly, its 292 launches x
# 28.8 us = 8.4 ms hidden behind the GPU step; --enforce-eager at batch 1: max(7.51, 8.4) ms.
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -n 1 -b 1,100,600 -s 1024 --json | python3 -c "
import json,sys; s=json.load(sys.stdin)['rows']
assert [x['graph_batch'] for x in s] == [1, 104, 0], s
assert [x['t_launch_ms'] for x in s][:2] == [0, 0] and abs(s[2]['t_launch_ms'] - 8.4) < 1e-9, s
assert s[2]['t_step_ms'] > 8.4 and s[2]['governs'] != 'launch', s[2]" || fail "graph batch"
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -n 1 -b 1 -s 1024 --enforce-eager --json | python3 -c "
import json,sys; s=json.load(sys.stdin)['rows'][0]
assert (s['graph_batch'], s['governs']) == (0, 'launch') and abs(s['t_step_ms'] - 8.4) < 1e-9, s" || fail "enforce eager"
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -n 1 -b 1 -s 1024 --enforce-eager --explain | grep -q "T_step = max(max(T_ops + T_comm + T_overhead, T_launch), T_host)" || fail "eager explain"
echo "core_outputs: scale-out warning passed"
# The engine step is the default; --roofline gives the lecture's lower bound on the same chips,
# and --mechanisms is a no-op alias. Llama 3.1 8B on H100: one chip (16.1 GB of weights fit in
# 72 GB), searched layout TP1; the roofline at batch 1 is weights-bound: (16.06 GB - 1.05 GB
# input table) / (3.35 TB/s x 0.87) = 5.151 ms, and the engine step is slower (kernel floor).
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1 --json | python3 -c "
import json,sys; j=json.load(sys.stdin); s=j['rows'][0]
assert j['assumptions']['chips'] == 1 and j['assumptions']['mechanisms'] is True, j['assumptions']
assert j['assumptions']['sharding'].startswith('layout: searched: attention TP1'), j['assumptions']['sharding']
assert s['t_step_ms'] > s['t_step_roofline_ms'] and s['t_overhead_ms'] > 0, s" || fail "engine default"
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1 --roofline --json | python3 -c "
import json,sys; j=json.load(sys.stdin); s=j['rows'][0]
assert j['assumptions']['chips'] == 1 and j['assumptions']['mechanisms'] is False, j['assumptions']
assert abs(s['t_step_ms'] - s['t_step_roofline_ms']) < 1e-12 and s['t_overhead_ms'] == 0, s" || fail "--roofline"
[ "$("$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1 --mechanisms --csv)" = "$("$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1 --csv)" ] || fail "--mechanisms is a no-op"
"$CHALK" decode -b 1 | grep -q "^chalk decode: one decode step, engine step" || fail "title names the engine step"
"$CHALK" decode -b 1 --roofline | grep -q "^chalk decode: one decode step, roofline at the achievable rates below" || fail "title names the roofline"
# The roofline runs at the printed achievable rates, not the datasheet peaks: it is not called
# a bare "lower bound" (issue 30 review L8).
"$CHALK" decode -b 1 --roofline | grep -q "lower bound" && fail "--roofline called a lower bound"
"$CHALK" decode -b 1 --roofline | grep -q "^mechanisms  off: the roofline at the achievable rates above" || fail "--roofline mechanisms line"
# Default chips: the smallest replica the layout search lays out that holds the model.
# DeepSeek-V3 (673 GB of weights plus the reserve) on H200 (141 GB): 8 chips; on GB200 NVL72
# (186 GB): 6 chips, data-parallel attention with the 256 experts over EP6 (`chalk layouts
# -n 6` ranks it first); on H100 (80 GB) two 8-GPU domains, 16. phi-4 (29.3 GB) on TPU v5e
# (16 GB): 4 chips, attention TP2 x 2 under FFN TP4 (TP4 does not split its 10 KV heads).
for hw_chips in h200:8 gb200-nvl72:8 h100-sxm:16; do
  "$CHALK" decode -H "${hw_chips%%:*}" -b 1 --json | python3 -c "
import json,sys; c=json.load(sys.stdin)['assumptions']['chips']; assert c == ${hw_chips##*:}, c" || fail "default chips on $hw_chips"
done
"$CHALK" decode -m phi-4 -H tpu-v5e -b 1 --json | python3 -c "
import json,sys; a=json.load(sys.stdin)['assumptions']; assert a['chips'] == 4 and 'attention TP2, FFN TP4' in a['sharding'], a" || fail "phi-4 default on tpu-v5e"
echo "core_outputs: engine default passed"
# Names people type: any case, aliases, HF repo ids, a HF cache folder.
"$CHALK" decode -m meta-llama/Llama-3.1-70B-Instruct -H H100 -b 1 --json | python3 -c "
import json,sys; j=json.load(sys.stdin); assert (j['model']['name'], j['hardware']['name']) == ('llama-3.1-70b', 'h100-sxm'), (j['model'], j['hardware'])" || fail "HF repo id and alias"
"$CHALK" decode -m deepseek-ai/DeepSeek-V3 -H GB200 -b 1 --json | python3 -c "
import json,sys; j=json.load(sys.stdin); assert (j['model']['name'], j['hardware']['name']) == ('deepseek-v3', 'gb200-nvl72')" || fail "deepseek-ai/DeepSeek-V3"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
hub="$tmp/hub/models--meta-llama--Llama-3.1-8B"
mkdir -p "$hub/snapshots/0123abc" "$hub/refs"
cp "$SRC/data/models/hf/llama-3.1-8b.json" "$hub/snapshots/0123abc/config.json"
printf '0123abc\n' > "$hub/refs/main"
for dir in "$hub" "$hub/snapshots/0123abc" "$hub/snapshots/0123abc/"; do
  "$CHALK" decode -m "$dir" -H h100-sxm -b 1 --json | python3 -c "
import json,sys; m=json.load(sys.stdin)['model']; assert m['name'] == 'llama-3.1-8b' and m['params_total'] > 8.0e9, m" || fail "snapshot dir $dir"
done
echo "core_outputs: names passed"
# Every line of the default output fits 100 columns without a terminal (or $COLUMNS when
# set): tables hide columns, prose wraps under its label (apps/chalk/wrap.h); --wide shows
# every column. Widths count code points (UTF-8), as a terminal does.
widest() { python3 -c "import sys; print(max((len(l.rstrip(chr(10))) for l in sys.stdin), default=0))"; }
for c in "decode" "decode -m llama-3.1-8b -H h100-sxm" "prefill" "serving sweep -m llama-3.1-8b -H h100-sxm -b 1,64" \
         "serving frontier -m llama-3.1-8b -H h100-sxm -b 1,64" "serving modes -m llama-3.1-8b -H h100-sxm" "layouts" \
         "prices infer gemini-1.5-pro" "validate" "train step" "train layouts -m llama-3.1-8b -H h100-sxm" "train moe" \
         "train equilibrium" "scaleup" "simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 100"; do
  # shellcheck disable=SC2086
  w=$(env -u COLUMNS "$CHALK" $c | widest)
  [ "$w" -le 100 ] && [ "$w" -gt 40 ] || fail "chalk $c: a line $w columns wide"
done
[ "$(COLUMNS=60 "$CHALK" decode -b 1 | widest)" -le 60 ] || fail "COLUMNS=60: every line within 60"
# Help too: descriptions wrap under CLI11's name column (apps/chalk/help_format.h), and no
# wrapped line starts with an option (help_audit.sh and web/openapi.json read those lines).
for c in "" "decode" "serving sweep" "train step" "prices infer" "simulate" "layouts"; do
  # shellcheck disable=SC2086
  w=$(env -u COLUMNS "$CHALK" $c --help | widest)
  [ "$w" -le 100 ] && [ "$w" -gt 60 ] || fail "chalk $c --help: a line $w columns wide"
done
"$CHALK" decode --help | grep -q "^ *--tp INT  *Tensor-parallel degree of attention" || fail "decode --help: --tp's line"
env -u COLUMNS "$CHALK" decode -b 1 | grep -q "more columns: compute ms, weights ms" || fail "hidden columns are named"
env -u COLUMNS "$CHALK" decode -b 1 --wide | grep -q "experts/layer.*max batch" || fail "--wide shows every column"
[ "$(COLUMNS=60 "$CHALK" decode -b 1 | awk '/^ *batch /{print length($0)}')" -le 60 ] || fail "COLUMNS=60"
# --eplb is stated where the figures are: DeepSeek-R1's 256 experts in order on 8 EP ranks,
# the busiest rank 1.372x the mean (learned_router_rank_factor, model/expert_skew.h).
"$CHALK" decode -m deepseek-r1 -H b200 -n 8 -b 64 --eplb NO --json | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["assumptions"]["moe_routing"]
assert r.startswith("a learned router") and "busiest of 8 EP ranks gets 1.37x" in r, r' || fail "--eplb no in assumptions.moe_routing"
"$CHALK" decode -m mixtral-8x7b -H h200 -n 1 -b 8 --eplb no --json | grep -q "one EP rank holds every expert" || fail "--eplb no on one rank"
"$CHALK" decode -m deepseek-r1 -H b200 -n 8 -b 64 --eplb yes | grep -q "^experts     a learned router's skew with EPLB" || fail "--eplb yes: the experts line"
echo "core_outputs: table width passed"
