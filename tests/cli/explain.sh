# `--explain` beyond decode and prefill (issue 18): serving sweep and balance, train step
# and memory print the algebra under their output, and with --json the explanations'
# results are the numbers the same document reports.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Text: the formula in symbols and the algebra with the values, under the table.
"$CHALK" serving sweep -m llama-3.1-70b -H h100-sxm -b 64 --explain > "$tmp/sweep.txt" || fail "sweep --explain"
grep -q '^cost_usd_per_mtok = .*USD per 1M tokens' "$tmp/sweep.txt" || fail "sweep --explain: no cost line"
grep -q 'price per chip-hour x n / (tokens per hour / 1e6)' "$tmp/sweep.txt" || fail "sweep --explain: no cost formula"
"$CHALK" serving balance -m llama-3.1-8b -H h100-sxm --explain | grep -q '^lecture_batch_peak = 295.4 sequences' || fail "balance --explain: B* 295.4"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 16 --dp 4 --pp 4 --explain | grep -q '^mfu = ' || fail "train step --explain: no MFU"
"$CHALK" train memory -m llama-3.1-8b -H h100-sxm -n 16 --dp 4 --pp 4 --explain | grep -q '^activations_gb = ' || fail "train memory --explain"
"$CHALK" layouts -m llama-3.1-70b -H h100-sxm --explain --json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["explanations"][0]["figures"][0]["result"] == j["rows"][0]["tok_per_s_per_chip"]' || fail "layouts --explain: winner"
# Without --explain no explanations are printed or built.
"$CHALK" serving sweep -m llama-3.1-8b -H h100-sxm -b 64 --json | python3 -c 'import json,sys; assert "explanations" not in json.load(sys.stdin)' || fail "sweep without --explain"

# JSON: results equal the figures they explain.
"$CHALK" serving sweep -m llama-3.1-70b -H h100-sxm -b 1,64 -s 1024,8192 --explain --json > "$tmp/sweep.json" || fail "sweep --explain --json"
"$CHALK" train step -m llama-3.1-8b -H h100-sxm -n 16 --dp 4 --pp 4 --explain --json > "$tmp/step.json" || fail "train step --explain --json"
"$CHALK" train memory -m llama-3.1-8b -H h100-sxm -n 16 --dp 4 --pp 4 --explain --json > "$tmp/memory.json" || fail "train memory --explain --json"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 2 -b 64 --explain --json > "$tmp/decode.json" || fail "decode --explain --json"
python3 - "$tmp" <<'PY' || fail "explanations differ from the figures they explain"
import json, sys
d = sys.argv[1]
sweep = json.load(open(f"{d}/sweep.json"))
assert len(sweep["explanations"]) == len(sweep["rows"]) == 4
for e in sweep["explanations"]:
    row = next(r for r in sweep["rows"] if r["batch"] == e["batch"] and r["context_tokens"] == e["context_tokens"])
    for x in e["figures"]:
        assert x["result"] == row[x["key"]], (x["key"], x["result"], row[x["key"]])
step = json.load(open(f"{d}/step.json"))
for x in step["explanations"]:
    assert x["result"] == step["rows"][0][x["key"]], x["key"]
# 1F1B on 4 stages: bubble / work = (p - 1) / m.
assert abs(step["rows"][0]["bubble_fraction"] - 3 / step["rows"][0]["microbatches"]) < 1e-12
mem = json.load(open(f"{d}/memory.json"))
for x in mem["explanations"]:
    assert x["result"] == mem[x["key"]], x["key"]
dec = json.load(open(f"{d}/decode.json"))
f = {x["key"]: x for x in dec["explanations"][0]["figures"]}
for k in ("hbm_total_gb", "weights_gb", "reserve_gb"):
    assert f[k]["result"] == dec["memory"][k], k
assert f["max_batch_at_context"]["result"] == dec["rows"][0]["max_batch_at_context"]
PY
# prices infer: each central figure's explanation = the figure in the same JSON (Gemini 1.5
# Pro steps at 128,000 tokens: kv = 2 x 50e9 / (128,000 x 300) = 2,604.2 B per token).
"$CHALK" prices infer gemini-1.5-pro --explain --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
figs = {f['quantity']: f['value'] for f in j['rows'] if f['subject'] == ''}
xs = j['explanations']
assert [x['key'] for x in xs] == ['kv_bytes_per_token', 'output_to_input_price_ratio', 'decode_bytes_per_output_token', 'decode_fraction_of_compute_roofline'], xs
for x in xs:
    assert abs(x['result'] - figs[x['key']]) <= 1e-9 * abs(figs[x['key']]), (x['key'], x['result'], figs[x['key']])
assert abs(xs[0]['result'] - 2 * 50e9 / (128000 * 300)) < 1e-9
" || fail "prices infer --explain"
"$CHALK" prices infer gemini-1.5-pro --explain | grep -q "kv = 2 N_active / (S\* (F/W - a))" || fail "prices infer --explain text"
# T_overhead is named by the kind of chip (review 5): on a TPU the hardware file's per-XLA-op
# floor, 7.7 us per fused op (data/hardware/tpu-v5e.json) x (32 layers x 9 + 4) = 292 ops of
# Llama 3.1 8B = 2.2484 ms; on a GPU the kernel launch floor.
"$CHALK" decode -m llama-3.1-8b -H tpu-v5e -b 1 --explain --json > "$tmp/tpu.json" || fail "decode on tpu-v5e --explain --json"
"$CHALK" decode -m llama-3.1-8b -H h100-sxm -b 1 --explain --json > "$tmp/gpu.json" || fail "decode on h100 --explain --json"
python3 - "$tmp" <<'PY' || fail "T_overhead's label does not follow the kind of chip"
import json, sys
def overhead(f):
    x = next(x for x in json.load(open(f))["explanations"][0]["figures"] if x["key"] == "t_step_ms")
    return next(i for i in x["inputs"] if i["symbol"] == "T_overhead")
t, g = overhead(sys.argv[1] + "/tpu.json"), overhead(sys.argv[1] + "/gpu.json")
assert t["name"] == "per-op floor (XLA fused op)" and "op_floor per XLA fused op" in t["source"], t
assert abs(t["value"] - 292 * 7.7e-3) < 1e-9, t
assert g["name"] == "kernel launch floor" and g["source"].startswith("per-kernel floor"), g
PY
"$CHALK" decode -m llama-3.1-8b -H tpu-v5e -b 1 --explain | grep -q "kernel launch floor" && fail "decode on a TPU --explain still says kernel launch floor"
echo ok
