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
