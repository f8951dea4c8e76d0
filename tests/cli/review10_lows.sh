# Review 10's lows fixed here (a new user's answers): L1 the layouts replica line at a stated
# batch, L3 one row set in JSON, CSV and table, L4 consistent input checks, L7 huge figures.
# (L3's every-command check: output_schema.sh; L6, vLLM's all-to-all backend:
# src/sim/launch_ep_test.cc.)
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
export COLUMNS=100
tmp=$(mktemp -d); trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# L1: `layouts --batch 64` for 70B on H100 said "8 chips at batch 320 ... $0.6745/Mtok" beside
# rank 1 "TP8 ... 453 tok/s/chip $1.44". Now the size is the cheapest that holds batch 64, as
# `prices forward -b 64` chooses it (4 chips: 141.1 GB of bf16 weights leave 2 chips no room
# for 64 x 4096 x 327.7 kB = 85.9 GB of KV, and TP4's step is cheaper per token than TP8's),
# and the line states rank 1's figures at batch 64.
"$CHALK" layouts -m llama-3.1-70b -H h100-sxm --batch 64 --json > "$tmp/l1.json" || fail "layouts --batch 64 --json"
"$CHALK" prices forward -m llama-3.1-70b -H h100-sxm -b 64 --json > "$tmp/f1.json" || fail "prices forward -b 64 --json"
# README's latency example: the smallest replica that holds batch 64 (4 chips), at batch 64,
# not "at batch 111 (fills HBM) ... $0.7828" beside the row's $1.10.
"$CHALK" layouts -m llama-2-70b -H h100-sxm --objective latency --batch 64 --json > "$tmp/l1b.json" || fail "layouts --objective latency --batch 64"
python3 - "$tmp/l1.json" "$tmp/f1.json" "$tmp/l1b.json" <<'PY' || fail "L1: the replica line and rank 1 differ"
import json, sys
for path in (sys.argv[1], sys.argv[3]):
    j = json.load(open(path))
    c, r = j["replica_choice"]["choice"], j["rows"][0]
    assert c["batch"] == 64 and c["memory_full"] is False, c
    assert c["chips"] == r["chips"] == j["chips"] == 4, (c, r)
    assert c["layout"] == r["layout"], (c, r)
    for k in ("tok_per_s_per_chip", "tok_per_s_per_user", "cost_usd_per_mtok"):
        assert abs(c[k] - r[k]) <= 1e-9 * r[k], (k, c, r)
    assert abs(c["t_step_ms"] - r["t_step_ms"]) <= 1e-9 * r["t_step_ms"], (c, r)
f = json.load(open(sys.argv[2]))["replica_choice"]["choice"]
c = json.load(open(sys.argv[1]))["replica_choice"]
assert c["choice"]["chips"] == f["chips"] == 4, (c, f)
assert c["runner_up"] is None or c["runner_up"]["batch"] == 64, c
PY
out=$("$CHALK" layouts -m llama-3.1-70b -H h100-sxm --batch 64 | tr '\n' ' ' | tr -s ' ')
case "$out" in *"chosen: 4 chips at batch 64 (the batch asked, -b)"*) ;; *) fail "L1: the line does not state batch 64: $out";; esac

# L3: one row set. DeepSeek-V3 on H200 printed 2 table rows, 2 JSON rows (+7 rejected) and 9
# CSV rows; train layouts 20 JSON rows and 40 CSV rows. The rule: rows are what fits, in all
# three; the rest is JSON's rejected_layouts and, with --all, a second text table.
"$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --json > "$tmp/l3.json" || fail "layouts --json"
"$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --csv > "$tmp/l3.csv" || fail "layouts --csv"
"$CHALK" layouts -m deepseek-v3 -H h200 -n 8 --all --wide > "$tmp/l3.txt" || fail "layouts --all"
"$CHALK" train layouts -m llama-3.1-8b -H h100-sxm -n 8 --json > "$tmp/t3.json" || fail "train layouts --json"
"$CHALK" train layouts -m llama-3.1-8b -H h100-sxm -n 8 --all --csv > "$tmp/t3.csv" || fail "train layouts --csv"
"$CHALK" scaleup -m deepseek-v3 -H a100-40gb,h200,a10g --json > "$tmp/s3.json" || fail "scaleup --json"
python3 - "$tmp" <<'PY' || fail "L3: the row sets differ"
import csv, json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/l3.json"))
rows = list(csv.DictReader(open(f"{d}/l3.csv")))
assert len(rows) == len(j["rows"]) > 0 and j["rejected_layouts"], (len(rows), len(j["rows"]))
assert [r["layout"] for r in rows] == [r["layout"] for r in j["rows"]], rows
assert all(r["fits"] is True for r in j["rows"]) and all(r["fits"] == "true" for r in rows)
assert [r["rank"] for r in j["rows"]] == list(range(1, len(rows) + 1)), j["rows"]
text = open(f"{d}/l3.txt").read()
main, second = text.split("Layouts that do not fit")
for r in j["rows"]: assert r["layout"] in main, r
for r in j["rejected_layouts"]: assert r["layout"] in second and r["layout"] not in main.split("\n#", 1)[-1], r
t = json.load(open(f"{d}/t3.json"))
tc = list(csv.DictReader(open(f"{d}/t3.csv")))
assert len(tc) == len(t["rows"]) == 20 and all(r["memory_fits"] == "true" for r in tc), len(tc)
s = json.load(open(f"{d}/s3.json"))
for r in s["rows"]:
    assert set(s["columns"]) <= set(r), (r["system"], set(s["columns"]) - set(r))
a100 = [r for r in s["rows"] if r["system"] == "a100-40gb"][0]
assert a100["fastest_layout"] is None and a100["pp"] > 1, a100  # served only as a pipeline
a10g = [r for r in s["rows"] if r["system"] == "a10g"][0]
assert a10g["tpot_ms"] is None and a10g["why_not"], a10g
PY

# L4: context 0 refused by every serving table, as decode and prefill refuse it.
for c in "serving sweep" "serving frontier" "serving modes"; do
  # shellcheck disable=SC2086
  expect_error "--context: must be in 1..1073741824, got 0" $c -m llama-3.1-70b -H h100-sxm -s 0
done
# A rate beyond a million replicas names --rate (review 10: "--replicas", not given). One
# 2-chip 8B replica serves 27.85 req/s with its queue full; the sampled 1.030e9 / (0.8 x 27.85)
# = 4.623e7 replicas, beyond the pool bound of 1e6 (sim/cluster.cc).
# (Whatever replica simulate sizes: one H100's 16 req/s would take 8e7.)
expect_error "--rate: arrivals of 1.030B req/s take" simulate -m llama-3.1-8b -H h100-sxm --rate 1e9
err=$("$CHALK" simulate -m llama-3.1-8b -H h100-sxm --rate 1e9 2>&1 >/dev/null)
case "$err" in *"replicas"*"req/s with its queue full, at most 0.8 of it), beyond the 1000000 a simulation runs; a lower --rate") ;; *) fail "L4: $err";; esac
# The API names its own fields: POST /api/decode {"chips": 3} said "...; -n 2 or -n 4".
"$CHALK" web --port 0 > "$tmp/web" 2>/dev/null &
pid=$!
for _ in $(seq 100); do grep -q 'http://' "$tmp/web" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/' "$tmp/web" | head -1)
[ -n "$url" ] || fail "chalk web printed no address"
python3 - "$url" <<'PY' || fail "L4: the API error names a CLI flag"
import json, sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1] + "api/decode", data=json.dumps({"model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 3}).encode(),
                             headers={"Content-Type": "application/json"})
try:
    urllib.request.urlopen(req)
    sys.exit("no error")
except urllib.error.HTTPError as e:
    code, j = e.code, json.load(e)
assert code == 400 and j["field"] == "chips", j
assert "-n " not in j["error"] and "; chips 2 or chips 4;" in j["error"], j
PY
kill $pid; wait $pid 2>/dev/null

# L7: 1e30 tokens of Llama 3.1 8B on one H100: 48.25e9 FLOPs a token x 1e30 = 4.825e40 FLOPs;
# / (989.4e12 x 0.3894) = 1.252e26 s = 3.479e22 chip-hours, x $2.35 = $8.175e22. Said as such,
# not "3.479e+16M chip-hours, $81751266288606.86B", nor tokens "1.000e+18T".
out=$("$CHALK" train run -m llama-3.1-8b -H h100-sxm --tokens 1e30 --chips 1 --wide | tr '\n' ' ' | tr -s ' ')
case "$out" in *"3.479e+22 chip-hours, \$8.175e+22,"*) ;; *) fail "L7: huge figures: $out";; esac
case "$out" in *"e+16M"*|*"e+18T"*|*"B,"*) fail "L7: a suffix over a scientific figure: $out";; esac
case "$out" in *" 1.000e+30 "*) ;; *) fail "L7: tokens not 1.000e+30: $out";; esac
# Everyday sizes keep their suffixes: DeepSeek-V3's 2.673M chip-hours at goodput 1 (review 10's check 3),
# and 1B tokens of 8B on 8 H100: 4.825e19 / (8 x 989.4e12 x 0.3894) = 15,655 s = 34.79
# chip-hours, x $2.35 = $82.
out=$("$CHALK" train run -m deepseek-v3 -H h800-sxm --tokens 14.8e12 --chips 2048 --mfu 0.3894 --goodput 1 | tr '\n' ' ' | tr -s ' ')
case "$out" in *"54.4 days, 2.673M chip-hours, 1871 MWh"*) ;; *) fail "L7: everyday figures: $out";; esac
out=$("$CHALK" train run -m llama-3.1-8b -H h100-sxm --tokens 1e9 --chips 8 | tr '\n' ' ' | tr -s ' ')
case "$out" in *"34.79 chip-hours, \$82,"*) ;; *) fail "L7: small figures: $out";; esac
echo "review10_lows: all passed"
