#!/usr/bin/env bash
# Bounded load test of `chalk web` on loopback (issue 18): wrk posts one decode request
# (llama-3.1-70b on H100, batch 64, context 4096) on 4 connections for 3 s to a server
# pinned to one core. Fails on any socket error, non-2xx answer or a server that is gone
# afterwards; prints requests/s and the p50/p99 latency.
CHALK="$1"; SRC="$2"
command -v wrk >/dev/null || { echo "SKIP: no wrk (apt-get install wrk; scripts/setup does)"; exit 77; }
tmp=$(mktemp -d)
pin=(); command -v taskset >/dev/null && pin=(taskset -c 0)
"${pin[@]}" "$CHALK" web --port 0 > "$tmp/out" 2> "$tmp/err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do grep -q 'http://' "$tmp/out" && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/out") || { echo "FAIL: chalk web printed no address"; cat "$tmp/err"; exit 1; }
cat > "$tmp/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"llama-3.1-70b","hardware":"h100-sxm","batch":64,"context":4096}'
LUA
wrk -t1 -c4 -d3s --timeout 5s --latency -s "$tmp/post.lua" "$url/api/decode" > "$tmp/wrk" 2>&1
cat "$tmp/wrk"
fail=0
grep -q "Non-2xx" "$tmp/wrk" && { echo "FAIL: non-2xx answers"; fail=1; }
grep -q "Socket errors" "$tmp/wrk" && { echo "FAIL: socket errors"; fail=1; }
rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk")
p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk")
p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk")
[ -n "$rps" ] && [ -n "$p99" ] || { echo "FAIL: wrk reported no rate or p99"; fail=1; }
kill -0 $pid 2>/dev/null || { echo "FAIL: the server died under load"; fail=1; }
status=$(curl -s -o /dev/null -w '%{http_code}' "$url/api/models")
[ "$status" = 200 ] || { echo "FAIL: after the load /api/models answered $status"; fail=1; }
echo "load: $rps requests/s on one core (${pin[*]:-unpinned}), p50 $p50, p99 $p99, no errors: $([ $fail = 0 ] && echo yes || echo no)"
exit $fail
