# `chalk web`'s own flags (issue 18): loopback unless --allow-remote, which warns; ports
# out of range and ports in use are one-line errors. The API's errors: tests/web/api_test.mjs.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
expect_error "--host: '0.0.0.0' is not loopback" web --host 0.0.0.0 --port 0
expect_error "--host: '192.168.1.10' is not loopback" web --host 192.168.1.10
expect_error "--port: expected 0..65535" web --port 70000
expect_error "--port: expected 0..65535" web --port -1
expect_error "--port" web --port 80x
expect_error "--port" web --port 0x50
# The request budget (issue 28): seconds and steps must be positive.
expect_error "--request-seconds: expected 0 < seconds <= 3600, got 0" web --port 0 --request-seconds 0
expect_error "--request-seconds: expected 0 < seconds <= 3600, got 7200" web --port 0 --request-seconds 7200
expect_error "--request-steps: expected at least 1, got 0" web --port 0 --request-steps 0
tmp=$(mktemp -d); trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
# With --allow-remote it serves, and says on stderr that anyone can reach it.
"$CHALK" web --host 0.0.0.0 --allow-remote --port 0 > "$tmp/out" 2> "$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q 'http://' "$tmp/out" && break; sleep 0.1; done
grep -q 'http://0.0.0.0:[0-9]*/' "$tmp/out" || fail "chalk web --allow-remote printed no address: $(cat "$tmp/out" "$tmp/err")"
grep -q 'warning: serving on 0.0.0.0: anyone who can reach this address' "$tmp/err" || fail "no warning on stderr: $(cat "$tmp/err")"
port=$(grep -o ':[0-9][0-9]*/' "$tmp/out" | tr -d ':/')
kill $pid; wait $pid 2>/dev/null
# A port in use: one line naming --port.
"$CHALK" web --port 0 > "$tmp/out2" 2>/dev/null &
pid=$!
for _ in $(seq 100); do grep -q 'http://' "$tmp/out2" && break; sleep 0.1; done
busy=$(grep -o ':[0-9][0-9]*/' "$tmp/out2" | tr -d ':/')
expect_error "--port: cannot listen on 127.0.0.1:$busy" web --port "$busy"
echo "web_errors: all passed (remote port was $port)"
