# `chalk train run | chinchilla | equilibrium`: the published rows and the lecture's numbers, as JSON.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

# DeepSeek-V3 pre-training from its step time (ISCA'25 Table 4): 2.667M H800 GPU-hours
# (published 2.664M), $5.33M at $2/GPU-hour, 700 W x PUE 1.2.
"$CHALK" train run -m deepseek-v3 -H h800-sxm --tokens 14.8e12 --chips 2048 --seq 4096 --goodput 1 \
  --step-time-s 19.926 --tokens-per-step 62914560 --usd-per-chip-hour 2 --pue 1.2 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert abs(j['chip_hours'] / 2.664e6 - 1) < 0.005, j['chip_hours']
assert abs(j['cost_usd'] / 5.328e6 - 1) < 0.005, j['cost_usd']
# What the figures assume is under assumptions, as in every serving command (review 8 M3).
a = j['assumptions']
assert a['chip_power_w'] == 700 and a['pue'] == 1.2 and a['price_usd_per_chip_hour'] == 2, a
assert a['mfu_source'] == 'given' and a['price_source'], a
assert not {'chip_power_w', 'pue', 'price_usd_per_chip_hour', 'price_source', 'mfu_source'} & set(j), sorted(j)
assert abs(j['energy_mwh'] - j['chip_hours'] * 700 * 1.2 / 1e6) < 1e-6 * j['energy_mwh'], j['energy_mwh']
assert j['rows'][0]['mfu_from'] == 'step_time'
# The implied MFU is train step's (causal attention FLOPs): ISCA'25 Table 4's 38.94%.
assert abs(j['rows'][0]['mfu'] / 0.3894 - 1) < 0.003, j['rows'][0]['mfu']
assert j['attention_flops'] == 'causal' and 'causal attention' in j['mfu_definition'], j['mfu_definition']
" || fail "train run DeepSeek-V3 JSON"
# The default MFU is stated, with the attention convention it goes with (ISCA'25 Table 4).
"$CHALK" train run --tokens 1e12 --wide | grep -q "default: DeepSeek-V3 pre-training, 38.94% of the bf16 peak with causal" || fail "default MFU not stated"
"$CHALK" train run --tokens 1e12 --non-causal --wide | grep -q "43.73% of the bf16 peak with non-causal" || fail "non-causal default MFU"
# One MFU: train step's MFU fed back as --mfu gives train step's tok/s. The step's model
# FLOPs per token are train run's FLOPs/token (causal), so tok/s = MFU x n x peak / f equals
# the step's tokens / step time within rounding of the printed MFU.
step=$("$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2 -B 64 --seq-len 4096 --json)
mfu=$(printf '%s' "$step" | python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['mfu'])")
"$CHALK" train run -m llama-3.1-8b -H h100-sxm -n 8 --seq 4096 --tokens 1e12 --mfu "$mfu" --json | python3 -c "
import json, sys; r = json.load(sys.stdin); s = json.loads(sys.argv[1])['rows'][0]
assert abs(r['rows'][0]['tok_per_s'] / s['tok_per_s'] - 1) < 1e-3, (r['rows'][0]['tok_per_s'], s['tok_per_s'])
" "$step" || fail "train step MFU fed to train run"
# Phases are summed; the phases array holds the phases only (no total row, no null).
"$CHALK" train run -H h100-sxm --phase name=pre,tokens=1e12,chips=1024,mfu=0.4 --phase name=ext,tokens=1e11,chips=1024,seq=32768,mfu=0.3 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); p = j['rows']
assert [r['phase'] for r in p] == ['pre', 'ext'], p
assert all(v is not None for r in p for v in r.values()), p
assert abs(p[0]['chip_hours'] + p[1]['chip_hours'] - j['chip_hours']) < 1e-6 * j['chip_hours']
assert j['cost_usd'] is not None and j['assumptions']['price_usd_per_chip_hour'] > 0
" || fail "train run phases"
[ "$("$CHALK" train run -H h100-sxm --phase tokens=1e12,chips=8 --phase tokens=1e11,chips=8 --csv | grep -c total)" -eq 0 ] || fail "CSV total row"
# The run's flags are each phase's defaults: --chips 2048, --seq 8192, --mfu 0.2, --goodput 0.5.
"$CHALK" train run --phase tokens=1e12 --phase tokens=1e11,chips=16,mfu=0.3 --seq 8192 --mfu 0.2 --goodput 0.5 --json | python3 -c "
import json, sys; p = json.load(sys.stdin)['rows']
assert (p[0]['chips'], p[0]['context_tokens'], p[0]['mfu'], p[0]['goodput']) == (2048, 8192, 0.2, 0.5), p[0]
assert (p[1]['chips'], p[1]['context_tokens'], p[1]['mfu'], p[1]['goodput']) == (16, 8192, 0.3, 0.5), p[1]
" || fail "flags as phase defaults"
# A phase's step_time_s replaces the flags' --mfu; --step-time-s is a phase's default speed.
"$CHALK" train run -n 8 --mfu 0.2 --phase tokens=1e12,step_time_s=20,tokens_per_step=1e5 --json | python3 -c "
import json, sys; p = json.load(sys.stdin)['rows'][0]
assert p['mfu_from'] == 'step_time' and abs(p['tok_per_s'] - 5000) < 1e-9, p
" || fail "phase step time over --mfu"
# --peak: the default MFU is against bf16; with --mfu another peak counts. 0.2 x 2,048 x
# 1,978.9 TFLOP/s (H800 fp8) / 250.45e9 FLOP/token = 3.236M tok/s.
"$CHALK" train run --tokens 1e12 --peak fp8 --mfu 0.2 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['peak_precision'] == 'fp8' and 'fp8 dense peak' in j['mfu_definition'], j['mfu_definition']
assert abs(j['rows'][0]['tok_per_s'] / (0.2 * 2048 * j['peak_tflop_per_s_per_chip'] * 1e12 / j['rows'][0]['train_flops_per_token']) - 1) < 1e-9
" || fail "train run --peak fp8"
# Goodput 1 is a lower bound, and the total line says so; the goodput column shows unasked.
out=$("$CHALK" train run --tokens 14.8e12 --goodput 1)
printf '%s' "$out" | grep -q "(a lower bound: goodput 1" || fail "lower bound not stated"
printf '%s' "$out" | grep -q '^ *phase .* goodput ' || fail "goodput column hidden"
"$CHALK" train run --tokens 14.8e12 --goodput 0.9 | grep -q "lower bound" && fail "lower bound at goodput 0.9"
"$CHALK" train run --tokens 14.8e12 | grep -q "lower bound" && fail "lower bound at the modelled goodput"
# The default goodput is the interruption model's (docs/formulas.md, "Run goodput"). Llama 3.1
# 405B on 16,384 H100 (Llama 3's own run, where its constants come from): lambda = 2.1946e-5
# x 16,384 = 0.35957/h = 9.988e-5/s; checkpoint 405.85e9 params x 14 B = 5.682 TB / 2 TB/s =
# 2.841 s; Young/Daly tau = sqrt(2 x 2.841 x 10,012) = 238.5 s = 3.98 min; lost fraction =
# sqrt(2 x 2.841 x 9.988e-5) + 9.988e-5 x 763 = 0.02382 + 0.07621 = 0.1000: goodput 0.900.
# Ideal 27.82M chip-hours / 0.900 = 30.91M (Meta: 30.84M H100-hours).
out=$("$CHALK" train run -m llama-3.1-405b -H h100-sxm --tokens 15.6e12 --chips 16384 | tr '\n' ' ' | tr -s ' ')
case "$out" in *"goodput 0.900: 0.36 interruptions/h x 14.7 min lost (12.7 min restart + half a checkpoint interval), checkpoint every 3.98 min at 2.84 s a save"*) ;; *) fail "default goodput line: $out";; esac
case "$out" in *"30.91M chip-hours"*) ;; *) fail "default goodput total: $out";; esac
"$CHALK" train run -m llama-3.1-405b -H h100-sxm --tokens 15.6e12 --chips 16384 --goodput 1 | grep -q "27.82M chip-hours" || fail "--goodput 1: the ideal"
"$CHALK" train run -m llama-3.1-405b -H h100-sxm --tokens 15.6e12 --chips 16384 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); a = j['assumptions']
assert a['goodput_source'] == 'interruption model' and a['restart_s'] == 763 and a['checkpoint_write_gb_per_s'] == 2000, a
assert abs(a['interruptions_per_chip_hour'] - 466 / (54 * 24 * 16384)) < 1e-12, a
assert abs(j['rows'][0]['goodput'] - 0.900) < 0.0005, j['rows'][0]
" || fail "default goodput JSON"
# A phase that sets goodput keeps it; the others get the model's (the source says mixed).
"$CHALK" train run -m llama-3.1-405b -H h100-sxm --phase tokens=1e12,chips=16384,goodput=1 --phase tokens=1e12,chips=16384 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
assert j['rows'][0]['goodput'] == 1 and abs(j['rows'][1]['goodput'] - 0.900) < 0.0005 and j['assumptions']['goodput_source'] == 'mixed', j['rows']
" || fail "per-phase default goodput"
# A day count stays readable at any budget.
[ "$("$CHALK" train run --flops 1e308 | grep '^total' | wc -c)" -lt 200 ] || fail "huge day count"
# Contexts beyond the model's max_position_embeddings warn (as decode does).
"$CHALK" train run -m gpt-3-175b -H h100-sxm --tokens 1e12 --seq 4096 | grep -q "warning .*sequence length 4096 exceeds gpt-3-175b's max_position_embeddings 2048" || fail "train run context warning"
"$CHALK" train equilibrium -m gpt-3-175b -H h100-sxm --json | python3 -c "
import json, sys; w = json.load(sys.stdin)['warnings']
assert any('serving context 4989 exceeds' in x for x in w) and any('RL rollout length 32768 exceeds' in x for x in w), w
" || fail "equilibrium context warnings"

# Chinchilla: its own budget gives 70B on 1.4T by Approach 1; over-training of an 8B model on 15T.
"$CHALK" train chinchilla --flops 5.88e23 --json | python3 -c "
import json, sys; j = json.load(sys.stdin); a = {r['method']: r for r in j['rows']}
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
t = {r['term']: r for r in j['rows']}
assert abs(t['serving']['tokens'] / 2.6298e14 - 1) < 1e-3, t['serving']
assert abs(j['pretraining_tokens_flops_only'] / 8.766e13 - 1) < 1e-3
assert 115 < j['over_training_factor_flops_only'] < 125, j['over_training_factor_flops_only']
assert 150 < j['over_training_factor'] < 180, j['over_training_factor']
assert j['serving_decode']['chip_seconds_per_token'] >= j['serving_decode']['roofline_chip_seconds_per_token']
assert j['inference_aware_params'] < j['chinchilla_at_loss_params']
" || fail "equilibrium JSON"
"$CHALK" train equilibrium | grep -q "over-trained" || fail "equilibrium text"
# CSV carries the result: the run of --params/--tokens (93.75x over-trained: 15e12 / (20 x 8e9)),
# and equilibrium's over-training factor on each term.
"$CHALK" train chinchilla --params 8e9 --tokens 15e12 --csv | python3 -c "
import csv, sys; r = list(csv.DictReader(sys.stdin))
assert len(r) == 1 and abs(float(r[0]['over_training_factor']) - 93.75) < 1e-9, r
" || fail "chinchilla CSV run"
"$CHALK" train equilibrium --csv | python3 -c "
import csv, sys; r = list(csv.DictReader(sys.stdin))
assert len(r) == 3 and 150 < float(r[0]['over_training_factor']) < 180, r
" || fail "equilibrium CSV factor"
# MoE: the equal-loss headline follows --expert-share (21.8x at 2/3, 16.4x at 1/2).
"$CHALK" train moe | grep -q "with 21.8x the compute" || fail "moe headline"
"$CHALK" train moe --expert-share 0.5 | grep -q "with 16.4x the compute" || fail "moe headline follows --expert-share"
# Counts read as people write them (issue 30 item 7): Chinchilla's N and D at 1e24 FLOPs,
# approach 1 (20 tokens per parameter): N = sqrt(1e24 / 120) = 91.29B, D = 20 N = 1.826T; the
# JSON keeps the numbers.
"$CHALK" train chinchilla --flops 1e24 | grep -Eq "^ +approach1 +91\.3B +1\.83T +20\.0 " || fail "chinchilla counts not in 91.3B style"
"$CHALK" train chinchilla --flops 1e24 --json | python3 -c "
import json, sys; r = json.load(sys.stdin)['rows'][0]; assert abs(r['params'] - 91287092918) < 1, r" || fail "chinchilla JSON params not a number"
echo ok
