# Inputs that once hung chalk or gave silent zeros (issue 28): files that never end, a gamma
# cv whose square overflows, arrivals beyond the simulation clock's resolution, and error
# lines that quoted their input whole. Each is a one-line error with exit 2, or a result.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(-m llama-3.1-8b -H h100-sxm -n 1)
# bounded: a hang fails the test after 30 s instead of stalling ctest
run() { timeout 30 "$CHALK" "$@"; }
expect_bounded_error() {
  local want="$1"; shift
  local err rc
  err=$(run "$@" 2>&1 >/dev/null); rc=$?
  [ "$rc" -eq 2 ] || fail "chalk $* exited $rc (124 = hung), expected 2 (stderr: ${err:0:300})"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "chalk $*: error is not one line"
  [ "${#err}" -le 1100 ] || fail "chalk $*: error line is ${#err} bytes"
  case "$err" in *"$want"*) ;; *) fail "chalk $*: stderr '${err:0:300}' lacks '$want'";; esac
}

# Files that never end, or block on open: refused before they are read.
mkfifo "$tmp/fifo"
expect_bounded_error "$tmp/fifo: is not a regular file" simulate "${base[@]}" --trace "$tmp/fifo"
expect_bounded_error "/dev/zero: is not a regular file" simulate "${base[@]}" --trace /dev/zero
expect_bounded_error "/dev/urandom: is not a regular file" validate /dev/urandom
expect_bounded_error "is not a regular file" decode -m "$tmp/fifo" -H h100-sxm
expect_bounded_error "is not a regular file" decode -m llama-3.1-8b -H /dev/zero

# A 2 MB header line: the error quotes 60 bytes of it and counts the rest.
{ head -c 2000000 /dev/zero | tr '\0' 'x'; printf '\n0,1,1\n'; } > "$tmp/wide.csv"
expect_bounded_error "$tmp/wide.csv: line 1: expected the header 'arrival_s,input_tokens,output_tokens', got 'xxxxxxxxxx" simulate "${base[@]}" --trace "$tmp/wide.csv"
expect_bounded_error "... (2000000 bytes)" simulate "${base[@]}" --trace "$tmp/wide.csv"

# Epoch microseconds read as seconds: refused, not TTFT 0.
printf 'arrival_s,input_tokens,output_tokens\n1733443200000000,100,10\n1733443200500000,100,10\n' > "$tmp/epoch_us.csv"
expect_bounded_error "line 2: arrival_s: 1733443200000000 s is beyond the simulation clock's reach" simulate "${base[@]}" --trace "$tmp/epoch_us.csv"
# An arrival at 1e308 once reported 10^13 output tokens/s per chip.
printf 'arrival_s,input_tokens,output_tokens\n0,100,10\n1e308,100,10\n' > "$tmp/far.csv"
expect_bounded_error "line 3: arrival_s: 1e308 s is beyond" simulate "${base[@]}" --trace "$tmp/far.csv"
# A rate so low the arrivals pass the clock's reach.
expect_bounded_error "rate: of " simulate "${base[@]}" --rate 1e-300 --requests 10
# gamma arrivals with cv 1e-155 (1/cv^2 overflows) once never returned: now clockwork arrivals.
out=$(run simulate "${base[@]}" --arrivals gamma --cv 1e-155 --rate 2 --requests 40 --input 512 --output 16 --json) \
  || fail "simulate --arrivals gamma --cv 1e-155 exited $? (124 = hung)"
printf '%s' "$out" | python3 -c '
import json, sys, math
r = json.load(sys.stdin)["rows"][0]
assert r["finished"] == 40, r
for k in ("ttft_p50_ms", "tpot_p50_ms"):
    assert math.isfinite(r[k]) and r[k] > 0, (k, r[k])
' || fail "gamma cv 1e-155: results are not 40 finished requests with positive TTFT and TPOT"
echo "input limits: ok"
