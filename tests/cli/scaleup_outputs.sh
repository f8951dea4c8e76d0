# chalk scaleup: the scale-up story across the catalog as a table, JSON and CSV.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
D="$SRC/tests/data"
# Every built-in system, one row each, with its year and domain size.
out=$("$CHALK" scaleup --json) || fail "scaleup --json"
python3 - "$out" "$("$CHALK" hardware --csv | tail -n +2 | wc -l)" <<'PY' || fail "scaleup --json content"
import json, sys
j = json.loads(sys.argv[1]); n = int(sys.argv[2])
rows = {r["system"]: r for r in j["rows"]}
assert len(rows) == n, (len(rows), n)
assert j["model"]["name"] == "deepseek-v3" and j["context_tokens"] == 8192 and j["batch"] == 1
assert j["model"]["params_total"] > 6.7e11  # the "model" object every command prints
h, g, l = rows["h100-sxm"], rows["gb200-nvl72"], rows["l40s"]
assert h["year"] == 2022 and h["scale_up_domain_chips"] == 8 and g["scale_up_domain_chips"] == 72
assert h["hbm_total_gb"] == 640 and g["hbm_total_gb"] == 13392
# DeepSeek-V3 at its checkpoint's fp8 (~690 GB) does not fit 8 x 80 GB: a pipeline, never "fits".
assert h["memory_fits"] is False and h["pp"] == 2 and h["tpot_ms"] > h["tpot_floor_ms"], h
assert "exceed" in h["why_not"]
# ...priced for cost over both boxes' 16 chips, the hops included (issue 20).
assert h["replica_chips"] == 16 and h["microbatches"] == 2 and h["cheapest_layout"].startswith("2 domains x stage ")
assert 0 < h["tok_per_s_per_chip"] < rows["h200"]["tok_per_s_per_chip"] and h["cost_usd_per_mtok"] > g["cost_usd_per_mtok"]
assert h["pipeline_hop_latency_ms"] > h["t_hop_ms"] > 0
assert g["memory_fits"] is True and g["pp"] == 1 and g["pipeline_hop_latency_ms"] == 0
assert g["tpot_ms"] > g["tpot_floor_ms"] > 0 and g["cost_usd_per_mtok"] > 0 and g["max_batch_at_context"] > 1000
# max_batch_at_context is the layout's, as decode counts it: DeepSeek-V3 on 8 H20 at 8192
# tokens holds 3 sequences under attention TP8 (each chip keeps every sequence's 575.7 MB
# latent), not the 31 an even pool of the 18 GB left beside the weights would give.
assert rows["h20"]["max_batch_at_context"] == 3 == rows["h20"]["batch_per_replica"], rows["h20"]
# L40S states no scale-out network: its pipeline cannot be priced, and no figure is made up:
# null, the key kept (review 10 L3: every row carries every key `columns` lists).
assert l["memory_fits"] is False and l["tok_per_s_per_chip"] is None and l["tpot_ms"] is None
assert "states no scale-out bandwidth" in l["why_not"], l["why_not"]
for r in rows.values():
    assert isinstance(r["memory_fits"], bool)
    assert r["memory_fits"] == (r["pp"] == 1), r["system"]
    assert r["largest_params_total_billion"] > 0
    # Every key in every row (review 10 L3); a figure is null only where nothing serves it.
    assert set(j["columns"]) <= set(r), (r["system"], set(j["columns"]) - set(r))
    assert (r["tok_per_s_per_chip"] is None) == (r["cheapest_layout"] is None), r["system"]
PY
# The lecture's NVL72 example (45:44): a 5T model at fp8 fits one 10-20 TB rack, not an HGX H100.
# ...the figure decode gives for the same 8 chips and context.
dec=$("$CHALK" decode -m deepseek-v3 -H h20 -n 8 -s 8192 -b 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["max_batch_at_context"])')
[ "$dec" = 3 ] || fail "decode -H h20 -n 8 -s 8192: max batch $dec, scaleup 3"
out=$("$CHALK" scaleup -m "$D/moe-5t.json" --weights fp8 -H h100-sxm,gb200-nvl72,"$D/rubin-ultra-nvl576.json" --csv) || fail "scaleup --csv"
printf '%s\n' "$out" | head -1 | grep -q "^system,chip,year,scale_up_domain_chips," || fail "csv header: $(printf '%s\n' "$out" | head -1)"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 4 ] || fail "csv rows"
printf '%s\n' "$out" | grep "^h100-sxm," | grep -q ",false," || fail "5T on H100 must not fit"
printf '%s\n' "$out" | grep "^gb200-nvl72," | grep -q ",true," || fail "5T on NVL72 fits"
printf '%s\n' "$out" | grep -q "^rubin-ultra-nvl576,Rubin Ultra (4-die package),2027,144," || fail "NVL576 from a file"
# Every CSV row has the header's columns, whichever figures a row leaves out.
out=$("$CHALK" scaleup -H h100-sxm,l40s --csv) || fail "scaleup --csv with an unpriceable pipeline"
printf '%s\n' "$out" | python3 -c 'import csv, sys; rows = list(csv.reader(sys.stdin)); assert len(rows) == 3 and len({len(r) for r in rows}) == 1, rows' \
  || fail "csv rows of unequal width: $out"
# The table for people names both halves.
out=$("$CHALK" scaleup -m llama-3.1-70b -H h100-sxm,tpu-v5e) || fail "scaleup table"
printf '%s\n' "$out" | grep -q "Largest model one domain holds, weights in fp8" || fail "largest-model title"
printf '%s\n' "$out" | grep -q "^h100-sxm .* yes " || fail "llama-3.1-70b fits an HGX H100: $out"
# The chart: one self-contained HTML page (or, in a build without the chart libraries, a one-line error).
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
err=$("$CHALK" scaleup -m "$D/moe-5t.json" --weights fp8 --plot "$tmp/s.html" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 2 ] && printf '%s' "$err" | grep -q "built without the plotting library"; then
  echo "plot skipped: no chart libraries in this build"
else
  [ $rc -eq 0 ] || fail "plot exited $rc: $err"
  grep -q 'vegaEmbed("#chart"' "$tmp/s.html" || fail "plot: no chart"
  grep -q '"largest_params_total_billion"' "$tmp/s.html" || fail "plot: no data"
  grep -q '"system":"rubin-nvl144"' "$tmp/s.html" || fail "plot: a system is missing"
fi
echo ok
