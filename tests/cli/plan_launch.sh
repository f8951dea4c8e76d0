# `chalk plan`'s launch files (src/sim/launch.h): the files an operator runs, with the model's
# repo id and every setting that changes the simulated numbers; written by --launch-dir
# exactly as --json holds them; valid sh (run here against stand-in engine binaries that
# print their arguments) and valid YAML.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The issue's case: FP8 weights and KV, TensorRT-LLM's scheduler simulated.
"$CHALK" plan -m llama-3.1-70b -H h100-sxm --weights fp8 --kv-dtype fp8 --engine trtllm --rate 5 --requests 200 \
  --input 2000 --output 200 --ttft-slo-ms 2000 --tpot-slo-ms 50 --budget-chips 16 --modes aggregated \
  --json --launch-dir "$tmp/agg" > "$tmp/agg.json" || fail "plan --json --launch-dir"
python3 - "$tmp/agg.json" "$tmp/agg" <<'PY' || fail "aggregated launch files"
import json, os, re, sys, yaml
j = json.load(open(sys.argv[1])); d = sys.argv[2]; b = j["best"]
launch = {e["engine"]: e for e in j["launch"]}
assert [e["engine"] for e in j["launch"]][0] == "trtllm" and launch["trtllm"]["simulated"], j["launch"]
files = {f["path"]: f for e in j["launch"] for f in e["files"]}
# --launch-dir wrote exactly what --json holds; scripts are executable.
for path, f in files.items():
    assert open(os.path.join(d, path)).read() == f["text"], path
    assert os.access(os.path.join(d, path), os.X_OK) == f["executable"], path
    assert all(len(line) <= 100 for line in f["text"].splitlines()), path
written = sorted(os.path.relpath(os.path.join(r, n), d) for r, _, ns in os.walk(d) for n in ns)
assert written == sorted(files), (written, sorted(files))
tp = int(re.search(r"attention TP(\d+)", b["layout"]).group(1))
v = files["vllm/serve.sh"]["text"]
# Review 7 M4: the instruct repository hosts serve (data/models/served.json), quantized at load.
for want in ['MODEL="${MODEL:-meta-llama/Llama-3.1-70B-Instruct}"', 'exec vllm serve "$MODEL" \\', f"--tensor-parallel-size {tp} \\",
             "--quantization fp8 \\", "--kv-cache-dtype fp8 \\", "--gpu-memory-utilization 0.9 \\",
             f"--max-num-seqs {b['max_sequences']} \\", "--max-num-batched-tokens 8192 \\", "--max-model-len 2200"]:
    assert want in v, (want, v)
assert "# Simulated with KV reserved to completion at admission" in v, v  # trtllm's admission, no vLLM flag
# Review 2 L9: the length cap is the simulated traffic's longest request (2000 + 200), said.
for path in ("vllm/serve.sh", "sglang/serve.sh", "trtllm/serve.sh"):
    assert "# Maximum request length 2200 tokens (prompt + output)" in files[path]["text"], files[path]["text"]
s = files["sglang/serve.sh"]["text"]
for want in ["--kv-cache-dtype fp8_e4m3", "--quantization fp8", f"--max-running-requests {b['max_sequences']}", "--mem-fraction-static 0.9"]:
    assert want in s, (want, s)
t = files["trtllm/serve.sh"]["text"]
assert "The repository's weights are bf16 and chalk simulated fp8" in " ".join(l[2:] for l in v.splitlines() if l.startswith("# ")), v
# trtllm-serve takes the checkpoint's quantization: NVIDIA's fp8 checkpoint of the instruct model.
assert 'MODEL="${MODEL:-nvidia/Llama-3.1-70B-Instruct-FP8}"' in t, t
assert "MODEL defaults to nvidia/Llama-3.1-70B-Instruct-FP8, an fp8 checkpoint of meta-llama/Llama-3.1-70B-Instruct" in " ".join(
    l[2:] for l in t.splitlines() if l.startswith("# ")), t
assert f"--tp_size {tp} \\" in t and f"--max_batch_size {b['max_sequences']} \\" in t, t
y = yaml.safe_load(files["trtllm/extra_llm_api_options.yaml"]["text"])
assert y["kv_cache_config"]["dtype"] == "fp8", y
assert y["scheduler_config"]["capacity_scheduler_policy"] == "GUARANTEED_NO_EVICT", y
assert 0.5 < y["kv_cache_config"]["free_gpu_memory_fraction"] < 0.9, y
PY
# The scripts are valid sh, and the engines receive one argument per flag and value.
mkdir -p "$tmp/bin"
for prog in vllm trtllm-serve python3; do printf '#!/bin/sh\nprintf "%%s\\n" "$@"\n' > "$tmp/bin/$prog"; chmod +x "$tmp/bin/$prog"; done
for f in "$tmp"/agg/*/*.sh; do sh -n "$f" || fail "$f is not valid sh"; done
args=$(PATH="$tmp/bin:$PATH" sh "$tmp/agg/vllm/serve.sh") || fail "vllm/serve.sh did not run"
printf '%s\n' "$args" | head -3 | tr '\n' ' ' | grep -q "^serve meta-llama/Llama-3.1-70B-Instruct --host " || fail "vllm serve argv: $args"
printf '%s\n' "$args" | grep -A1 -x -- "--kv-cache-dtype" | grep -qx fp8 || fail "vllm argv lacks --kv-cache-dtype fp8: $args"
args=$(PATH="$tmp/bin:$PATH" sh "$tmp/agg/trtllm/serve.sh") || fail "trtllm/serve.sh did not run without MODEL"
printf '%s\n' "$args" | head -1 | grep -qx "nvidia/Llama-3.1-70B-Instruct-FP8" || fail "trtllm argv without MODEL: $args"
args=$(MODEL=/ckpt/fp8 PATH="$tmp/bin:$PATH" sh "$tmp/agg/trtllm/serve.sh") || fail "trtllm/serve.sh did not run"
printf '%s\n' "$args" | grep -A1 -x -- "--extra_llm_api_options" | grep -qx "$tmp/agg/trtllm/extra_llm_api_options.yaml" || fail "trtllm argv: $args"
# Disaggregated: each engine's front end over its prefill and decode servers; a repo id typed
# is served as typed.
"$CHALK" plan -m meta-llama/Llama-3.1-8B-Instruct -H h100-sxm --rate 20 --requests 200 --input 1024 --output 256 \
  --tpot-slo-ms 20 --budget-chips 8 --modes disaggregated --launch-dir "$tmp/dis" > "$tmp/dis.txt" || fail "plan --modes disaggregated --launch-dir"
for f in vllm/prefill.sh vllm/decode.sh vllm/proxy.sh vllm/dynamo.yaml sglang/prefill.sh sglang/decode.sh sglang/router.sh trtllm/prefill.sh \
  trtllm/decode.sh trtllm/prefill.yaml trtllm/decode.yaml trtllm/disagg.yaml trtllm/router.sh; do
  [ -f "$tmp/dis/$f" ] || fail "disaggregated: no $f ($(ls -R "$tmp/dis"))"
done
grep -q "^  wrote 13 files under $tmp/dis" "$tmp/dis.txt" || fail "plan does not say what it wrote: $(cat "$tmp/dis.txt")"
grep -qx 'MODEL="${MODEL:-meta-llama/Llama-3.1-8B-Instruct}"' "$tmp/dis/sglang/decode.sh" || fail "the typed repo id is not served"
for f in "$tmp"/dis/*/*.sh; do sh -n "$f" || fail "$f is not valid sh"; done
for f in "$tmp"/dis/*/*.yaml; do python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$f" || fail "$f is not YAML"; done
args=$(VLLM_SRC=/src PATH="$tmp/bin:$PATH" sh "$tmp/dis/vllm/proxy.sh") || fail "vllm/proxy.sh did not run"
printf '%s\n' "$args" | grep -A1 -x -- "--prefiller-hosts" | grep -qx localhost || fail "proxy argv: $args"
args=$(PATH="$tmp/bin:$PATH" sh "$tmp/dis/sglang/router.sh") || fail "sglang/router.sh did not run"
printf '%s\n' "$args" | head -3 | tr '\n' ' ' | grep -q "^-m sglang_router.launch_router --pd-disaggregation " || fail "router argv: $args"
# No deployment met the SLO: nothing is written, and the output says so.
out=$("$CHALK" plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 50 --budget-chips 1 --tpot-slo-ms 0.1 --launch-dir "$tmp/none" 2>/dev/null)
[ $? -eq 4 ] || fail "plan without a solution: exit status 4 expected"
printf '%s\n' "$out" | grep -q "launch files: none written to $tmp/none (no deployment to launch)" || fail "no-deployment launch-dir: $out"
[ ! -e "$tmp/none" ] || fail "plan wrote $tmp/none without a deployment"
# A directory that cannot be made: one line naming the option.
touch "$tmp/file"
expect_error "--launch-dir: cannot create directory '$tmp/file/vllm'" plan -m llama-3.1-8b -H h100-sxm --rate 5 --requests 50 --budget-chips 1 \
  --ttft-slo-ms 5000 --launch-dir "$tmp/file"
# GB200 NVL72 hosts hold 4 GPUs (a compute tray; data/hardware/gb200-nvl72.json "host"): an
# 8-chip replica spans 8 / 4 = 2 hosts, and the files launch it over both (issue 30 item 7).
"$CHALK" plan -m deepseek-v3 -H gb200-nvl72 --rate 5 --requests 100 --input 2000 --output 200 --ttft-slo-ms 3000 \
  --tpot-slo-ms 80 --modes aggregated --budget-chips 16 --json > "$tmp/gb200.json" || fail "plan on gb200-nvl72"
python3 - "$tmp/gb200.json" "$SRC/tests/data/engine-args" <<'PY' || fail "gb200 launch files do not span hosts of 4 GPUs"
import json, sys
j = json.load(open(sys.argv[1])); args = sys.argv[2]
assert j["best"]["chips"] == 8 and j["best"]["replicas"] == 1, j["best"]
files = {e["engine"]: {f["path"]: f["text"] for f in e["files"]} for e in j["launch"]}
sg, vl, tr = files["sglang"]["sglang/serve.sh"], files["vllm"]["vllm/serve.sh"], files["trtllm"]["trtllm/serve.sh"]
for text in (sg, vl, tr):
    assert "its own 2 hosts of 4 GPUs" in text, text
assert "--tp-size 8 \\\n  --nnodes 2 \\\n  --node-rank \"$NODE_RANK\" \\\n  --dist-init-addr \"$DIST_INIT_ADDR\"" in sg, sg
assert "--distributed-executor-backend ray" in vl, vl
# DeepSeek-V3's config.json has an auto_map (its configuration_deepseek.py and
# modeling_deepseek.py live in the repo): every engine is told to trust that code.
assert "--trust-remote-code" in sg and "--trust-remote-code" in vl and "--trust_remote_code" in tr, (sg, vl, tr)
# Each flag is one the engine defines at the cited commit (tests/data/engine-args).
for engine, flags in (("sglang", ["--nnodes", "--node-rank", "--dist-init-addr", "--trust-remote-code"]),
                      ("vllm", ["--distributed-executor-backend", "--trust-remote-code"]), ("trtllm", ["--trust_remote_code"])):
    known = {l.split()[1] for l in open(f"{args}/{engine}.txt") if l.startswith("serve ")}
    assert all(f in known for f in flags), (engine, [f for f in flags if f not in known])
PY
# On an 8-GPU HGX host the same replica is one host: no multi-node flags.
"$CHALK" plan -m llama-3.1-70b -H h100-sxm --rate 5 --requests 100 --input 2000 --output 200 --ttft-slo-ms 3000 \
  --budget-chips 8 --modes aggregated --json | python3 -c "
import json, sys; j = json.load(sys.stdin)
text = ''.join(f['text'] for e in j['launch'] for f in e['files'])
assert '--nnodes' not in text and 'distributed-executor-backend' not in text and 'hosts of' not in text" || fail "an 8-GPU host got multi-node flags"
# The hardware file's "host" is checked: chips within the scale-up domain, a source beside them.
python3 -c "
import json, sys; j = json.load(open(sys.argv[1])); j['host']['chips'] = 100; json.dump(j, open(sys.argv[2], 'w'))
j['host'] = {'chips': 4}; json.dump(j, open(sys.argv[3], 'w'))" "$SRC/data/hardware/gb200-nvl72.json" "$tmp/wide.json" "$tmp/nosrc.json"
expect_error "host.chips: must be in 1..72, got 100" hardware "$tmp/wide.json"
expect_error "host.source: missing required field" hardware "$tmp/nosrc.json"
echo "plan_launch: all passed"
