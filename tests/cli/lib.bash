# Helpers for CLI tests: source after setting CHALK=<binary>.
# Debian's interpreter, called directly: on machines with pyenv, `python3` on PATH is a shim
# script that costs 0.3-2 s per call on 2 busy cores, and these scripts call it ~100 times.
if [ -x /usr/bin/python3 ]; then python3() { /usr/bin/python3 "$@"; }; fi
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
