# `chalk train run | chinchilla | equilibrium`: the published rows and the lecture's numbers, as JSON.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

# DeepSeek-V3 pre-training from its step time (ISCA'25 Table 4): 2.667M H800 GPU-hours
# (published 2.664M), $5.33M at $2/GPU-hour, 700 W x PUE 1.2.
"$CHALK" train run -m deepseek-v3 -H h800-sxm --tokens 14.8e12 --chips 2048 --seq 4096 \
  --step-time-s 19.926 --tokens-per-step 62914560 --usd-per-chip-hour 2 --pue 1.2 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert abs(j['gpu_hours'] / 2.664e6 - 1) < 0.005, j['gpu_hours']
assert abs(j['cost_usd'] / 5.328e6 - 1) < 0.005, j['cost_usd']
assert j['chip_power_w'] == 700 and j['pue'] == 1.2, j
assert abs(j['energy_mwh'] - j['gpu_hours'] * 700 * 1.2 / 1e6) < 1e-6 * j['energy_mwh'], j['energy_mwh']
assert j['phases'][0]['mfu_from'] == 'step_time'
" || fail "train run DeepSeek-V3 JSON"
# The default MFU is stated.
"$CHALK" train run --tokens 1e12 --wide | grep -q "default: DeepSeek-V3 pre-training, 43.73%" || fail "default MFU not stated"
# Phases are summed.
"$CHALK" train run -H h100-sxm --phase name=pre,tokens=1e12,chips=1024,mfu=0.4 --phase name=ext,tokens=1e11,chips=1024,seq=32768,mfu=0.3 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); p = j['phases']
assert [r['phase'] for r in p] == ['pre', 'ext', 'total'], p
assert abs(p[0]['gpu_hours'] + p[1]['gpu_hours'] - j['gpu_hours']) < 1e-6 * j['gpu_hours']
assert j['cost_usd'] is not None and j['price_usd_per_chip_hour'] > 0
" || fail "train run phases"

# Chinchilla: its own budget gives 70B on 1.4T by Approach 1; over-training of an 8B model on 15T.
"$CHALK" train chinchilla --flops 5.88e23 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); a = {r['method']: r for r in j['allocations']}
assert abs(a['approach1']['params'] / 70e9 - 1) < 1e-6 and abs(a['approach1']['tokens'] / 1.4e12 - 1) < 1e-6, a['approach1']
assert abs(a['20x']['tokens_per_param'] - 20) < 1e-9
" || fail "chinchilla allocations"
"$CHALK" train chinchilla --params 8e9 --tokens 15e12 --json | python3 -c "
import json, sys; r = json.load(sys.stdin)['run']
assert abs(r['over_training_factor'] - 93.75) < 1e-9, r
assert 0 < r['wasted_fraction'] < 1
" || fail "chinchilla over-training"

# The lecture's equilibrium: 2.63e14 serving tokens, FLOP-only factor ~120x, engine-priced ~165x.
"$CHALK" train equilibrium --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
t = {r['term']: r for r in j['terms']}
assert abs(t['serving']['tokens'] / 2.6298e14 - 1) < 1e-3, t['serving']
assert abs(j['pretraining_tokens_flops_only'] / 8.766e13 - 1) < 1e-3
assert 115 < j['over_training_factor_flops_only'] < 125, j['over_training_factor_flops_only']
assert 150 < j['over_training_factor'] < 180, j['over_training_factor']
assert j['serving_decode']['chip_seconds_per_token'] >= j['serving_decode']['roofline_chip_seconds_per_token']
assert j['inference_aware_params'] < j['chinchilla_at_loss_params']
" || fail "equilibrium JSON"
"$CHALK" train equilibrium | grep -q "over-trained" || fail "equilibrium text"
echo ok
