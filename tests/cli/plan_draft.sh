# `chalk plan --draft` (review 7 M5; issue 30 item 4, issue 31 item 3): the plan takes
# simulate's speculative-decoding options (the same parsing, defaults and errors), simulates
# every candidate with the drafts, says whether they pay against plain decode, and writes the
# drafter into every engine's launch files.
CHALK="$1"; SRC="$2"
. "$SRC/tests/cli/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Llama 3.1 70B on 4 H100 (TP4), an EAGLE-3 head drafting 3 tokens kept at a = 0.8, one
# request every 50 s (batch 1). Hand check against `decode --draft` at batch 1 and the
# steady-state context of 1,000 + 200 tokens (1,000 + 200 / 2 = 1,100): the gain per user
# is decode's tok_per_s_per_user with drafts over without, E[kept] = (1 - 0.8^4) / 0.2 = 2.952
# tokens a verify step over a step that costs the verify of 4 tokens plus 3 head passes. The
# plan's TPOT p50 without drafts over with them is that gain within 5% (the tokens kept are
# drawn per step: 8 requests x 200 tokens, ~540 verify steps; the first decode of each
# request runs beside its prefill). Measured 2026-12-07: decode's plain step 17.57 ms (56.92
# tok/s per user), the drafted step 18.91 ms (the verify of 4 tokens 17.63 ms + 3 head passes
# 1.28 ms) keeping 2.952: 156.1 tok/s per user, gain 2.952 x 17.57 / 18.91 = 2.743; the plan's
# TPOT p50 17.57 ms without, 6.18 ms with (its draws kept 3.006 a step): 2.845, 3.7% above.
dec() { "$CHALK" decode -m llama-3.1-70b -H h100-sxm -n 4 --tp 4 -b 1 -s 1100 "$@" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['tok_per_s_per_user'])"; }
plain=$(dec) || fail "decode, plain"
drafted=$(dec --draft 3 --acceptance 0.8 --drafter eagle3) || fail "decode --draft 3 --drafter eagle3"
"$CHALK" plan -m llama-3.1-70b -H h100-sxm --replica-chips 4 --budget-chips 4 --modes aggregated --max-seqs-candidates 64 \
  --rate 0.02 --requests 8 --input 1000 --output 200 --tpot-slo-ms 200 --slo-percentile 50 \
  --draft 3 --acceptance 0.8 --drafter eagle3 --json --launch-dir "$tmp/eagle" > "$tmp/eagle.json" || fail "plan --draft 3 --drafter eagle3"
python3 - "$tmp/eagle.json" "$plain" "$drafted" <<'PY' || fail "plan with an EAGLE-3 head: the gain at batch 1, the verdict, the launch files"
import json, sys
j = json.load(open(sys.argv[1])); plain, drafted = float(sys.argv[2]), float(sys.argv[3])
lev = j["levers"]
assert lev["drafter"] == "eagle3" and lev["draft_tokens"] == 3 and abs(lev["tokens_kept_per_step"] - 2.952) < 1e-12, lev
v = j["speculation_verdict"]
assert v["draft_tokens"] == 3 and v["with_drafts"] and v["without_drafts"], v
gain_plan = v["without_drafts"]["tpot_at_percentile_ms"] / v["with_drafts"]["tpot_at_percentile_ms"]
gain_decode = drafted / plain
assert 1.5 < gain_decode < 2.952, gain_decode
assert abs(gain_plan / gain_decode - 1) < 0.05, (gain_plan, gain_decode)
# Same chips at the same cost, lower TPOT: faster, not cheaper (review 10 L8: this said "pays").
assert v["speculation_pays"] is False and v["speculation_faster"] is True, v
assert j["best"]["tpot_at_percentile_ms"] == v["with_drafts"]["tpot_at_percentile_ms"], (j["best"], v)
files = {f["path"]: f["text"] for e in j["launch"] for f in e["files"]}
assert 'SPECULATIVE_CONFIG="{\\"method\\":\\"eagle3\\",\\"model\\":\\"$DRAFT_MODEL\\",\\"num_speculative_tokens\\":3}"' in files["vllm/serve.sh"], files["vllm/serve.sh"]
assert '--speculative-config "$SPECULATIVE_CONFIG"' in files["vllm/serve.sh"], files["vllm/serve.sh"]
assert all(len(line) <= 100 for f in files.values() for line in f.splitlines())
assert 'DRAFT_MODEL="${DRAFT_MODEL:?' in files["vllm/serve.sh"]
s = files["sglang/serve.sh"]
for want in ["--speculative-algorithm EAGLE3", "--speculative-num-steps 3", "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4"]:
    assert want in s, (want, s)
assert "decoding_type: Eagle\n  max_draft_len: 3\n" in files["trtllm/extra_llm_api_options.yaml"], files["trtllm/extra_llm_api_options.yaml"]
PY
for f in "$tmp"/eagle/*/*.sh; do sh -n "$f" || fail "$f is not valid sh"; done
# The same plan's text says whether drafting pays.
"$CHALK" plan -m llama-3.1-70b -H h100-sxm --replica-chips 4 --budget-chips 4 --modes aggregated --max-seqs-candidates 64 \
  --rate 0.02 --requests 8 --input 1000 --output 200 --tpot-slo-ms 200 --draft 3 --acceptance 0.8 --drafter eagle3 > "$tmp/eagle.txt" \
  || fail "plan --draft, text"
python3 - "$tmp/eagle.txt" <<'PY' || fail "plan text: the levers and whether drafting pays: $(cat "$tmp/eagle.txt")"
import re, sys
t = re.sub(r"\s+", " ", open(sys.argv[1]).read())  # lines wrap at 100 columns
assert re.search(r"levers speculative decoding / MTP: 3 drafted per step, acceptance 0\.8 -> 2\.95 tokens kept per step .*drafted by an EAGLE-3 head", t), t
assert re.search(r"drafting 3 drafts, 2\.952 tokens kept per step: 4 chips, \$9\.400/hour, TPOT@p [0-9.]+ ms; without drafts: 4 chips, "
                 r"\$9\.400/hour, TPOT@p [0-9.]+ ms: speculation is faster, not cheaper: both meet the SLO at the same cost", t), t
PY
# DeepSeek-V3 on 8 H200 with its own MTP module: --draft 1 alone takes the published
# acceptance (report 5.4.3, 0.875: 1.875 tokens a step), as simulate does; the launch files
# serve the module (vLLM method mtp, SGLang NEXTN, TensorRT-LLM decoding_type MTP).
"$CHALK" plan -m deepseek-v3 -H h200 --replica-chips 8 --budget-chips 8 --modes aggregated --max-seqs-candidates 64 \
  --rate 0.05 --requests 6 --input 1000 --output 100 --tpot-slo-ms 500 --draft 1 --json > "$tmp/mtp.json" || fail "plan -m deepseek-v3 --draft 1"
python3 - "$tmp/mtp.json" <<'PY' || fail "plan with DeepSeek-V3's MTP module"
import json, sys
j = json.load(open(sys.argv[1]))
lev = j["levers"]
assert lev["drafter"] == "mtp" and lev["acceptance"] == 0.875 and lev["tokens_kept_per_step"] == 1.875, lev
v = j["speculation_verdict"]
assert v["with_drafts"]["tpot_at_percentile_ms"] < v["without_drafts"]["tpot_at_percentile_ms"], v
files = {f["path"]: f["text"] for e in j["launch"] for f in e["files"]}
assert """--speculative-config '{"method":"mtp","num_speculative_tokens":1}'""" in files["vllm/serve.sh"], files["vllm/serve.sh"]
assert "--speculative-algorithm NEXTN" in files["sglang/serve.sh"] and "--speculative-num-draft-tokens 2" in files["sglang/serve.sh"]
assert "decoding_type: MTP\n  num_nextn_predict_layers: 1\n" in files["trtllm/extra_llm_api_options.yaml"]
PY
# Without --draft a plan has no drafting: levers plain, no verdict, no drafting flags.
"$CHALK" plan -m llama-3.1-8b -H h100-sxm --replica-chips 1 --budget-chips 1 --modes aggregated --max-seqs-candidates 64 \
  --rate 0.5 --requests 20 --tpot-slo-ms 100 --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['levers']['draft_tokens'] == 0 and j['levers']['drafter'] is None and j['speculation_verdict'] is None, j['levers']
assert all('speculative' not in f['text'] for e in j['launch'] for f in e['files'])
" || fail "plan without --draft"
# Simulate's errors, word for word (serving_cli::levers_of), exit 2, one line.
p="plan -m llama-3.1-8b -H h100-sxm --rate 1 --requests 5 --ttft-slo-ms 1000 --budget-chips 1"
expect_error "--acceptance: must be a probability in [0, 1], got 1.5" $p --draft 1 --acceptance 1.5 --drafter eagle3
expect_error "--acceptance: has no effect without --draft >= 1" $p --acceptance 0.8
expect_error "--drafter: llama-3.1-8b ships no MTP module (num_nextn_predict_layers 0); draft with an EAGLE head (--drafter eagle3)" $p --draft 2 --acceptance 0.8
expect_error "--draft: needs --acceptance" $p --draft 2 --drafter eagle3
expect_error "--draft: must be in 0..64 drafted tokens per step, got 65" $p --draft 65 --acceptance 0.5 --drafter eagle3
expect_error "--accepted-tokens: mean tokens kept per step must be in [1, 1 + draft] = [1, 3], got 3.5" $p --draft 2 --accepted-tokens 3.5 --drafter eagle3
expect_error "--drafter: unknown model 'no-such-model'" $p --draft 2 --acceptance 0.8 --drafter no-such-model
echo "plan_draft: all passed"
