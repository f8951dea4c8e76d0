# `chalk web` runs the server binary `chalk-web` beside `chalk` (apps/chalk/web_exec.cc):
# its help passes through, and without chalk-web it fails in one line naming what is missing.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
"$CHALK" web --help | grep -q -- "--allow-remote" || fail "chalk web --help is chalk-web's help"
# chalk itself loads no HTTP, TLS or compression library at start-up (issue 11): ldd lists none.
if command -v ldd >/dev/null; then
  ! ldd "$CHALK" | grep -E -q "httplib|libssl|libcrypto|brotli" || fail "chalk links the web server's libraries"
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp "$CHALK" "$tmp/chalk"
CHALK="$tmp/chalk" expect_error "web: cannot start the server binary $tmp/chalk-web" web --port 0
# Review 6 L1: --help still answers without the server, exit 0, saying what is missing.
h=$("$tmp/chalk" web --help) || fail "chalk web --help without chalk-web exited $?"
printf '%s\n' "$h" | grep -q "^Usage: chalk web" || fail "chalk web --help without chalk-web: no usage: $h"
printf '%s\n' "$h" | grep -qF "chalk-web's, which is not beside chalk ($tmp/chalk-web)" || fail "chalk web --help: does not say chalk-web is missing: $h"
echo "web_exec: all passed"
