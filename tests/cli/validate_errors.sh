# Bad input to chalk validate: exit status 2 and a one-line error naming the file, line
# and field. A row validate cannot map is not an error: it is listed with its reason.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv="$SRC/data/measurements/measurements.csv"

expect_error "cannot read file" validate "$tmp/missing.csv"
expect_error "is a directory" validate "$tmp"
: > "$tmp/empty.csv"
expect_error "empty.csv: empty file" validate "$tmp/empty.csv"
sed '1s/^id,kind,model,/id,kind,modle,/' "$csv" > "$tmp/header.csv"
expect_error "header.csv: header: column 3 is 'modle', expected 'model'" validate "$tmp/header.csv"
head -1 "$csv" | sed 's/,notes\r\?$//' > "$tmp/short.csv"
expect_error "short.csv: header: missing column 'notes'" validate "$tmp/short.csv"
{ head -1 "$csv"; echo "X-1,decode,PaLM 540B"; } > "$tmp/fields.csv"
expect_error "fields.csv: line 2: expected 21 fields, got 3" validate "$tmp/fields.csv"
{ head -1 "$csv"; sed -n 2p "$csv"; sed -n 2p "$csv"; } > "$tmp/dup.csv"
expect_error "dup.csv: line 3: id: repeated id 'POPE-1'" validate "$tmp/dup.csv"
{ head -1 "$csv"; echo 'X-1,"decode'; } > "$tmp/quote.csv"
expect_error "quote.csv: line 2: unterminated quoted field" validate "$tmp/quote.csv"
expect_error "not expected: --no-such-flag" validate --no-such-flag
expect_error "--json excludes --csv" validate --json --csv

# Unmappable rows are kept, with the reason, and the command succeeds.
{ head -1 "$csv"; sed -n 2p "$csv" | sed 's/^POPE-1,prefill,PaLM 540B,/X-2,prefill,Gopher 280B,/'; sed -n 2p "$csv" | sed 's/^POPE-1,/X-3,/; s/,0\.29,s,/,fast,s,/'; } > "$tmp/odd.csv"
out=$("$CHALK" validate "$tmp/odd.csv") || fail "validate odd.csv exited $?"
case "$out" in *"X-2"*"unmapped"*"model: no built-in model for 'Gopher 280B'"*) ;; *) fail "X-2 not listed with its reason: $out";; esac
case "$out" in *"X-3"*"unmapped"*"value: expected one positive number, got 'fast'"*) ;; *) fail "X-3 not listed with its reason";; esac
expect_ok validate
expect_ok validate --calibration
expect_ok validate "$csv" --csv
echo "validate_errors: all passed"
