# One output vocabulary: every command's --json output checked against docs/output-schema.json
# (one envelope: the same top-level keys for every command, its rows under `rows` and their
# keys in `columns`; one type per key wherever it appears; no key the schema does not list;
# the model and hardware objects the same everywhere), and every command whose help offers
# --csv prints CSV.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Three `vllm bench serve --save-result` files for `calibrate` (test inputs, not measurements).
for r in 1 4 8; do
  printf '{"request_rate": %s, "num_prompts": 20, "completed": 20, "duration": 20, "total_input_tokens": 10240, "total_output_tokens": 1280, "mean_ttft_ms": %s, "mean_tpot_ms": 8}\n' \
    "$r" "$((30 + 2 * r))" > "$tmp/vllm-$r.json"
done
# A day's rate curve for `plan --rate-curve` (docs/file-formats.md, "Rate curves").
printf 'hour,rate_per_s\n0,1\n12,3\n' > "$tmp/day.csv"
cmds=(
  "decode -m llama-3.1-8b -H h100-sxm -b 1,8"
  "decode -b 1 --roofline"
  "decode -m deepseek-v3 -H h200 -b 1,64 --draft 1 --acceptance 0.85"
  "serving sweep -m llama-3.1-70b -H h100-sxm -b 1,64 --draft 3 --accepted-tokens 2.5 --drafter llama-3.1-8b"
  "layouts -m llama-3.1-8b -H h100-sxm -b 1:4 --objective latency"
  "prefill -m llama-3.1-8b -H h100-sxm -p 1024"
  "decode -m llama-3.1-70b -H h100-sxm --pp 2 -b 8,16"
  "prefill -m llama-3.1-70b -H h100-sxm --pp 2 -p 1024"
  "train moe"
  "train plot run -m llama-3.1-70b -H h100-sxm"
  "decode -m llama-3.1-8b -H h100-sxm -b 1 --explain"
  "prefill -m llama-3.1-8b -H h100-sxm -p 1024 --explain"
  "serving sweep -m llama-3.1-8b -H h100-sxm -b 1,64"
  "serving balance -m llama-3.1-8b -H h100-sxm"
  "serving window -m llama-3.1-8b -H h100-sxm"
  "serving frontier -m llama-3.1-8b -H h100-sxm -b 1,64 --replica-chips 1,2"
  "serving modes -m llama-3.1-8b -H h100-sxm --replica-chips 1,2"
  "serving plot -m llama-3.1-8b -H h100-sxm -b 1,64 --replica-chips 1,2"
  "prices list"
  "prices show gpt-4o"
  "prices infer gemini-1.5-pro"
  "prices forward -m llama-3.1-8b -H h100-sxm"
  "prices compare -m gpt-oss-120b -H h100-sxm,tpu-v5p"
  "layouts -m llama-3.1-8b -H h100-sxm -n 2"
  "layouts -m deepseek-v3 -H h200 -n 8"
  "models"
  "hardware"
  "simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 200 --input 512 --output 64 --ttft-slo-ms 500"
  "simulate -m llama-3.1-8b -H h100-sxm --rate 5 --requests 50 --input 512 --output 64 --draft 2 --accepted-tokens 2.2 --drafter qwen3-1.7b"
  "simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 200 --input 512 --output 64 --disaggregate --compare"
  "simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 200 --input 128 --output 32 --shared-prefix 512:4 --sessions 8:4 --replicas 2 --routing cache-aware"
  "simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 50 --input 256 --output 16 --lora 4:16,zipf:1,max-loras:2"
  "simulate -m llama-3.1-8b -H h100-sxm -n 1 --rate 5 --requests 200 --input 512 --output 64 --disaggregate --prefill-hardware h200 --decode-hardware b200"
  "validate"
  "train step -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2"
  "train memory -m llama-3.1-8b -H h100-sxm -n 8 --dp 8 --zero 2"
  "train layouts -m llama-3.1-8b -H h100-sxm -n 8"
  "train layouts -m llama-3.1-8b -H h100-sxm -n 8 --all"
  "train run -m llama-3.1-8b -H h100-sxm -n 8 --mfu 0.4 --tokens 1e12"
  "train run -m llama-3.1-8b -H h100-sxm --phase name=a,tokens=1e12,chips=8 --phase name=b,tokens=1e11,chips=16,seq=32768"
  "train chinchilla --flops 1e24"
  "train equilibrium"
  "plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 200 --input 512 --output 64 --budget-chips 2 --ttft-slo-ms 500 --tpot-slo-ms 30"
  "plan -m llama-3.1-8b -H h100-sxm --rate-curve $tmp/day.csv --requests 100 --input 512 --output 64 --budget-chips 2 --ttft-slo-ms 500 --tpot-slo-ms 30 --replica-chips 1 --modes aggregated"
  "simulate -m llama-3.1-8b -H h100-sxm -n 1 --trace $SRC/tests/data/traces/mooncake-synthetic-2543-2549.jsonl"
  "scaleup -m deepseek-v3 -H h100-sxm,gb200-nvl72,l40s"
  "plan -m llama-3.1-8b -H h100-sxm,h200 --rate 2 --requests 40 --input 512 --output 64 --budget-chips 2 --tpot-slo-ms 30 --replica-chips 1 --max-seqs-candidates 64"
  "plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 60 --input 256 --output 16 --budget-chips 1 --replica-chips 1 --max-seqs-candidates 64 --modes aggregated --ttft-slo-ms 100 --lora 2:16"
  "plan -m llama-3.1-8b -H h100-sxm --rate 2 --requests 60 --input 512 --output 64 --budget-chips 1 --replica-chips 1 --max-seqs-candidates 64 --modes aggregated --tpot-slo-ms 50 --draft 3 --acceptance 0.8 --drafter eagle3"
  "fleet $SRC/examples/fleet.csv -H h100-sxm --budget-chips 1 --modes aggregated"
  "step -m llama-3.1-8b -H h100-sxm -n 1 --prefill 512:0,256:1024 --decode 1024x32"
  "calibrate $tmp/vllm-1.json $tmp/vllm-4.json $tmp/vllm-8.json -m llama-3.1-8b -H h100-sxm -n 1 --fit request_overhead_s --max-requests 20"
  "calibrate $tmp/vllm-1.json $tmp/vllm-4.json $tmp/vllm-8.json -m llama-3.1-8b -H h100-sxm -n 1 --fit request_overhead_s --max-requests 20 --holdout half"
)
i=0
for c in "${cmds[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$CHALK" $c --json > "$tmp/$i.json" || fail "chalk $c --json exited $?"
  printf '%s\n' "$c" > "$tmp/$i.cmd"
  # The same command's CSV, where its help offers one: its rows are the JSON's (review 10 L3).
  # shellcheck disable=SC2086
  if "$CHALK" $c --help | grep -q -- "--csv"; then "$CHALK" $c --csv > "$tmp/$i.csv" 2>/dev/null || fail "chalk $c --csv exited $?"; fi
done
python3 - "$SRC/docs/output-schema.json" "$tmp" "$i" <<'PY' || fail "output schema"
import csv, json, os, re, sys
schema = json.load(open(sys.argv[1]))
keys, objects, other = schema["keys"], schema["objects"], schema["other_keys"]
fields = {f for fs in objects.values() for f in fs}
bad = []
def type_ok(v, spec):
    for t in spec.split("|"):
        if t == "null" and v is None: return True
        if t == "number" and isinstance(v, (int, float)) and not isinstance(v, bool): return True
        if t == "integer" and isinstance(v, int) and not isinstance(v, bool): return True
        if t == "boolean" and isinstance(v, bool): return True
        if t == "string" and isinstance(v, str): return True
        if t == "array" and isinstance(v, list): return True
        if t == "object" and isinstance(v, dict): return True
        if t in objects and isinstance(v, dict) and set(v.keys()) == set(objects[t]): return True
    return False
exempt = schema["exempt"]
def walk(v, path, cmd):
    if any(cmd.startswith(c) for c in exempt["commands"]) or any(path.startswith(p) for p in exempt["paths"]):
        return
    if isinstance(v, dict):
        for k, x in v.items():
            if not re.fullmatch(r"[a-z0-9_]+", k) and not path.endswith("peak_tflop_per_s"):
                bad.append(f"{cmd}: key {path}.{k} is not snake_case")
            spec = keys.get(k, other.get(k))
            if spec is None and k not in fields:
                bad.append(f"{cmd}: key {path}.{k} is in no list of docs/output-schema.json (keys, objects, other_keys)")
            if spec is not None and not type_ok(x, spec):
                bad.append(f"{cmd}: {path}.{k} = {json.dumps(x)[:80]} is not {spec}")
            elif x is None and "null" not in (spec or ""):
                bad.append(f"{cmd}: {path}.{k} is null, and the schema allows null only where it says so")
            walk(x, f"{path}.{k}", cmd)
    elif isinstance(v, list):
        for x in v: walk(x, path + "[]", cmd)
seen = set()
for n in range(1, int(sys.argv[3]) + 1):
    cmd = open(f"{sys.argv[2]}/{n}.cmd").read().strip()
    j = json.load(open(f"{sys.argv[2]}/{n}.json"))
    # The envelope (apps/chalk/envelope.h): every key, the command's own words, the rows' keys
    # in columns (the table's order, which Python's DataFrame keeps).
    if not isinstance(j, dict) or [k for k in schema["envelope"] if k not in j]:
        bad.append(f"{cmd}: not the envelope: lacks {[k for k in schema['envelope'] if not isinstance(j, dict) or k not in j]}")
        continue
    if not (cmd + " ").startswith(j["command"] + " ") or j["chalk_version"] != "0.1.0":
        bad.append(f"{cmd}: command {j['command']!r}, chalk_version {j['chalk_version']!r}")
    if not isinstance(j["assumptions"], dict) or not isinstance(j["rows"], list) or not all(isinstance(w, str) for w in j["warnings"]):
        bad.append(f"{cmd}: assumptions must be an object, rows an array, warnings strings")
    # One row set (review 10 L3): every row carries every key `columns` lists (null where the
    # schema allows it, never absent), and `--csv` prints as many rows as `rows` holds. The one
    # documented exception: `validate` rows chalk does not predict leave their figures out
    # (docs/output-schema.md, "A number is never null").
    for r in j["rows"]:
        if j["command"] != "validate" and isinstance(r, dict) and not set(j["columns"]) <= set(r):
            bad.append(f"{cmd}: a row lacks {sorted(set(j['columns']) - set(r))} of its columns: {json.dumps(r)[:120]}")
            break
    if os.path.exists(f"{sys.argv[2]}/{n}.csv"):
        csv_rows = list(csv.reader(open(f"{sys.argv[2]}/{n}.csv")))[1:]
        if len(csv_rows) != len(j["rows"]):
            bad.append(f"{cmd}: --csv prints {len(csv_rows)} rows, --json {len(j['rows'])}")
    row_keys = {k for r in j["rows"] if isinstance(r, dict) for k in r}
    if set(j["columns"]) != row_keys or len(j["columns"]) != len(row_keys):
        bad.append(f"{cmd}: columns {j['columns']} are not the rows' keys {sorted(row_keys)}")
    walk(j, "", cmd)
    if isinstance(j, dict):
        seen.update(k for k in ("model", "hardware") if k in j)
if not {"model", "hardware"} <= seen: bad.append(f"no command printed a model and a hardware object: {seen}")
# The keys the old vocabulary used for the same quantities are gone.
# Training: the scaling law's N is params_active_matmul (was params_active / active_params
# there, a different number from model.params_active); a sequence length is context_tokens
# (was seq_len_tokens, and sequence_tokens in train run); chip-hours are chip_hours (was gpu_hours in train run).
# `prices infer` keeps its estimate object active_params.
# Output tokens per second per chip is tok_per_s_per_chip in every command (review 8 M2: was
# output_tok_per_s_per_chip in simulate and plan rows; the measurement files' metric keeps
# that name, a value in validate's rows, not a key).
old = {"user_tok_per_s", "chip_tok_per_s", "replica_tok_per_s", "fits_in_hbm", "t_comm_exposed_ms", "sequence_tokens", "seq_len_tokens", "active_params", "hbm_tb_per_s", "gpu_hours",
       "output_tok_per_s_per_chip"}
for n in range(1, int(sys.argv[3]) + 1):
    text = open(f"{sys.argv[2]}/{n}.json").read()
    cmd = open(f"{sys.argv[2]}/{n}.cmd").read().strip()
    for o in old:
        if f'"{o}":' in text and not (o == "active_params" and cmd.startswith("prices infer")): bad.append(f"{cmd}: old key {o}")
    if cmd.startswith("train plot run") and '"params_active"' in text: bad.append(f"{cmd}: params_active for the matmul count")
# One meaning of chips (review 8 M2): in every row, object and assumptions that state
# replicas, `chips` is every chip of the deployment and `replica_chips` one replica's, so
# chips = replica_chips x replicas (+ decode_replica_chips x decode_replicas, the decode pool
# of a disaggregated row); simulate's assumptions.chips is its first row's.
# Was: simulate's rows all chips and its assumptions.chips one replica's; serving frontier's
# and sweep's chips the replica, which layouts (without chips) called replica_chips.
def chips_ok(o, where):
    if isinstance(o, dict):
        if "replicas" in o and all(isinstance(o.get(k), int) for k in ("chips", "replica_chips", "replicas")) and o["chips"] > 0:
            total = o["replica_chips"] * o["replicas"]
            if isinstance(o.get("decode_replica_chips"), int) and isinstance(o.get("decode_replicas"), int):
                total += o["decode_replica_chips"] * o["decode_replicas"]
            if o["chips"] != total:
                bad.append(f"{where}: chips {o['chips']} is not replica_chips x replicas (+ the decode pool's) = {total}: {json.dumps(o)[:160]}")
        for x in o.values(): chips_ok(x, where)
    elif isinstance(o, list):
        for x in o: chips_ok(x, where)
checked = set()
for n in range(1, int(sys.argv[3]) + 1):
    cmd = open(f"{sys.argv[2]}/{n}.cmd").read().strip()
    j = json.load(open(f"{sys.argv[2]}/{n}.json"))
    chips_ok(j, cmd)
    for r in j.get("rows", []):
        if isinstance(r, dict) and "replica_chips" in r and "chips" in r: checked.add(j["command"])
    if j["command"] == "simulate" and j["rows"] and j["assumptions"].get("chips") != j["rows"][0].get("chips"):
        bad.append(f"{cmd}: assumptions.chips {j['assumptions'].get('chips')} is not the first row's chips {j['rows'][0].get('chips')}")
# The commands whose rows have replicas state both, so the check above cannot pass vacuously.
for c in ("simulate", "plan", "fleet", "layouts"):
    if c not in checked: bad.append(f"no {c} row carries both chips and replica_chips")
if bad:
    print("\n".join(bad)); sys.exit(1)
PY
# Every --csv a help text offers works: a header line and at least one row.
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  "$CHALK" $c --help | grep -q -- "--csv" || continue
  # shellcheck disable=SC2086
  out=$("$CHALK" $c --csv) || fail "chalk $c --csv exited $? though its help offers --csv"
  [ "$(printf '%s\n' "$out" | wc -l)" -ge 2 ] || fail "chalk $c --csv printed no rows"
done
echo "output_schema: all passed"
