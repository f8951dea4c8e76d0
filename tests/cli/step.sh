# `chalk step` (docs/simulator.md, "chalk as a step-time predictor"): the simulator's own
# step for a batch, a pure decode batch equal to `chalk decode`, the three JSON forms of a
# batch, and one-line errors (exit 2) naming the item for every bad batch.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(-m llama-3.1-8b -H h100-sxm -n 1)
cat > "$tmp/b.json" <<'JSON'
{"batches": [
 {"prefill": [{"tokens": 512, "cached": 1024}], "decode": [2000, {"context": 3000}]},
 {"prefill_requests": [{"progress_index": 1024, "num_new_prefill_tokens": 512}],
  "decode_requests": [{"progress_index": 2000, "num_new_decode_tokens": 1}, {"progress_index": 3000, "num_new_decode_tokens": 1}]},
 {"reqs": [{"extend_length": 512, "past_kv_length": 1024}, {"extend_length": 1, "past_kv_length": 2000}, {"extend_length": 1, "past_kv_length": 3000}]}]}
JSON
# One Python for every figure (a process each costs more than chalk's answers).
python3 - "$CHALK" "$tmp/b.json" "${base[@]}" <<'PY' || fail "step figures"
import json, subprocess, sys
chalk, batches, base = sys.argv[1], sys.argv[2], sys.argv[3:]
def run(*args, stdin=None):
    out = subprocess.run([chalk, *args, "--json"], capture_output=True, text=True, stdin=stdin, check=True).stdout
    return json.loads(out)
def ms(*args, stdin=None):
    return [r["t_step_ms"] for r in run(*args, stdin=stdin)["rows"]]

# The simulator's steps: one request alone (512 in, 2 out) runs a prefill step of {512, 0},
# then one decode at context 512 (its prompt in the KV). Its TTFT less vLLM's fixed work per
# request (6.908 ms, policy.h kEngineRequestOverheadS) is the first; its TPOT the second.
pre, dec = ms("step", *base, "--batches", '[{"prefill": [[512, 0]]}, {"decode": [512]}]')
r = run("simulate", *base, "--rate", "1", "--requests", "1", "--input", "512", "--output", "2")["rows"][0]
assert abs(r["ttft_p50_ms"] - 6.908 - pre) < 1e-9 * r["ttft_p50_ms"], ("prefill step", r["ttft_p50_ms"], pre)
assert abs(r["tpot_p50_ms"] - dec) < 1e-9 * dec, ("decode step", r["tpot_p50_ms"], dec)

# A pure decode batch is `chalk decode` at the same batch and context (a mix of equal
# sequences is the uniform step: step_mix.h), under the engine step and the roofline.
for view in ([], ["--roofline"]):
    (s,) = ms("step", *base, *view, "--decode", "1024x32")
    (d,) = ms("decode", *base, *view, "-b", "32", "-s", "1024")
    assert abs(s - d) < 1e-9 * d, (view, s, d)

# One batch three ways (chalk's, BLIS's StepConfig, SGLang's reqs), from a file and from
# standard input: the step of --prefill 512:1024 --decode 2000,3000, itself dearer than its
# decodes alone.
(flags,) = ms("step", *base, "--prefill", "512:1024", "--decode", "2000,3000")
assert ms("step", *base, "--batches", batches) == [flags] * 3
with open(batches) as f:
    assert ms("step", *base, "--batches", "-", stdin=f) == [flags] * 3
assert ms("step", *base, "--decode", "2000,3000")[0] < flags
row = run("step", *base, "--prefill", "512:1024,256:0", "--decode", "2000,3000")["rows"][0]
assert (row["prefill_chunks"], row["prefill_tokens"], row["prefix_tokens"], row["decode_batch"], row["decode_context_sum_tokens"]) == (2, 768, 1024, 2, 5000), row
PY
"$CHALK" step "${base[@]}" --prefill 512:1024 --decode 2000,3000 | grep -q "step ms" || fail "the table has no step column"
[ "$("$CHALK" step "${base[@]}" --prefill 512:1024 --decode 2000,3000 --csv | wc -l)" -eq 2 ] || fail "--csv: a header and one row"

# Errors: one line, exit 2, naming the item, its value and what was expected.
expect_error "--decode: item '1024y32': expected CONTEXT[xCOUNT] decodes such as 1024x32,2048" step "${base[@]}" --decode 1024y32
expect_error "--prefill: item '512:': expected TOKENS[:CACHED] chunks such as 512:0,256:1024" step "${base[@]}" --prefill 512:
expect_error "--decode: item '1024x0': COUNT must be in 1..1048576, got 0" step "${base[@]}" --decode 1024x0
expect_error "--prefill[1].tokens: must be >= 1 new prompt tokens, got -5" step "${base[@]}" --prefill 512,-5:0
expect_error "--prefill[0].cached: must be >= 0 cached tokens, got -1" step "${base[@]}" --prefill 512:-1
expect_error "--decode[0]: context 131072 leaves no position for the new token within the model's max_position_embeddings 131072; expected <= 131071" step "${base[@]}" --decode 131072
expect_error "--prefill[0]: 131000 cached + 512 new tokens exceed the model's max_position_embeddings 131072" step "${base[@]}" --prefill 512:131000
expect_error "--decode: no batch: expected --prefill" step "${base[@]}"
expect_error "--batches: give either --batches or --prefill/--decode, not both" step "${base[@]}" --batches '[]' --decode 5
expect_error "batches[1].decode[0]: must be a context of >= 1 tokens, got -4" step "${base[@]}" --batches '[{"decode": [4]}, {"decode": [-4]}]'
expect_error "batches[0].decode_requests[0].num_new_decode_tokens: must be 1 (one token per decode and step), got 3" step "${base[@]}" --batches '[{"decode_requests": [{"progress_index": 9, "num_new_decode_tokens": 3}]}]'
expect_error "batches[0].prefill[0].tokens: expected an integer, got \"512\"" step "${base[@]}" --batches '[{"prefill": [{"tokens": "512"}]}]'
expect_error "batches[0]: mixes two forms of a batch" step "${base[@]}" --batches '[{"decode": [4], "reqs": []}]'
expect_error "batches[0].decodes: unknown key" step "${base[@]}" --batches '[{"decodes": [4]}]'
expect_error "--batches: malformed JSON" step "${base[@]}" --batches '[{"decode": [4]'
expect_error "--batches: cannot read '$tmp/none.json'" step "${base[@]}" --batches "$tmp/none.json"
echo "step: all passed"
