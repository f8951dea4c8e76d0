# The planner choosing chip types as well as counts (issue 31 item 6; docs/simulator.md,
# "Planning over chip types"): `chalk plan -H A,B` plans every (prefill chip, decode chip)
# pair at each chip's catalog price, prints the choice and the runner-up, and refuses lists
# it cannot price or whose pools cannot exchange KV, in one line naming the flag (exit 2).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Llama 3.1 8B, light traffic, one-chip replicas: on h100-sxm ($2.35) and h200 ($4.54) one
# chip of either meets TPOT <= 30 ms, so the choice is one H100 aggregated ($2.35/hour) and
# the runner-up one H200 ($4.54); a mixed pair needs two chips (a prefill and a decode one).
plan=("plan" -m llama-3.1-8b -H h100-sxm,h200 --rate 2 --requests 40 --input 512 --output 64 --budget-chips 2 --tpot-slo-ms 30 --replica-chips 1 --max-seqs-candidates 64)
"$CHALK" "${plan[@]}" --json > "$tmp/p.json" || fail "plan over chip types exited $?"
python3 - "$tmp/p.json" <<'PY' || fail "plan over chip types: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
b, n = j["best"], j["next_best"]
assert j["hardware"] is None and j["hardware_choices"] == ["h100-sxm", "h200"], j["hardware_choices"]
assert (b["prefill_hardware"], b["decode_hardware"], b["chips"], b["mode"]) == ("h100-sxm", "h100-sxm", 1, "aggregated"), b
assert abs(b["cost_usd_per_hour"] - 2.35) < 1e-9, b
assert (n["decode_hardware"], n["chips"]) == ("h200", 1) and abs(n["cost_usd_per_hour"] - 4.54) < 1e-9, n
pairs = {(p["prefill_hardware"], p["decode_hardware"]): p for p in j["chip_pairs"]}
assert len(pairs) == 4, pairs
# h200 prefill, h100 decode: disaggregated, 1 + 1 chips: $4.54 + $2.35 = $6.89 per hour.
m = pairs[("h200", "h100-sxm")]
assert m["meets_slo"] and m["chips"] == 2 and abs(m["cost_usd_per_hour"] - 6.89) < 1e-9, m
assert j["rows"][0] == b and j["rows"][1] == n and len(j["rows"]) == 4, j["rows"]
# The two chips' prices come from different sources (data/hardware: h100-sxm $2.35
# SemiAnalysis's index [compux], h200 $4.54 Spheron's list [spheron]): one warning says so, as
# prices compare and fleet do (review 5 M3).
w = [x for x in j["warnings"] if "sources" in x]
assert len(w) == 1 and "come from 2 sources" in w[0] and "[compux] h100-sxm $2.35; [spheron] h200 $4.54" in w[0], j["warnings"]
PY
"$CHALK" "${plan[@]}" > "$tmp/p.txt" || fail "plan over chip types (text) exited $?"
grep -qF "chosen: h100-sxm prefill, h100-sxm decode" "$tmp/p.txt" || fail "plan text lacks the choice: $(cat "$tmp/p.txt")"
grep -qF "runner-up: h200 prefill, h200 decode" "$tmp/p.txt" || fail "plan text lacks the runner-up"

expect_error "--hardware: 'h800-sxm' has no price per chip-hour in the catalog; the choice among chip types is by dollars: drop it or give a hardware file with usd_per_chip_hour" \
  "${plan[@]/h100-sxm,h200/h100-sxm,h800-sxm}"
expect_error "--hardware: 'l4' states no scale-out network, so its pools cannot exchange KV with another system's; drop it or plan it alone" \
  "${plan[@]/h100-sxm,h200/h100-sxm,l4}"
expect_error "--hardware: 'h200' is listed twice in 'h200,h200'" "${plan[@]/h100-sxm,h200/h200,h200}"
# A dollar budget over chip types: $5 per hour buys floor(5 / 2.35) = 2 H100s or 1 H200; a
# mixed pair needs a chip of each, $2.35 + $4.54 = $6.89 > $5: no mixed pair is chosen.
"$CHALK" "${plan[@]}" --budget-usd-per-hour 5 --json > "$tmp/usd.json" || fail "plan over chip types with a dollar budget exited $?"
python3 - "$tmp/usd.json" <<'PY' || fail "plan over chip types with a dollar budget: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["best"]["chips"] == 1 and abs(j["best"]["cost_usd_per_hour"] - 2.35) < 1e-9, j["best"]
pairs = {(p["prefill_hardware"], p["decode_hardware"]): p for p in j["chip_pairs"]}
for k in [("h100-sxm", "h200"), ("h200", "h100-sxm")]:
    assert not pairs[k]["meets_slo"] and pairs[k]["why_none"].endswith(" within $5 per hour"), pairs[k]
# The chosen one-chip-type deployment's launch files, as `plan -H h100-sxm` writes them.
v = [e for e in j["launch"] if e["engine"] == "vllm"][0]
assert [f["path"] for f in v["files"]][:1] == ["vllm/serve.sh"] and "h100-sxm" in v["files"][0]["text"], v
assert j["lora"] is None, j["lora"]
PY
expect_error "--price-usd-per-chip-hour: prices one chip type; choosing among chip types takes each system's catalog price" \
  "${plan[@]}" --price-usd-per-chip-hour 2
expect_error "--chip-power-w: states one chip's power; with several chip types in --hardware each takes its catalog power" "${plan[@]}" --chip-power-w 500
"$CHALK" "${plan[@]}" --launch-dir "$tmp/l" > "$tmp/l.txt" || fail "plan over chip types --launch-dir exited $?"
[ -x "$tmp/l/vllm/serve.sh" ] || fail "plan over chip types wrote no vllm/serve.sh: $(cat "$tmp/l.txt")"
grep -qF "wrote " "$tmp/l.txt" || fail "plan over chip types text lacks the files written"
# No pair meets an impossible TPOT: exit 4, the report printed all the same.
"$CHALK" "${plan[@]/30/0.1}" > "$tmp/none.txt" 2> "$tmp/none.err"; rc=$?
[ "$rc" -eq 4 ] || fail "plan over chip types with no deployment exited $rc, expected 4"
grep -qF "no pair of h100-sxm, h200 meets the SLO within 2 chips" "$tmp/none.txt" || fail "no-deployment text: $(cat "$tmp/none.txt")"
# A mixed pair chosen (Llama 3.1 8B, 4,096-token prompts, TTFT <= 300 ms, TPOT <= 20 ms): B200
# prefill ($6.03) and H200 decode ($4.54), one chip each, $10.57/hour. Its launch files put
# each pool on its own chip: TensorRT-LLM's KV fraction ((1 - 0.1) HBM - W) / (HBM - W) with
# W = 16.06 GB of weights: B200 (162 - 16.06) / (180 - 16.06) = 0.890, H200 (126.9 - 16.06) /
# (141 - 16.06) = 0.887; no Dynamo manifest over two chip types.
mixed=("plan" -m llama-3.1-8b -H h200,b200 --rate 8 --requests 100 --input 4096 --output 256 --budget-chips 4 --replica-chips 1 --max-seqs-candidates 64 --ttft-slo-ms 300 --tpot-slo-ms 20 --modes disaggregated)
"$CHALK" "${mixed[@]}" --launch-dir "$tmp/mixed" --json > "$tmp/mixed.json" || fail "mixed plan exited $?"
python3 - "$tmp/mixed.json" <<'PY' || fail "mixed plan: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["best"]
assert (b["prefill_hardware"], b["decode_hardware"], b["chips"]) == ("b200", "h200", 2) and abs(b["cost_usd_per_hour"] - 10.57) < 1e-9, b
files = {f["path"]: f["text"] for e in j["launch"] for f in e["files"]}
assert "llama-3.1-8b on b200, disaggregated" in files["vllm/prefill.sh"] and "llama-3.1-8b on h200, disaggregated" in files["vllm/decode.sh"], files["vllm/prefill.sh"]
assert "free_gpu_memory_fraction: 0.89\n" in files["trtllm/prefill.yaml"] and "free_gpu_memory_fraction: 0.887\n" in files["trtllm/decode.yaml"]
assert "vllm/proxy.sh" in files and "sglang/router.sh" in files and "trtllm/disagg.yaml" in files and "vllm/dynamo.yaml" not in files, sorted(files)
# h200 and b200 both read Spheron's list [spheron]: one source, no warning about sources.
assert not [x for x in j["warnings"] if "sources" in x], j["warnings"]
PY
[ -x "$tmp/mixed/vllm/prefill.sh" ] && [ -x "$tmp/mixed/sglang/router.sh" ] || fail "mixed plan wrote no executable scripts"
# --lora over chip types: every pair searches --max-loras (1, 2, 4 for 4 adapters under a cap
# of 64) as a one-system plan does; `lora` is the chosen pair's search and its launch files
# serve that many slots (vLLM --max-loras, SGLang --max-loras-per-batch).
lmix=("plan" -m llama-3.1-8b -H h100-sxm,h200 --rate 5 --requests 60 --input 256 --output 16 --budget-chips 2 --replica-chips 1 --max-seqs-candidates 64 --ttft-slo-ms 100 --lora 4:16)
"$CHALK" "${lmix[@]}" --json > "$tmp/lmix.json" || fail "plan -H with --lora exited $?"
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 60 --input 256 --output 16 --budget-chips 2 --replica-chips 1 --max-seqs-candidates 64 --ttft-slo-ms 100 --lora 4:16 --json > "$tmp/lone.json" || fail "plan --lora on h100-sxm exited $?"
python3 - "$tmp/lmix.json" "$tmp/lone.json" <<'PY' || fail "plan -H with --lora: JSON"
import json, sys
j, one = (json.load(open(f)) for f in sys.argv[1:3])
l = j["lora"]
assert l["max_loras_searched"] and [t["max_loras"] for t in l["max_loras_tried"]] == [1, 2, 4], l
pairs = {(p["prefill_hardware"], p["decode_hardware"]): p for p in j["chip_pairs"]}
assert all(p["max_loras"] in (1, 2, 4) for p in pairs.values()), pairs
b = j["best"]
assert pairs[(b["prefill_hardware"], b["decode_hardware"])]["max_loras"] == l["max_loras"], (b, l)
# The pair of h100-sxm alone chooses what `plan -H h100-sxm` chooses.
assert pairs[("h100-sxm", "h100-sxm")]["max_loras"] == one["lora"]["max_loras"], (pairs, one["lora"])
files = {f["path"]: f["text"] for e in j["launch"] for f in e["files"]}
v = files.get("vllm/serve.sh") or files["vllm/decode.sh"]
assert "--max-loras %d \\\n" % l["max_loras"] in v and "--max-cpu-loras 4 \\\n" in v and "--enable-lora \\\n" in v, v
g = files.get("sglang/serve.sh") or files["sglang/decode.sh"]
assert "--max-loras-per-batch %d \\\n" % l["max_loras"] in g and "--max-loaded-loras 4 \\\n" in g, g
t = [e for e in j["launch"] if e["engine"] == "trtllm"][0]
assert t["files"] == [] and "lora_config" in t["problem"], t
PY
"$CHALK" "${lmix[@]}" | grep -qE "^            h200 prefill, h100-sxm decode: .*, max-loras [124]$" || fail "plan -H --lora text lacks a pair's max-loras"
# --kv-offload over chip types: each pair's verdict is plan's for that pair alone; the pair of
# h100-sxm alone has `plan -H h100-sxm`'s (kv_offload.sh: the host tier pays in TTFT).
koff=(-m llama-3.1-8b --gpu-memory-utilization 0.22 --rate 2 --input 64 --output 4 --shared-prefix 2000:20 --requests 60 --budget-chips 2 --replica-chips 1 --max-seqs-candidates 64 --ttft-slo-ms 2000 --slo-percentile 50 --kv-offload host:10)
"$CHALK" plan -H h100-sxm,h200 "${koff[@]}" --json > "$tmp/koff.json" || fail "plan -H with --kv-offload exited $?"
"$CHALK" plan -H h100-sxm "${koff[@]}" --json > "$tmp/kone.json" || fail "plan --kv-offload on h100-sxm exited $?"
python3 - "$tmp/koff.json" "$tmp/kone.json" <<'PY' || fail "plan -H with --kv-offload: JSON"
import json, sys
j, one = (json.load(open(f)) for f in sys.argv[1:3])
pairs = {(p["prefill_hardware"], p["decode_hardware"]): p for p in j["chip_pairs"]}
assert all(p["kv_offload_verdict"]["host_gb"] == 10 for p in pairs.values()), pairs
assert pairs[("h100-sxm", "h100-sxm")]["kv_offload_verdict"] == one["kv_offload_verdict"], (pairs[("h100-sxm", "h100-sxm")], one["kv_offload_verdict"])
b = j["best"]
assert j["kv_offload_verdict"] == pairs[(b["prefill_hardware"], b["decode_hardware"])]["kv_offload_verdict"], j["kv_offload_verdict"]
assert all(p["max_loras"] is None for p in pairs.values()), pairs
PY
# (The text wraps its lines at 100 columns: read it as one.)
"$CHALK" plan -H h100-sxm,h200 "${koff[@]}" | tr -s ' \n' ' ' | grep -qE "h100-sxm prefill, h100-sxm decode: 1 chip \(aggregated\), \\\$2.350/hour; the offload tiers pay" \
  || fail "plan -H --kv-offload text lacks a pair's verdict"
