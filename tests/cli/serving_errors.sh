# Bad input to every `chalk serving` option: exit status 2 and a one-line error naming the
# option and the value.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Levers, on every subcommand.
for sub in sweep balance window frontier modes plot; do
  expect_error "--draft: must be in 0..64 drafted tokens per step, got -1" serving $sub --draft -1 --acceptance 0.5
  expect_error "--draft: must be in 0..64 drafted tokens per step, got 65" serving $sub --draft 65 --acceptance 0.5
  expect_error "--draft: needs --acceptance" serving $sub -m llama-3.1-8b --draft 2 --drafter none
  expect_error "--acceptance: must be a probability in [0, 1], got 1.5" serving $sub --draft 1 --acceptance 1.5
  expect_error "--acceptance: has no effect without --draft" serving $sub --acceptance 0.8
  expect_error "--sparse-top-k: must be >= 1 tokens read per query, got 0" serving $sub --sparse-top-k 0
  expect_error "--sparse-sqrt: must be a factor c in (0, 1e6]" serving $sub --sparse-sqrt -2
  expect_error "--sparse-sqrt: expected a finite number, got 'inf'" serving $sub --sparse-sqrt inf
  expect_error "--sparse-top-k: give one sparse-attention rule" serving $sub --sparse-top-k 2048 --sparse-sqrt 1
  expect_error "--acceptance" serving $sub --draft 1 --acceptance abc
done
# Batch and context lists.
expect_error "--batch: must be in 1..16777216, got 0" serving sweep --batch 0
expect_error "--batch: expected an integer, got 'x'" serving sweep --batch x
expect_error "--batch: every integer from 1 to 16777216 is more than 1,048,576 values" serving sweep --batch 1,16777216 --every-integer
expect_error "--batch: 262144 batches x 2 contexts is more than 200,000 rows" serving sweep --batch 1,262144 --every-integer --context 1,2
expect_error "--context: must be in 1..1073741824, got -5" serving sweep --context -5
expect_error "--context: expected one integer here, got '1024,2048'" serving balance --context 1024,2048
expect_error "--batch: must be >= 1, got 0" serving balance --batch 0
expect_error "--context: must be in 1..1073741824" serving window --context 99999999999
# Frontier and modes vary chips per replica themselves; plot takes -n for its curves (and,
# without --replica-chips, as the one replica size its frontier prices).
"$CHALK" serving plot --help | grep -q -- "-n,--chips" || fail "serving plot --help lacks -n,--chips"
for sub in frontier modes; do
  "$CHALK" serving $sub --help | grep -q -- "-n,--chips" && fail "serving $sub --help offers --chips"
  expect_error "not expected: 8 --chips" serving $sub --chips 8   # not in their help: --replica-chips instead
  expect_error "--replica-chips: must be in 1..1048576, got 0" serving $sub --replica-chips 0
  expect_error "--context: expected one integer here" serving $sub --context 1,2
done
# The default replica sizes are those an engine runs: DeepSeek-V3 in 72 chips, 7 of them.
expect_error "--batch: 1048576 batches x 7 replica sizes is more than 8,000,000 points" serving frontier --batch 1,1048576 --every-integer
for sub in modes plot; do
  expect_error "--speed-multiple: must be positive, got 0" serving $sub --speed-multiple 0
  expect_error "--speed-multiple: expected a finite number, got 'x'" serving $sub --speed-multiple 2.5,x
  expect_error "--price-multiple: must be positive, got -6" serving $sub --price-multiple -6
  expect_error "--price-multiple: expected a comma list of numbers, got ''" serving $sub --price-multiple ''
  expect_error "--baseline-tok-per-s-per-user: must be positive, got -1" serving $sub --baseline-tok-per-s-per-user -1
  expect_error "--baseline-tok-per-s-per-user: no point reaches 1e+06 tok/s per user; the fastest is 229.8" serving $sub --roofline -m llama-3.1-70b -H h200 --baseline-tok-per-s-per-user 1e6
  expect_error "--baseline-cost-tolerance: must be a fraction in [0, 1), got 2" serving $sub --baseline-cost-tolerance 2
  expect_error "--replica-chips: no replica size fits deepseek-v3" serving $sub -H h200 --replica-chips 1,2
done
# DeepSeek-V3 needs 16 H100s, the domain is 8: frontier, modes and plot price the 16-chip
# replica (EP16 over two domains) that `serving sweep` and `prices forward` price, as every
# serving command defaults to a deployment an operator runs (review 5 M1: they exited 2);
# sizes the user names that hold nothing give one error naming the option that widens them.
for sub in frontier modes plot; do
  "$CHALK" serving $sub -m deepseek-v3 -H h100-sxm --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
rows = j['frontier']['points'] if 'frontier' in j else j['rows']
assert rows and all(r['chips'] == 16 and r.get('pp', 1) == 1 for r in rows), rows[0]
" || fail "serving $sub: DeepSeek-V3 on H100 is not priced on 16 chips"
  expect_error "--replica-chips: no replica size fits deepseek-v3 at 4096 tokens of context on h100-sxm (8 chips: weights" serving $sub -m deepseek-v3 -H h100-sxm --replica-chips 4,8
  [ "$sub" = plot ] || expect_error "not expected: 16 --chips" serving $sub -m deepseek-v3 -H h100-sxm --chips 16  # neither offers --chips
done
expect_error "--csv" serving plot --csv
# Without the chart libraries (scripts/setup's npm ci failed) plot refuses HTML before it
# tries to write; that refusal is tested in serving_outputs.sh.
if "$CHALK" serving plot -m llama-3.1-8b -H h100-sxm -o "$tmp/probe.html" >/dev/null 2>&1; then
  expect_error "--output: cannot write '$tmp/no/such/dir/x.html'" serving plot -m llama-3.1-8b -H h100-sxm -o "$tmp/no/such/dir/x.html"
fi
# The deployment options keep their own errors here too.
expect_error "--kv-dtype: unknown dtype 'fp7'" serving sweep --kv-dtype fp7
expect_error "--weights: unknown dtype 'fp3'" serving frontier --weights fp3
expect_error "unknown model 'llama-9'" serving modes --model llama-9
expect_error "not expected: --no-such-flag" serving sweep --no-such-flag
expect_error "A subcommand is required: sweep, balance, window, frontier, modes, plot (see chalk serving --help)" serving
expect_error "The following argument was not expected: -x (see chalk serving sweep --help)" serving sweep -x
for sub in sweep balance window frontier modes; do expect_ok serving $sub -m llama-3.1-8b -H h100-sxm; done
expect_ok serving plot -m llama-3.1-8b -H h100-sxm --json
expect_error "--context: must be in 1.." serving window -s 0  # no KV: the batch that fills HBM is unbounded
echo "serving_errors: all passed"
