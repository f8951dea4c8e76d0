# --quiet (issue 30 item 7): text output is the tables alone, no title or notes; --json and
# --csv do not change; prices infer's table prints its quantities in words, its JSON and CSV
# keep the keys.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
cmds=(
  "decode -m llama-3.1-8b -H h100-sxm -b 1,8"
  "prefill -m llama-3.1-8b -H h100-sxm -p 1024"
  "serving sweep -m llama-3.1-8b -H h100-sxm -b 1,64"
  "serving frontier -m llama-3.1-8b -H h100-sxm -b 1,64 --replica-chips 1,2"
  "layouts -m llama-3.1-8b -H h100-sxm -n 2"
  "simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 50 --input 512 --output 32"
  "plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 50 --input 512 --output 32 --budget-chips 1 --ttft-slo-ms 500"
  "train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2"
  "train layouts -m llama-3.1-8b -H h100-sxm -n 8 --limit 3"
  "prices infer gemini-1.5-pro"
  "prices forward -m llama-3.1-8b -H h100-sxm -n 1"
  "prices compare -m gpt-oss-120b -H h100-sxm"
  "validate"
)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
i=0
for c in "${cmds[@]}"; do
  i=$((i + 1))
  printf '%s\n' "$c" > "$tmp/$i.cmd"
  # shellcheck disable=SC2086
  "$CHALK" $c > "$tmp/$i.full" || fail "chalk $c exited $?"
  # shellcheck disable=SC2086
  "$CHALK" $c --quiet > "$tmp/$i.quiet" || fail "chalk $c --quiet exited $?"
done
# -q leaves --json as it was (validate, the slowest, skipped: the same flag path).
for c in "${cmds[@]:0:12}"; do
  # shellcheck disable=SC2086
  [ "$("$CHALK" $c -q --json)" = "$("$CHALK" $c --json)" ] || fail "chalk $c: -q changed the JSON"
done
python3 - "$tmp" "$i" <<'PY' || fail "--quiet"
import sys
for n in range(1, int(sys.argv[2]) + 1):
    d = sys.argv[1]
    cmd = open(f"{d}/{n}.cmd").read().strip()
    full, quiet = open(f"{d}/{n}.full").read().splitlines(), open(f"{d}/{n}.quiet").read().splitlines()
    assert full[0].startswith("chalk "), (cmd, full[0])          # the title the text output opens with ...
    assert quiet and not quiet[0].startswith("chalk "), (cmd, quiet[:2])  # ... is gone: the first line is a table's header
    assert not any(l.startswith("warning ") for l in quiet), (cmd, quiet)
    # Every line of the quiet output is a table line of the full output (a header, a row or a
    # blank line between two tables), and it is shorter.
    if not cmd.startswith("train step"):  # train step's text is prose; --quiet prints its CSV table (below)
        missing = [l for l in quiet if l and l not in full]
        assert not missing, (cmd, missing[:3])
    assert len(quiet) < len(full), (cmd, len(quiet), len(full))
PY
# decode at two batches: the header and one row per batch, nothing else (the note naming the
# columns hidden at 100 columns is a note: README says -q prints the tables alone).
out=$("$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1,8 -q)
[ "$(printf '%s\n' "$out" | wc -l)" -eq 3 ] || fail "decode -q is not the header and 2 rows: $out"
printf '%s\n' "$out" | grep -q "wide shows" && fail "decode -q printed the hidden-columns note: $out"
printf '%s\n' "$out" | head -1 | grep -q "^batch  context  step ms" || fail "decode -q header: $out"
printf '%s\n' "$out" | sed -n 2p | grep -q "^    1     4096" || fail "decode -q first row: $out"
# train step -q: its one-row table (the CSV's), header then the row of its plan.
out=$("$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2 -q --wide)
[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || fail "train step -q is not one header and one row: $out"
printf '%s\n' "$out" | sed -n 2p | grep -q "DP8 TP1 PP1, ZeRO-2, mb 1, recompute none" || fail "train step -q row: $out"
# Words for people, keys for programs: prices infer's quantity column.
out=$("$CHALK" prices infer gemini-1.5-pro -q)
printf '%s\n' "$out" | grep -q "KV bytes per token" || fail "prices infer: no 'KV bytes per token' in $out"
printf '%s\n' "$out" | grep -q "kv_bytes_per_token\|_ratio\|_tokens\b" && fail "prices infer's table prints keys: $out"
"$CHALK" prices infer gemini-1.5-pro --csv | grep -q "^a,,kv_bytes_per_token,2604" || fail "prices infer --csv lost the key"
"$CHALK" prices infer gemini-1.5-pro --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert ('a', 'kv_bytes_per_token') in [(r['inference'], r['quantity']) for r in j['rows']], j['rows'][:3]
assert j['columns'][:3] == ['inference', 'subject', 'quantity'], j['columns']
" || fail "prices infer --json lost the key"
echo "quiet: all passed"
