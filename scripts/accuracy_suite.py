#!/usr/bin/env python3
"""The "vLLM load suite" section of docs/accuracy.md (issue 29), called by scripts/accuracy.

Usage: accuracy_suite.py VALIDATE_JSON SUITE_CSV [CHALK]  (prints Markdown)

VALIDATE_JSON is `chalk validate --json SUITE_CSV`. The rows' model, tp, rate and stage come
from SUITE_CSV (columns model, tp, request_rate_per_s; the stage order from the id); errors
are predicted / measured - 1 as everywhere in docs/accuracy.md. With CHALK (the binary), the
"Calibrated on half" table: `CHALK calibrate --holdout half` on each deployment's rows and on
the whole file.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

# Requests simulated per run for the calibrated-on-half table: the suite's smallest stage
# (3,000 requests at 5/s), so that no stage is judged on its first minutes only.
HOLDOUT_REQUESTS = 3000
HOLDOUT_GROUPS = [("Llama-2-7B, TP1", "VLS-L2-7B-"), ("Llama-2-70B, TP4", "VLS-L2-70B-"),
                  ("Mixtral-8x7B, TP2", "VLS-MIX-8X7B-"), ("CodeLlama-34B, TP2", "VLS-CL-34B-"),
                  ("all four", "VLS-")]


def holdout_runs(chalk, suite_csv):
    """Each group's `chalk calibrate --holdout half --json` output, in HOLDOUT_GROUPS order."""
    text = open(suite_csv).read().splitlines(keepends=True)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, prefix in HOLDOUT_GROUPS:
            path = os.path.join(tmp, "group.csv")
            with open(path, "w") as f:
                f.write(text[0])
                f.writelines(line for line in text[1:] if line.startswith(prefix))
            res = subprocess.run([chalk, "calibrate", path, "--holdout", "half", "--no-leave-one-out",
                                  "--max-requests", str(HOLDOUT_REQUESTS), "--json"],
                                 capture_output=True, text=True, check=True)
            out.append((name, json.loads(res.stdout)))
    return out


def pct(x):
    return f"{100 * x:+.0f}%"


def apct(x):
    return f"{100 * x:.0f}%"


def num(x):
    if x is None:
        return "-"
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def calibrated_on_half(w, groups):
    w("### Calibrated on half (`chalk calibrate --holdout half`)")
    w("")
    w("Issue 29's goal: after `chalk calibrate` on half of a user's runs, at most 5% on the other half.")
    w("Each deployment's load stages are one user's runs: ordered by request rate and alternately")
    w("fitted and held out, the first fitted (rates 5, 6, 8, 10, 20/s fit on 5, 8 and 20, hold out 6 and")
    w("10; CodeLlama-34B's six, from 4/s, fit on 4, 6 and 10); \"all four\" fits one profile on the four")
    w("deployments' fit halves together (one engine on one system). The default constants,")
    w("request_overhead_s, host_s_per_sequence and kernel_floor_s, are fitted; vLLM 0.15.1 overlaps")
    w("its host work with the GPU step, so no stage is sensitive to the host time, which keeps its")
    w(f"default. {HOLDOUT_REQUESTS:,} requests are simulated per stage (`--max-requests`; the stages ran")
    w("3,000 to 12,000). Median |predicted / measured - 1| over the held-out stages, with the")
    w("engine's defaults -> with the constants fitted on the other half:")
    w("")
    w("| deployment | fit / held out | TTFT | TPOT | E2E | all | request overhead | kernel floor |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, j in groups:
        h = j["holdout"]
        m = {x["metric"]: x for x in h["metrics"]}
        c = {x["name"]: x for x in j["rows"]}

        def cell(k):
            x = m.get(k)
            return f"{100 * x['median_abs_error_before_fraction']:.1f}% -> {100 * x['median_abs_error_after_fraction']:.1f}%" if x else "-"

        def const(k, scale, unit):
            x = c[k]
            return f"{scale * x['value_s']:.3g} {unit}" + ("" if x["fitted"] else " (default)")
        w(f"| {name} | {h['fit_runs']} / {h['held_out_runs']} | {cell('ttft_ms')} | {cell('tpot_ms')} | {cell('e2e_s')} | "
          f"{cell('all')} | {const('request_overhead_s', 1e3, 'ms')} | {const('kernel_floor_s', 1e6, 'us')} |")
    w("")
    w("(Defaults: request overhead 6.91 ms, kernel floor 6.3 us.) The goal holds on Llama-2-7B. Where")
    w("the fit makes a held-out metric worse, one fitted stage carries what the constants cannot")
    w("(figures of the commit that added this paragraph):")
    w("")
    w("* **CodeLlama-34B**: its reasoning stage (4/s for 1,200 s; TTFT 120 s measured, -78% with the")
    w("  defaults) is saturated as measured: its queue grows for the whole run, which a run cut at")
    w("  3,000 requests cannot match, so `--holdout` leaves it out (docs/simulator.md 6.1). Kept")
    w("  (`--fit-saturated`), the fit slowed the kernel floor to 17 us and dropped the request")
    w("  overhead to 0 to lengthen that queue, every other stage 40% slow: CodeLlama-34B 6.2% -> 33.2%,")
    w("  \"all four\" 4.9% -> 9.1%. Left out, the table's 5.1% -> 2.4% and 4.9% -> 3.7%.")
    w("* **TTFT of Llama-2-70B and Mixtral**: the fit lowers the kernel floor (5.1 and 4.5 us), which")
    w("  brings TPOT within 3% and shortens TTFT's steps, and raises the request overhead (12.5 and")
    w("  17.7 ms) to meet the fit half's TTFTs, which are short by more than the held-out ones:")
    w("  Llama-2-70B at 20/s -47% (121 ms measured: a queue at the highest rate that the simulator")
    w("  does not build), Mixtral at 5, 8 and 20/s -12%, -12%, -17%, against -0% and -7% at the")
    w("  held-out 10 and 6/s (measured TTFT 56.8 ms at 10/s, below the 63.0 ms at 5/s). A fixed")
    w("  time per request cannot fit both; the held-out TTFT goes 2.5% -> 8.1% and 3.8% -> 11.3%.")
    w("* **At the default 400 requests a stage** the 20/s stages are judged on their first 20 s, a")
    w("  fifth of it filling the engine: Llama-2-7B's is predicted 11.4% off with the defaults (2.3%")
    w("  at 3,000 requests), and the fit slows the kernel floor to 6.75 us for it: held out 3.1% -> 5.2%.")
    w("")


def main():
    j = json.load(open(sys.argv[1]))
    suite = {r["id"]: r for r in csv.DictReader(open(sys.argv[2]))}
    rows = [r for r in j["rows"] if r["status"] == "predicted"]
    metric_name = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "e2e_s": "E2E"}
    # Load level: each experiment's stages in rate order (low, high) or its only stage.
    rates = {}
    for r in suite.values():
        exp = r["id"].rsplit("-R", 1)[0]
        rates.setdefault(exp, set()).add(float(r["request_rate_per_s"]))

    def level(r):
        s = suite[r["id"]]
        rs = sorted(rates[s["id"].rsplit("-R", 1)[0]])
        if len(rs) == 1:
            return "single stage"
        return "low (first stage)" if float(s["request_rate_per_s"]) == rs[0] else "high (second stage)"

    out = []
    w = out.append
    w("## vLLM load suite (data/measurements/vllm-load-suite.csv, issue 29)")
    w("")
    w(f"{len(suite)} rows, of which {len(rows)} predicted: the BLIS project's published vLLM runs")
    w("(github.com/inference-sim/training `default_args/`, 16 experiments: Llama-2-7B on one H100 SXM,")
    w("Llama-2-70B on TP4, Mixtral-8x7B and CodeLlama-34B on TP2; vLLM v0.15.1, `max_num_batched_tokens`")
    w("2048, `max_num_seqs` 128, chunked prefill; inference-perf's shared-prefix prompts of 575-1,082")
    w("tokens, 247-1,448 tokens out with ignore_eos, at a constant 4-20 requests/s). One row per load stage")
    w("and metric, each the stage's mean: TTFT and E2E as published, TPOT derived as (E2E - TTFT) / (output - 1)")
    w("because the published TPOT and ITL count two stream events per token (half the decode interval;")
    w("tools/suite/vllm_load_suite.py, which writes the file, says how each column is read). Arrivals are")
    w("`constant` (inference-perf's load type): one request every 1 / rate seconds. `cached_tokens` is")
    w("filled in (listed in `assumed`): prefix caching is on and each simulated user re-sends one fixed")
    w("prompt, so every whole 16-token block but the last token's is a hit; the measured inter-token gaps")
    w("show no step carrying a whole prompt's prefill. The three overloaded `reasoning` runs (33-85% of")
    w("requests failed) are left out. Not in the columns: 8 GiB of KV offload to the CPU and")
    w("inference-perf's multi-turn sessions (one request in flight per user).")
    w("`src/validate/validate_suite_test.cc` fails if a median below gets worse.")
    w("")
    w("With `cached_tokens` left empty (every prompt computed whole) the same rows read: TTFT median")
    w("|error| 28% (signed +7%), TPOT 24% (+24%; Llama-2-70B TP4 +48%, CodeLlama-34B TP2 +35%), E2E 24%,")
    w("and chalk's engine falls behind the 20/s stages of Llama-2-7B, Llama-2-70B and CodeLlama-34B that")
    w("vLLM kept up with (figures of the commit that added this section).")
    w("")
    w("Where it is off (issue 29's diagnosis; figures of the commit that added this section, from")
    w("`chalk decode --wide` and `chalk simulate --json` at each stage's inputs):")
    w("")
    w("* **TTFT was short by about one decode step, not by a fixed time (now modelled).** The measured")
    w("  TTFT median is about 6.9 ms + 2.5 measured steps on every model (Llama-2-7B at 5/s: 24.3 ms with")
    w("  7.2 ms steps; Llama-2-70B TP4 at 8/s: 55.2 ms with 18.5 ms steps; CodeLlama-34B TP2 at 8/s:")
    w("  45.3 ms with 14.7 ms steps), and even the fastest request pays about 6.9 ms + 1.6 steps (minimum")
    w("  TTFT 18.3, 36.0, 32.3 ms). A scheduler that forms each step at the previous one's end gives 6.9 ms")
    w("  + 1.5 steps (half a step to the boundary, one of prefill): chalk's TTFT median error was 31%")
    w("  (signed -31%). vLLM's asynchronous scheduling forms step n+1 while step n runs, so a request that")
    w("  arrives after step n began joins step n+2: one more step (docs/simulator.md 1.2, item 6;")
    w("  `EnginePolicy::schedule_ahead`, on wherever the engine overlaps host and GPU work). With it the")
    w("  TTFT median error is 7% (signed +7%), and E2E, which now pays that step too, shows the decode")
    w("  step's own excess below.")
    w("* **TPOT was long by 10-15% in the decode step itself**, on every model: Llama-2-70B TP4 at 8/s")
    w("  21.3 against 18.7 ms (its TPOT row), with weights 12.9 ms (34.5 GB per GPU at DeepGEMM's")
    w("  2,668 GB/s, 80% of the HBM peak) + kernel floor 4.56 ms (6.3 us per kernel) + all-reduce")
    w("  2.81 ms + KV 0.73 ms. That 2,668 GB/s is one 44.7 us kernel's average, its own fixed time")
    w("  included, and the kernel floor paid that time again. vLLM's bf16 GEMMs now stream at their marginal rate, the slope of time")
    w("  over bytes of cuBLAS on H100 (vLLM PR #49363: 3.05 TB/s, 0.911 of the peak, capped by the")
    w("  STREAM 0.87; docs/formulas.md, weight streaming): weights 11.8 ms, TPOT 20.0 ms (+7%).")
    w("  Per model, TPOT: Llama-2-7B +8-12% -> +1-5%, CodeLlama-34B +9-16% -> +1-8% (the saturated")
    w("  stage below apart), Mixtral +9-16% -> +1-7%, Llama-2-70B +10-16% -> +4-10%.")
    w("  What is left (largest at TP4) is not yet explained; the suspect is the kernel floor: the GEMM")
    w("  fits' fixed parts are 1.6-4.2 us against 6.3, but no source in reach times the other kernels")
    w("  (norms, RoPE, attention) back to back under CUDA graphs.")
    w("* **The saturated stage (CodeLlama-34B reasoning, 4/s of 1,081 in and 1,448 out)** runs the other")
    w("  way: chalk's step at 128 sequences and 1,800 tokens of context is 23.1 ms against 26.8 ms measured")
    w("  (24.1 before the weight-streaming change), so its queue grows more slowly (TTFT -78%, -55% before);")
    w("  the 8 GiB CPU KV offload is not modelled.")
    w("")
    w("| metric | n | median abs error | signed median | p90 abs error | median abs error, plain |")
    w("|---|---:|---:|---:|---:|---:|")
    by_metric = {}
    for r in rows:
        by_metric.setdefault(r["metric"], []).append(r)
    for m in ("ttft_ms", "tpot_ms", "e2e_s"):
        g = by_metric.get(m, [])
        if not g:
            continue
        e = sorted(abs(r["error_fraction"]) for r in g)
        # Linear interpolation between closest ranks, as chalk's percentile() (numpy's default).
        pos = 0.9 * (len(e) - 1)
        lo = int(pos)
        p90 = e[lo] + (e[min(lo + 1, len(e) - 1)] - e[lo]) * (pos - lo)
        w(f"| {metric_name[m]} | {len(g)} | {apct(statistics.median(e))} | "
          f"{pct(statistics.median(r['error_fraction'] for r in g))} | {apct(p90)} | "
          f"{apct(statistics.median(abs(r['error_plain_fraction']) for r in g))} |")
    w("")

    def grouped(title, key):
        groups = {}
        for r in rows:
            groups.setdefault(key(r), {}).setdefault(r["metric"], []).append(r["error_fraction"])
        w(f"| {title} | TTFT | TPOT | E2E |")
        w("|---|---:|---:|---:|")
        for k in sorted(groups):
            cells = []
            for m in ("ttft_ms", "tpot_ms", "e2e_s"):
                e = groups[k].get(m)
                cells.append(f"{pct(statistics.median(e))} ({len(e)})" if e else "-")
            w(f"| {k} | " + " | ".join(cells) + " |")
        w("")

    w("Signed median error (rows) by model and TP:")
    w("")
    grouped("model, TP", lambda r: f"{suite[r['id']]['model']}, TP{suite[r['id']]['tp']}")
    w("By load level (the stage's rate within its experiment):")
    w("")
    grouped("load", level)
    w("| id | rate /s | metric | measured | mechanisms | error | plain | error |")
    w("|---|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        s = suite[r["id"]]
        w(f"| {r['id']} | {s['request_rate_per_s']} | {r['metric']} | {num(r['measured_in_unit'])} | "
          f"{num(r['predicted_in_unit'])} | {pct(r['error_fraction'])} | {num(r['predicted_plain_in_unit'])} | "
          f"{pct(r['error_plain_fraction'])} |")
    w("")
    if len(sys.argv) > 3:
        calibrated_on_half(w, holdout_runs(sys.argv[3], sys.argv[2]))
    skipped = [r for r in j["rows"] if r["status"] != "predicted"]
    for r in skipped:
        w(f"* not predicted: {r['id']} ({r['status']}): {r.get('reason', '')}")
    if skipped:
        w("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
