"""deployment(): decode and prefill steps; roofline_sweep(): the CLI's rows, hypothetical chips."""
import copy
import math

import numpy as np
import pandas as pd
import pytest

import chalk


@pytest.mark.parametrize("model,hardware,extra", [("llama-3.1-70b", "h100-sxm", []), ("deepseek-v3", "gb200-nvl72", []),
                                                  ("llama-3.1-8b", "h100-sxm", ["--roofline"])])
def test_decode_step_equals_the_cli_rows(cli, model, hardware, extra):
    d = chalk.deployment(model, hardware, context=8192, roofline=bool(extra))
    # -n: the default replica's chips (with -b alone decode takes the smallest replica that
    # holds the largest batch listed, review 10 M2).
    want = cli("decode", "-m", model, "-H", hardware, "-n", str(d.chips), "-b", "1,64,1024", "-s", "8192", *extra)
    assert d.chips == want["assumptions"]["chips"] if "assumptions" in want else True
    envelope = ("command", "chalk_version", "columns", "rows", "warnings")  # the --json envelope (docs/output-schema.md)
    assert d.describe() == {k: v for k, v in want.items() if k not in ("memory", "levers", "replica_choice") + envelope}
    for row in want["rows"]:
        got = d.decode_step(row["batch"], row["context_tokens"]).to_dict()
        for key, value in got.items():
            assert value == row[key], (key, value, row[key])


def test_decode_step_attributes_and_memory(cli):
    d = chalk.deployment("llama-3.1-70b", "h100-sxm", chips=2)
    s = d.decode_step(64, 4096)
    row = cli("decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "2", "-b", "64", "-s", "4096")["rows"][0]
    assert (s.t_step_ms, s.tok_per_s, s.bound, s.cost_usd_per_mtok) == (row["t_step_ms"], row["tok_per_s"], row["bound"], row["cost_usd_per_mtok"])
    mem = d.memory_plan(64, 4096)
    assert mem["memory_fits"] == row["memory_fits"]
    assert mem["max_batch_at_context"] is not None


def test_prefill_step_equals_the_cli_rows(cli):
    # deployment() takes decode's default, the smallest replica; `chalk prefill` without -n the
    # cheapest (issue 30): the same chips stated.
    d = chalk.deployment("qwen3-235b-a22b", "h200", context=32768)
    want = cli("prefill", "-m", "qwen3-235b-a22b", "-H", "h200", "-n", str(d.chips), "-p", "1024,32768", "-b", "1,4")
    for row in want["rows"]:
        got = d.prefill_step(row["prompt_tokens"], row["batch"]).to_dict()
        for key, value in got.items():
            assert value == row[key], (key, value, row[key])


def test_roofline_sweep_equals_cli_decode_roofline(cli):
    want = cli("decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "2", "-b", "1,64,1024", "-s", "1024,32768", "--roofline")
    points = chalk.grid(context_tokens=[1024, 32768], batch=[1, 64, 1024])
    got = chalk.roofline_sweep(points, model="llama-3.1-70b", hardware="h100-sxm", chips=2)
    for row, g in zip(want["rows"], got.to_dict("records")):
        assert (g["batch"], g["context_tokens"]) == (row["batch"], row["context_tokens"])
        for key in ("t_compute_ms", "t_weights_ms", "t_kv_ms", "t_step_ms", "tok_per_s", "tok_per_s_per_user",
                    "tok_per_s_per_chip", "cost_usd_per_mtok", "memory_fits", "max_batch_at_context", "bound"):
            if row[key] is None:  # a row that does not fit is not priced: null in the CLI, NaN in the frame
                assert key == "cost_usd_per_mtok" and not g["memory_fits"] and math.isnan(g[key]), (key, g[key])
                continue
            assert g[key] == row[key], (key, g[key], row[key])


def test_roofline_sweep_hypothetical_chip_equals_the_cli_on_that_chip_file(cli, h100_file, tmp_path):
    # A chip with twice H100's bf16 FLOP/s, 8 TB/s, 192 GB and $4/h: the sweep's overrides
    # must give what the CLI gives for a chalk-hardware/1 file stating those figures.
    chip = copy.deepcopy(h100_file)
    chip["name"] = "h100-hypothetical"
    chip["chip"]["peak_tflop_per_s"]["bf16"] = 1978.8
    chip["chip"]["hbm_tb_per_s"] = 8.0
    chip["chip"]["hbm_gb"] = 192
    chip["price"]["usd_per_chip_hour"] = 4.0
    path = tmp_path / "chip.json"
    path.write_text(__import__("json").dumps(chip))
    want = cli("decode", "-m", "llama-3.1-70b", "-H", str(path), "-n", "1", "-b", "1,256", "-s", "4096,65536", "--roofline")
    points = chalk.grid(context_tokens=[4096, 65536], batch=[1, 256])
    points["compute_tflop_per_s"] = 1978.8
    points["hbm_tb_per_s_per_chip"] = 8.0
    points["hbm_gb_per_chip"] = 192.0
    points["price_usd_per_chip_hour"] = 4.0
    got = chalk.roofline_sweep(points, model="llama-3.1-70b", hardware="h100-sxm", chips=1)
    for row, g in zip(want["rows"], got.to_dict("records")):
        for key in ("t_compute_ms", "t_weights_ms", "t_kv_ms", "t_step_ms", "tok_per_s", "cost_usd_per_mtok", "memory_fits",
                    "max_batch_at_context", "bound"):
            if row[key] is None:  # a row that does not fit is not priced: null in the CLI, NaN in the frame
                assert key == "cost_usd_per_mtok" and not g["memory_fits"] and math.isnan(g[key]), (key, g[key])
                continue
            assert g[key] == pytest.approx(row[key], rel=1e-12), (key, g[key], row[key])


def test_roofline_sweep_hand_derivation():
    # Llama-3.1-70B in bf16 on 2 H100 at full efficiency, batch 1, context 0: the step reads
    # every weight but the untied input embedding (a lookup: one row per token) once
    # (lecture 2:21: memory time = bytes / bandwidth):
    # (70,553,706,496 - 128,256 x 8,192) params x 2 B = 139.006e9 B over 2 x 3.35e12 B/s = 20.747 ms.
    params = chalk.load_model("llama-3.1-70b")["params_active_excluding_embedding_billion"] * 1e9
    assert params == 70_553_706_496 - 128_256 * 8_192
    got = chalk.roofline_sweep({"batch": [1], "context_tokens": [0]}, model="llama-3.1-70b", hardware="h100-sxm", chips=2,
                               matmul_efficiency=1.0, hbm_efficiency=1.0)
    assert got["t_weights_ms"][0] == pytest.approx(params * 2 / 6.7e12 * 1e3, rel=1e-9)
    assert 20.74 < got["t_weights_ms"][0] < 20.75
    assert got["bound"][0] == "weights"
    # Doubling HBM bandwidth halves the weight time; FLOP/s do not move it.
    twice = chalk.roofline_sweep({"batch": [1, 1], "context_tokens": [0, 0], "hbm_tb_per_s_per_chip": [6.7, np.nan],
                                  "compute_tflop_per_s": [np.nan, 5000.0]},
                                 model="llama-3.1-70b", hardware="h100-sxm", chips=2, matmul_efficiency=1.0, hbm_efficiency=1.0)
    assert twice["t_weights_ms"][0] == pytest.approx(got["t_weights_ms"][0] / 2, rel=1e-12)
    assert twice["t_weights_ms"][1] == pytest.approx(got["t_weights_ms"][0], rel=1e-12)


def test_roofline_sweep_groups_models_and_hardware(cli):
    points = chalk.grid(model=["llama-3.1-8b", "llama-3.1-70b"], hardware=["h100-sxm", "h200"], batch=[1, 64], context_tokens=[4096])
    points["chips"] = 8
    got = chalk.roofline_sweep(points)
    assert list(got.index) == list(range(8))
    row = got.iloc[5]  # llama-3.1-70b, h100-sxm, batch 64
    assert (row["model"], row["hardware"], row["batch"]) == ("llama-3.1-70b", "h100-sxm", 64)
    want = cli("decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "8", "-b", "64", "-s", "4096", "--roofline")["rows"][0]
    assert row["t_step_ms"] == want["t_step_ms"]


def test_roofline_sweep_columns_follow_the_output_schema():
    # docs/output-schema.json: one type per key, in Python too.
    import json
    import os
    from conftest import SOURCE_DIR
    keys = json.load(open(os.path.join(SOURCE_DIR, "docs", "output-schema.json")))["keys"]
    got = chalk.roofline_sweep(chalk.grid(batch=[1, 64], context_tokens=[4096]), model="llama-3.1-8b", hardware="h100-sxm")
    kinds = {"number": "fi", "integer": "i", "boolean": "b", "string": "OU"}
    checked = 0
    for column in got.columns:
        if column in keys and column not in ("model", "hardware"):  # grid inputs: docs/output-schema.md, "Not yet uniform"
            dtype = got[column].dtype
            kind = "O" if isinstance(dtype, pd.CategoricalDtype) else dtype.kind
            allowed = "".join(kinds.get(t, "") for t in keys[column].split("|"))
            assert kind in allowed, (column, dtype, keys[column])
            checked += 1
    assert checked >= 6
    assert set(got["bound"].cat.categories) == {"compute", "weights", "kv-cache"}


def test_roofline_sweep_writes_into_the_callers_arrays():
    d = chalk.deployment("llama-3.1-70b", "h100-sxm", roofline=True)
    cols = {"batch": np.array([1, 64, 1024]), "context_tokens": np.array([1024, 8192, 32768]),
            "hbm_tb_per_s_per_chip": np.array([np.nan, 8.0, 2.0])}
    new = d.roofline_sweep(cols)
    out = {c: np.full(5, 7, dtype=t) for c, t in chalk._sweep._OUT_TYPES}  # 7 (True for memory_fits): not a result
    views = {c: a[1:4] for c, a in out.items()}  # the middle of larger arrays
    assert d.roofline_sweep(cols, views) is not None
    for c, a in new.items():
        np.testing.assert_array_equal(out[c][1:4], a)
        assert out[c][0] == np.array(7, dtype=a.dtype) and out[c][4] == np.array(7, dtype=a.dtype), c  # nothing outside the view


@pytest.mark.parametrize("lists", [
    {"model": ["a", "b", "c"], "batch": [1, 64], "context_tokens": [10, 20, 30, 40, 50]},
    {"x": [0.5], "y": [1, 2, 3, 4, 5, 6, 7], "name": ["p", "p", "q"]},  # repeated names: objects, not categories
    {"only": [3, 1, 2]},
])
def test_grid_and_its_slices_are_the_product_of_the_lists(lists):
    import itertools
    rows = list(itertools.product(*lists.values()))  # the last list varies fastest
    g = chalk.grid(**lists)
    assert [tuple(r) for r in g.itertuples(index=False)] == rows
    n = len(rows)
    for start, stop in [(0, n), (1, n - 1), (n // 3, n // 3 + 1), (n - 1, n), (2, 2)]:
        if 0 <= start <= stop <= n:
            part = chalk._sweep._product_slice(lists, start, stop)
            assert [tuple(r) for r in part.itertuples(index=False)] == rows[start:stop], (start, stop)
            assert list(part.index) == list(range(start, stop))


def test_the_sweep_result_owns_its_columns_and_keeps_the_points_layout():
    # assemble builds one DataFrame of the columns (no per-column copies): the points stay
    # the caller's (a copy is taken), a result name already among the points is replaced in
    # place, and repeated point names still work (added one by one).
    points = pd.DataFrame({"t_step_ms": [-1.0, -1.0], "batch": [1, 64], "context_tokens": [4096, 4096]})
    before = points.copy()
    r = chalk.roofline_sweep(points, model="llama-3.1-8b", hardware="h100-sxm")
    assert list(r.columns[:3]) == ["t_step_ms", "batch", "context_tokens"] and (r["t_step_ms"] > 0).all()
    r.loc[0, "batch"] = 7
    pd.testing.assert_frame_equal(points, before)
    dup = pd.DataFrame([[1, 4096, 0, 1], [64, 4096, 0, 1]], columns=["batch", "context_tokens", "x", "x"])
    got = chalk.roofline_sweep(dup, model="llama-3.1-8b", hardware="h100-sxm")
    assert list(got.columns[:4]) == ["batch", "context_tokens", "x", "x"]
    pd.testing.assert_series_equal(got["t_step_ms"], r["t_step_ms"])


def test_the_joined_dataframe_is_made_of_the_arrays_themselves():
    # dask_sweep's serial part on the client: a copy of 74 B of results and 56 B of grid a
    # row costs about 1 ms per MB of fresh memory on the development machine.
    from chalk._sweep import _OUT_TYPES, with_results
    n = 5
    out = {c: np.zeros(n, dtype=t) for c, t in _OUT_TYPES}
    batch = np.arange(1, n + 1)
    df = with_results({"batch": batch}, out, pd.RangeIndex(0, n))
    assert np.shares_memory(df["batch"].to_numpy(), batch)
    assert np.shares_memory(df["t_step_ms"].to_numpy(), out["t_step_ms"])
    assert list(df["bound"]) == ["compute"] * n and df["max_batch_at_context"].tolist() == [0] * n


def test_step_dicts_carry_the_cli_rows_fit_and_roofline(cli):
    # QA: Llama 3.1 70B on one H100 (141 GB of bf16 weights in 80 GB) gave t_step 57.1 ms with
    # no memory_fits, t_step_roofline_ms or max_batch_at_context; the dicts now hold every key
    # of the CLI's row, equal to it.
    d = chalk.deployment("llama-3.1-70b", "h100-sxm", chips=1)
    row = cli("decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "1", "-b", "1", "-s", "4096", "--allow-infeasible")["rows"][0]
    got = d.decode_step(1).to_dict()
    assert set(got) == set(row), set(row) ^ set(got)
    assert got == row
    assert got["memory_fits"] is False
    pre = cli("prefill", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "1", "-p", "1024", "--allow-infeasible")["rows"][0]
    pgot = d.prefill_step(1024).to_dict()
    assert set(pgot) == set(pre), set(pre) ^ set(pgot)
    assert pgot == pre and pgot["memory_fits"] is False
    # The roofline beside the engine step is its lower bound.
    assert got["t_step_roofline_ms"] < got["t_step_ms"] and pgot["ttft_roofline_ms"] < pgot["ttft_ms"]
    # The repr says whether the step fits (review 3 L10: it printed t_step_ms alone).
    assert d.decode_step(1).memory_fits is False and repr(d.decode_step(1)).endswith("memory_fits=False)")
    assert d.prefill_step(1024).memory_fits is False and "memory_fits=False" in repr(d.prefill_step(1024))


def test_readme_fast_path_example_fits():
    # python/README.md's example (review 3 L10: on the default 2 chips it landed on points that
    # do not fit). 8 H100: 640 GB - 141.1 GB of weights - 10% reserve (64 GB) leaves ~435 GB;
    # 64 x 8,192 tokens x 327,680 B (80 layers x 8 KV heads x 128 x 2 (K, V) x 2 B) = 171.8 GB.
    d = chalk.deployment("llama-3.1-70b", "h100-sxm", chips=8)
    step = d.decode_step(64, 8192)
    assert step.memory_fits and step.cost_usd_per_mtok is not None and repr(step).endswith("memory_fits=True)")
    assert d.prefill_step(32768).memory_fits


@pytest.mark.parametrize("call,field", [(lambda d: d.decode_step(10**12), "batch"), (lambda d: d.decode_step(0), "batch"),
                                        (lambda d: d.decode_step(1, 2**30 + 1), "context"), (lambda d: d.decode_step(1, 0), "context"),
                                        (lambda d: d.prefill_step(0), "prompt"), (lambda d: d.prefill_step(1024, 2**24 + 1), "batch"),
                                        (lambda d: d.prefill_step(1024, 1, -1), "prefix")])
def test_steps_take_the_cli_ranges(call, field):
    # The ranges of decode's --batch 1..16777216 and --context 1..2^30 (and prefill's): the
    # fast path refused none of them (QA: decode_step(10**12) accepted). The field is the
    # method's argument (batch), not the CLI's flag (issue 30 review L10).
    d = chalk.deployment("llama-3.1-8b", "h100-sxm", chips=1)
    with pytest.raises(chalk.ChalkError) as e:
        call(d)
    assert e.value.field == field, (e.value.field, str(e.value))
