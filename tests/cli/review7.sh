# Review 7's findings on one vocabulary and one warning rule (/tmp/review7-findings.md).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

# L5: a KV-cache format the chip has no tensor cores for warns as weight formats do (one
# rule, deployment_describe.cc): nvfp4 KV on h100-sxm (no FP4 rate), fp8 KV on tpu-v5p (no
# FP8 rate); fp8 KV on h100-sxm (an FP8 rate) says nothing.
out=$("$CHALK" decode -m llama-3.1-70b -H h100-sxm --weights nvfp4 --kv-dtype nvfp4 -b 1 | tr '\n' ' ' | tr -s ' ')
case "$out" in *"warning nvfp4 KV cache on h100-sxm, which has no FP4 tensor cores: stored as nvfp4 (4-bit bytes), dequantised to bf16 for attention (bf16 FLOP rate)"*) ;;
  *) fail "decode --kv-dtype nvfp4 on h100-sxm: no KV warning: $out";; esac
case "$out" in *"warning nvfp4 weights on h100-sxm"*) ;; *) fail "the weights' warning went: $out";; esac
"$CHALK" decode -m llama-3.1-8b -H tpu-v5p --kv-dtype fp8 -b 1 --json | python3 -c "
import json, sys; w = json.load(sys.stdin)['warnings']
assert any(x.startswith('fp8 KV cache on tpu-v5p, which has no FP8 tensor cores: stored as fp8 (8-bit bytes)') for x in w), w" \
  || fail "decode --kv-dtype fp8 on tpu-v5p: no KV warning"
if "$CHALK" decode -m llama-3.1-8b -H h100-sxm --kv-dtype fp8 -b 1 | grep -q "KV cache on"; then fail "fp8 KV on h100-sxm warns of a rate it has"; fi

# L4: one spelling, utilization, in every key: prices compare's and prices forward's.
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
keys = set(j['columns']) | {k for o in j['rows'] for s in o['systems'] for k in s}
assert not [k for k in keys if 'utilisation' in k], keys
assert {'margin_at_full_utilization', 'break_even_utilization', 'input_break_even_utilization', 'output_break_even_utilization'} <= keys, keys" \
  || fail "prices compare: a key spelt utilisation"
"$CHALK" prices forward -m llama-3.1-8b -H h100-sxm --utilization 0.5 --json | grep -q "utilisation" && fail "prices forward: a key spelt utilisation"
expect_error "--utilization: must be a fraction in (0, 1], got 0" prices forward --utilization 0

# M9: every duration of a training row in seconds: no _ms key, and the parts add up to
# t_step_s with no factor (Llama 3.1 8B on 8 x H100, DP8 ZeRO-2, as train.sh's sum).
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --zero 2 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); s = j['rows'][0]
assert not [k for k in j['columns'] if k.endswith('_ms')], j['columns']
for k in ('t_forward_s', 't_backward_s', 't_tp_s', 't_ep_s', 't_ep_exposed_s', 't_cp_exposed_s', 't_pp_exposed_s'):
    assert k in s, k
parts = s['microbatches'] * (s['t_forward_s'] + s['t_backward_s']) + s['t_unpaired_s'] + s['t_bubble_s'] + s['t_dp_exposed_s'] \
    + s['t_dp_sm_contention_s'] + s['t_optimizer_s']
assert abs(parts - s['t_step_s']) <= 1e-12 * s['t_step_s'], (parts, s['t_step_s'])" || fail "train step: a duration not in seconds"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --zero 2 --csv | head -1 | grep -q "_ms" && fail "train step --csv: a key in ms"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm --dp 8 --zero 2 --json --explain | python3 -c "
import json, sys; x = {e['key']: e for e in json.load(sys.stdin)['explanations']}
units = {i['symbol']: i['unit'] for i in x['t_step_s']['inputs']}
assert units['t_f'] == 's' and units['t_b'] == 's', units" || fail "train step --explain: t_f, t_b not in seconds"
exit 0
