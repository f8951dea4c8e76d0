# Issue 17's models: decode, prefill, layouts and serving run on every new architecture,
# and their figures carry the layer kinds (linear state, windows, sparse indexer).
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
models="qwen3-next-80b-a3b gemma-2-27b gemma-3-27b llama-4-scout-17b-16e llama-4-maverick-17b-128e deepseek-v3.2
deepseek-v3.2-exp glm-4.5 minimax-m1 minimax-m2.5 phi-4 phi-3.5-moe qwen3-32b-fp8"
for m in $models; do
  expect_ok decode -m "$m" -H gb200-nvl72 -n 16 -b 1,64 -s 8192
  expect_ok prefill -m "$m" -H gb200-nvl72 -n 16 --prompt 4096
  expect_ok layouts -m "$m" -H gb200-nvl72 -n 16
  expect_ok serving sweep -m "$m" -H gb200-nvl72 -n 16 -b 1,64
  "$CHALK" decode -m "$m" -H gb200-nvl72 -n 16 -b 1 -s 8192 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
s = j['rows'][0]
assert s['t_step_ms'] > 0 and s['tok_per_s'] > 0 and s['tok_per_s_per_user'] > 0, s
" || fail "decode --json $m"
done
# Repo ids of the new models resolve to their built-in configs without network.
expect_ok decode -m Qwen/Qwen3-Next-80B-A3B-Instruct -H h200 -n 8 -b 1
expect_ok decode -m google/gemma-3-27b-it -H h200 -b 1
# A linear layer's fixed state is read each step. Qwen3-Next at batch 1: 2 x 77,266,944 B
# of state (read and written back) plus 24,576 B of KV per token of context, so
# t_kv(32 tokens) / t_kv(16) = (154,533,888 + 32 x 24,576) / (154,533,888 + 16 x 24,576).
kv_ms() { "$CHALK" decode --roofline -m "$1" -H "$2" -n "$3" -b 1 -s "$4" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['t_kv_ms'])"; }
a=$(kv_ms qwen3-next-80b-a3b h200 8 16) && b=$(kv_ms qwen3-next-80b-a3b h200 8 32) || fail "qwen3-next decode"
python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); want=(154533888+32*24576)/(154533888+16*24576); assert abs(b/a-want)<1e-9,(a,b,b/a,want)" "$a" "$b" \
  || fail "qwen3-next: state read each step ($a, $b)"
# DeepSeek-V3.2 reads top-k 2048 latents per layer (1152 B in bf16) and every indexer key
# (256 B): t_kv(131072) / t_kv(65536) = (2048 x 1152 + 131072 x 256) / (2048 x 1152 + 65536 x 256).
a=$(kv_ms deepseek-v3.2 gb200-nvl72 16 65536) && b=$(kv_ms deepseek-v3.2 gb200-nvl72 16 131072) || fail "deepseek-v3.2 decode"
python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); want=(2048*1152+131072*256)/(2048*1152+65536*256); assert abs(b/a-want)<1e-9,(a,b,b/a,want)" "$a" "$b" \
  || fail "deepseek-v3.2: sparse read + indexer keys ($a, $b)"
# chalk models lists the fixed state (Qwen3-Next: 36 x (32 x 128 x 128 x 4 + 3 x 8192 x 2) B)
# and KV of the full-attention layers only (12 x 2 x 2 x 256 x 2 B per token).
"$CHALK" models qwen3-next-80b-a3b llama-3.1-8b --json | python3 -c "
import json, sys
m = {r['name']: r for r in json.load(sys.stdin)['rows']}
q = m['qwen3-next-80b-a3b']
assert q['state_bytes_per_sequence'] == 77266944 and q['kv_bytes_per_token'] == 24576, q
assert m['llama-3.1-8b']['state_bytes_per_sequence'] == 0
" || fail "models --json state_bytes_per_sequence"
# A local HF cache resolves a repo id without network (HF_HOME/hub/models--ORG--NAME).
mkdir -p "$tmp/hf/hub/models--acme--Tiny-1B/snapshots/r1" "$tmp/hf/hub/models--acme--Tiny-1B/refs"
printf 'r1' > "$tmp/hf/hub/models--acme--Tiny-1B/refs/main"
printf '%s' '{"model_type": "gemma3_text", "hidden_size": 256, "num_hidden_layers": 6, "num_attention_heads": 4,
 "num_key_value_heads": 1, "head_dim": 64, "vocab_size": 1000, "max_position_embeddings": 8192, "intermediate_size": 512,
 "sliding_window": 512, "sliding_window_pattern": 6}' > "$tmp/hf/hub/models--acme--Tiny-1B/snapshots/r1/config.json"
HF_HOME="$tmp/hf" HF_HUB_CACHE= "$CHALK" models acme/Tiny-1B --json | python3 -c "
import json, sys
r = json.load(sys.stdin)['rows'][0]
assert r['name'] == 'tiny-1b' and r['architecture'] == 'gemma3_text', r
" || fail "HF_HOME cache lookup"
expect_error "unknown model 'acme/Nothing-1B'" models acme/Nothing-1B
# Bad configs name the field and value.
printf '%s' '{"model_type": "qwen3_next", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
 "vocab_size": 100, "max_position_embeddings": 64, "intermediate_size": 64, "moe_intermediate_size": 64,
 "num_experts": 4, "num_experts_per_tok": 2, "linear_num_value_heads": 4, "linear_num_key_heads": 2,
 "linear_key_head_dim": 32, "linear_value_head_dim": 32, "layer_types": ["full_attention", "mamba2"]}' > "$tmp/bad.json"
expect_error "layer_types[1]: unknown layer type 'mamba2'" decode -m "$tmp/bad.json" -H h200
printf '%s' '{"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
 "vocab_size": 100, "max_position_embeddings": 64, "intermediate_size": 64,
 "quantization_config": {"quant_method": "gptq", "bits": 3}}' > "$tmp/q.json"
expect_error "quantization_config.bits: expected 4 or 8, got 3" decode -m "$tmp/q.json" -H h200
echo "models_hybrid: all passed"
