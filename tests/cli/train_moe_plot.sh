# `chalk train moe` (the MoE trade, lecture 29:46) and `chalk train plot run` (run charts):
# the papers' numbers, the chart data, and one-line errors.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"

# Clark et al. 2022: a 5M base with 128 experts is worth a ~52M dense model (paper: ~55M);
# Krajewski et al. 2024: a compute-optimal MoE at 1e20 FLOPs matches dense at ~20x the compute.
out=$("$CHALK" train moe --active-params 5e6 --experts 1,128 --json) || fail "train moe --json"
python3 - "$out" <<'PY' || fail "train moe figures"
import json, sys
j = json.loads(sys.argv[1])
rows = {(r["law"], r["routed_experts"]): r for r in j["rows"]}
dense, moe = rows[("clark-s-base", 1.0)], rows[("clark-s-base", 128.0)]
assert abs(dense["dense_equivalent_params"] / 5e6 - 1) < 1e-6, dense
assert abs(moe["dense_equivalent_params"] / 51.8e6 - 1) < 0.01, moe
assert abs(moe["compute_ratio"] - 10.37) < 0.05 and moe["params_total"] > moe["dense_equivalent_params"], moe
assert j["laws"]["clark"]["routing_cutoff_params"] == 937e9  # the paper's S-BASE cutoff
assert abs(j["laws"]["clark"]["routing_cutoff_params_rounded_fit"] / 1e12 - 1) < 1e-6  # 10^(0.108/0.009)
assert 17 < j["laws"]["krajewski"]["dense_compute_multiplier"] < 23, j["laws"]["krajewski"]
assert j["laws"]["clark"]["coefficients"]["e_max"] == 314.478 and "2202.01169" in j["laws"]["clark"]["source"]
PY
"$CHALK" train moe | grep -q "Clark et al. 2022" || fail "train moe table names its source"
# Review 6 L5: the krajewski row read "512" experts beside "E = 64" and the 128 asked for;
# the header says what it counts: E x G = 64 x 8 = 512 pieces of 1/8 the width, 8 routed.
"$CHALK" train moe --active-params 5e6 --experts 1,128 | tr '\n' ' ' | tr -s ' ' | grep -q "its experts 512 = E x G: the expansion's 64 expert FFNs cut into G = 8 pieces" \
  || fail "train moe: the krajewski row's experts stated as E x G"
"$CHALK" train moe --csv | head -1 | grep -q "^law,routed_experts,params_active" || fail "train moe --csv header"

expect_error "--routing: unknown routing technique 'switch'" train moe --routing switch
expect_error "--expert-share: must be a fraction in (0, 1]" train moe --expert-share 0
expect_error "--granularity: must be >= 1, got 0.5" train moe --granularity 0.5
expect_error "--active-params: must be a positive parameter count, got -1" train moe --active-params -1
expect_error "--tokens: must be a positive token count, got 0" train moe --tokens 0
expect_error "--flops: must be a positive FLOP count, got 0" train moe --flops 0

# The run charts: cost shares against the over-training factor (a third each at the
# equilibrium, with the lecture's equal ratios) and iso-loss curves through the chosen run.
data=$("$CHALK" train plot run -m llama-3.1-70b -H h100-sxm --json) || fail "train plot run --json"
python3 - "$data" <<'PY' || fail "train plot run data"
import json, sys
j = json.loads(sys.argv[1])
assert j["format"] == "chalk-train-run-chart/1"
k = j["over_training_factor"]
near = min(j["cost_shares"], key=lambda r: abs(r["over_training_factor"] / k - 1))
shares = sorted(j["cost_shares"], key=lambda r: r["over_training_factor"])
assert all(a["pretraining_share"] <= b["pretraining_share"] for a, b in zip(shares, shares[1:]))
for r in shares: assert abs(r["pretraining_share"] + r["rl_share"] + r["serving_share"] - 1) < 1e-9
chosen = [p for p in j["data"]["points"] if p["point"].startswith("chosen")][0]
assert chosen["tokens"] == j["pretraining_tokens"] and chosen["params"] == j["params_active_matmul"] and "params_active" not in j
curves = {c["curve"] for c in j["data"]["iso_loss"]}
assert any("chosen" in c for c in curves) and len(curves) >= 3, curves
assert len(j["charts"]) == 2 and len(j["data"]["frontier"]) > 5
# Labels never overprint: every series is named in a legend; no text marks.
marks = [l["mark"] if isinstance(l["mark"], str) else l["mark"]["type"] for c in j["charts"] for l in c["layer"]]
assert "text" not in marks, marks
# RL and serving coincide at the lecture's equal ratios: each phase has its own dash, so
# both stay visible, and the markers' dashes are a separate scale.
lines = j["charts"][0]["layer"][0]["encoding"]["strokeDash"]
assert lines["field"] == "phase" and len({json.dumps(r) for r in lines["scale"]["range"]}) == 3, lines
assert j["charts"][0]["resolve"]["scale"]["strokeDash"] == "independent"
# Review 3 L11: at 1280 px the legends cut "chosen: the equilibrium, 188x ove..." and the log
# axes read "1e+9 ... 1e+18". Every named legend keeps whole labels (labelLimit 0, below the
# plot) and the count axes read 289B-style (K, M, B, T), as the page writes them.
legends = [e["legend"] for c in j["charts"] for l in c["layer"] for k, e in l["encoding"].items()
           if k in ("color", "shape", "strokeDash") and e.get("legend") is not None]
assert len(legends) >= 4 and all(g["labelLimit"] == 0 and g["orient"] == "bottom" for g in legends), legends
for axis in ("x", "y"):
    a = j["charts"][1]["layer"][0]["encoding"][axis]["axis"]
    assert "format" not in a and all(f"'{u}'" in a["labelExpr"] for u in "KMBT"), a
# Review 6 L3: vega's own log ticks over eight decades fell ~8.7x apart ("1B, 9B, 80B, 700B,
# ..., 3000T, 20000T"); the ticks are the powers of ten from the decade at or below the least
# value to the one at or above the most (70B: N from n/300 ~ 2.3e8 to n x 300 ~ 2.1e13, so
# x runs 1e8 .. 1e14), and the specs name the vega-lite the page embeds (v6; v5 warned).
import math
assert all(c["$schema"].endswith("/vega-lite/v6.json") for c in j["charts"]), [c["$schema"] for c in j["charts"]]
def decades(v, lo, hi):
    assert all(abs(b / a - 10) < 1e-9 for a, b in zip(v, v[1:])) and abs(math.log10(v[0]) - round(math.log10(v[0]))) < 1e-12, v
    assert v[0] <= lo < 10 * v[0] and v[-1] / 10 < hi <= v[-1], (v, lo, hi)
for axis, field in (("x", "params"), ("y", "tokens")):
    vals = [p[field] for s in ("iso_loss", "frontier", "points") for p in j["data"][s]]
    decades(j["charts"][1]["layer"][0]["encoding"][axis]["axis"]["values"], min(vals), max(vals))
x = j["charts"][1]["layer"][0]["encoding"]["x"]["axis"]["values"]
assert x[0] == 1e8 and x[-1] == 1e14, x
ks = [r["over_training_factor"] for r in j["cost_shares"]]
decades(j["charts"][0]["layer"][0]["encoding"]["x"]["axis"]["values"], min(ks), max(ks))
PY
expect_error "--mfu: must be a fraction in (0, 1]" train plot run --mfu 2 --json
expect_error "--method: unknown Chinchilla method 'kaplan'" train plot run --method kaplan --json
