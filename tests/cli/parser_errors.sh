# Parser faults found by fuzzing and by boundary values (issue 12): each is exit 2 and one
# line naming the file and the field (or the flag), never exit 3, a crash, inf or nan.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
R="$SRC/tests/fuzz/regressions"

# JSON numbers beyond a double, in every kind of file: was an uncaught exception (exit 3).
expect_error "number-out-of-range-1e400.json: hidden_size: number out of range" decode --model "$R/hf_config/number-out-of-range-1e400.json"
expect_error "number-out-of-range-1e400.json: layers[0].count: number out of range" decode --model "$R/native_model/number-out-of-range-1e400.json"
expect_error "number-out-of-range-1e400.json: chip.peak_tflop_per_s.bf16: number out of range" decode --hardware "$R/hardware/number-out-of-range-1e400.json"
expect_error "number-out-of-range-1e400.json: output_usd_per_mtok: number out of range" prices show "$R/price_sheet/number-out-of-range-1e400.json"
# 140 KB of nesting: was a stack overflow (the message dumped the value).
expect_error "deep-nesting-140kb.json: hidden_size: JSON nested deeper than 64 levels" decode --model "$R/hf_config/deep-nesting-140kb.json"
# 2^63-1 in head_dim: was a negative KV time and exit 0.
expect_error "head-dim-int64-max.json: head_dim: must be in 1..1048576, got 9223372036854775807" decode --model "$R/hf_config/head-dim-int64-max.json"
expect_error "head-dim-int64-max.json: layers[0].attention.head_dim: must be in 1..1048576" decode --model "$R/native_model/head-dim-int64-max.json"
# hidden_size 4095 over 32 heads, no head_dim: was head_dim 127 (truncated) and exit 0.
sed -e 's/"hidden_size": 4096/"hidden_size": 4095/' -e 's/, "head_dim": 9223372036854775807//' "$R/hf_config/head-dim-int64-max.json" > "$tmp/width-4095.json"
expect_error "width-4095.json: head_dim: missing, and hidden_size 4095 is not a multiple of num_attention_heads 32" decode --model "$tmp/width-4095.json"
# rope_factor 1e300: was "got -9223372036854775808" blaming max_position_embeddings.
expect_error "rope-factor-1e300.json: rope_factor: original_seq_len x rope_factor must be a context of 1..1073741824 tokens" \
  decode --model "$R/hf_config/deepseek-inference-rope-factor-1e300.json"
# Values infinite after unit conversion: every column showed inf.
expect_error "hbm-gb-1e308-infinite-bytes.json: chip.hbm_gb: must be in [1e-06, 1e+06], got inf" decode --hardware "$R/hardware/hbm-gb-1e308-infinite-bytes.json"
# Silently accepted before: negative window and dense-layer count, a tier at the base price,
# a model whose every layer shares KV.
expect_error "sliding_window: must be in 0..1073741824, got -4096" decode --model "$R/hf_config/negative-sliding-window.json"
expect_error "first_k_dense_replace: must be in 0..61, got -3" decode --model "$R/hf_config/negative-first-k-dense-replace.json"
expect_error "long_context[0].input_usd_per_mtok: a long-context tier must price input above the tier below (1.25), got 1.25" \
  prices show "$R/price_sheet/long-context-tier-at-base.json"
expect_error "layers[0].attention.shares_kv_with_previous: the first layer has no previous layer" decode --model "$R/native_model/every-layer-shares-kv.json"

# prices infer --active-params 1e308 printed nan; --base-batch 2^63-1 was blamed on --batch.
expect_error "--active-params: must be positive and at most 1e+15" prices infer gemini-1.5-pro --active-params 1e308
expect_error "--base-batch: must be in 0..16777216" prices infer gemini-1.5-pro --base-batch 9223372036854775807
"$CHALK" prices infer gemini-1.5-pro --active-params 1e15 --json | python3 -c "
import json, math, sys
def walk(v):
    if isinstance(v, dict): [walk(x) for x in v.values()]
    elif isinstance(v, list): [walk(x) for x in v]
    else: assert v is not None and not (isinstance(v, float) and not math.isfinite(v)), v
walk(json.load(sys.stdin))
" || fail "prices infer --active-params 1e15 printed nan, inf or null"
# prices show --json wrote null for tiny prices; the sheet it writes reads back.
"$CHALK" prices show "$R/price_sheet/tiny-price-wrote-null.json" --json | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['sheet'], indent=2))" > "$tmp/tiny.json" || fail "prices show tiny exited $?"
grep -q null "$tmp/tiny.json" && fail "prices show --json wrote null: $(cat "$tmp/tiny.json")"
grep -q '"input_usd_per_mtok": 1e-300' "$tmp/tiny.json" || fail "tiny price not kept: $(cat "$tmp/tiny.json")"
expect_ok prices show "$tmp/tiny.json"

# One chip cap, 1,048,576, in help and in every command.
"$CHALK" decode --help | grep -q "1..1048576" || fail "decode --help does not state the chip cap"
expect_ok decode -m llama-3.1-8b -H h100-sxm --chips 1048576
expect_error "--chips: Value 1048577 not in range 1 to 1048576" decode --chips 1048577
expect_error "--replica-chips: must be in 1..1048576, got 1048577" serving frontier -m llama-3.1-8b -H h100-sxm --replica-chips 1048577

# Numbers parsed strictly, in lists and in every numeric flag: "8k" is not 8.
expect_error "--context: expected an integer, got '8k'" decode --context 8k
expect_error "--batch: expected an integer, got '+8'" decode --batch +8
expect_error "--batch: expected an integer, got '8k'" decode --batch 1:8k
expect_error "--chips: expected an integer, got '0x10'" decode --chips 0x10
expect_error "--price-usd-per-chip-hour: expected a finite number, got 'inf'" decode --price-usd-per-chip-hour inf
expect_error "--matmul-efficiency: expected a finite number, got 'nan'" decode --matmul-efficiency nan
expect_error "--speed-multiple: expected a finite number, got '2x'" serving modes -m llama-3.1-8b -H h100-sxm --speed-multiple 2x
expect_error "--active-params" prices infer gemini-1.5-pro --active-params 0x1p3
# The same rule for a sheet given as flags: the tier's multipliers raise the price.
expect_error "--long-context-input-multiplier: must be above 1" \
  prices infer --input-usd-per-mtok 1 --output-usd-per-mtok 4 --long-context-threshold-tokens 128000 --long-context-input-multiplier 1
expect_error "--long-context-output-multiplier: must be at least 1" \
  prices infer --input-usd-per-mtok 1 --output-usd-per-mtok 4 --long-context-threshold-tokens 128000 --long-context-output-multiplier 0.5
# Leading zeros are decimal (found by fuzz_cli_lists): CLI11 alone read "010" as octal 8.
"$CHALK" decode -m llama-3.1-8b -H h100-sxm --chips 010 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['assumptions']['chips'] == 10, j['assumptions']
" || fail "--chips 010 is not 10 chips"
