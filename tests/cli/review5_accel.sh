# Review 5's accelerator findings (H1, M4, L2, L4, L5), each checked on the command a newcomer types.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
# H1: a TPU step pays a fixed time per XLA op (tpu-v5p.json op_floor 7.7 us): Llama 3.1 8B's
# 32 x (5 + 4) + 4 = 292 ops = 2.2484 ms, where h100-sxm pays 292 x 6.3 us = 1.8396 ms.
"$CHALK" decode -m llama-3.1-8b -H tpu-v5p -n 1 -b 1 --csv | python3 -c "
import csv, sys; r = next(csv.DictReader(sys.stdin)); assert abs(float(r['t_overhead_ms']) - 2.2484) < 1e-6, r['t_overhead_ms']" \
  || fail "decode on tpu-v5p: t_overhead_ms not 292 x 7.7 us"
# H1: with it no system reaches Groq's 500 tok/s per user for gpt-oss-120b (the TPU did, at 0 ms of fixed time).
"$CHALK" prices compare -m gpt-oss-120b | grep -E "^ +Groq " | grep -q "none reaches it" || fail "prices compare: a system reaches Groq's speed"
# M4: DeepSeek-V3 on 16 H100: the weights line says how much of its total is copies.
"$CHALK" decode -m deepseek-v3 -H h100-sxm | tr '\n' ' ' | tr -s ' ' | grep -qE "weights 959.4 GB \(incl\. [0-9.]+ GB of replicated attention, dense-layer and embedding weights; the model is [0-9.]+ GB\) of 1.28 TB HBM" \
  || fail "decode deepseek-v3: the weights line does not state the replicated part"
# L2: the README's chip names resolve.
"$CHALK" decode -m llama-3.1-8b -H trainium2 -b 1 >/dev/null || fail "-H trainium2 refused"
"$CHALK" decode -m llama-3.1-8b -H "Intel Gaudi 3" -b 1 >/dev/null || fail "-H 'Intel Gaudi 3' refused"
# L4: the PCIe-only servers say so, with their bandwidth, in text and JSON.
hw=$("$CHALK" hardware) || fail "hardware exited $?"
printf '%s\n' "$hw" | tr '\n' ' ' | tr -s ' ' | grep -q "l4 (32 GB/s/dir)" || fail "hardware: L4 not named PCIe only: $hw"
"$CHALK" hardware l4 h100-sxm --json | python3 -c "
import json, sys; rows = json.load(sys.stdin)['rows']
assert rows[0]['scale_up_link'] == 'PCIe only, 32 GB/s/dir', rows[0]; assert rows[1]['scale_up_link'] == 'NVLink4', rows[1]" \
  || fail "hardware --json: scale_up_link"
# L5: FP4 weights on Hopper are weight-only, said in text and in the JSON warnings.
"$CHALK" decode -m llama-3.1-8b -H h100-sxm --weights fp4 -b 1 | grep -q "^warning     nvfp4 weights on h100-sxm, which has no FP4 tensor cores: weight-only FP4" \
  || fail "decode --weights fp4 on h100: no weight-only note"
"$CHALK" decode -m llama-3.1-8b -H h100-sxm --weights fp4 -b 1 --json | python3 -c "
import json, sys; w = json.load(sys.stdin)['warnings']; assert any('weight-only FP4, dequantised to bf16' in x for x in w), w" \
  || fail "decode --weights fp4 --json: no weight-only warning"
# ... and not on a chip with FP4 tensor cores (B200).
if "$CHALK" decode -m llama-3.1-8b -H b200 --weights fp4 -b 1 | grep -q "weight-only FP4"; then fail "b200: weight-only note on a chip with FP4"; fi
echo "review5_accel: all passed"
