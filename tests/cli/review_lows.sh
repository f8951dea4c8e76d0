# The new-user review's low-severity findings (issue 30, "Still open from the review"): each
# fixed behaviour, checked on the command a newcomer types.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
# L2: a table's figures from 100,000 up read 289B style. One H100 offered 1,000 req/s of
# 8,000-token prompts queues for minutes: TTFT p50 near 292,000 ms prints as 292.2K.
sim=$("$CHALK" simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 1000 --requests 3000 --input 8000 --output 100 --quiet) \
  || fail "simulate exited $?"
printf '%s\n' "$sim" | grep -qE "^aggregated +1 +[0-9.]+K +[0-9.]+K " || fail "simulate: TTFT not in K style: $sim"
if printf '%s\n' "$sim" | grep -qE "[0-9]{6,}"; then fail "simulate: a 6-digit figure: $sim"; fi
# L2: prices list's long-context step (Claude Sonnet 4's 200,000 tokens) reads 200K.
"$CHALK" prices list | grep -E "^ +claude-sonnet-4 " | grep -q " 200K$" || fail "prices list: step not as 200K"
if "$CHALK" prices list | grep -q "200000"; then fail "prices list: 200000 printed raw"; fi
# L2: an assumed speed of 1e12 tok/s reads 1.000T, never 1000000000000.
cmp=$("$CHALK" prices compare -m deepseek-v3 --speed 1e12) || fail "prices compare --speed 1e12 exited $?"
printf '%s\n' "$cmp" | grep -q "(none stated: 1.000T tok/s assumed, --speed)" || fail "prices compare: the assumed speed line"
printf '%s\n' "$cmp" | grep -qE "^ DeepSeek +1.000T assumed " || fail "prices compare: the assumed speed column"
if printf '%s\n' "$cmp" | grep -q "1000000000000"; then fail "prices compare: 1e12 printed raw"; fi
# L3: step's memory reserve is the 0.1 it was given, not 1 - (1 - 0.1) = 0.09999999999999998.
"$CHALK" step -m llama-3.1-8b -H h100-sxm --decode 1024x32 --json | python3 -c "
import json, sys; a = json.load(sys.stdin)['assumptions']; assert a['memory_reserve_fraction'] == 0.1, a['memory_reserve_fraction']" \
  || fail "step: memory_reserve_fraction not 0.1"
# L6: validate's wrapped lines keep an indent under their item: an item starts at column 2
# ("  POPE-1 (+16% ..."), its labels at 4 ("    layout: ..."); a continuation sits four
# further in, so no line of the section starts at 2 or 4 unless it is an item or a label.
"$CHALK" validate | awk '/^Inputs, layout and assumptions/{f=1; next} /^Rows not predicted/{f=0} f && NF' | python3 -c "
import re, sys
bad = [l for l in sys.stdin.read().splitlines()
       if (re.match(r'^  \S', l) and not re.match(r'^  [A-Za-z0-9_.-]+ \(', l))
       or (re.match(r'^    \S', l) and not re.match(r'^    (layout|assumed|note): ', l))]
assert not bad, bad[:3]" || fail "validate: a wrapped line lost its indent"
# L9: 405B bf16 (811 GB) on 8 H100: -n 16 crosses the 8-chip NVLink domain, so the error says
# so and names the pipeline that keeps each stage in one; FP8 weights (405 GB) fit the 8.
# The flag is named with the commands that take it (review 2 H1).
expect_error "(-n 16), beyond the 8-chip scale-up domain: a pipeline of 2 stages keeps each within one (--pp 2 of decode, prefill, prices forward, serving sweep and simulate); or --weights fp8 holds them on these 8 chips" \
  decode -m llama-3.1-405b -H h100-sxm -n 8
# L9: the smallest L4 replica of 405B bf16 is 64 cards, TP64 over eight 8-card servers. L4
# states no scale-out network, so the warning says the collectives are priced at the
# in-server link, a lower bound, and names no --pp (none can be priced: review 4 M8).
"$CHALK" decode -m llama-3.1-405b -H l4 -b 1 --json | python3 -c "
import json, sys; w = json.load(sys.stdin)['warnings']
assert any('64 chips span 8 servers of 8, and l4 states no scale-out network' in x and 'lower bound' in x for x in w), w
assert not any('--pp' in x for x in w), w" \
  || fail "decode on 64 L4: no warning that its collectives are priced at the in-server link"
# L3: `assumptions` is {} in models and hardware (catalogs) and plan (a deployment per
# candidate), and docs/output-schema.md says why for each.
for c in models hardware; do
  "$CHALK" $c --json | python3 -c "import json, sys; assert json.load(sys.stdin)['assumptions'] == {}" || fail "$c: assumptions not {}"
done
grep -E '^\| `assumptions` ' "$SRC/docs/output-schema.md" | grep -q '`models` and `hardware` (catalogs' || fail "output-schema.md: why models' assumptions are {}"
grep -E '^\| `assumptions` ' "$SRC/docs/output-schema.md" | grep -q '`plan` (every candidate is a different deployment' || fail "output-schema.md: why plan's assumptions are {}"
echo "review_lows: all passed"
