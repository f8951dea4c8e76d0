# Text output for people writes big numbers in 289B style and labels in words (issue 30
# items 2 and 3); JSON and CSV keep the numbers and identifiers programs read.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
# train run: 15e12 tokens -> "15.00T" (4 significant digits, the column's); 3.15M tok/s.
run=$("$CHALK" train run --tokens 15e12) || fail "train run exited $?"
printf '%s\n' "$run" | grep -q "15.00T" || fail "train run: tokens not as 15.00T"
if printf '%s\n' "$run" | grep -qE "[0-9]{7,}"; then fail "train run: a number of 7+ digits: $(printf '%s\n' "$run" | grep -E '[0-9]{7,}')"; fi
"$CHALK" train run --tokens 15e12 --csv | grep -q ",15000000000000," || fail "train run --csv keeps the tokens whole"
# scaleup: tpu-ironwood's 9,216-chip domain holds 1,900,339 GB (shown 1.900M) and a model of
# 1,710,305 billion parameters (shown 1710T); no figure of 7+ digits is left without a suffix.
up=$("$CHALK" scaleup) || fail "scaleup exited $?"
if printf '%s\n' "$up" | grep -qE "[0-9]{7,}"; then fail "scaleup: a number of 7+ digits: $(printf '%s\n' "$up" | grep -E '[0-9]{7,}' | head -1)"; fi
printf '%s\n' "$up" | grep -qE "tpu-ironwood .* [0-9.]+T " || fail "scaleup: ironwood's largest model not in T parameters"
# validate: PALM-TRAIN-3 measured 8,404,992 chip-hours -> "8.405M"; the notes say 780B tokens.
val=$("$CHALK" validate) || fail "validate exited $?"
printf '%s\n' "$val" | grep -E "PALM-TRAIN-3 " | grep -q "8.405M" || fail "validate: 8404992 chip-hours not as 8.405M"
printf '%s\n' "$val" | grep -q "note: 780B tokens at the steady step" || fail "validate: the note's tokens not as 780B"
# (a source's commit hash, 71007029fb5b..., is not a number: digits next to hex letters are skipped)
if printf '%s\n' "$val" | grep -qP "(?<![0-9a-f])[0-9]{7,}(?![0-9a-f])"; then fail "validate: a number of 7+ digits: $(printf '%s\n' "$val" | grep -P '(?<![0-9a-f])[0-9]{7,}(?![0-9a-f])' | head -1)"; fi
# train memory: components in words; JSON and CSV keep the identifiers.
mem=$("$CHALK" train memory -m llama-3.1-8b -H h100-sxm --dp 8 --zero 3) || fail "train memory exited $?"
printf '%s\n' "$mem" | grep -q "ZeRO-3 buffers" || fail "train memory: no 'ZeRO-3 buffers' label"
printf '%s\n' "$mem" | grep -q "activation working set" || fail "train memory: no 'activation working set' label"
if printf '%s\n' "$mem" | grep -qE "zero3_buffers|activation_working"; then fail "train memory: snake_case label in the text"; fi
"$CHALK" train memory -m llama-3.1-8b -H h100-sxm --dp 8 --zero 3 --csv | grep -q "^zero3_buffers," || fail "train memory --csv keeps the identifier"
echo "text_numbers: all passed"
# train equilibrium (review 2 L1): the table's tokens, chip-hours and USD in 289B style, not
# 262980000000000, 8634274 and 39199604; --csv keeps them whole.
eq=$("$CHALK" train equilibrium) || fail "train equilibrium exited $?"
if printf '%s\n' "$eq" | grep -E "^ *(serving|RL rollouts|pre-training) " | grep -qP "(?<![.0-9])[0-9]{7,}"; then
  fail "train equilibrium: a table figure of 7+ digits: $(printf '%s\n' "$eq" | grep -E '[0-9]{7,}' | head -1)"
fi
"$CHALK" train equilibrium --csv | grep -qE "^serving,[0-9]{10,}," || fail "train equilibrium --csv lost the whole token count"
# prices infer names its stand-in's chips, then their system (review 2 L8: never "8 x
# gb200-nvl72", eight racks; review 6 L10: not "8 x B200 (GB200), gb200-nvl72").
"$CHALK" prices infer gemini-1.5-pro | grep -E "^stand-in " | grep -qE "^stand-in    deepseek-v3 on 8 B200 \(GB200\) chips of the gb200-nvl72 system \(its chip" ||
  fail "prices infer: stand-in line $("$CHALK" prices infer gemini-1.5-pro | grep -E '^stand-in ')"
