# Bad `chalk train run | chinchilla | equilibrium` flags: exit status 2 and a one-line error naming the flag.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

expect_error "--tokens: give a budget" train run
expect_error "--mfu: must be a fraction in (0, 1], got 1.5" train run --tokens 1e12 --mfu 1.5
expect_error "--mfu: give exactly one of mfu or step_time" train run --tokens 1e12 --mfu 0.4 --step-time-s 10 --tokens-per-step 1e6
expect_error "--tokens-per-step: must be a positive number of tokens" train run --tokens 1e12 --step-time-s 10
# A step faster than the peak allows is refused as --mfu > 1 is. DeepSeek-V3 (the default
# model) at 4096 tokens, causal attention: 2.50458e11 FLOP/token; 6e7 tokens in 1 ms is
# 1.503e22 FLOP/s against 2,048 H800 x 989.4 TFLOP/s = 2.026e18: MFU 7,416; at peak the
# step takes 7.42 s.
expect_error "--step-time-s: 0.001 s implies MFU 7416.26 (6e+07 tokens x 2.50458e+11 FLOP/token over 2048 chips" train run --tokens 1e12 --step-time-s 0.001 --tokens-per-step 6e7
expect_error "above 1: a step of that many tokens takes at least 7.41626 s at peak" train run --tokens 1e12 --step-time-s 0.001 --tokens-per-step 6e7
expect_error "--phase[0].step_time_s: 0.001 s implies MFU" train run --phase tokens=1e12,chips=8,step_time_s=0.001,tokens_per_step=6e7
expect_error "--chips: must be >= 1 chip, got 0" train run --tokens 1e12 --chips 0
expect_error "--seq-len: must be a positive number of tokens, got 0" train run --tokens 1e12 --seq 0
expect_error "--goodput: must be a fraction in (0, 1], got 0" train run --tokens 1e12 --goodput 0
expect_error "--goodput: must be a fraction in (0, 1], got 1.5" train run --tokens 1e12 --goodput 1.5
expect_error "--interruptions-per-chip-hour: must be >= 0 interruptions per chip-hour, got -1" train run --tokens 1e12 --interruptions-per-chip-hour -1
expect_error "--interruptions-per-chip-hour: must be >= 0 interruptions per chip-hour, got -1" train run --phase tokens=1e12 --phase tokens=1e12 --interruptions-per-chip-hour -1
# 1e-2 interruptions per chip-hour on 2,048 chips: 20.48/h = 5.69e-3/s x 763 s restart = 4.3 of the wall clock, > 1.
expect_error "--goodput: interruptions take the whole run" train run --tokens 1e12 --interruptions-per-chip-hour 1e-2
expect_error "--tokens: give exactly one positive budget" train run --tokens 1e12 --flops 1e24
expect_error "--tokens: give exactly one positive budget" train run --tokens -5
expect_error "--pue: must be >= 1" train run --tokens 1e12 --pue 0.5
expect_error "--chip-power-w: must be >= 0 W" train run --tokens 1e12 --chip-power-w -700
expect_error "--price-usd-per-chip-hour: must be >= 0" train run --tokens 1e12 --usd-per-chip-hour -2
# Review 2 M5: the name every other command takes, and the JSON key's.
expect_error "--price-usd-per-chip-hour: must be >= 0" train run --tokens 1e12 --price-usd-per-chip-hour -2
# --peak: one the chip has, the accepted ones listed; fp16 is not a peak of its own; the
# default MFU is a fraction of the bf16 peak, so another peak needs --mfu.
expect_error "--peak: H800 SXM has no dense fp4 peak; expected one it has: bf16, fp8, int8" train run --tokens 1e12 --peak fp4 --mfu 0.2
expect_error "--peak: unknown matmul precision 'fp9'; expected bf16 (fp16), fp8 (mxfp8), int8 or fp4 (nvfp4, mxfp4)" train run --tokens 1e12 --peak fp9
expect_error "--peak: expected bf16, fp8, int8 or fp4, got 'fp16'" train run --tokens 1e12 --peak fp16
expect_error "--peak: the default MFU (38.94%) is measured against the bf16 peak; with --peak fp8 give --mfu" train run --tokens 14.8e12 --peak fp8
expect_error "--peak: the default MFU" train run --phase tokens=1e12 --phase tokens=1e12,mfu=0.2 --peak fp8
expect_error "--phase[1].mfu: must be a fraction in (0, 1], got 2" train run --phase tokens=1e12,chips=8 --phase tokens=1e9,chips=8,mfu=2
expect_error "--phase[0].chips: must be >= 1 chip, got 0" train run --phase tokens=1e12,chips=0
expect_error "--phase[0].chips: must be >= 1 chip, got 0" train run --phase tokens=1e12 --chips 0
# One phase per --phase: a repeated key is refused (it overwrote the first phase's).
expect_error "--phase[0].name: given twice in one --phase ('b' again): give each phase its own --phase" train run --phase name=a,tokens=1e12,chips=8,name=b,tokens=2e12,chips=16
expect_error "--phase[0].chips: expected a whole number, got '2.5'" train run --phase tokens=1e12,chips=2.5
expect_error "--phase[0].seq: expected a whole number, got '2.7'" train run --phase tokens=1e12,seq=2.7
expect_error "--phase[0].tokens_per_step: needs step_time_s" train run --phase tokens=1e12,tokens_per_step=1e6
# Flags that belong to no phase beside --phase are refused, not dropped.
expect_error "--tokens: give each phase's budget inside its --phase" train run --phase tokens=1e12 --tokens 5e12
expect_error "--flops: give each phase's budget inside its --phase" train run --phase tokens=1e12 --flops 1e24
expect_error "--name: names the single phase" train run --phase tokens=1e12 --name x
expect_error "--tokens-per-step: needs --step-time-s" train run --tokens 1e12 --tokens-per-step 1e6
expect_error "--chips: must be at most 1048576 chips, got 99999999999" train run --tokens 1e12 --chips 99999999999
expect_error "--phase[0].chips: must be at most 1048576 chips" train run --phase tokens=1e12,chips=2e6
expect_error "--phase[0].speed: unknown key" train run --phase tokens=1e12,chips=8,speed=3
expect_error "--phase[0].tokens: expected a number, got 'lots'" train run --phase tokens=lots,chips=8
expect_error "--phase[0]: expected key=value items" train run --phase tokens
expect_error "model: unknown model 'gpt-9'" train run -m gpt-9 --tokens 1e12

expect_error "--flops: give a compute budget" train chinchilla
expect_error "--flops: must be a positive training FLOP budget, got -1" train chinchilla --flops -1
expect_error "--params: must be a positive parameter count, got 0" train chinchilla --params 0
expect_error "--tokens: must be a positive token count, got -3" train chinchilla --params 7e9 --tokens -3
expect_error "--params: --tokens needs --params" train chinchilla --tokens 1e12
expect_error "--tokens: 6 x --params x --tokens must be a finite FLOP count" train chinchilla --params 1e200 --tokens 1e200
expect_error "--params: 1e+200 parameters need 2e+201 tokens by 20x: 6 N D is not a finite FLOP count" train chinchilla --params 1e200
expect_error "--csv: prints one table" train chinchilla --flops 1e24 --params 8e9 --csv
expect_error "--method: unknown Chinchilla method 'kaplan'" train chinchilla --flops 1e24 --method kaplan

expect_error "--serving-tok-per-s: must be a positive serving rate" train equilibrium --serving-tok-per-s 0
# The days typed, not the library's seconds.
expect_error "--window-days: must be a positive number of days, got -1" train equilibrium --window-days -1
expect_error "--window-days: must be a positive number of days, got -1" train plot run --window-days -1
expect_error "--window-days: --serving-tok-per-s x --window-days must be at most 1e+30 serving tokens (far more than any model serves), got 50000000 tok/s x 1e+300 days" train equilibrium --window-days 1e300
expect_error "--rl-trained-fraction: must be a fraction in (0, 1], got 1.5" train equilibrium --rl-trained-fraction 1.5
expect_error "--mfu: must be a fraction in (0, 1], got 2" train equilibrium --mfu 2
expect_error "--pretraining-cost-ratio: must be a positive cost ratio" train equilibrium --pretraining-cost-ratio 0
expect_error "--serving-context: must be a positive number of KV tokens" train equilibrium --serving-context 0
expect_error "--decode-chips: no decode layout of 1 x" train equilibrium --decode-chips 1
expect_error "--decode-batch: must be >= 0" train equilibrium --decode-batch -1
expect_error "--rl-seq: must be >= 2 tokens" train equilibrium --rl-seq 1
expect_error "--method: unknown Chinchilla method" train equilibrium --method nope
# train plot run takes train equilibrium's inputs (each reaches the library: its errors name them)
# and refuses --json with -o (it wrote nothing and said nothing).
expect_error "--rl-seq: must be >= 2 tokens" train plot run --rl-seq 1 --json
expect_error "--serving-context: must be a positive number of KV tokens" train plot run --serving-context 0 --json
expect_error "--decode-batch: must be >= 0" train plot run --decode-batch -1 --json
expect_error "--seq-len: " train plot run --seq 0 --json
expect_error "--output: --json prints the chart data to stdout and writes no file" train plot run --json -o x.html
echo ok
