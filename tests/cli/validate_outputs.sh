# chalk validate's JSON and CSV: every row present, errors consistent, summaries per kind.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
# Through a file, not an argument: the JSON of all rows outgrew one argument's 128 KiB
# (MAX_ARG_STRLEN) at 121 rows.
json_out=$(mktemp); trap 'rm -f "$json_out"' EXIT
"$CHALK" validate --json > "$json_out" || fail "validate --json"
python3 - "$json_out" <<'PY' || fail "validate --json content"
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["id"]: r for r in j["rows"]}
assert len(rows) == 140, len(rows)
l = rows["LLAMA3-1"]
assert l["status"] == "predicted" and l["unit"] == "TFLOP/s/chip" and l["kind"] == "training", l
assert "TP8" in l["layout"] and "PP16" in l["layout"], l["layout"]
assert rows["DSV3-TRAIN-1"]["status"] == "predicted" and rows["DSV3-TRAIN-1"]["unit"] == "chip-hours"
assert rows["MAMF-BF16-H100"]["status"] == "calibration"
b = rows["MBR2509-B200-Q30B"]  # issue 33: 8 B200, EP8, microbatch 1, the table's 18,066
assert b["status"] == "predicted" and b["measured_in_unit"] == 18066 and "EP8" in b["layout"], b
r = rows["TRT-R1-B200-MINLAT-NOMTP"]
assert r["status"] == "predicted" and r["measured_in_unit"] == 111
assert abs(r["predicted_in_unit"] / 111 - 1 - r["error_fraction"]) < 1e-9
assert r["governs"] == "overhead" and r["metric"] == "tok_per_s_per_user" and r["unit"] == "tok/s/user"
m = rows["MLPERF41-L70B-H100x8"]
# The row states its dataset, not a length: the input is OpenOrca's mean prompt, 222.33 -> 222.
assert m["fully_specified"] == "assumed" and any(a.startswith("input_tokens: empty, 222: the mean prompt of dataset mlperf-llama2-70b") for a in m["assumptions"]), m["assumptions"]
assert rows["SGL-H100-DECODE"]["assumptions"] == [] and rows["SGL-H100-DECODE"]["fully_specified"] == "stated"
kinds = {(s["kind"], s["subset"]) for s in j["summary"] if s["metric"] == "all"}
for k in ("decode", "prefill", "serving", "training", "run", "all"):
    assert (k, "all rows") in kinds, k
# Issue 29: the serving kind also per metric key (17 output_tok_per_s rows); no other kind is split.
per_metric = {s["metric"]: s for s in j["summary"] if s["metric"] != "all"}
assert all(s["kind"] == "serving" and s["subset"] == "all rows" for s in per_metric.values()), per_metric
assert per_metric["output_tok_per_s"]["count"] == 17 and per_metric["ttft_ms"]["count"] == 1, per_metric
assert all(c["name"] for c in j["calibration"])
PY
csv=$("$CHALK" validate --csv) || fail "validate --csv"
[ "$(printf '%s\n' "$csv" | head -1 | cut -d, -f1-4)" = "id,kind,status,measured_in_unit" ] || fail "csv header"
python3 - "$csv" <<'PY' || fail "validate --csv content"
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
assert len(rows) == 140
assert sum(r["status"] == "predicted" for r in rows) == 109
assert "metric" in rows[0] and rows[0]["metric"], rows[0]  # the measured quantity, as --json's rows name it
PY
# One vocabulary: --json's columns are --csv's header, in order.
[ "$("$CHALK" validate --json | python3 -c 'import json,sys; print(",".join(c["key"] if isinstance(c, dict) else c for c in json.load(sys.stdin)["columns"]))')" = "$(printf '%s\n' "$csv" | head -1)" ] || fail "validate: --json columns differ from the --csv header"
# Rows that leave a column empty (issue 32): each default is named, with its value, in the
# JSON's assumptions and in the table's "assumed:" lines.
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$json_out"' EXIT
{ echo "id,kind,model,hardware,chips,weights,kv,batch,batch_per,input_tokens,output_tokens,context,dataset,draft_tokens,train_tokens,step_tokens,engine,metric,value"
  echo "NOCHIPS,serving,llama-3.1-70b,h100-sxm,,bf16,bf16,max,,1024,256,,,,,,vllm,output_tok_per_s_per_chip,1000"
  echo "NOBATCH,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,1024,256,,,,,,vllm,output_tok_per_s,10000"
  echo "DATASET,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,512,,,mlperf-llama2-70b,,,,trtllm,output_tok_per_s,20000"
  echo "MLPERFIN,serving,llama-3.1-405b,h200,8,fp8,fp8,max,,,,,mlperf-llama3.1-405b,,,,trtllm,output_tok_per_s,5000"
  echo "MTP,decode,deepseek-v3,h200,8,fp8,bf16,64,replica,,,2048,,1,,,sglang,output_tok_per_s_per_chip,1000"
  echo "CARD,run,llama-2-70b,a100-80gb,,,,,,4096,,,,,2e12,4e6,other,gpu_hours,1720320"
  echo "TRACE,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,,,,azure-llm-2023-conv,,,,vllm,output_tok_per_s_per_chip,1000"
  echo "DECODE,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,,,2048,,,,,vllm,output_tok_per_s_per_chip,1000"
  echo "PREFILL,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,1024,,,,,,,vllm,prefill_tok_per_s_per_chip,10000"; } > "$tmp/unstated.csv"
# Training rows: a global batch that does not divide, and a run whose cluster is its degrees.
{ echo "id,kind,model,hardware,chips,tp,pp,dp,batch,batch_per,input_tokens,microbatch,recompute,zero,train_tokens,metric,value"
  echo "NODIV,training,llama-3.1-8b,h100-sxm,8,1,1,8,64,run,4096,3,full,1,,step_s,1"
  echo "DEGREES,run,llama-2-70b,a100-80gb,,8,2,4,1024,run,4096,,,,2e12,gpu_hours,1720320"; } > "$tmp/unstated-train.csv"
out=$("$CHALK" validate "$tmp/unstated.csv" --json) || fail "validate unstated.csv --json"
python3 - "$out" <<'PY' || fail "validate unstated.csv --json: defaults not named"
import json, sys
rows = {r["id"]: r for r in json.loads(sys.argv[1])["rows"]}
def has(rid, prefix):
    r = rows[rid]
    assert r["status"] == "predicted", r
    assert r["fully_specified"] == "assumed", r
    assert any(a.startswith(prefix) for a in r["assumptions"]), (rid, prefix, r["assumptions"])
# Llama 3.1 70B bf16 on H100: 2 chips hold it with one sequence of 1024 + 256 tokens.
has("NOCHIPS", "chips: empty, 2: the smallest replica that holds the weights and one sequence of 1280 tokens")
# 55.94 GB of KV at the mean context 1152 x 131,072 bytes: 370 sequences.
has("NOBATCH", "batch: empty, max (370 sequences per replica here): a throughput run's batch is what the engine admits under its KV budget")
# MLPerf llama2-70b: 294.45 generated tokens per sample, rounded to 294.
has("DATASET", "output_tokens: empty, 294: the mean generated tokens of dataset mlperf-llama2-70b")
# MLPerf llama3.1-405b: mean prompt 9428.64 tokens (computed from the published set's per-sample
# counts), mean generation 684.68: 9429 in, 685 out.
has("MLPERFIN", "input_tokens: empty, 9429: the mean prompt of dataset mlperf-llama3.1-405b")
has("MLPERFIN", "output_tokens: empty, 685: the mean generated tokens of dataset mlperf-llama3.1-405b")
# One MTP draft at 87.5% acceptance: 1.875 tokens kept per step.
has("MTP", "accepted_tokens: empty, 1.875 tokens kept per step")
# 4e6 / 4096 = 976.6 sequences: 977.
has("CARD", "batch: empty, 977 sequences per step = step_tokens 4000000 / input_tokens 4096, rounded to whole sequences")
has("CARD", "chips: empty, ")
# The Azure 2023 conversation trace: mean prompt 1154.70 tokens, mean output 211.13.
has("TRACE", "input_tokens: empty, 1155: the mean prompt of dataset azure-llm-2023-conv")
has("TRACE", "output_tokens: empty, 211: the mean generated tokens of dataset azure-llm-2023-conv")
# 8B bf16 on one H100: 26,674 blocks of 16 tokens; 128 per 2048-token sequence: 208.
has("DECODE", "batch: empty, 208 sequences: what the engine admits under its KV budget")
# 1024-token prompts: vLLM's 8192-token step budget takes 8.
has("PREFILL", "batch: empty, 8 prompts: what the engine admits under its KV budget")
PY
out=$("$CHALK" validate "$tmp/unstated.csv") || fail "validate unstated.csv"
for want in "assumed: chips: empty, 2: the smallest replica" "assumed: batch: empty, max (370 sequences" "assumed: output_tokens: empty, 294" \
            "assumed: accepted_tokens: empty, 1.875" "assumed: batch: empty, 977 sequences" "assumed: chips: empty, " \
            "assumed: input_tokens: empty, 1155" "assumed: input_tokens: empty, 9429" "assumed: batch: empty, 208 sequences" "assumed: batch: empty, 8 prompts"; do
  case "$out" in *"$want"*) ;; *) fail "validate unstated.csv: the table lacks '$want': $out";; esac
done
out=$("$CHALK" validate "$tmp/unstated-train.csv" --json) || fail "validate unstated-train.csv --json"
python3 - "$out" <<'PY' || fail "validate unstated-train.csv --json: defaults not named"
import json, sys
rows = {r["id"]: r for r in json.loads(sys.argv[1])["rows"]}
def has(rid, prefix):
    r = rows[rid]
    assert r["status"] == "predicted", r
    assert r["fully_specified"] == "assumed", r
    assert any(a.startswith(prefix) for a in r["assumptions"]), (rid, prefix, r["assumptions"])
# 64 sequences over dp 8 x microbatch 3 = 24: 2.67 microbatches a rank, nearest whole is 72.
has("NODIV", "batch: 64 sequences do not divide by dp 8 x microbatch 3: predicted at the nearest global batch that does, 72")
# DP4 x TP8 x PP2 = 64 chips.
has("DEGREES", "chips: empty, dp x tp x pp x cp = 64 (the stated degrees)")
PY
out=$("$CHALK" validate "$tmp/unstated-train.csv") || fail "validate unstated-train.csv"
for want in "assumed: batch: 64 sequences do not divide by dp 8 x microbatch 3" "assumed: chips: empty, dp x tp x pp x cp = 64"; do
  case "$out" in *"$want"*) ;; *) fail "validate unstated-train.csv: the table lacks '$want': $out";; esac
done
# A row naming its drafter and draft length but not the acceptance: EAGLE-3 on Llama 3.1 8B
# keeps 2.60 tokens per step at 3 drafts (vLLM's regression baseline, data/drafters/).
{ echo "id,kind,model,hardware,chips,weights,kv,batch,batch_per,context,draft_tokens,drafter,engine,metric,value"
  echo "EAGLE,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,16,replica,2048,3,eagle3,vllm,output_tok_per_s_per_chip,1000"; } > "$tmp/unstated-draft.csv"
out=$("$CHALK" validate "$tmp/unstated-draft.csv" --json) || fail "validate unstated-draft.csv --json"
python3 - "$out" <<'PY' || fail "validate unstated-draft.csv --json: the drafter's default not named"
import json, sys
r = {r["id"]: r for r in json.loads(sys.argv[1])["rows"]}["EAGLE"]
assert r["status"] == "predicted" and r["fully_specified"] == "assumed", r
assert any(a.startswith("accepted_tokens: empty, 2.6 tokens kept per step: eagle3 drafting 3 for a llama target") for a in r["assumptions"]), r["assumptions"]
PY
out=$("$CHALK" validate "$tmp/unstated-draft.csv") || fail "validate unstated-draft.csv"
case "$out" in *"assumed: accepted_tokens: empty, 2.6 tokens kept per step: eagle3"*) ;; *) fail "validate unstated-draft.csv: no drafter assumption: $out";; esac
echo "validate_outputs: all passed"
