# Bad input to chalk validate: exit status 2 and a one-line error naming the file, line,
# row id and column; with --keep-going the bad rows are listed as unreadable and the
# command succeeds.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv="$SRC/data/measurements/measurements.csv"
h="id,kind,model,hardware,chips,tp,batch,batch_per,context,draft_tokens,metric,value"

expect_error "cannot read file" validate "$tmp/missing.csv"
expect_error "is a directory" validate "$tmp"
: > "$tmp/empty.csv"
expect_error "empty.csv: empty file" validate "$tmp/empty.csv"
sed '1s/^id,kind,model,/id,kind,modle,/' "$csv" > "$tmp/header.csv"
expect_error "header.csv: header: unknown column 'modle' (column 3)" validate "$tmp/header.csv"
{ head -1 "$csv"; echo "X-1,decode,palm-540b"; } > "$tmp/fields.csv"
expect_error "fields.csv: line 2: expected 64 fields, got 3" validate "$tmp/fields.csv"
{ head -1 "$csv"; sed -n 2p "$csv"; sed -n 2p "$csv"; } > "$tmp/dup.csv"
expect_error "dup.csv: line 3: POPE-1: id: repeated id 'POPE-1'" validate "$tmp/dup.csv"
{ head -1 "$csv"; echo 'X-1,"decode'; } > "$tmp/quote.csv"
expect_error "quote.csv: line 2: unterminated quoted field" validate "$tmp/quote.csv"
# A value outside a closed vocabulary, a missing input, a name chalk does not know.
{ echo "$h"; echo "X-1,decode,llama-3.1-70b,h100-sxm,8,8,64,run,2048,0,tokens/s,20"; } > "$tmp/vocab.csv"
expect_error "vocab.csv: line 2: X-1: metric: 'tokens/s' is not one of" validate "$tmp/vocab.csv"
{ echo "$h"; echo "X-2,decode,llama-3.1-70b,h100-sxm,8,8,64,run,,0,step_ms,20"; } > "$tmp/missing-input.csv"
expect_error "missing-input.csv: line 2: X-2: context: missing; a decode row states the KV tokens of its step (context), or input_tokens" validate "$tmp/missing-input.csv"
{ echo "$h"; echo "X-3,decode,Llama 3.3 70B,h100-sxm,8,8,64,run,2048,0,step_ms,20"; } > "$tmp/model.csv"
expect_error "model.csv: line 2: X-3: model: 'Llama 3.3 70B' is neither a built-in model" validate "$tmp/model.csv"
# NCCL's all-to-all dispatcher is modelled for training; a serving row that states it is refused.
{ echo "id,kind,model,hardware,chips,tp,batch,batch_per,context,draft_tokens,ep_dispatcher,metric,value"; echo "X-4,decode,deepseek-v3,h100-sxm,16,8,64,run,2048,0,alltoall,step_ms,20"; } > "$tmp/dispatcher.csv"
expect_error "dispatcher.csv: line 2: X-4: ep_dispatcher: alltoall is modelled for training rows" validate "$tmp/dispatcher.csv"
# Training rows: degrees that do not multiply to the chips name the row and the column; a
# stated plan the training module refuses is listed as rejected with check_plan's reason.
th="id,kind,model,hardware,chips,tp,pp,dp,batch,batch_per,input_tokens,metric,value"
{ echo "$th"; echo "T-1,training,llama-3.1-8b,h100-sxm,16,1,1,8,64,run,4096,step_s,1"; } > "$tmp/train-chips.csv"
expect_error "train-chips.csv: line 2: T-1: chips: the stated degrees do not multiply to 16 chips: tp x pp x cp x dp = 1 x 1 x 1 x 8 = 8" validate "$tmp/train-chips.csv"
{ echo "$th"; echo "T-2,training,llama-3.1-8b,h100-sxm,24,3,1,8,64,run,4096,step_s,1"; } > "$tmp/train-tp.csv"
out=$("$CHALK" validate "$tmp/train-tp.csv" --wide) || fail "a rejected training plan is a listed row, not an error"
printf '%s\n' "$out" | grep -q "T-2 .*rejected .*tp: 3 does not divide the 32 query heads" || fail "rejected training row: $out"
# QA: with --keep-going every bad row names the file, the line, the id, the CSV column and
# the bad value: 8 x 4 x 4 = 128 chips stated for 64; a model chalk does not know; a batch
# (the CSV's column, not the plan's global_batch) of fewer sequences than dp x microbatch =
# 8 x 1 (one that merely does not divide runs the nearest plan: validate_defaults_test.cc).
th2="id,kind,model,hardware,chips,tp,pp,dp,microbatch,batch,batch_per,input_tokens,metric,value"
{ echo "$th2"; echo "BAD-DIV,training,llama-3.1-70b,h100-sxm,64,8,4,4,1,256,run,4096,step_s,1";
  echo "BAD-MODEL,training,llama-9-70b,h100-sxm,8,8,1,1,1,64,run,4096,step_s,1";
  echo "BAD-BATCH,training,llama-3.1-8b,h100-sxm,8,1,1,8,1,4,run,4096,step_s,1"; } > "$tmp/kg.csv"
out=$("$CHALK" validate --keep-going "$tmp/kg.csv" --wide) || fail "validate --keep-going kg.csv exited $?"
case "$out" in *"kg.csv: line 2: BAD-DIV: chips: the stated degrees do not multiply to 64 chips: tp x pp x cp x dp = 8 x 4 x 1 x 4 = 128"*) ;;
  *) fail "BAD-DIV lacks the file, line or product: $out";; esac
case "$out" in *"kg.csv: line 3: BAD-MODEL: model: 'llama-9-70b' is neither"*) ;; *) fail "BAD-MODEL lacks the file and line: $out";; esac
case "$out" in *"BAD-BATCH"*"unreadable"*"kg.csv: line 4: BAD-BATCH: batch: 4 sequences per step are fewer than one microbatch of 1 on each of dp 8 ranks (= 8)"*) ;;
  *) fail "BAD-BATCH does not name the batch column: $out";; esac
case "$out" in *global_batch*) fail "a reason names the plan's internal field global_batch: $out";; esac
expect_error "kg.csv: line 2: BAD-DIV: chips: the stated degrees do not multiply to 64 chips" validate "$tmp/kg.csv"
expect_error "not expected: --no-such-flag" validate --no-such-flag
expect_error "--json excludes --csv" validate --json --csv

# --keep-going: the bad rows are listed with their reasons, the good one predicted.
{ echo "$h"; echo "OK-1,decode,llama-3.1-70b,h100-sxm,8,8,64,run,2048,0,step_ms,20";
  echo "X-2,decode,gopher-280b,h100-sxm,8,8,64,run,2048,0,step_ms,20";
  echo "X-3,decode,llama-3.1-70b,h100-sxm,8,8,64,run,2048,0,step_ms,fast"; } > "$tmp/odd.csv"
expect_error "odd.csv: line 4: X-3: value: expected a number, got 'fast'" validate "$tmp/odd.csv"
out=$("$CHALK" validate --keep-going "$tmp/odd.csv" --wide) || fail "validate --keep-going odd.csv exited $?"
case "$out" in *"X-2"*"unreadable"*"X-2: model: 'gopher-280b' is neither a built-in model"*) ;; *) fail "X-2 not listed with its reason: $out";; esac
case "$out" in *"X-3"*"unreadable"*"line 4: X-3: value: expected a number, got 'fast'"*) ;; *) fail "X-3 not listed with its reason: $out";; esac
case "$out" in *"OK-1"*"predicted"*) ;; *) fail "OK-1 not predicted: $out";; esac
# A relative model path is read from the CSV's folder.
mkdir "$tmp/sub"
cp "$SRC/data/models/hf/llama-3.1-8b.json" "$tmp/sub/my-model.json"
{ echo "$h"; echo "P-1,decode,my-model.json,h100-sxm,1,1,1,run,2048,0,step_ms,5"; } > "$tmp/sub/path.csv"
out=$("$CHALK" validate "$tmp/sub/path.csv" --wide) || fail "validate with a relative model path exited $?"
case "$out" in *"P-1"*"predicted"*) ;; *) fail "P-1 not predicted: $out";; esac
# What decode flags, a row carries (QA): a layout that does not divide and a batch beyond
# --batch's range are the row's errors (file, line, id, column; exit 2); a row that does not
# fit in HBM is predicted with a note saying so, and an Excel BOM is not part of `id`.
hv="id,kind,model,hardware,chips,tp,batch,batch_per,context,metric,value"
printf '%s\n%s\n' "$hv" "TP8,decode,llama-3.1-70b,h100-sxm,4,8,1,replica,1024,step_ms,50" > "$tmp/tp8.csv"
expect_error "tp8.csv: line 2: TP8: tp: must be a positive divisor of the 4 chips, got 8" validate "$tmp/tp8.csv"
printf '%s\n%s\n' "$hv" "HUGE,decode,llama-3.1-70b,h100-sxm,4,4,99999999999,replica,1024,step_ms,50" > "$tmp/huge.csv"
expect_error "huge.csv: line 2: HUGE: batch: expected at most 16777216 sequences per replica" validate "$tmp/huge.csv"
printf '%s\n%s\n' "$hv" "HEX,decode,llama-3.1-70b,h100-sxm,4,4,64,replica,1024,step_ms,0x1e" > "$tmp/hex.csv"
expect_error "hex.csv: line 2: HEX: value: expected a number, got '0x1e' (plain decimal only" validate "$tmp/hex.csv"
printf '\xef\xbb\xbf%s\n%s\n' "$hv" "ONE,decode,llama-3.1-70b,h100-sxm,1,1,1,replica,1024,step_ms,50" > "$tmp/bom.csv"
out=$("$CHALK" validate "$tmp/bom.csv" --wide) || fail "validate of a file with a BOM exited $?"
case "$out" in *"ONE"*"predicted"*"does not fit: 141 GB of weights at batch 1"*) ;; *) fail "ONE not predicted with its fit note: $out";; esac
expect_ok validate
expect_ok validate --calibration
expect_ok validate "$csv" --csv
echo "validate_errors: all passed"
