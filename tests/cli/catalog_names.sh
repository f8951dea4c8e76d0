# Names users type and the chips people rent (issue 30 item 9), end to end: repo ids and
# aliases reach the built-in model, a different architecture exits 2 with the reason, an
# unknown name lists the nearest, and a decode runs on every new chip.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
# The three refused names, and a distill that maps through data/models/aliases.json.
for pair in "meta-llama/Llama-3.3-70B-Instruct=llama-3.3-70b" "Qwen/Qwen2.5-72B-Instruct=qwen2.5-72b" \
            "llama-3-70b=llama-3-70b" "deepseek-ai/DeepSeek-R1-Distill-Llama-70B=llama-3.3-70b"; do
  typed=${pair%%=*}; want=${pair#*=}
  got=$("$CHALK" decode --roofline -n 8 -m "$typed" -H h100-sxm -b 1 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['model']['name'])") \
    || fail "decode -m $typed"
  [ "$got" = "$want" ] || fail "$typed resolved to $got, expected $want"
done
expect_error "--model: 'mistralai/Mistral-7B-v0.1' is not a built-in model: Mistral-7B v0.1 has a 4,096-token sliding window" \
  decode -m mistralai/Mistral-7B-v0.1 -H h100-sxm
expect_error "Phi-3-mini-4k reads a 2,047-token sliding window" decode -m microsoft/Phi-3-mini-4k-instruct -H h100-sxm
expect_error "unknown model 'Qwen/Qwen2.5-1.5B-Instruct': no built-in config of that architecture and no such path; nearest: qwen2.5-14b, qwen2.5-32b, qwen2.5-72b;" \
  decode -m Qwen/Qwen2.5-1.5B-Instruct -H h100-sxm
expect_error "--hardware: unknown hardware 'gaudi3x'; nearest: gaudi-3," decode -m llama-3.1-8b -H gaudi3x
# A decode on each new chip: Llama 3.1 8B bf16 at batch 1 on one chip, the lecture's weight
# fetch (--roofline): (16.0605 GB weights - 1.0507 GB input table) / (bandwidth x 0.87), by
# hand: A100 40GB 15.0098 / (1.555 x 0.87) = 11.095 ms; H100 PCIe / (2.0 x 0.87) = 8.626;
# H100 NVL / (3.9 x 0.87) = 4.424; L4 / (0.3 x 0.87) = 57.509; A10G / (0.6 x 0.87) = 28.754;
# Gaudi 3 / (3.67 x 0.87) = 4.701. Cost: chips x $/h / 3600 / (tokens/s) x 1e6, absent
# where no price was found (Gaudi 3).
for row in "a100-40gb 11.095 1" "h100-pcie 8.626 1" "h100-nvl 4.424 1" "l4 57.509 1" "a10g 28.754 1" "gaudi-3 4.701 0"; do
  set -- $row
  "$CHALK" decode --roofline -m llama-3.1-8b -H "$1" -b 1 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
s = j['rows'][0]
assert j['assumptions']['chips'] == 1, j['assumptions']
assert abs(s['t_weights_ms'] - $2) < 0.001, s['t_weights_ms']
assert (s['cost_usd_per_mtok'] is not None) == bool($3), s['cost_usd_per_mtok']
" || fail "decode on $1"
  expect_ok decode -m llama-3.1-8b -H "$1" -b 1,16
done
# A 70B model on the 2-card NVL pair: the smallest replica that holds it is the pair (94 GB
# each: 141.1 GB of bf16 weights do not fit one).
"$CHALK" decode -m llama-3.3-70b -H h100-nvl -b 1 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['assumptions']['chips'] == 2, j['assumptions']
" || fail "llama-3.3-70b on h100-nvl"
