"""A Dask sweep on a LocalCluster with two workers equals the serial sweep."""
import pandas as pd
import pytest

import chalk

distributed = pytest.importorskip("distributed")

LISTS = {"model": ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b"], "chips": [8],
         "compute_tflop_per_s": [500.0, 1000.0, 2000.0], "hbm_tb_per_s_per_chip": [2.0, 4.0, 8.0],
         "batch": [1, 16, 64, 256, 1024], "context_tokens": [1024, 8192, 32768]}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as c:
        yield c


def test_dask_sweep_of_a_product_equals_the_serial_sweep(cluster):
    serial = chalk.roofline_sweep(chalk.grid(**LISTS), hardware="h100-sxm")
    with distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        parallel = chalk.dask_sweep(LISTS, client=client, npartitions=7, hardware="h100-sxm")
    assert len(serial) == 3 * 3 * 3 * 5 * 3
    pd.testing.assert_frame_equal(parallel, serial)


def test_dask_sweep_of_a_dataframe_on_a_scheduler_address_equals_the_serial_sweep(cluster):
    points = chalk.grid(**LISTS).sample(frac=1.0, random_state=1)  # any index, any order
    serial = chalk.roofline_sweep(points, hardware="h100-sxm")
    parallel = chalk.dask_sweep(points, address=cluster.scheduler_address, npartitions=5, hardware="h100-sxm")
    pd.testing.assert_frame_equal(parallel, serial)


def test_an_error_on_a_worker_raises_chalk_error_with_its_field(cluster):
    with distributed.Client(cluster) as client:
        with pytest.raises(chalk.ChalkError) as e:
            chalk.dask_sweep({"batch": [1, 0], "context_tokens": [1]}, client=client, npartitions=2,
                             model="llama-3.1-8b", hardware="h100-sxm")
    assert e.value.field == "batch"


def test_dask_sweep_without_a_client_and_through_the_scheduler_equals_the_serial_sweep(cluster):
    serial = chalk.roofline_sweep(chalk.grid(**LISTS), hardware="h100-sxm")
    pd.testing.assert_frame_equal(chalk.dask_sweep(LISTS, npartitions=4, hardware="h100-sxm"), serial)  # dask's default scheduler
    with distributed.Client(cluster) as client:
        pd.testing.assert_frame_equal(chalk.dask_sweep(LISTS, client=client, direct=False, hardware="h100-sxm"), serial)


def test_dask_sweep_of_another_function_gets_dataframe_partitions(cluster):
    def tokens_per_chip_second(part, hardware):
        return chalk.roofline_sweep(part, hardware=hardware)[["tok_per_s_per_chip"]]
    serial = tokens_per_chip_second(chalk.grid(**LISTS), "h100-sxm")
    with distributed.Client(cluster) as client:
        parallel = chalk.dask_sweep(LISTS, tokens_per_chip_second, client=client, npartitions=3, hardware="h100-sxm")
    pd.testing.assert_frame_equal(parallel, serial)


def test_a_bad_point_on_a_worker_is_named_by_its_row_in_the_whole_grid(cluster):
    # The product's rows: (batch, context) = (1,1) (1,1) (2,1) (2,1) (0,1) (0,1): row 4 is the
    # first bad one, in the second of three partitions.
    with distributed.Client(cluster) as client:
        with pytest.raises(chalk.ChalkError) as e:
            chalk.dask_sweep({"batch": [1, 2, 0], "context_tokens": [1, 1]}, client=client, npartitions=3,
                             model="llama-3.1-8b", hardware="h100-sxm")
    assert str(e.value) == "batch: row 4: must be >= 1, got 0"


def test_a_partition_resolves_the_deployments_of_its_own_rows_only():
    # _codes_met against brute force: every row's code, over random products and slices.
    import random
    from chalk._dask import _codes_met
    rng = random.Random(2)
    for _ in range(300):
        sizes = [rng.randint(1, 4) for _ in range(rng.randint(1, 5))]
        strides = [1] * len(sizes)
        for i in range(len(sizes) - 2, -1, -1):  # the last list varies fastest
            strides[i] = strides[i + 1] * sizes[i + 1]
        axes = [(s, t) for s, t in zip(sizes, strides) if rng.random() < 0.5]
        n = strides[0] * sizes[0]
        start = rng.randint(0, n)
        stop = rng.randint(start, n)
        want = set()
        for row in range(start, stop):
            code = 0
            for size, stride in axes:
                code = code * size + (row // stride) % size
            want.add(code)
        assert set(_codes_met(axes, start, stop)) == want, (sizes, axes, start, stop)


def test_a_product_with_kept_figures_prices_and_default_chips_equals_the_serial_sweep():
    # NaN keeps the base system's figure; chips 0 = the smallest replica; a price per point.
    lists = {"model": ["llama-3.1-8b", "qwen3-30b-a3b"], "chips": [8, 0], "compute_tflop_per_s": [500.0, float("nan")],
             "hbm_tb_per_s_per_chip": [2.0, 8.0], "price_usd_per_chip_hour": [float("nan"), 2.0],
             "batch": [1, 64, 1024], "context_tokens": [1024, 32768]}
    serial = chalk.roofline_sweep(chalk.grid(**lists), hardware="h100-sxm")
    kept = serial["compute_tflop_per_s"].isna()  # h100-sxm's own 989.4 TFLOP/s: slower than 500 nowhere
    assert kept.any() and (serial.loc[kept, "t_compute_ms"].to_numpy() < serial.loc[~kept, "t_compute_ms"].to_numpy()).all()
    pd.testing.assert_frame_equal(chalk.dask_sweep(lists, npartitions=5, hardware="h100-sxm"), serial)


def test_default_roofline_partitions_are_at_most_131072_rows_and_two_per_worker():
    from chalk._dask import ROWS_PER_PARTITION, _roofline_partitions
    assert ROWS_PER_PARTITION == 131_072
    # 957,372 points (bench_python.py's grid): ceil(957,372 / 131,072) = 8 partitions of
    # ceil(957,372 / 8) = 119,672 rows, more than 2 per worker on 2 workers.
    parts = _roofline_partitions(957_372, None, 2)
    assert len(parts) == 8 and parts[0] == (0, 119_672) and parts[-1] == (7 * 119_672, 957_372)
    assert _roofline_partitions(100, None, 3) == [(0, 17), (17, 34), (34, 51), (51, 68), (68, 85), (85, 100)]
    assert _roofline_partitions(100, 2, 8) == [(0, 50), (50, 100)]  # npartitions given: kept


def test_a_partitions_results_are_aligned_views_of_one_buffer():
    import numpy as np
    from chalk._sweep import _OUT_TYPES, packed_outputs
    n = 7  # odd: 8 x 8 B float columns, then int64 (at 64 n), then int8 and bool (at 72 n, 73 n)
    out = packed_outputs(n)
    assert list(out) == [c for c, _ in _OUT_TYPES]
    base = out["t_step_ms"].base
    assert base is not None and base.nbytes == 74 * n
    for c, t in _OUT_TYPES:
        a = out[c]
        assert a.dtype == np.dtype(t) and len(a) == n and a.base is base and a.ctypes.data % a.itemsize == 0, c
    assert out["max_batch_at_context"].ctypes.data - base.ctypes.data == 64 * n
    assert out["memory_fits"].ctypes.data - base.ctypes.data == 73 * n


def test_an_unknown_name_is_one_error_on_the_client_before_any_task(cluster):
    # Issue 30 item 10: dask_sweep(..., hardware="nope") failed on every worker with a
    # traceback each; the deployments are now resolved here first, and no task is submitted.
    with distributed.Client(cluster) as client:
        with pytest.raises(chalk.ChalkError) as e:
            chalk.dask_sweep(LISTS, client=client, npartitions=4, hardware="nope")
        assert e.value.field.lstrip("-") == "hardware", (e.value.field, str(e.value))
        assert "nope" in str(e.value)
        assert client.who_has() == {}  # nothing was scattered or computed
    points = chalk.grid(**LISTS)
    points["model"] = "no-such-model"
    with pytest.raises(chalk.ChalkError) as e:
        chalk.dask_sweep(points, npartitions=2, hardware="h100-sxm")
    assert e.value.field.lstrip("-") == "model", (e.value.field, str(e.value))
