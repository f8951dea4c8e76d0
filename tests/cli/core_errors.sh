# Bad input to the core commands: exit status 2 and a one-line error naming the field.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

expect_error "cannot read file" decode --model "$tmp/missing.json"
echo '{"model_type": "llama", "hidden_size": 4096' > "$tmp/bad.json"
expect_error "malformed JSON" decode --model "$tmp/bad.json"
# A real config with one required field removed.
python3 -c "import json,sys; c=json.load(open('$SRC/data/models/hf/llama-3.1-8b.json')); del c['num_hidden_layers']; json.dump(c, open('$tmp/nolayers.json','w'))"
expect_error "num_hidden_layers: missing required field" decode --model "$tmp/nolayers.json"
python3 -c "import json,sys; c=json.load(open('$SRC/data/models/hf/llama-3.1-8b.json')); c['hidden_size']=0; json.dump(c, open('$tmp/zero.json','w'))"
expect_error "hidden_size" decode --model "$tmp/zero.json"
python3 -c "import json,sys; c=json.load(open('$SRC/data/models/hf/llama-3.1-8b.json')); c['num_key_value_heads']=-8; json.dump(c, open('$tmp/neg.json','w'))"
expect_error "num_key_value_heads" decode --model "$tmp/neg.json"
python3 -c "import json,sys; c=json.load(open('$SRC/data/models/hf/llama-3.1-8b.json')); c['model_type']='mamba'; json.dump(c, open('$tmp/arch.json','w'))"
expect_error "unsupported architecture 'mamba'" decode --model "$tmp/arch.json"
# A misspelled field in a native file is an error, not a default.
python3 -c "import json; c=json.load(open('$SRC/data/models/native/palm-540b.json')); c['d_modle']=c.pop('d_model'); json.dump(c, open('$tmp/typo.json','w'))"
expect_error "d_modle: unknown field" decode --model "$tmp/typo.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/h100-sxm.json')); c['chip']['hbm_gb']=-80; json.dump(c, open('$tmp/hw.json','w'))"
expect_error "chip.hbm_gb" decode --hardware "$tmp/hw.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/h100-sxm.json')); c['chip']['hbm_bw']=1; json.dump(c, open('$tmp/hw2.json','w'))"
expect_error "chip.hbm_bw: unknown field" decode --hardware "$tmp/hw2.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/tpu-v5p.json')); c['scale_up']['torus_dims']=[16,20,27]; json.dump(c, open('$tmp/hw3.json','w'))"
expect_error "scale_up.torus_dims: dimensions multiply to 8640, expected domain_chips 8960" hardware "$tmp/hw3.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/tpu-v5p.json')); c['status']='rumoured'; json.dump(c, open('$tmp/hw4.json','w'))"
expect_error "status: unknown status 'rumoured'; expected shipping or announced" decode --hardware "$tmp/hw4.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/b300.json')); c['power']['watts_per_chip']=0; json.dump(c, open('$tmp/hw5.json','w'))"
expect_error "power.watts_per_chip: must be in [1e-06, 1e+06], got 0" hardware "$tmp/hw5.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/mi300x.json')); c['scale_up']['collective_efficiency']=1.5; json.dump(c, open('$tmp/hw6.json','w'))"
expect_error "scale_up.collective_efficiency: must be a fraction in (0, 1] of gb_per_s_per_direction, got 1.5" decode --hardware "$tmp/hw6.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/mi300x.json')); c['scale_up']['collective_latency_s']=-1; json.dump(c, open('$tmp/hw7.json','w'))"
expect_error "scale_up.collective_latency_s: must be a time in (0, 0.01] s, got -1" hardware "$tmp/hw7.json"
python3 -c "import json; c=json.load(open('$SRC/data/hardware/a100-80gb.json')); c['scale_up']['small_all_reduce_s']=-4.19e-05; json.dump(c, open('$tmp/hw8.json','w'))"
expect_error "scale_up.small_all_reduce_s: must be a time in (0, 0.01] s, got -4.19e-05" hardware "$tmp/hw8.json"
expect_error "unknown model 'llama-9'; nearest: " decode --model llama-9
expect_error "unknown hardware 'h900'; nearest: h200, b200" decode --hardware h900
expect_error "unknown model 'meta-llama/Llama-9-70B': no built-in config of that architecture" decode --model meta-llama/Llama-9-70B
expect_error "directory '$tmp' holds no config.json" decode --model "$tmp"
expect_error "--batch: must be in 1..16777216, got 0" decode --batch 0
expect_error "--batch: must be in 1..16777216, got 100000000000" decode --batch 100000000000
expect_error "--batch: expected an integer, got 'abc'" decode --batch abc
expect_error "--context: must be in 1..1073741824" decode --context 99999999999
expect_error "--context: must be in 1..1073741824, got 0" decode --context 0
expect_error "--chips: Value -3 not in range 1 to 1048576" decode --chips -3
expect_error "--kv-dtype: unknown dtype 'fp7'" decode --kv-dtype fp7
expect_error "--compute: H100 SXM has no dense fp4" decode --hardware h100-sxm --compute fp4
expect_error "--compute: B300 has no dense int8 matmul rate" decode --hardware b300 --weights int8 --compute int8
expect_error "--matmul-efficiency" decode --matmul-efficiency 1.5
expect_error "--price-usd-per-chip-hour" decode --price-usd-per-chip-hour -1
expect_error "--prompt: must be in 1.." prefill --prompt 0
expect_error "--prefix" prefill --prefix -1
expect_error "not expected: --no-such-flag" decode --no-such-flag
# The engine step is the default: layout options are errors only beside --roofline, which has no layout.
expect_error "--tp: sets the engine step's layout; the roofline has none (drop --roofline)" decode --roofline --tp 8
expect_error "--roofline excludes --mechanisms" decode --roofline --mechanisms
expect_error "--tp: must be >= 1, got 0" decode --mechanisms --tp 0
expect_error "--tp: must be a positive divisor of the 72 chips, got 7" decode --mechanisms -n 72 --tp 7
# No chip count and a degree that splits no attention evenly (review 7 M7): the heads are the
# reason, not the scale-up domain's chips, and the replica the command picks without it is
# named: Llama 3.1 70B's 64 heads, 2 x H100 (140 GB of bf16 weights + one sequence in 2 x 72 GB
# usable HBM, as `decode -m llama-3.1-70b -H h100` picks); DeepSeek-V3's 128 heads on GB200.
expect_error "--tp: TP3 does not divide the 64 attention heads: vLLM and SGLang refuse this split on any number of chips; without --tp the replica is 2 chips (\`chalk layouts -n 2\` lists the splits that run)" decode -m llama-3.1-70b -H h100 --tp 3
expect_error "--tp: TP7 does not divide the 128 attention heads: vLLM and SGLang refuse this split on any number of chips; without --tp the replica is" decode --tp 7
expect_error "--ep: must be >= 1, got 0" decode --mechanisms --ep 0
expect_error "--dispatch-dtype: unknown dtype ''" decode --mechanisms --dispatch-dtype ""
expect_error "--two-batch-overlap: sets the engine step's layout" decode --roofline --two-batch-overlap
expect_error "--eplb: sets where the engine step's experts sit" decode --roofline --eplb no
expect_error "--eplb: 'maybe' is not yes (EPLB's redundant experts) or no" decode -m deepseek-r1 -H b200 -n 8 --eplb maybe
expect_error "--eplb: expected yes or no, got ''" decode -m deepseek-r1 -H b200 -n 8 --eplb ""
expect_error "--eplb: 'yes' places routed experts; llama-3.1-8b has none" decode -m llama-3.1-8b -H h100-sxm --eplb yes
# Before the replica search (it read the refusal as 'does not fit'), in every command.
expect_error "--eplb: 'no' places routed experts; llama-3.1-8b has none" serving frontier -m llama-3.1-8b -H h100-sxm --eplb no
expect_error "--eplb: 'no' places routed experts; llama-3.1-8b has none" prices forward -m llama-3.1-8b -H h100-sxm --eplb no
expect_error "--enforce-eager: sets how the engine step launches its kernels" decode --roofline --enforce-eager
expect_error "--enforce-eager" decode --enforce-eager=maybe
expect_error "--dispatch-dtype: sets the engine step's layout" decode --roofline --dispatch-dtype fp8
expect_error "--dispatch-dtype: unknown dtype 'fp7'" decode --mechanisms --dispatch-dtype fp7
expect_error "--ep: EP16 exceeds the 8 routed experts" decode --mechanisms -m mixtral-8x7b -H h100-sxm -n 16 --ep 16
expect_error "--ep: llama-3.1-70b has no routed experts" decode --mechanisms -m llama-3.1-70b -H h100-sxm --ep 2
expect_error "--ep: must be >= 1" decode --mechanisms --ep -2
expect_ok decode
expect_ok decode --roofline
expect_ok decode --mechanisms --tp 8 --ep 72
expect_ok prefill --mechanisms
expect_ok models
expect_ok hardware
expect_ok decode --help
echo "core_errors: all passed"
# An unknown command is named, with a "did you mean".
expect_error "unknown command 'decod'; did you mean 'decode'" decod
expect_error "unknown command 'serve'; did you mean 'serving'" serve
# Help shows no INT:INT type for a plain integer (the range is checked, not a syntax).
"$CHALK" decode --help | grep -q "INT:INT" && fail "decode --help shows INT:INT"
"$CHALK" layouts --help | grep -q "INT:INT" && fail "layouts --help shows INT:INT"
echo "core_errors: command names passed"
# Numbers in errors read as numbers (issue 30): 1.5, not 1.500000; 0, not 0.000000.
for args in "--matmul-efficiency 1.5|--matmul-efficiency: must be a fraction in (0, 1], got 1.5" \
            "--hbm-efficiency 0|--hbm-efficiency: must be a fraction in (0, 1], got 0" \
            "--memory-reserve 1|--memory-reserve: must be a fraction in [0, 1), got 1" \
            "--draft 1 --drafter none --acceptance 1.5|--acceptance: must be a probability in [0, 1], got 1.5"; do
  # shellcheck disable=SC2086
  err=$("$CHALK" decode -m llama-3.1-8b -H h100-sxm ${args%%|*} 2>&1 >/dev/null)
  [ "$err" = "chalk: error: ${args#*|}" ] || fail "decode ${args%%|*}: '$err'"
done
