"""Every binding returns what the CLI's --json returns for the same inputs."""
import json
import math
import os
import re
import subprocess

import pandas as pd
import pytest

import chalk
from conftest import SOURCE_DIR

M, H = ["-m", "llama-3.1-8b"], ["-H", "h100-sxm"]
# Three `vllm bench serve --save-result` files (test inputs, not measurements) for calibrate.
RUNS = [os.path.join(SOURCE_DIR, "tests", "data", "calibrate", f"vllm-rate-{r}.json") for r in (1, 4, 8)]
# (function, positional args, keyword args, the same inputs as CLI arguments)
CASES = [
    ("models", [], {}, ["models"]),
    ("models", ["deepseek-v3", "llama-3.1-70b"], {"kv_dtype": "fp8"}, ["models", "deepseek-v3", "llama-3.1-70b", "--kv-dtype", "fp8"]),
    ("hardware", [], {}, ["hardware"]),
    ("decode", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "batch": [1, 8, 64], "context": 8192},
     ["decode", *M, *H, "-b", "1,8,64", "-s", "8192"]),
    ("decode", [], {"model": "deepseek-v3", "hardware": "gb200-nvl72", "batch": "1:256", "roofline": True},
     ["decode", "-m", "deepseek-v3", "-H", "gb200-nvl72", "-b", "1:256", "--roofline"]),
    ("decode", [], {"model": "llama-3.1-70b", "hardware": "h100-sxm", "tp": 8, "chips": 8, "batch": 64},
     ["decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "--tp", "8", "-n", "8", "-b", "64"]),
    ("prefill", [], {"model": "qwen3-235b-a22b", "hardware": "h200", "prompt": [1024, 32768]},
     ["prefill", "-m", "qwen3-235b-a22b", "-H", "h200", "-p", "1024,32768"]),
    ("layouts", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 2}, ["layouts", *M, *H, "-n", "2"]),
    ("serving_sweep", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "batch": [1, 64]}, ["serving", "sweep", *M, *H, "-b", "1,64"]),
    ("serving_balance", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm"}, ["serving", "balance", *M, *H]),
    ("serving_window", [], {"model": "llama-3.1-8b", "hardware": "h200"}, ["serving", "window", *M, "-H", "h200"]),
    ("serving_frontier", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "batch": [1, 64], "replica_chips": [1, 2]},
     ["serving", "frontier", *M, *H, "-b", "1,64", "--replica-chips", "1,2"]),
    ("serving_modes", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "replica_chips": [1, 2]},
     ["serving", "modes", *M, *H, "--replica-chips", "1,2"]),
    ("prices_list", [], {}, ["prices", "list"]),
    ("prices_show", ["gpt-4o"], {}, ["prices", "show", "gpt-4o"]),
    ("prices_infer", ["gemini-1.5-pro"], {}, ["prices", "infer", "gemini-1.5-pro"]),
    ("prices_forward", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm"}, ["prices", "forward", *M, *H]),
    ("prices_compare", [], {"model": "gpt-oss-120b", "hardware": "h100-sxm,tpu-v5p"},
     ["prices", "compare", "-m", "gpt-oss-120b", "-H", "h100-sxm,tpu-v5p"]),
    ("validate", [], {}, ["validate"]),
    ("scaleup", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm,gb200-nvl72"}, ["scaleup", *M, "-H", "h100-sxm,gb200-nvl72"]),
    ("train_step", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm"}, ["train", "step", *M, *H]),
    ("train_memory", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm"}, ["train", "memory", *M, *H]),
    ("train_layouts", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm"}, ["train", "layouts", *M, *H]),
    ("train_run", [], {"model": "deepseek-v3", "hardware": "h800-sxm", "tokens": 14.8e12, "chips": 2048, "mfu": 0.4373},
     ["train", "run", "-m", "deepseek-v3", "-H", "h800-sxm", "--tokens", "14.8e12", "--chips", "2048", "--mfu", "0.4373"]),
    ("train_chinchilla", [], {"flops": 1e25}, ["train", "chinchilla", "--flops", "1e25"]),
    ("train_equilibrium", [], {}, ["train", "equilibrium"]),
    ("train_moe", [], {"active_params": 5e6, "experts": [1, 128]}, ["train", "moe", "--active-params", "5e6", "--experts", "1,128"]),
    ("train_plot_run", [], {"model": "llama-3.1-70b", "hardware": "h100-sxm"}, ["train", "plot", "run", "-m", "llama-3.1-70b", "-H", "h100-sxm"]),
    ("simulate", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "rate": 5, "requests": 200},
     ["simulate", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "5", "--requests", "200"]),
    ("simulate", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "rate": 5, "requests": 100, "pue": 1.2, "host_w_per_chip": 350},
     ["simulate", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "5", "--requests", "100", "--pue", "1.2", "--host-w-per-chip", "350"]),
    ("fleet", [os.path.join(SOURCE_DIR, "examples", "fleet.csv")], {"hardware": "h100-sxm", "budget_chips": 1, "modes": "aggregated"},
     ["fleet", os.path.join(SOURCE_DIR, "examples", "fleet.csv"), "-H", "h100-sxm", "--budget-chips", "1", "--modes", "aggregated"]),
    ("plan", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "rate": 5, "requests": 200, "budget_chips": 8,
                  "ttft_slo_ms": 2000, "tpot_slo_ms": 100},
     ["plan", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "5", "--requests", "200", "--budget-chips", "8",
      "--ttft-slo-ms", "2000", "--tpot-slo-ms", "100"]),
    # Chip types chosen by the plan (docs/simulator.md, "Planning over chip types"): a list becomes -H's comma list.
    ("plan", [], {"model": "llama-3.1-8b", "hardware": ["h100-sxm", "h200"], "rate": 2, "requests": 40, "input": 512, "output": 64,
                  "budget_chips": 2, "tpot_slo_ms": 30, "replica_chips": 1, "max_seqs_candidates": 64},
     ["plan", "-m", "llama-3.1-8b", "-H", "h100-sxm,h200", "--rate", "2", "--requests", "40", "--input", "512", "--output", "64",
      "--budget-chips", "2", "--tpot-slo-ms", "30", "--replica-chips", "1", "--max-seqs-candidates", "64"]),
    ("calibrate", RUNS, {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "fit": "request_overhead_s", "max_requests": 20},
     ["calibrate", *RUNS, *M, *H, "-n", "1", "--fit", "request_overhead_s", "--max-requests", "20"]),
    ("step", [], {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "prefill": "512:0,256:1024", "decode": "1024x32"},
     ["step", *M, *H, "-n", "1", "--prefill", "512:0,256:1024", "--decode", "1024x32"]),
]


@pytest.mark.parametrize("name,args,kwargs,argv", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_binding_equals_cli_json(cli, name, args, kwargs, argv):
    fn = getattr(chalk, name)
    assert fn(*args, frame=False, **kwargs) == cli(*argv)


def _same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


@pytest.mark.parametrize("name,args,kwargs,argv", [c for c in CASES if c[0] in
                         ("models", "decode", "prefill", "layouts", "serving_sweep", "serving_frontier", "train_layouts", "prices_list")])
def test_sweeps_are_dataframes_of_the_cli_rows(cli, name, args, kwargs, argv):
    df = getattr(chalk, name)(*args, **kwargs)
    assert isinstance(df, pd.DataFrame)
    want = cli(*argv)
    rows = want["rows"]
    got = df.to_dict("records")
    assert len(got) == len(rows)
    # The columns in the CLI table's order (the envelope's columns), not alphabetical.
    assert list(df.columns) == want["columns"]
    for g, w in zip(got, rows):
        assert set(g) == set(w)
        assert all(_same(g[k], w[k]) for k in w), (g, w)
    assert df.attrs == {k: v for k, v in want.items() if k != "rows"}


def test_dataframe_columns_follow_the_cli_table():
    # decode's table (apps/chalk/cmd_decode.cc, decode_table) starts batch, context, compute ms,
    # weights ms, KV ms; alphabetical order would start with bound.
    df = chalk.decode(model="llama-3.1-8b", hardware="h100-sxm", batch=[1, 64])
    assert list(df.columns[:5]) == ["batch", "context_tokens", "t_compute_ms", "t_weights_ms", "t_kv_ms"], list(df.columns)
    # models: name, architecture, layers first, as `chalk models` prints them.
    assert list(chalk.models("llama-3.1-8b").columns[:3]) == ["name", "architecture", "layers"]


def test_prices_compare_is_a_dataframe_of_offers_by_systems(cli):
    want = cli("prices", "compare", "-m", "gpt-oss-120b", "-H", "h100-sxm,tpu-v5p")
    df = chalk.prices_compare(model="gpt-oss-120b", hardware="h100-sxm,tpu-v5p")
    assert isinstance(df, pd.DataFrame)
    assert len(df) == sum(len(o["systems"]) for o in want["rows"])
    # The CLI's column order (the CSV's header first), not the keys sorted (review 3 M2).
    shared = [c for c in want["columns"] if c != "systems"]
    # weights_dtype: the format each offer is priced in (review 3 L16).
    assert list(df.columns[:len(shared)]) == shared and shared[:9] == [
        "provider", "weights_dtype", "host_tok_per_s_per_user", "assumed_tok_per_s_per_user", "input_usd_per_mtok",
        "output_usd_per_mtok", "cache_read_usd_per_mtok", "blended_usd_per_mtok", "system"]
    assert df.attrs == {k: v for k, v in want.items() if k != "rows"}
    cerebras = df[df.provider == "Cerebras"]
    assert not cerebras.speed_reachable.any() and not cerebras.cheapest.any()
    assert cerebras.why_not.str.contains("no layout reaches 1844").all()
    # Groq's 500 tok/s is out of every system's reach: TPU v5p's batch-1 step pays its fixed
    # time per XLA op since review 5 H1 (201 tok/s per user).
    groq = df[df.provider == "Groq"]
    assert not groq.cheapest.any() and not groq.speed_reachable.any()
    # Together states no speed: compared at the assumed 50 tok/s per user, and the rows say so.
    together = df[df.provider == "Together"]
    assert together.speed_assumed.all() and (together.assumed_tok_per_s_per_user == 50).all()
    assert not df[df.provider == "Groq"].speed_assumed.any()


def test_every_cli_command_has_a_binding():
    # serving plot writes an HTML page, not JSON: the Python user plots the DataFrame instead.
    leaves = {tuple(c["path"]) for c in chalk.commands()} - {("serving", "plot")}
    assert leaves == set(chalk.BINDINGS.values())
    assert {name for name, *_ in CASES} == set(chalk.BINDINGS)


def test_the_in_process_app_lists_the_commands_of_the_binary(cli):
    # python/src/cli_inprocess.cc registers the commands of apps/chalk/main.cc: a command
    # added to main.cc and not there fails here.
    binary = os.environ.get("CHALK_BIN", os.path.join(SOURCE_DIR, "build", "release", "chalk"))
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    listed = set(re.findall(r"^  ([a-z][a-z-]*)\s", help_text.split("Subcommands:")[1], re.M))
    # `chalk web` serves HTTP: from Python, call the commands themselves.
    assert listed - {"web"} == {c["path"][0] for c in chalk.commands()}


def test_run_is_the_cli(cli):
    assert chalk.run("serving", "balance", "-m", "llama-3.1-70b", "-H", "h200") == cli("serving", "balance", "-m", "llama-3.1-70b", "-H", "h200")


def test_load_model_and_hardware_are_the_catalog_rows(cli):
    assert chalk.load_model("deepseek-v3") == cli("models", "deepseek-v3")["rows"][0]
    assert chalk.load_hardware("h100") == cli("hardware", "h100")["rows"][0]


def test_a_model_from_a_dict_equals_the_same_config_file(cli, tmp_path):
    config = os.path.join(SOURCE_DIR, "data", "models", "hf", "llama-3.1-8b.json")
    with open(config) as f:
        as_dict = json.load(f)
    got = chalk.decode(model=as_dict, hardware="h100-sxm", batch=[1, 64], frame=False)
    want = cli("decode", "-m", config, "-H", "h100-sxm", "-b", "1,64")
    assert got["rows"] == want["rows"]
    assert got["model"]["params_total"] == want["model"]["params_total"]
    assert chalk.load_model(as_dict)["kv_bytes_per_token"] == cli("models", config)["rows"][0]["kv_bytes_per_token"]


def test_calls_do_not_leak_options_into_the_next(cli):
    # The CLI keeps parsed flags in statics; each call starts from the defaults again.
    chalk.decode(model="llama-3.1-70b", hardware="h100-sxm", tp=8, chips=8, kv_dtype="fp8", batch=[1, 2], frame=False)
    chalk.decode(model="llama-3.1-70b", hardware="h100-sxm", roofline=True, context=[1, 2], frame=False)
    assert chalk.decode(model="llama-3.1-8b", hardware="h100-sxm", frame=False) == cli("decode", *M, *H)


def test_docstrings_come_from_the_cli_help():
    assert "Time and cost of one decode step" in chalk.decode.__doc__
    assert "--batch" not in chalk.decode.__doc__ and "batch: Sequences per step" in chalk.decode.__doc__


def test_the_schedulers_knobs_are_arguments_echoed_in_the_result():
    # issue 29 item 5: the token budget, the running-request cap and the HBM fraction for
    # weights and KV, as simulate's flags; the result states each value used.
    j = chalk.simulate(model="llama-3.1-8b", hardware="h100-sxm", rate=2, requests=50, max_batched_tokens=4096, max_sequences=32,
                       gpu_memory_utilization=0.8, frame=False)
    e = j["engine"]
    assert (e["max_batched_tokens"], e["max_sequences"], e["gpu_memory_utilization"]) == (4096, 32, 0.8), e
    with pytest.raises(chalk.ChalkError, match="^gpu_memory_utilization: "):  # the argument, not the flag
        chalk.simulate(model="llama-3.1-8b", hardware="h100-sxm", rate=2, requests=50, gpu_memory_utilization=1.5, frame=False)


def test_lora_passes_through_as_in_the_cli():
    # issue 31 item 4: --lora as an argument; one Llama 3.1 8B adapter of rank 16 on all
    # seven projections is 41,943,040 parameters x 2 B (docs/simulator.md 1.9).
    j = chalk.simulate(model="llama-3.1-8b", hardware="h100-sxm", chips=1, rate=2, requests=20, lora="2:16,max-loras:2", frame=False)
    lora = j["details"][0]["lora"]
    assert lora["adapter_bytes"] == 83886080 and lora["adapter_loads"] == 2, lora
    with pytest.raises(chalk.ChalkError, match="^lora: got '2:12'"):
        chalk.simulate(model="llama-3.1-8b", hardware="h100-sxm", chips=1, rate=2, requests=20, lora="2:12", frame=False)


def test_plan_takes_lora_and_a_list_of_chip_types():
    # issue 31: chalk.plan(lora=..., hardware=[...]) returns the plan's `lora` object and the
    # choice among chip types. Two adapters, max-loras unstated: values 1 and 2 are planned;
    # the chosen holds max_loras slots of 83,886,080 B on its one chip (Llama 3.1 8B, r 16).
    j = chalk.plan(model="llama-3.1-8b", hardware="h100-sxm", rate=5, requests=60, input=256, output=16, budget_chips=1,
                   replica_chips=1, max_seqs_candidates=64, modes="aggregated", ttft_slo_ms=100, lora="2:16", frame=False)
    lora = j["lora"]
    assert lora["max_loras_searched"] and [t["max_loras"] for t in lora["max_loras_tried"]] == [1, 2], lora
    assert lora["lora_figures"]["adapter_hbm_bytes_per_chip"] == lora["max_loras"] * 83886080, lora
    # A list is a comma list: h100-sxm ($2.35) and h200 ($4.54), one chip meets TPOT <= 30 ms on
    # either, so one H100 at $2.35; a $5 budget leaves the mixed pairs ($6.89) unchosen.
    j = chalk.plan(model="llama-3.1-8b", hardware=["h100-sxm", "h200"], rate=2, requests=40, input=512, output=64, budget_usd_per_hour=5,
                   tpot_slo_ms=30, replica_chips=1, max_seqs_candidates=64, frame=False)
    assert j["hardware_choices"] == ["h100-sxm", "h200"] and abs(j["best"]["cost_usd_per_hour"] - 2.35) < 1e-9, j["best"]
    assert j["launch"][0]["files"], j["launch"]


def test_plan_takes_speculative_decoding(cli):
    # Review 7 M5: chalk.plan takes simulate's draft, acceptance, drafter and returns exactly
    # `chalk plan --json`: the levers (3 drafts kept at 0.8: (1 - 0.8^4) / 0.2 = 2.952 tokens a
    # step), the verdict against plain decode and the EAGLE-3 head in vLLM's launch file.
    args = dict(model="llama-3.1-8b", hardware="h100-sxm", rate=1, requests=30, input=512, output=64, budget_chips=1,
                replica_chips=1, max_seqs_candidates=64, modes="aggregated", tpot_slo_ms=50, draft=3, acceptance=0.8, drafter="eagle3")
    j = chalk.plan(frame=False, **args)
    assert j == cli("plan", *[x for k, v in args.items() for x in ("--" + k.replace("_", "-"), str(v))])
    assert j["levers"]["drafter"] == "eagle3" and abs(j["levers"]["tokens_kept_per_step"] - 2.952) < 1e-12, j["levers"]
    v = j["speculation_verdict"]
    assert v["with_drafts"]["tpot_at_percentile_ms"] < v["without_drafts"]["tpot_at_percentile_ms"], v
    assert '\\"method\\":\\"eagle3\\"' in j["launch"][0]["files"][0]["text"], j["launch"][0]["files"][0]["text"]
    with pytest.raises(chalk.ChalkError, match="^acceptance: must be a probability in \\[0, 1\\], got 1.5"):
        chalk.plan(frame=False, **{**args, "acceptance": 1.5})


def test_step_time_is_the_cli_step_in_seconds_in_each_form(cli):
    # One batch in chalk's, BLIS's and SGLang's forms (docs/simulator.md, "chalk as a
    # step-time predictor"): a 512-token chunk after 1,024 cached and two decodes at 2,000
    # and 3,000. All three are the same step, and it is the CLI's t_step_ms / 1000.
    forms = [
        {"prefill": [[512, 1024]], "decode": [2000, 3000]},
        {"prefill_requests": [{"progress_index": 1024, "num_new_prefill_tokens": 512}],
         "decode_requests": [{"progress_index": 2000, "num_new_decode_tokens": 1}, {"progress_index": 3000, "num_new_decode_tokens": 1}]},
        {"reqs": [{"extend_length": 512, "past_kv_length": 1024}, {"extend_length": 1, "past_kv_length": 2000},
                  {"extend_length": 1, "past_kv_length": 3000}]},
    ]
    got = chalk.step_time(forms, model="llama-3.1-8b", hardware="h100-sxm", chips=1)
    want = cli("step", *M, *H, "-n", "1", "--prefill", "512:1024", "--decode", "2000,3000")["rows"][0]["t_step_ms"] / 1e3
    assert got == [want, want, want]
    assert chalk.step_time({"decode": [2000]}, model="llama-3.1-8b", hardware="h100-sxm", chips=1)[0] < want
    with pytest.raises(chalk.ChalkError) as e:
        chalk.step_time([{"decode": [1024]}, {"decode": [-5]}], model="llama-3.1-8b", hardware="h100-sxm", chips=1)
    assert str(e.value) == "batches[1].decode[0]: must be a context of >= 1 tokens, got -5"
