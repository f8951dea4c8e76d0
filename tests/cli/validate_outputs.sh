# chalk validate's JSON and CSV: every row present, errors consistent, summaries per kind.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
out=$("$CHALK" validate --json) || fail "validate --json"
python3 - "$out" <<'PY' || fail "validate --json content"
import json, sys
j = json.loads(sys.argv[1])
rows = {r["id"]: r for r in j["rows"]}
assert len(rows) == 87, len(rows)
l = rows["LLAMA3-1"]
assert l["status"] == "predicted" and l["unit"] == "TFLOP/s/chip" and l["kind"] == "training", l
assert "TP8" in l["layout"] and "PP16" in l["layout"], l["layout"]
assert rows["DSV3-TRAIN-1"]["status"] == "predicted" and rows["DSV3-TRAIN-1"]["unit"] == "chip-hours"
assert rows["MAMF-BF16-H100"]["status"] == "calibration"
r = rows["TRT-R1-B200-MINLAT-NOMTP"]
assert r["status"] == "predicted" and r["measured_in_unit"] == 111
assert abs(r["predicted_in_unit"] / 111 - 1 - r["error_fraction"]) < 1e-9
assert r["governs"] == "overhead" and r["metric"] == "tok_per_s_per_user" and r["unit"] == "tok/s/user"
m = rows["MLPERF41-L70B-H100x8"]
assert m["fully_specified"] == "assumed" and "input_tokens 512: filled in by the row's author, not stated by the source (see its notes)" in m["assumptions"]
assert rows["SGL-H100-DECODE"]["assumptions"] == [] and rows["SGL-H100-DECODE"]["fully_specified"] == "stated"
kinds = {(s["kind"], s["subset"]) for s in j["summary"]}
for k in ("decode", "prefill", "serving", "training", "run", "all"):
    assert (k, "all rows") in kinds, k
assert all(c["name"] for c in j["calibration"])
PY
csv=$("$CHALK" validate --csv) || fail "validate --csv"
[ "$(printf '%s\n' "$csv" | head -1 | cut -d, -f1-4)" = "id,kind,status,measured_in_unit" ] || fail "csv header"
python3 - "$csv" <<'PY' || fail "validate --csv content"
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
assert len(rows) == 87
assert sum(r["status"] == "predicted" for r in rows) == 56
PY
echo "validate_outputs: all passed"
