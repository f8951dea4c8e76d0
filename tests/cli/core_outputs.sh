# The core commands' machine-readable outputs parse and hold the expected fields.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
out=$("$CHALK" decode --model llama-3.1-70b --hardware h100-sxm --batch 1,64 --context 2048 --json) || fail "decode --json"
python3 - "$out" <<'PY' || fail "decode --json content"
import json, sys
j = json.loads(sys.argv[1])
steps = j["steps"]
assert [s["batch"] for s in steps] == [1, 64], steps
# Llama 3.1 70B bf16 on 8 H100: (141.107 GB weights - 2.101 GB input table) / (8 x 3.35 TB/s x 0.87) = 5.962 ms at batch 1.
assert abs(steps[0]["t_weights_ms"] - 5.962) < 0.001, steps[0]
assert steps[0]["bound"] == "weights"
assert j["assumptions"]["chips"] == 8 and j["assumptions"]["kv_dtype"] == "bf16"
assert "MAMF" in j["assumptions"]["matmul_efficiency_source"]
PY
csv=$("$CHALK" decode --model llama-3.1-8b --hardware h100-sxm --batch 1:8 --csv) || fail "decode --csv"
[ "$(printf '%s\n' "$csv" | head -1 | cut -d, -f1-3)" = "batch,context_tokens,t_compute_ms" ] || fail "csv header: $(printf '%s\n' "$csv" | head -1)"
[ "$(printf '%s\n' "$csv" | wc -l)" -eq 5 ] || fail "1:8 should give batches 1,2,4,8"
"$CHALK" models --json | python3 -c "import json,sys; m={r['name']:r for r in json.load(sys.stdin)}; assert m['deepseek-v3']['kv_bytes_per_token']==70272" || fail "models --json"
"$CHALK" hardware --csv | grep -q '^h100-sxm,H100 SXM,989.4' || fail "hardware --csv"
echo "core_outputs: all passed"
# A replica beyond the scale-up domain is flagged: the roofline has no scale-out term.
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 16 -b 1 --json | python3 -c "import json,sys; w=json.load(sys.stdin)['warnings']; assert any('span 2 scale-up domains' in x for x in w), w" || fail "scale-out warning"
"$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 8 -b 1 --json | python3 -c "import json,sys; w=json.load(sys.stdin)['warnings']; assert w == [], w" || fail "no warning within a domain"
# A --tp that splits heads no engine can split is computed, with a warning naming it.
"$CHALK" decode --mechanisms --tp 72 -b 1 | grep -q "warning     TP72 does not divide the 128 attention heads" || fail "head-split warning"
"$CHALK" decode --mechanisms --tp 8 -b 1 | grep -q "does not divide" && fail "TP8 splits 128 heads"
echo "core_outputs: scale-out warning passed"
