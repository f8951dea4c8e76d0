"""Every error path raises chalk.ChalkError carrying the field, as the CLI's exit-2 line names it."""
import numpy as np
import pytest

import chalk
from chalk._error import python_spelling

M = {"model": "llama-3.1-8b", "hardware": "h100-sxm"}
ONE_POINT = {"batch": np.array([1]), "context_tokens": np.array([1])}
PRODUCT = {"batch": (np.array([1]), 1), "context_tokens": (np.array([1]), 1)}


def out_arrays(n):
    """Result arrays for Deployment.roofline_sweep(columns, out) (chalk._sweep._OUT_TYPES)."""
    return {c: np.empty(n, dtype=t) for c, t in chalk._sweep._OUT_TYPES}

# (call, the field, the same inputs on the command line or None)
CASES = [
    (lambda: chalk.decode(model="nope", hardware="h100-sxm"), "model", ["decode", "-m", "nope", "-H", "h100-sxm"]),
    (lambda: chalk.decode(model="llama-3.1-8b", hardware="nope"), "hardware", ["decode", "-m", "llama-3.1-8b", "-H", "nope"]),
    (lambda: chalk.decode(batch=0, **M), "batch", ["decode", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-b", "0"]),
    (lambda: chalk.decode(context="8k", **M), "context", ["decode", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-s", "8k"]),
    (lambda: chalk.decode(tp="x", **M), "tp", ["decode", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--tp", "x"]),
    (lambda: chalk.decode(matmul_efficiency=1.5, **M), "matmul_efficiency",
     ["decode", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--matmul-efficiency", "1.5"]),
    (lambda: chalk.decode(weights="fp7", **M), "weights", ["decode", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--weights", "fp7"]),
    (lambda: chalk.prefill(prefix=-1, **M), "prefix", ["prefill", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--prefix", "-1"]),
    (lambda: chalk.serving_frontier(replica_chips=[0], **M), "replica_chips",
     ["serving", "frontier", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--replica-chips", "0"]),
    (lambda: chalk.prices_infer("nope"), None, ["prices", "infer", "nope"]),
    (lambda: chalk.train_run(model="deepseek-v3", hardware="h800-sxm", chips=2048), None,
     ["train", "run", "-m", "deepseek-v3", "-H", "h800-sxm", "--chips", "2048"]),
    (lambda: chalk.train_chinchilla(flops=-1), "flops", ["train", "chinchilla", "--flops", "-1"]),
    (lambda: chalk.validate("/nonexistent.csv"), None, ["validate", "/nonexistent.csv"]),
    (lambda: chalk.prices_forward(pue=0.5, **M), "pue", ["prices", "forward", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--pue", "0.5"]),
    (lambda: chalk.simulate(rate=5, requests=20, host_w_per_chip=-1, **M), "host_w_per_chip",
     ["simulate", "-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "5", "--requests", "20", "--host-w-per-chip", "-1"]),
]


@pytest.mark.parametrize("call,field,argv", CASES, ids=[f"cli-{i}" for i in range(len(CASES))])
def test_command_errors_name_the_argument_the_cli_names_as_a_flag(cli_error, call, field, argv):
    with pytest.raises(chalk.ChalkError) as e:
        call()
    line = cli_error(*argv)
    assert line.startswith("chalk: error: ")
    # Python names the keyword argument (model) where the CLI names its flag (--model); the
    # rest of the message is the CLI's (issue 30 review L10).
    f = e.value.field
    assert f and not f.startswith("-"), f
    flag = "--" + f.replace("_", "-")
    cli_field = flag if line.startswith("chalk: error: " + flag + ":") else f
    assert line.startswith("chalk: error: " + cli_field), (f, line)
    if field is not None:
        assert f == field
    assert str(e.value).startswith(f)
    # ... with the flags it names spelled as the Python call takes them (review 11 L2).
    path = max((tuple(argv[:k]) for k in range(1, len(argv) + 1) if tuple(argv[:k]) in chalk._COMMANDS), key=len)
    assert str(e.value)[len(f):] in python_spelling(line, chalk._COMMANDS[path]["options"]), (str(e.value), line)


PY_CASES = [
    (lambda: chalk.decode(bogus=1, **M), "bogus"),
    (lambda: chalk.decode(json=True, **M), "json"),
    (lambda: chalk.decode(roofline="yes", **M), "roofline"),
    (lambda: chalk.decode("extra", **M), "arguments"),
    (lambda: chalk.run("decode", "-m", "llama-3.1-8b", "--foo"), "--foo"),
    (lambda: chalk.run("nope"), "arguments"),
    (lambda: chalk.load_model("nope"), "--model" if False else None),
    (lambda: chalk.load_model({"model_type": "llama", "hidden_size": 4096}), None),
    (lambda: chalk.load_hardware({"format": "chalk-hardware/1"}), None),
    (lambda: chalk.deployment("llama-3.1-8b", "h100-sxm", chips=-1), "chips"),
    (lambda: chalk.deployment("llama-3.1-8b", "h100-sxm", bogus=1), "bogus"),
    (lambda: chalk.deployment("llama-3.1-8b", "h100-sxm", tp="x"), "options"),
    (lambda: chalk.deployment("llama-3.1-8b", "h100-sxm").decode_step(0, 10), "batch"),
    (lambda: chalk.deployment("llama-3.1-8b", "h100-sxm").decode_step(1, -1), "context"),
    (lambda: chalk.deployment("llama-3.1-8b", "h100-sxm").prefill_step(0), "prompt"),
    (lambda: chalk.roofline_sweep({"batch": [1]}, **M), "context_tokens"),
    (lambda: chalk.roofline_sweep({"batch": [1], "context_tokens": [1]}, hardware="h100-sxm"), "model"),
    (lambda: chalk.roofline_sweep({"batch": [0], "context_tokens": [1]}, **M), "batch"),
    (lambda: chalk.roofline_sweep({"batch": [1.5], "context_tokens": [1]}, **M), "batch"),
    (lambda: chalk.roofline_sweep({"batch": [1], "context_tokens": [-1]}, **M), "context_tokens"),
    (lambda: chalk.roofline_sweep({"batch": [1], "context_tokens": [1], "compute_tflop_per_s": [-5.0]}, **M), "compute_tflop_per_s"),
    (lambda: chalk.roofline_sweep({"batch": [1], "context_tokens": [1], "hbm_tb_per_s_per_chip": [np.inf]}, **M), "hbm_tb_per_s_per_chip"),
    (lambda: chalk.roofline_sweep({"batch": [1], "context_tokens": [1], "hbm_gb_per_chip": [0.0]}, **M), "hbm_gb_per_chip"),
    (lambda: chalk.roofline_sweep({"batch": [1], "context_tokens": [1], "price_usd_per_chip_hour": ["a"]}, **M), "price_usd_per_chip_hour"),
    (lambda: chalk.grid(batch=[], context_tokens=[1]), "batch"),
    (lambda: chalk.roofline_sweep({"model": ["llama-3.1-8b", None], "batch": [1, 1], "context_tokens": [1, 1]},
                                  hardware="h100-sxm"), "model"),
    (lambda: chalk.deployment(**M).roofline_sweep(ONE_POINT, {"t_compute_ms": np.zeros(1)}), "out.t_weights_ms"),
    (lambda: chalk.deployment(**M).roofline_sweep(ONE_POINT, dict(out_arrays(1), memory_fits=np.zeros(1, np.int8))), "out.memory_fits"),
    (lambda: chalk.deployment(**M).roofline_sweep(ONE_POINT, out_arrays(2)), "out.t_compute_ms"),
    # roofline_product_sweep, as dask_sweep's workers call it: (values, stride) per column
    (lambda: chalk._chalk.roofline_product_sweep([chalk.deployment(**M)], [], PRODUCT, 2, 1, out_arrays(0)), "rows"),
    (lambda: chalk._chalk.roofline_product_sweep([], [], PRODUCT, 0, 1, out_arrays(1)), "deployments"),
    (lambda: chalk._chalk.roofline_product_sweep([chalk.deployment(**M)], [(0, 1)], PRODUCT, 0, 1, out_arrays(1)), "group_axes"),
    (lambda: chalk._chalk.roofline_product_sweep([chalk.deployment(**M)], [], {"batch": PRODUCT["batch"]}, 0, 1, out_arrays(1)), "columns"),
    (lambda: chalk._chalk.roofline_product_sweep([chalk.deployment(**M)], [], PRODUCT, 0, 1, out_arrays(2)), "out.t_compute_ms"),
    (lambda: chalk.dask_sweep({"batch": [1], "context_tokens": [1], "hbm_gb_per_chip": [80.0, -1.0]}, npartitions=2, **M),
     "hbm_gb_per_chip"),
]


@pytest.mark.parametrize("call,field", PY_CASES, ids=[f"py-{i}" for i in range(len(PY_CASES))])
def test_python_errors_raise_chalk_error_with_the_field(call, field):
    with pytest.raises(chalk.ChalkError) as e:
        call()
    assert e.value.field, str(e.value)
    assert str(e.value).startswith(e.value.field), (e.value.field, str(e.value))
    if field is not None:
        assert e.value.field == field, (e.value.field, str(e.value))
    assert "\n" not in str(e.value)


def test_model_file_errors_name_the_config_field():
    with pytest.raises(chalk.ChalkError) as e:
        chalk.load_model({"model_type": "llama", "hidden_size": 4096})
    assert "model.json" in e.value.field  # the offending file (and field) as the library names it


def test_chalk_error_pickles_with_its_field():
    import pickle
    e = pickle.loads(pickle.dumps(chalk.ChalkError("--batch: must be >= 1", "--batch")))
    assert (e.field, str(e)) == ("--batch", "--batch: must be >= 1")


def test_a_bad_point_is_named_by_its_row_in_the_whole_grid():
    # Rows 0-2 llama, 3-5 qwen, 6-8 llama: the bad batch (0) is row 7, the second row of
    # the second llama run, whatever the C++ call that met it counted.
    points = {"model": ["llama-3.1-8b"] * 3 + ["qwen3-30b-a3b"] * 3 + ["llama-3.1-8b"] * 3,
              "batch": [1, 2, 3, 1, 2, 3, 1, 0, 3], "context_tokens": [1] * 9}
    with pytest.raises(chalk.ChalkError) as e:
        chalk.roofline_sweep(points, hardware="h100-sxm")
    assert e.value.field == "batch"
    assert str(e.value) == "batch: row 7: must be >= 1, got 0"


def test_errors_spell_the_flags_they_name_as_python_arguments():
    # Review 11 L2: the message said "-n 2 or -n 4; --allow-infeasible prints the figures
    # anyway", the CLI's spelling, to a caller who passed chips=3.
    with pytest.raises(chalk.ChalkError) as e:
        chalk.decode(model="llama-3.1-70b", hardware="h100-sxm", chips=3)
    assert e.value.field == "chips"
    msg = str(e.value)
    assert msg.startswith("chips: 3 chips cannot split llama-3.1-70b"), msg
    assert "chips=2 or chips=4" in msg and "allow_infeasible=True prints the figures anyway" in msg, msg
    assert "-n " not in msg and "--" not in msg, msg
    # The raw CLI interface keeps the CLI's spelling: its caller typed flags.
    with pytest.raises(chalk.ChalkError) as raw:
        chalk.run("decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "3")
    assert "-n 2 or -n 4; --allow-infeasible" in str(raw.value), str(raw.value)
