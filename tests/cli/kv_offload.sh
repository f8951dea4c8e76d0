# `--kv-offload` in `chalk simulate` and `chalk plan` (docs/simulator.md 1.8): the tiers' hits
# add to HBM's, the JSON echoes them, plan says whether they pay, and bad specs are one-line
# errors naming the flag (exit 2).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Llama 3.1 8B on one H100 with 22% of HBM for weights and KV: 17.6 GB - 16.1 GB of weights
# leaves room for about 700 blocks (~11,000 tokens); 20 system prompts of 2,000 tokens
# (40,000 tokens) do not fit, so HBM evicts them and a 10 GB host tier (4,768 blocks of
# 2,097,152 B) keeps them all.
traffic=(-m llama-3.1-8b -H h100-sxm --gpu-memory-utilization 0.22 --rate 2 --input 64 --output 4 --shared-prefix 2000:20)
base=(-n 1 --requests 120 "${traffic[@]}")
"$CHALK" simulate "${base[@]}" --json > "$tmp/none.json" || fail "simulate without tiers"
"$CHALK" simulate "${base[@]}" --kv-offload host:10,ssd:100 --json > "$tmp/tiers.json" || fail "simulate --kv-offload"
python3 - "$tmp/none.json" "$tmp/tiers.json" <<'PY' || fail "kv_offload figures"
import json, sys
none = json.load(open(sys.argv[1]))["details"][0]
d = json.load(open(sys.argv[2]))["details"][0]
k, p = d["kv_offload"], d["prefix_cache"]
assert none["kv_offload"] is None, none["kv_offload"]
assert none["prefix_cache"]["kv_blocks_evicted"] > 0, none["prefix_cache"]  # HBM is too small: the test's premise
# HGX H100: min(76.8 GB/s DDR5, 64 GB/s PCIe Gen5 x16) = 64; the NVMe tier's 7.0.
assert k["host_fetch_gb_per_s_per_chip"] == 64 and k["ssd_fetch_gb_per_s_per_chip"] == 7, k
assert k["host_gb"] == 10 and k["ssd_gb"] == 100, k
# Hits split by tier add up to the cache's; the host tier holds every prompt: no SSD hits.
total = k["hbm_hit_token_fraction"] + k["host_hit_token_fraction"] + k["ssd_hit_token_fraction"]
assert abs(total - p["cached_token_fraction"]) < 1e-12, (total, p)
assert k["host_hit_token_fraction"] > 0 and k["ssd_hit_token_fraction"] == 0, k
assert p["cached_token_fraction"] > none["prefix_cache"]["cached_token_fraction"], (p, none["prefix_cache"])
# Bytes fetched are whole blocks of 2,097,152 B; the fetch time is bytes / 64 GB/s (one chip).
assert k["kv_fetched_bytes"] > 0 and k["kv_fetched_bytes"] % 2097152 == 0, k
assert abs(k["kv_fetch_s"] - k["kv_fetched_bytes"] / 64e9) < 1e-9 * k["kv_fetch_s"], k
assert k["kv_blocks_offloaded"] >= p["kv_blocks_evicted"] > 0, (k, p)
PY
# Capacity 0 is today's run, figure for figure.
"$CHALK" simulate "${base[@]}" --kv-offload host:0,ssd:0 --json > "$tmp/zero.json" || fail "simulate --kv-offload host:0"
python3 - "$tmp/none.json" "$tmp/zero.json" <<'PY' || fail "capacity 0 changed the run"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["rows"] == b["rows"] and a["details"] == b["details"], "runs differ"
PY
"$CHALK" simulate "${base[@]}" --kv-offload host:10 | grep -q "^offload     aggregated: host 10.00 GB at 64.0 GB/s per chip" || fail "simulate text lacks the offload line"
# plan: with and without the tiers. At the median the request finds its prompt (20 prompts,
# 60 requests: two thirds are repeats): with the host tier it is fetched, without it is
# recomputed, on the same one-chip deployment: the tiers pay in TTFT at equal cost.
"$CHALK" plan "${traffic[@]}" --requests 60 --budget-chips 1 --ttft-slo-ms 2000 --slo-percentile 50 --kv-offload host:10 --json > "$tmp/plan.json" || fail "plan --kv-offload"
python3 - "$tmp/plan.json" <<'PY' || fail "plan kv_offload_verdict"
import json, sys
v = json.load(open(sys.argv[1]))["kv_offload_verdict"]
assert v["host_gb"] == 10 and v["ssd_gb"] == 0, v
w, wo = v["with_tiers"], v["without_tiers"]
assert set(w) == set(wo) == {"cost_usd_per_hour", "chips", "ttft_at_percentile_ms"}, v
assert w["chips"] == wo["chips"] == 1 and w["cost_usd_per_hour"] == wo["cost_usd_per_hour"], v
assert w["ttft_at_percentile_ms"] < wo["ttft_at_percentile_ms"] and v["tier_pays"] is True, v
PY
# Errors: one line, exit 2, naming the flag.
expect_error "--kv-offload: got 'disk:10'; unknown tier 'disk'; expected host, ssd, host-bw or ssd-bw" simulate "${base[@]}" --kv-offload disk:10
expect_error "--kv-offload: got 'host:-5'; host must be a number in [0, 1e+09], got '-5'" simulate "${base[@]}" --kv-offload host:-5
expect_error "--kv-offload: got 'host:1,ssd:x'; ssd must be a number in [0, 1e+09], got 'x'" plan "${traffic[@]}" --budget-chips 1 --ttft-slo-ms 500 --kv-offload host:1,ssd:x
expect_error "--kv-offload: backs the prefix cache, which runs on traffic with token structure" simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 1 --kv-offload host:10
echo "kv_offload: all passed"
