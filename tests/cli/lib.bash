# Helpers for CLI tests: source after setting CHALK=<binary>.
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_error <expected-substring> <args...>: exit status 2, one-line stderr naming the field.
expect_error() {
  local want="$1"; shift
  local err rc
  err=$("$CHALK" "$@" 2>&1 >/dev/null); rc=$?
  [ "$rc" -eq 2 ] || fail "chalk $* exited $rc, expected 2 (stderr: $err)"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "chalk $*: error is not one line: $err"
  case "$err" in "chalk: error: "*"$want"*) ;; *) fail "chalk $*: stderr '$err' lacks '$want'";; esac
}
# expect_ok <args...>: exit status 0.
expect_ok() { "$CHALK" "$@" >/dev/null 2>&1 || fail "chalk $* exited $?"; }
