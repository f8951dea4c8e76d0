# Review 6's CLI findings (M2, M6, M7, M8, M9, M11), each checked on the command a newcomer typed.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
# M2: the pipeline line gives the model's own layers and how they fall into stages: Llama 3.1
# 405B has 126 layers, over 4 stages 32, 32, 31, 31 (126 = 4 x 31 + 2: the first two take one
# more), every stage priced as the busiest, 32 (ceil(126 / 4)); it said "32 of 128".
out=$("$CHALK" decode -m llama-3.1-405b -H h100-sxm --pp 4 -b 32) || fail "decode --pp 4 exited $?"
printf '%s\n' "$out" | tr '\n' ' ' | tr -s ' ' | grep -q "126 layers in stages of 32, 32, 31, 31 (every stage priced as the busiest, 32 layers" \
  || fail "decode --pp 4: pipeline line lacks the 126 layers split 32, 32, 31, 31: $out"
# Llama 3.1 70B's 80 layers over 3: 27, 27, 26 (it said "27 of 81").
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --pp 3 -n 6 -b 8 | tr '\n' ' ' | tr -s ' ' | grep -q "80 layers in stages of 27, 27, 26 (every stage priced as the busiest, 27 layers" \
  || fail "decode --pp 3: pipeline line lacks 80 layers split 27, 27, 26"
# JSON: model.layers is the model's (126), pipeline.layers_per_stage the busiest stage's (32).
"$CHALK" decode -m llama-3.1-405b -H h100-sxm --pp 4 -b 32 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['model']['layers'] == 126, j['model']['layers']
assert j['pipeline']['layers_per_stage'] == 32, j['pipeline']" || fail "decode --pp 4 --json: model.layers not the model's 126"
# M6: one name for the sequence length in every training command, the old one kept as an alias.
a=$("$CHALK" train run -m llama-3.1-8b -H h100-sxm --tokens 1e12 --seq-len 8192 --json) || fail "train run --seq-len refused"
b=$("$CHALK" train run -m llama-3.1-8b -H h100-sxm --tokens 1e12 --seq 8192 --json) || fail "train run --seq (alias) refused"
[ "$a" = "$b" ] || fail "train run: --seq-len and --seq differ"
expect_ok train layouts -m llama-3.1-8b -H h100-sxm -n 64 --seq 8192
expect_ok train equilibrium --seq-len 8192
expect_error "--seq-len: must be a positive number of tokens, got 0" train run --tokens 1e12 -s 0
# M7: -q keeps the answer of a mode without a table: the run as a one-row table, its
# over-training factor 15e12 / (20 x 8e9) = 93.75x.
q=$("$CHALK" train chinchilla --params 8e9 --tokens 15e12 -q) || fail "train chinchilla -q exited $?"
[ -n "$q" ] || fail "train chinchilla -q printed nothing"
printf '%s\n' "$q" | grep -q "D/D_opt" || fail "train chinchilla -q: no over-training column: $q"
printf '%s\n' "$q" | grep -qE " 93\.8 " || fail "train chinchilla -q: no 93.8 (93.75 to three figures): $q"
if printf '%s\n' "$q" | grep -q "^chalk train chinchilla"; then fail "train chinchilla -q printed its title"; fi
# M8: no layout splits a routed expert into fractional columns: DeepSeek-V3's experts are
# 2048 wide, so expert TP must divide 2048 (TP5 gave 409.6); scaleup on tpu-v5p named
# "EP224 x TP5". Every layout a scaleup row names has an expert TP dividing 2048.
"$CHALK" scaleup -m deepseek-v3 -H tpu-v5p,gb200-nvl72,h100-sxm --json | python3 -c "
import json, re, sys
j = json.load(sys.stdin)
text = json.dumps(j)
for ep, tp in re.findall(r'EP(\d+) x TP(\d+)', text):
    assert 2048 % int(tp) == 0, f'EP{ep} x TP{tp} splits 2048-wide experts'
assert 'TP5' not in text, 'TP5 still named'" || fail "scaleup: a layout splits DeepSeek-V3's experts into fractional columns"
# M9: one warning rule for every weight format a chip has no tensor-core rate for: FP8
# experts on tpu-v5p (no fp8 peak) warn as MXFP4 does; on h100-sxm (fp8 peak) nothing.
"$CHALK" decode -m deepseek-v3 -H tpu-v5p -b 1 | tr '\n' ' ' | tr -s ' ' | grep -q "warning fp8 weights on tpu-v5p, which has no FP8 tensor cores: weight-only FP8, dequantised to bf16 for each matmul (8-bit bytes, bf16 FLOP rate)" \
  || fail "decode deepseek-v3 on tpu-v5p: no FP8 warning"
if "$CHALK" decode -m deepseek-v3 -H h200 -b 1 | grep -q "tensor cores: weight-only"; then fail "decode deepseek-v3 on h200 warns of a rate it has"; fi
"$CHALK" decode -m gpt-oss-120b -H tpu-v5p -b 1 | tr '\n' ' ' | tr -s ' ' | grep -q "warning mxfp4 weights on tpu-v5p, which has no FP4 tensor cores: weight-only FP4, dequantised to bf16 for each matmul (4-bit bytes" \
  || fail "decode gpt-oss-120b on tpu-v5p: the FP4 warning changed"
# M11: layouts without --batch ranks each replica at the batch its HBM holds: null, not 0.
"$CHALK" layouts -m llama-3.1-8b -H h100-sxm --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['batch'] is None and j['batches'] == [None], (j['batch'], j['batches'])
assert all(r['batch'] is None and r['batch_per_replica'] > 0 for r in j['rows']), j['rows'][0]" || fail "layouts --json: batch not null"
"$CHALK" layouts -m llama-3.1-8b -H h100-sxm -b 8 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['batch'] == 8 and j['batches'] == [8] and all(r['batch'] == 8 for r in j['rows'])" || fail "layouts -b 8 --json: batch not 8"
# L6: --explain prints a count as the whole number it is: "80 layers", not "80.0000".
x=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 4 -b 8 --explain) || fail "decode --explain exited $?"
printf '%s\n' "$x" | grep -qE "^ +n +4 chips" || fail "decode --explain: n is not printed as 4 chips"
if printf '%s\n' "$x" | grep -qE " 4\.00000 chips| 80\.0000 "; then fail "decode --explain prints counts with six figures"; fi
# L7: a dense model's --tp 4 on 8 chips holds two whole copies (two data-parallel groups):
# 2 x 141.1 GB, the second said as a whole copy, not as replicated attention.
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --tp 4 -n 8 | tr '\n' ' ' | tr -s ' ' | grep -q "weights 282.2 GB (incl. 141.1 GB as 1 more whole copy of the model in the layout's data-parallel groups; the model is 141.1 GB)" \
  || fail "decode --tp 4 -n 8: the second copy is not said as a whole copy"
echo ok
# L8: -n with degrees but no --dp infers DP from the chips the other degrees leave, as decode
# and train layouts do: 64 / (TP8 x PP4) = DP2; a stated --dp must still match, and a count the
# degrees do not divide is still refused.
"$CHALK" train step -m llama-3.1-70b -H h100-sxm -n 64 --tp 8 --pp 4 --json | python3 -c "
import json, sys; r = json.load(sys.stdin)['rows'][0]
assert r['chips'] == 64 and r['plan'].startswith('DP2 TP8+SP PP4'), r" || fail "train step -n 64 --tp 8 --pp 4: DP not inferred as 2"
expect_error "--chips: 64 chips, but --dp x --tp x --pp x --cp = 1 x 8 x 4 x 1 = 32" train step -m llama-3.1-70b -H h100-sxm -n 64 --dp 1 --tp 8 --pp 4
expect_error "--chips: 100 chips, but --dp x --tp x --pp x --cp = 1 x 8 x 4 x 1 = 32" train step -m llama-3.1-70b -H h100-sxm -n 100 --tp 8 --pp 4
# L9: 3 stages of 2 H100 sit in one 8-GPU NVLink domain: the sends take NVLink (pipeline_hop_time),
# and say so; 2 stages of 8 (405B) cross domains and stay on scale-out.
"$CHALK" decode -m llama-3.1-70b -H h100-sxm --pp 3 -n 6 -b 8 | tr '\n' ' ' | tr -s ' ' | grep -q "stage-to-stage sends over scale-up (all 6 chips in one 8-chip domain)" \
  || fail "decode --pp 3 -n 6: sends not over scale-up"
"$CHALK" decode -m llama-3.1-405b -H h100-sxm --pp 2 -n 16 -b 8 | tr '\n' ' ' | tr -s ' ' | grep -q "stage-to-stage sends over scale-out" \
  || fail "decode --pp 2 -n 16: sends not over scale-out"
