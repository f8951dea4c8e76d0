# Bad `chalk train run | chinchilla | equilibrium` flags: exit status 2 and a one-line error naming the flag.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

expect_error "--tokens: give a budget" train run
expect_error "--mfu: must be a fraction in (0, 1], got 1.5" train run --tokens 1e12 --mfu 1.5
expect_error "--mfu: give exactly one of mfu or step_time" train run --tokens 1e12 --mfu 0.4 --step-time-s 10 --tokens-per-step 1e6
expect_error "--tokens-per-step: must be a positive number of tokens" train run --tokens 1e12 --step-time-s 10
# A step faster than the peak allows is refused as --mfu > 1 is. DeepSeek-V3 (the default
# model) at 4096 tokens: 2.8115e11 FLOP/token; 6e7 tokens in 1 ms is 1.687e22 FLOP/s against
# 2,048 H800 x 989.4 TFLOP/s = 2.026e18: MFU 8,325; at peak the step takes 8.33 s.
expect_error "--step-time-s: 0.001 s implies MFU 8325.15 (6e+07 tokens x 2.81153e+11 FLOP/token over 2048 chips" train run --tokens 1e12 --step-time-s 0.001 --tokens-per-step 6e7
expect_error "above 1: a step of that many tokens takes at least 8.32515 s at peak" train run --tokens 1e12 --step-time-s 0.001 --tokens-per-step 6e7
expect_error "--phase[0].step_time_s: 0.001 s implies MFU" train run --phase tokens=1e12,chips=8,step_time_s=0.001,tokens_per_step=6e7
expect_error "--chips: must be >= 1 chip, got 0" train run --tokens 1e12 --chips 0
expect_error "--seq: must be a positive number of tokens, got 0" train run --tokens 1e12 --seq 0
expect_error "--goodput: must be a fraction in (0, 1], got 0" train run --tokens 1e12 --goodput 0
expect_error "--tokens: give exactly one positive budget" train run --tokens 1e12 --flops 1e24
expect_error "--tokens: give exactly one positive budget" train run --tokens -5
expect_error "--pue: must be >= 1" train run --tokens 1e12 --pue 0.5
expect_error "--chip-power-w: must be >= 0 W" train run --tokens 1e12 --chip-power-w -700
expect_error "--usd-per-chip-hour: must be >= 0" train run --tokens 1e12 --usd-per-chip-hour -2
expect_error "--peak: " train run --tokens 1e12 --peak fp4
expect_error "--phase[1].mfu: must be a fraction in (0, 1], got 2" train run --phase tokens=1e12,chips=8 --phase tokens=1e9,chips=8,mfu=2
expect_error "--phase[0].chips: must be >= 1 chip, got 0" train run --phase tokens=1e12
expect_error "--phase[0].speed: unknown key" train run --phase tokens=1e12,chips=8,speed=3
expect_error "--phase[0].tokens: expected a number, got 'lots'" train run --phase tokens=lots,chips=8
expect_error "--phase[0]: expected key=value items" train run --phase tokens
expect_error "model: unknown model 'gpt-9'" train run -m gpt-9 --tokens 1e12

expect_error "--flops: give a compute budget" train chinchilla
expect_error "--flops: must be a positive training FLOP budget, got -1" train chinchilla --flops -1
expect_error "--params: must be a positive parameter count, got 0" train chinchilla --params 0
expect_error "--tokens: must be a positive token count, got -3" train chinchilla --params 7e9 --tokens -3
expect_error "--params: --tokens needs --params" train chinchilla --tokens 1e12
expect_error "--method: unknown Chinchilla method 'kaplan'" train chinchilla --flops 1e24 --method kaplan

expect_error "--serving-tok-per-s: must be a positive serving rate" train equilibrium --serving-tok-per-s 0
expect_error "--window-days: must be a positive time" train equilibrium --window-days -1
expect_error "--rl-trained-fraction: must be a fraction in (0, 1], got 1.5" train equilibrium --rl-trained-fraction 1.5
expect_error "--mfu: must be a fraction in (0, 1], got 2" train equilibrium --mfu 2
expect_error "--pretraining-cost-ratio: must be a positive cost ratio" train equilibrium --pretraining-cost-ratio 0
expect_error "--serving-context: must be a positive number of KV tokens" train equilibrium --serving-context 0
expect_error "--decode-chips: no decode layout of 1 x" train equilibrium --decode-chips 1
expect_error "--decode-batch: must be >= 0" train equilibrium --decode-batch -1
expect_error "--rl-seq: must be >= 2 tokens" train equilibrium --rl-seq 1
expect_error "--method: unknown Chinchilla method" train equilibrium --method nope
echo ok
