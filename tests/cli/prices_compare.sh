# `chalk prices compare`: hosts' offers beside chalk's cost at their speed (issue 34). A
# wafer-scale speed is reported as out of every layout's reach (a reason, never a number),
# the JSON and CSV carry every system, and bad input is one line naming the flag, exit 2.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$CHALK" prices compare -m gpt-oss-120b > "$tmp/table.txt" || fail "prices compare exited $?"
grep -q "Cerebras: no layout on any system priced reaches 1844 tok/s per user" "$tmp/table.txt" || fail "no reason for Cerebras: $(cat "$tmp/table.txt")"
grep -q "^ *Cerebras  *1844  *0.450  *none reaches it" "$tmp/table.txt" || fail "Cerebras row not marked: $(cat "$tmp/table.txt")"
# Together states no speed: compared at the assumed 50 tok/s per user, and the row says so.
grep -q "^ *Together  *50 assumed " "$tmp/table.txt" || fail "Together's speed not marked assumed: $(cat "$tmp/table.txt")"
awk 'length > 100 { exit 1 }' "$tmp/table.txt" || fail "table wider than 100 columns"

"$CHALK" prices compare -m gpt-oss-120b -H h100-sxm,b200,tpu-v5p --json > "$tmp/c.json" || fail "--json exited $?"
python3 - "$tmp/c.json" <<'PY' || fail "prices compare --json"
import json, sys
d = json.load(open(sys.argv[1]))
offers = {o["provider"]: o for o in d["rows"]}
assert set(offers) >= {"Groq", "Cerebras", "Fireworks", "Together"}, offers.keys()
c = offers["Cerebras"]
assert c["cheapest_system"] is None and "no layout" in c["why_not"], c.get("why_not")
assert c["host_tok_per_s_per_user"] == 1844.1
for r in c["systems"]:
    assert r["speed_reachable"] is False and "no layout reaches 1844" in r["why_not"], r
    assert "blended_cost_usd_per_mtok" not in r and "batch" not in r, r  # no figure, never a number
    assert r["fastest_tok_per_s_per_user"] < 1844.1
g = offers["Groq"]
assert g["price_source"] and g["speed_source"] and g["input_usd_per_mtok"] == 0.15
# Groq's 500 tok/s: beyond every system's batch-1 engine step (B200: 276). TPU v5p reached it
# while a TPU step paid no fixed time; with 7.7 us per XLA op (review 5 H1) it streams 201.
assert g["cheapest_system"] is None, g["cheapest_system"]
assert [r["speed_reachable"] for r in g["systems"]] == [False, False, False], g["systems"]
assert all(r["fastest_tok_per_s_per_user"] < 500 for r in g["systems"]), g["systems"]
t = offers["Together"]
ch = [r for r in t["systems"] if r["system"] == t["cheapest_system"]][0]
assert abs(ch["break_even_utilization"] - ch["blended_cost_usd_per_mtok"] / t["blended_usd_per_mtok"]) < 1e-9
assert abs(ch["margin_at_full_utilization"] - (1 - ch["break_even_utilization"])) < 1e-9
assert d["workload"] == {"input_tokens": 3000, "output_tokens": 1000, "prefix_hit_rate": 0, "context_tokens": 3500,
                         "assumed_tok_per_s_per_user": 50}
# Together states no speed: assumed, not measured, and its batch is the one that streams 50
# tok/s per user, not the one that fills HBM.
t = offers["Together"]
assert t["speed_assumed"] is True and t["host_tok_per_s_per_user"] is None and t["assumed_tok_per_s_per_user"] == 50, t
assert g["speed_assumed"] is False and g["assumed_tok_per_s_per_user"] is None, g
for r in t["systems"]:
    if "batch" in r:
        assert r["tok_per_s_per_user"] >= 50 and r["batch"] <= r["max_batch_at_context"], r
assert d["model"]["name"] == "gpt-oss-120b"
PY

# Groq's ~300 tok/s on Llama 3.3 70B (an LPU): no GPU layout's batch-1 step reaches it, said as such.
"$CHALK" prices compare -m llama-3.3-70b > "$tmp/l70.txt" || fail "llama-3.3-70b exited $?"
grep -q "^ *Groq  *300.0 .* none reaches it" "$tmp/l70.txt" || fail "Groq 300 tok/s not out of reach: $(cat "$tmp/l70.txt")"
grep -q "Groq: no layout on any system priced reaches 300.0 tok/s per user" "$tmp/l70.txt" || fail "no reason for Groq: $(cat "$tmp/l70.txt")"

# Review 3 L16: the table names the weights' format each offer is priced in. DeepInfra's and
# Together's "Turbo" Llama 3.1 70B are FP8 (their model pages), which is why they cost less
# than the checkpoint's bf16 rows: half the weight bytes a step reads.
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm > "$tmp/l31.txt" || fail "llama-3.1-70b exited $?"
grep -q "^ *DeepInfra (fp8)  *50 assumed " "$tmp/l31.txt" && grep -q "^ *Together (fp8)  " "$tmp/l31.txt" && grep -q "^ *Fireworks  *50 assumed " "$tmp/l31.txt" \
  || fail "weights per offer: $(cat "$tmp/l31.txt")"
[ "$("$CHALK" prices compare -m llama-3.1-70b -H h100-sxm --csv | head -1 | cut -d, -f1-2)" = "provider,weights_dtype" ] || fail "csv: no weights_dtype"

# CSV: one row per offer, the table's and the JSON rows' (review 10 L3: it printed one per
# offer and system, 3 x 2, beside the JSON's 3).
"$CHALK" prices compare -m llama-3.3-70b -H h100-sxm,h200 --csv > "$tmp/c.csv" || fail "--csv exited $?"
[ "$(wc -l < "$tmp/c.csv")" -eq 4 ] || fail "expected 3 offers + header: $(cat "$tmp/c.csv")"
head -1 "$tmp/c.csv" | grep -q "blended_cost_usd_per_mtok,margin_at_full_utilization,break_even_utilization" || fail "csv header"
# One vocabulary (review 3 M2): the JSON's columns begin with the CSV's header, in its order
# (each offer's row carries its shown system's figures, as the text table does).
"$CHALK" prices compare -m gpt-oss-120b -H h100-sxm,tpu-v5p --json > "$tmp/cj.json" || fail "prices compare --json"
python3 - "$tmp/c.csv" "$tmp/cj.json" <<'PY' || fail "prices compare: JSON columns are not the CSV header first"
import json, sys
header = open(sys.argv[1]).readline().strip().split(",")
j = json.load(open(sys.argv[2]))
assert j["columns"][:len(header)] == header, (j["columns"], header)
for o in j["rows"]:
    s = [r for r in o["systems"] if r["system"] == o["system"]][0]
    assert all(o[k] == v for k, v in s.items() if k != "why_not" or o["cheapest_system"] is not None), (o, s)
PY
# Review 7 M8: the CSV carries every column the JSON names (the sources too, 36 in all), and
# each JSON row carries every key of `columns`, null where it has no value (Fireworks' cheapest
# system reaches its speed: why_not and fastest_tok_per_s_per_user null, not absent).
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm,h200 --csv > "$tmp/m8.csv" || fail "--csv exited $?"
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm,h200 --json > "$tmp/m8.json" || fail "--json exited $?"
python3 - "$tmp/m8.csv" "$tmp/m8.json" <<'PY' || fail "prices compare: CSV columns are not the JSON's, or a JSON row lacks a key"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
# `columns` is the CSV's header, then systems (each system's figures; the CSV's rows are the offers').
assert list(rows[0].keys()) + ["systems"] == j["columns"] and len(j["columns"]) == 37, (list(rows[0].keys()), j["columns"])
for k in ("price_source", "price_date", "speed_source", "served_model", "quantization", "cheapest_system", "host_ttft_ms"):
    assert k in rows[0], k
for o in j["rows"]:
    missing = [k for k in j["columns"] if k not in o]
    assert not missing, (o["provider"], missing)
f = [o for o in j["rows"] if o["provider"] == "Fireworks"][0]
assert f["cheapest_system"] is not None and f["why_not"] is None and f["fastest_tok_per_s_per_user"] is None, f
assert f["speed_reachable"] is True and f["max_batch_at_context"] >= f["batch"], f
fw = [r for r in rows if r["provider"] == "Fireworks"]
assert len(fw) == 1 and all(r["price_source"] == f["price_source"] and r["cheapest_system"] == f["cheapest_system"] and r["system"] == f["system"] for r in fw), fw
assert len(rows) == len(j["rows"]), (len(rows), len(j["rows"]))
assert {r["speed_assumed"] for r in rows} <= {"true", "false"}, rows
PY

# A cache-hit share lowers a blended price with a cache-read price: Fireworks' DeepSeek V3.
a=$("$CHALK" prices compare -m deepseek-v3 -H h200 --json | python3 -c "import json,sys; print([o['blended_usd_per_mtok'] for o in json.load(sys.stdin)['rows'] if o['provider']=='Fireworks'][0])")
b=$("$CHALK" prices compare -m deepseek-v3 -H h200 --prefix-hit-rate 0.5 --json | python3 -c "import json,sys; print([o['blended_usd_per_mtok'] for o in json.load(sys.stdin)['rows'] if o['provider']=='Fireworks'][0])")
# (3 x 0.56 + 1.68) / 4 = 0.84; half the input at 0.28: (3 x 0.42 + 1.68) / 4 = 0.735
[ "$a" = "0.84" ] && [ "$b" = "0.735" ] || fail "blended prices $a, $b; expected 0.84, 0.735"

# --speed sets the assumed speed: Together at 180 tok/s runs a smaller batch than at 50 (TPU v5p's
# batch-1 step streams 201 tok/s per user with its fixed time per XLA op).
b50=$("$CHALK" prices compare -m gpt-oss-120b -H tpu-v5p --json | python3 -c "import json,sys; print([o['systems'][0]['batch'] for o in json.load(sys.stdin)['rows'] if o['provider']=='Together'][0])")
b180=$("$CHALK" prices compare -m gpt-oss-120b -H tpu-v5p --speed 180 --json | python3 -c "import json,sys; o=[o for o in json.load(sys.stdin)['rows'] if o['provider']=='Together'][0]; assert o['assumed_tok_per_s_per_user'] == 180; print(o['systems'][0]['batch'])")
[ "$b180" -lt "$b50" ] || fail "--speed 180 batch $b180 not below the 50 tok/s batch $b50"

# Every built-in host sheet compares (issue 34): each offer names its price's source and a
# stated speed its own (else the row says the speed is assumed); each system row has a cost
# or a reason. Four systems a sheet (a GPU of each maker, a TPU, one with no price) keep the
# 41 runs cheap under the sanitizers; Qwen3-32B runs on every system.
ls "$SRC/data/prices/hosts" | sed 's/\.json$//' > "$tmp/models"
while read -r m; do
  "$CHALK" prices compare -m "$m" -H h100-sxm,mi325x,tpu-v5p,trn2 --json > "$tmp/h-$m.json" || fail "prices compare -m $m exited $?"
done < "$tmp/models"
"$CHALK" prices compare -m qwen3-32b --json > "$tmp/h-qwen3-32b.json" || fail "prices compare -m qwen3-32b exited $?"
python3 - "$tmp" <<'PY' || fail "host sheets' rows"
import json, sys
tmp = sys.argv[1]
models = open(tmp + "/models").read().split()
for m in ("qwen3-32b", "qwen3-30b-a3b", "llama-4-scout-17b-16e", "llama-4-maverick-17b-128e", "glm-4.5",
          "mixtral-8x7b", "mixtral-8x22b", "kimi-k2-instruct", "gpt-oss-20b", "llama-3.1-8b", "llama-3.1-405b"):
    assert m in models, m
d = {m: json.load(open(f"{tmp}/h-{m}.json")) for m in models}
for m, j in d.items():
    for o in j["rows"]:
        who = (m, o["provider"])
        assert o["price_source"], who
        if o["host_tok_per_s_per_user"] is None:
            assert o["speed_assumed"] is True and o["assumed_tok_per_s_per_user"] == 50, who
        else:
            assert o["speed_source"] and o["speed_assumed"] is False, who
        for r in o["systems"]:
            assert ("blended_cost_usd_per_mtok" in r) != bool(r.get("why_not")), (who, r)
offers = lambda m: {o["provider"]: o for o in d[m]["rows"]}
# Cerebras' ~2,600 tok/s on Qwen3-32B (a wafer-scale engine): no layout of any system reaches it.
c = offers("qwen3-32b")["Cerebras"]
assert c["host_tok_per_s_per_user"] == 2600 and c["cheapest_system"] is None, c.get("cheapest_system")
priced = [r for r in c["systems"] if r["why_not"] != "no public price per chip-hour"]
assert len(priced) >= 10, priced  # the fastest is TPU v5p's ~306 tok/s at batch 1
assert all(r["speed_reachable"] is False and r["fastest_tok_per_s_per_user"] < 2600 for r in priced), priced
# Groq's Qwen3-32B at 3:1: (3 x 0.29 + 0.59) / 4 = 1.46 / 4 = 0.365 $/Mtok.
assert offers("qwen3-32b")["Groq"]["blended_usd_per_mtok"] == 0.365
# A GPU host at the assumed 50 tok/s is priced somewhere: DeepInfra's Llama 4 Scout.
s = offers("llama-4-scout-17b-16e")["DeepInfra"]
assert s["cheapest_system"] is not None and s["speed_assumed"] is True, s
PY
# Moonshot's Kimi K2 cache price at half the prompt cached: (3 x (0.5 x 0.60 + 0.5 x 0.15) + 2.50) / 4
# = (1.125 + 2.5) / 4 = 0.90625 $/Mtok.
k=$("$CHALK" prices compare -m kimi-k2-instruct -H h200 --prefix-hit-rate 0.5 --json | python3 -c "import json,sys; print([o['blended_usd_per_mtok'] for o in json.load(sys.stdin)['rows'] if o['provider']=='Moonshot AI'][0])")
[ "$k" = "0.90625" ] || fail "Moonshot blended price $k; expected 0.90625"

# Aliases resolve to the catalog name whose sheet is looked up.
expect_ok prices compare -m meta-llama/Llama-3.3-70B-Instruct -H h100-sxm

expect_error "--model: no host sheet for 'llama-2-70b'" prices compare -m llama-2-70b
expect_error "--model: unknown model 'no-such-model'" prices compare -m no-such-model
expect_error "--input: must be >= 1 token, got 0" prices compare -m gpt-oss-120b --input 0
expect_error "--output: must be >= 1 token, got -5" prices compare -m gpt-oss-120b --output -5
expect_error "--prefix-hit-rate: must be a fraction in [0, 1], got 2" prices compare -m gpt-oss-120b --prefix-hit-rate 2
expect_error "--hardware: expected a comma list" prices compare -m gpt-oss-120b -H h100-sxm,,b200
expect_error "--hardware: expected a comma list of systems or files, got ''" prices compare -m gpt-oss-120b -H ''
expect_error "--hardware: 'h100-sxm' is listed twice in 'h100-sxm,h100-sxm'" prices compare -m gpt-oss-120b -H h100-sxm,h100-sxm
# A request past the model's context: vLLM refuses it (simulate rejects such requests), so no price.
expect_error "--input: 200000 input + 1000 output tokens exceed llama-3.1-8b's max_position_embeddings 131072" prices compare -m llama-3.1-8b --input 200000
expect_error "--input: 99999999 input + 1000 output tokens exceed llama-3.1-8b's max_position_embeddings 131072" prices compare -m llama-3.1-8b --input 99999999
expect_ok prices compare -m llama-3.1-8b -H h100-sxm --input 130000 --output 1000
expect_error "--weights: unknown dtype 'fp7'" prices compare -m gpt-oss-120b --weights fp7
expect_error "--speed: must be > 0 tok/s per user, got 0" prices compare -m gpt-oss-120b --speed 0
expect_error "--speed: must be > 0 tok/s per user, got -3" prices compare -m gpt-oss-120b --speed -3
expect_error "--hardware" prices compare -m gpt-oss-120b -H no-such-chip

# DeepSeek-V3 on H100 SXM: 673 GB fits no 8-chip domain (576 GB usable), so each offer is
# priced on the smallest replica that holds it, 16 chips, as every other command's default
# (review 2 L7: it was "multi-domain replicas are not searched").
"$CHALK" prices compare -m deepseek-v3 -H h100-sxm --json | python3 -c "
import json, sys
for o in json.load(sys.stdin)['rows']:
    r = o['systems'][0]
    assert o['cheapest_system'] == 'h100-sxm' and r['chips'] == 16 and r['blended_cost_usd_per_mtok'] > 0, o
    # Not stated: null, as docs/prices.md says, never ''.
    assert o['speed_date'] is None and o['speed_source'] is None, o
" || fail "deepseek-v3 on h100-sxm not priced on 16 chips, or null speed fields"
# The help's description is a whole sentence.
"$CHALK" prices compare --help | grep -q "break-even utilization at that cost" || fail "prices compare --help description cut short"
exit 0

# Review 5 M8: the reason an offer has no system is the fastest system's own, never "beyond
# every GPU's step" said of one chip. Llama 3.1 405B on L4 alone: Together's FP8 weights
# (about 406 GB) do not fit one server of 8 L4 (8 x 24 GB x 0.9 = 172.8 GB usable), so the
# fastest replica spans several servers over the scale-out network. Llama 3.1 70B in bf16 (141
# GB) fits one server; its batch-1 step is the weights read at the L4's 0.3 TB/s.
"$CHALK" prices compare -m llama-3.1-405b -H l4 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
o = [o for o in j['rows'] if o['provider'] == 'Together'][0]
w = o['why_not']
assert 'every GPU' not in w and 'on l4 (batch 1 on' in w, w
assert 'do not fit one 8-chip scale-up domain of l4 (172.8 GB usable), so the fastest replica spans' in w and 'over the scale-out network' in w, w
" || fail "405B on L4: the true reason"
"$CHALK" prices compare -m llama-3.1-70b -H l4 --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
o = [o for o in j['rows'] if o['provider'] == 'Fireworks'][0]
w = o['why_not']
# L4: 300 GB/s peak x 0.87 (l4.json efficiency.hbm) = 0.261 TB/s, the rate its weight time uses (review 6 L10).
assert 'every GPU' not in w and 'governed by' in w and 'at 0.261 TB/s, 87% of its 0.3 TB/s peak' in w, w
" || fail "70B on L4: the true reason"
# Review 5 M3: the cheapest system is a choice between chips whose prices may come from
# different sources (data/hardware: h100-sxm $2.35 SemiAnalysis's index [compux]; h200 $4.54
# and b200 $6.03 Spheron's on-demand list [spheron]): a warning says so, and not for one source.
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm,h200 --json | python3 -c "
import json, sys; w = json.load(sys.stdin)['warnings']
assert len(w) == 1 and 'come from 2 sources' in w[0] and '[compux] h100-sxm \$2.35; [spheron] h200 \$4.54' in w[0], w
" || fail "mixed price sources: no warning"
"$CHALK" prices compare -m llama-3.1-70b -H h200,b200 --json | python3 -c "
import json, sys; assert json.load(sys.stdin)['warnings'] == []
" || fail "one price source: a warning"
"$CHALK" prices compare -m llama-3.1-70b -H h100-sxm,h200 2>&1 | grep -q "^warning     chip prices per hour come from 2 sources" || fail "mixed price sources: no text warning"

# Review 4 M5: a model no scale-up domain holds is priced on the pipeline the other serving
# commands price, not only on tensor parallelism across domains. Llama 3.1 405B in bf16
# (811.7 GB) fits no 8 x 80 GB H100 domain; at 20 tok/s per user TP16 over the two hosts'
# scale-out network streamed it at batch 1 alone ($132/Mtok blended), where two stages of TP8
# (one domain each, 2 microbatches in flight) stream a batch of 64: the cycle, the time
# between a user's tokens, is 1 / tok_per_s_per_user <= 50 ms, so the output cost is every
# stage's chips x price x cycle / batch = 16 x $2.35/3600 s x cycle / 64.
"$CHALK" prices compare -m llama-3.1-405b -H h100-sxm --speed 20 --json | python3 -c "
import json, sys
rows = [r for r in json.load(sys.stdin)['rows'] if r['quantization'] is None]
assert rows, 'no bf16 offer'
for r in rows:
    assert r['chips'] == 16 and r['layout'].startswith('PP2 x (attention TP8') and r['batch'] > 32, r
    cycle = 1 / r['tok_per_s_per_user']
    assert cycle <= 1 / 20 and abs(r['output_cost_usd_per_mtok'] - 16 * 2.35 / 3600 * cycle / r['batch'] * 1e6) < 1e-6 * r['output_cost_usd_per_mtok'], r
    assert r['blended_cost_usd_per_mtok'] < 5, r
" || fail "prices compare does not price 405B on H100 as a pipeline"
