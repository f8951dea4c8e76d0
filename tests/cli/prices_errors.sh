# Bad price sheets and bad `chalk prices` flags: exit status 2 and a one-line error naming the field.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Edits a copy of a built-in sheet: edit <name> <python statement on c> -> $tmp/<name>.json
edit() {
  python3 -c "import json; c=json.load(open('$SRC/data/prices/gemini-1.5-pro.json')); $2; json.dump(c, open('$tmp/$1.json','w'))"
}

expect_error "sheet: unknown price sheet 'gemini-9'" prices show gemini-9
expect_error "cannot read file" prices show "$tmp/missing.json"
echo '{"format": "chalk-prices/1", "name": ' > "$tmp/bad.json"
expect_error "malformed JSON" prices show "$tmp/bad.json"
edit nooutput "del c['output_usd_per_mtok']"
expect_error "nooutput.json: output_usd_per_mtok: missing required field" prices show "$tmp/nooutput.json"
edit nosource "del c['source']"
expect_error "nosource.json: source: missing required field" prices infer "$tmp/nosource.json"
edit negative "c['input_usd_per_mtok'] = -1.25"
expect_error "negative.json: input_usd_per_mtok: must be a positive price in USD per 1M tokens, got -1.25" prices show "$tmp/negative.json"
edit negread "c['cache']['read_usd_per_mtok'] = -0.3"
expect_error "cache.read_usd_per_mtok: must be a price >= 0" prices infer "$tmp/negread.json"
edit zero "c['long_context'][0]['threshold_tokens'] = 0"
expect_error "zero.json: long_context[0].threshold_tokens: must be in 1..1073741824, got 0" prices infer "$tmp/zero.json"
edit negthr "c['long_context'][0]['threshold_tokens'] = -128000"
expect_error "long_context[0].threshold_tokens: must be in 1..1073741824, got -128000" prices show "$tmp/negthr.json"
edit typo "c['inptu_usd_per_mtok'] = c.pop('input_usd_per_mtok')"
expect_error "typo.json: inptu_usd_per_mtok: unknown field" prices show "$tmp/typo.json"
edit nested "c['cache']['reads_usd_per_mtok'] = 0.3"
expect_error "nested.json: cache.reads_usd_per_mtok: unknown field" prices show "$tmp/nested.json"
edit format "c['format'] = 'chalk-prices/2'"
expect_error "format: unknown format 'chalk-prices/2'" prices show "$tmp/format.json"
edit tier "c['service_tiers'] = [{'name': 'turbo', 'multiplier': 2}]"
expect_error "service_tiers[0].name: unknown service tier 'turbo'" prices show "$tmp/tier.json"

# Prices and assumptions given as flags.
expect_error "--output-usd-per-mtok: required without a sheet NAME" prices infer --input-usd-per-mtok 1
expect_error "--input-usd-per-mtok: must be a positive number, got -1" prices infer --input-usd-per-mtok -1 --output-usd-per-mtok 4
expect_error "--long-context-threshold-tokens: must be a positive number of prompt tokens, got 0" \
  prices infer --input-usd-per-mtok 1 --output-usd-per-mtok 4 --long-context-threshold-tokens 0
expect_error "--long-context-threshold-tokens: required with a long-context multiplier" \
  prices infer --input-usd-per-mtok 1 --output-usd-per-mtok 4 --long-context-input-multiplier 2
expect_error "--batch-multiplier: must be in (0, 1]" prices infer gpt-5 --batch-multiplier 2
expect_error "--active-params: needs low <= value <= high" prices infer gemini-1.5-pro --active-params 60e9:50e9:100e9
expect_error "--active-params: expected VALUE or LOW:VALUE:HIGH" prices infer gemini-1.5-pro --active-params lots
expect_error "--flops-per-byte: must be positive" prices infer gemini-1.5-pro --flops-per-byte 0
expect_error "--attention-flops-per-kv-byte: must stay below" prices infer gemini-1.5-pro --attention-flops-per-kv-byte 400
expect_error "--step-budget-ms: must be in (0, 1e9]" prices infer gemini-1.5-pro --step-budget-ms -5
expect_error "--base-batch: must be in 0..16777216" prices infer claude-opus-4.6 --base-batch -1
expect_error "unknown model 'llama-9'" prices infer gemini-1.5-pro --model llama-9
expect_error "--price-usd-per-chip-hour: gb300-nvl72 has no public price" prices forward --hardware gb300-nvl72
expect_error "--utilization: must be a fraction in (0, 1], got 0" prices forward --utilization 0
expect_error "--margin: must be a fraction in [0, 1), got 1" prices forward --margin 1
expect_error "--prompt: must be >= 1" prices forward --prompt 0
expect_error "--prefill-batch: must be >= 0" prices forward --prefill-batch -1
# 673 GB of DeepSeek-V3 weights on one 80 GB H100 cannot run, so it has no price.
expect_error "--chips: 1 x H100 SXM cannot hold deepseek-v3's weights: 673.2 GB of weights per chip as laid out" prices forward -m deepseek-v3 -H h100-sxm -n 1
expect_error "sheet: unknown price sheet 'gpt-9'" prices forward --compare gpt-9
expect_error "A subcommand is required" prices
expect_error "sheet is required" prices show
expect_ok prices list
expect_ok prices show claude-opus-4.6
expect_ok prices infer deepseek-r1
expect_ok prices infer --input-usd-per-mtok 1.25 --output-usd-per-mtok 5 --long-context-threshold-tokens 128000
expect_ok prices forward --model llama-3.1-70b --hardware h100-sxm --compare gpt-4o
expect_ok prices infer --help
expect_ok prices forward --help
echo "prices_errors: all passed"
