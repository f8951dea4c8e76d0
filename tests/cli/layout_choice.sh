# A latency question's layout (issue 29, issue 30 item 1): with no --tp/--ep, `prefill` and
# `simulate` compare every fitting layout of the replica's chips by their own question (least
# TTFT; least E2E p50 not overloaded at the stated traffic), not by decode throughput, and
# print the choice and the next best (`layout` line, JSON layout_choice). A dense model's one
# TP layout is unchanged and nothing is compared.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
moe=(-m qwen3-235b-a22b -H h200 -n 8)

# Prefill of a 32,768-token prompt on 8 H200. The roofline (all 8 chips' FLOPs, bf16 at the
# MAMF fraction 0.803): 2 x (21.6e9 - 0.62e9 LM head, run on the last position only) x
# 32,768 = 1.375e15 for the weights' matmuls plus the causal attention core 94 layers x 4 x
# 8,192 (64 heads x 128) x 32,768^2 / 2 = 1.654e15, 3.029e15 FLOP at 8 x 989.4e12 x 0.803 =
# 6.356e15 FLOP/s: 476.6 ms (chalk: 476.2 ms). Qwen3's 4 KV heads give two fitting
# layouts: attention TP8 with EP8, and DP attention with EP8 (attention TP t x 8/t is TP8
# itself here). Under DP attention the prompt's attention runs on one of the 8 chips: its
# core alone, 1.654e15 FLOP at 989.4e12 x 0.803, is 2.08 s, over 3 x any TP8 TTFT below
# 2 x 476 ms; under attention TP8 all 8 share it, so the least TTFT is the TP8 layout's
# and lies between the roofline and twice it.
"$CHALK" prefill "${moe[@]}" -p 32768 --json > "$tmp/pre.json" || fail "prefill --json"
"$CHALK" prefill "${moe[@]}" -p 32768 --tp 1 --json > "$tmp/pre_dp.json" || fail "prefill --tp 1 --json"
python3 - "$tmp/pre.json" "$tmp/pre_dp.json" <<'PY' || fail "prefill's default layout is not the least TTFT"
import json, sys
j, dp = (json.load(open(f)) for f in sys.argv[1:3])
c, r = j["layout_choice"], j["rows"][0]
assert c["objective"] == "least TTFT at batch 1 of 32768-token prompts", c
assert c["layouts_compared"] == 2, c
assert c["chosen"]["layout"].startswith("attention TP8"), c
assert not c["chosen"]["overloaded"] and c["chosen"]["score_ms"] == r["ttft_ms"], (c, r)
assert c["next_best"]["score_ms"] > r["ttft_ms"], c
roof = r["ttft_roofline_ms"]
assert abs(roof - 476.2) < 0.5, roof
assert roof <= r["ttft_ms"] <= 2 * roof, (roof, r["ttft_ms"])
# Stated data-parallel attention: no choice reported, and its TTFT is over 3x the chosen one.
assert dp["layout_choice"] is None and dp["rows"][0]["ttft_ms"] > 3 * r["ttft_ms"], dp["rows"][0]
PY
out=$("$CHALK" prefill "${moe[@]}" -p 32768) || fail "prefill"
printf '%s\n' "$out" | grep -q "^layout      attention TP8" || fail "prefill does not print its layout choice: $out"
# The text wraps at 100 columns: read it as one line.
printf '%s\n' "$out" | tr '\n' ' ' | tr -s ' ' | grep -q "least TTFT at batch 1 of 32768-token prompts; runner-up attention TP1" \
  || fail "prefill does not name the runner-up: $out"

# Simulate at 1 request/s of 16,000-token prompts and 200-token outputs: the chosen layout
# is not overloaded, and its TPOT is tens of ms (a decode step of ~1 sequence on 8 H200
# plus the prefill chunks it shares steps with), where DP attention's was 665 ms before each
# rank got its own share of the token budget.
"$CHALK" simulate "${moe[@]}" --rate 1 --requests 200 --input 16000 --output 200 --json > "$tmp/sim.json" || fail "simulate --json"
python3 - "$tmp/sim.json" <<'PY' || fail "simulate's default layout"
import json, sys
j = json.load(open(sys.argv[1]))
c, r, d = j["layout_choice"], j["rows"][0], j["details"][0]
assert c["objective"].startswith("least E2E p50 over the first 200 requests"), c
assert not c["chosen"]["overloaded"] and not d["overloaded"], (c, d)
assert abs(c["chosen"]["score_ms"] - r["e2e_p50_ms"]) < 1e-9 * r["e2e_p50_ms"], (c, r)
assert c["next_best"] is not None and (c["next_best"]["overloaded"] or c["next_best"]["score_ms"] >= c["chosen"]["score_ms"]), c
assert r["tpot_p50_ms"] < 100 and r["ttft_p50_ms"] < 2000, r
PY

# A dense model: one layout fits (TP), nothing compared, the default as before.
for cmd in "prefill -m llama-3.1-70b -H h100-sxm -p 8192" "simulate -m llama-3.1-8b -H h100-sxm --rate 2 --requests 20 --input 512 --output 16"; do
  # shellcheck disable=SC2086
  "$CHALK" $cmd --json | python3 -c "
import json, sys; j = json.load(sys.stdin); assert j['layout_choice'] is None, j['layout_choice']" || fail "$cmd: a dense model's layout was compared"
done
