# Text that reads well (issue 30 item 7; review findings M5, M6, L2, L4, L5): at 100 columns
# the tables keep the columns their titles promise, --explain cites docs/formulas.md sections
# that exist, big numbers read in 289B style, `step` numbers its batches "#", counts of one
# are singular. JSON and CSV keep their keys and raw numbers.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
# header <text>: the first line of the table (the line after the first blank line).
header() { printf '%s\n' "$1" | awk 'f && NF { print; exit } !NF { f = 1 }'; }
wide_line() { printf '%s\n' "$1" | awk 'length > 100 { print; exit }'; }

# --- M5: the headline columns at 100 columns ------------------------------------------------
out=$("$CHALK" models) || fail "models exited $?"
h=$(printf '%s\n' "$out" | grep -m1 "^ *model ")
for col in "KV B/token @4096" "GFLOP/token @4096" "arch"; do
  case "$h" in *"$col"*) ;; *) fail "models at 100 columns lacks '$col': $h";; esac
done
[ -z "$(wide_line "$out")" ] || fail "models: a line over 100 columns: $(wide_line "$out")"
# The architecture column is the model_type; the inference-config note moves to the source column.
printf '%s\n' "$out" | grep -q "(DeepSeek" && fail "models: the arch column still carries its note"
# chinchilla-70b: 80 layers x 2 (K, V) x 64 heads x 128 x 2 bytes = 2,621,440 B/token: 2.621M.
printf '%s\n' "$out" | grep -E "^ *chinchilla-70b " | grep -q " 2.6214M " || fail "models: KV bytes not as 2.6214M"
"$CHALK" models deepseek-v3.2-exp --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["rows"][0]
assert r["architecture"] == "deepseek_v3", r["architecture"]
assert "DeepSeek inference config" in r["source"], r["source"]
' || fail "models --json: architecture and source"

out=$("$CHALK" hardware) || fail "hardware exited $?"
h=$(printf '%s\n' "$out" | grep -m1 "^ *system ")
for col in "FLOP/B bf16" "HBM sweep ms" '$/chip-h'; do
  case "$h" in *"$col"*) ;; *) fail "hardware at 100 columns lacks '$col': $h";; esac
done
[ -z "$(wide_line "$out")" ] || fail "hardware: a line over 100 columns"

out=$("$CHALK" serving frontier -m llama-3.1-70b -H h200) || fail "serving frontier exited $?"
h=$(printf '%s\n' "$out" | grep -m1 "^ *chips ")
for col in '$/Mtok' "tok/s/chip"; do
  case "$h" in *"$col"*) ;; *) fail "serving frontier at 100 columns lacks '$col': $h";; esac
done
[ -z "$(wide_line "$out")" ] || fail "serving frontier: a line over 100 columns"
# Replicas of 8 chips only: every row has attention TP8, FFN TP8, said once above the table,
# and the column gives way.
out=$("$CHALK" serving frontier -m llama-3.1-70b -H h200 --replica-chips 8) || fail "serving frontier --replica-chips 8 exited $?"
h=$(printf '%s\n' "$out" | grep -m1 "^ *chips ")
case "$h" in *layout*) fail "serving frontier: the repeated layout column is still shown: $h";; esac
case "$h" in *'$/Mtok'*) ;; *) fail "serving frontier --replica-chips 8 lacks \$/Mtok: $h";; esac
printf '%s\n' "$out" | grep -q "^layout      attention TP8, FFN TP8 (derived) (every row)" || fail "serving frontier: no layout line above the table"
# --wide and JSON keep the layout of each row.
"$CHALK" serving frontier -m llama-3.1-70b -H h200 --wide | grep -m1 "^ *chips " | grep -q layout || fail "serving frontier --wide lost the layout column"

# --- M6: --explain cites sections of docs/formulas.md that exist -----------------------------
ex=""
for c in "decode -m llama-3.1-70b -H h100-sxm -b 64 --explain" "prefill -m llama-3.1-8b -H h100-sxm -p 1024 --explain" \
         "decode -m deepseek-v3 -H h200 -n 8 -b 64 --explain" "serving sweep -m llama-3.1-8b -H h100-sxm -b 1,64 --explain"; do
  # shellcheck disable=SC2086
  o=$("$CHALK" $c) || fail "chalk $c exited $?"
  ex="$ex$o"$'\n'
done
if printf '%s\n' "$ex" | grep -q "DESIGN.md"; then fail "--explain cites DESIGN.md: $(printf '%s\n' "$ex" | grep -m1 DESIGN.md)"; fi
printf '%s\n' "$ex" | grep -q "docs/formulas.md 3 (decode roofline)" || fail "--explain does not cite docs/formulas.md 3"
printf '%s\n' "$ex" | grep -q "docs/formulas.md 4 (prefill roofline)" || fail "--explain does not cite docs/formulas.md 4"
# Each numbered section cited is a heading of docs/formulas.md ("## 3. ", "### 1.2 ").
for n in $(printf '%s\n' "$ex" | grep -oE "docs/formulas.md [0-9]+(\.[0-9]+)?" | awk '{print $2}' | sort -u); do
  grep -qE "^##+ ${n//./\\.}[. ]" "$SRC/docs/formulas.md" || fail "--explain cites docs/formulas.md $n, which has no such heading"
done
if grep -rn "DESIGN.md" "$SRC"/src/engine/explain*.cc "$SRC/src/serving/explain_serving.cc" "$SRC"/src/validate/*.cc \
     "$SRC/apps/chalk/cmd_prices_forward.cc" >/dev/null; then fail "a source still cites DESIGN.md"; fi

# --- L2: numbers in the project's style ------------------------------------------------------
# 8 x 128 x 320 B = 327,680 bytes of KV per token on llama-3.1-70b: "327.7K", not 3.277e+05.
printf '%s\n' "$ex" | grep -q "kv_bytes_per_token = 327.7K bytes" || fail "--explain: KV bytes not as 327.7K"
if printf '%s\n' "$ex" | grep -qE "[0-9]e\+[0-9]"; then fail "--explain: e-notation: $(printf '%s\n' "$ex" | grep -m1 -E '[0-9]e\+[0-9]')"; fi
inf=$("$CHALK" prices infer gemini-1.5-pro) || fail "prices infer exited $?"
if printf '%s\n' "$inf" | grep -qE "(^|[^.0-9])[1-9][0-9]{6,}"; then fail "prices infer: a number of 7+ digits: $(printf '%s\n' "$inf" | grep -m1 -E '(^|[^.0-9])[1-9][0-9]{6,}')"; fi
# The price step at 128,000 tokens: "128K" in text; the CSV keeps 128000.
printf '%s\n' "$inf" | grep -q "from the price step at 128K tokens" || fail "prices infer: step threshold not as 128K"
"$CHALK" prices infer gemini-1.5-pro --csv | grep -q ",128000," || fail "prices infer --csv lost the raw threshold"
win=$("$CHALK" serving window -m llama-3.1-8b -H h200) || fail "serving window exited $?"
# 2,000 x 64 = 128,000 tok/s.
printf '%s\n' "$win" | grep -q "2,000 x 64 = 128K tok/s" || fail "serving window: 128000 not as 128K"
ts=$("$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2) || fail "train step exited $?"
printf '%s\n' "$ts" | grep "^throughput" | grep -qE "e\+|[0-9]{6,}" && fail "train step: throughput unformatted: $(printf '%s\n' "$ts" | grep '^throughput')"
sim=$("$CHALK" simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 1e9 --requests 20 --input 64 --output 4) || fail "simulate --rate 1e9 exited $?"
if printf '%s\n' "$sim" | grep -qE "[0-9]{7,} req/s"; then fail "simulate: req/s unformatted: $(printf '%s\n' "$sim" | grep -m1 'req/s')"; fi

# --- L4: step's first column is "#", its key batch_index --------------------------------------
st=$("$CHALK" step -m llama-3.1-8b -H h100-sxm --prefill 512 --decode 32x1024) || fail "step exited $?"
h=$(printf '%s\n' "$st" | grep -m1 "chunks")
[ "$(printf '%s\n' "$h" | awk '{print $1}')" = "#" ] || fail "step: first header is not '#': $h"
"$CHALK" step -m llama-3.1-8b -H h100-sxm --prefill 512 --decode 32x1024 --csv | head -1 | grep -q "^batch_index," || fail "step --csv lost batch_index"

# --- L5: wording --------------------------------------------------------------------------
de=$("$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1) || fail "decode exited $?"
printf '%s\n' "$de" | grep -q "^replica     1 chip: " || fail "decode: not 'replica     1 chip:': $(printf '%s\n' "$de" | grep '^replica')"
all="$de$ts$sim$win$(printf '%s\n' "$st")"
if printf '%s\n' "$all" | grep -qE "(^|[^0-9.])1 chips"; then fail "'1 chips': $(printf '%s\n' "$all" | grep -m1 -E '(^|[^0-9.])1 chips')"; fi
# llama-3.1-8b on one stage: 32 layers + 1 output layer.
printf '%s\n' "$ts" | grep -q "the busiest runs 32 layers + 1 output layer per microbatch" || fail "train step: $(printf '%s\n' "$ts" | grep '^stage')"
lay=$("$CHALK" layouts -m llama-3.1-8b -H gb200-nvl72 -n 8) || fail "layouts exited $?"
printf '%s\n' "$lay" | head -1 | grep -q "8 x B200 (GB200), gb200-nvl72" || fail "layouts title: $(printf '%s\n' "$lay" | head -1)"
printf '%s\n' "$lay" | head -1 | grep -q ") (" && fail "layouts title has a doubled parenthesis"
# prices infer explains every lettered section its table shows.
for l in $(printf '%s\n' "$inf" | awk 'f && NF { print $1 } /^ *inf +subject/ { f = 1 }' | grep -E '^[a-f]$' | sort -u); do
  printf '%s\n' "$inf" | grep -q "^($l) " || fail "prices infer: section ($l) in the table but not explained above it"
done
printf '%s\n' "$inf" | grep -q "^(f) context" || fail "prices infer: no (f) line"
exit 0
