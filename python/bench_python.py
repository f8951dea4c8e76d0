#!/usr/bin/env python3
"""Speed of chalk from Python (issue 19's speed targets): a timing script, not a test.

  PYTHONPATH=build/release/python /usr/bin/python3 python/bench_python.py [--points N] [--workers 1,2]

1. One decode step through Python: Deployment.decode_step(batch, context), target 2 us
   (engine step and roofline deployments; plus .to_dict()).
2. A roofline sweep of --points points (default 1,000,000) on one core: chalk.roofline_sweep
   over a grid of hypothetical chips, target 2 s; and the grid construction separately.
3. The same sweep with chalk.dask_sweep on a LocalCluster of n workers (one thread each) for
   each n of --workers (default 1 and 2, up to the cores present), of worker threads in
   this process (processes=False) and of worker processes (the LocalCluster default), as
   --clusters says: target about 1/n of the one-core time. dask_sweep is given the lists,
   so it builds the grid too: the fair serial figure is grid + sweep, printed as well, and
   each line gives both ratios. Cluster start-up is not timed; the first run warms the
   workers and is checked equal to the serial sweep. With each time, the CPU seconds spent
   by this process (client, the LocalCluster's scheduler, and thread workers) and by each
   worker process: on a busy machine the wall times say little, the CPU seconds still say
   where the work went.
Prints one line per figure: the median of --repeat runs (default 3), and the load average.
"""
import argparse
import os
import resource
import statistics
import sys
import time

# Run as a script, python/ itself would come first on sys.path and shadow the built package
# (python/chalk has no compiled _chalk): drop it.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import chalk  # noqa: E402


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def calls(fn, n):
    for _ in range(n):
        fn()


def median(fn, repeat):
    """The median wall time of `repeat` runs of fn."""
    return median_wall_cpu(fn, repeat)[0]


def median_wall_cpu(fn, repeat):
    """The median wall time and the median CPU time of this thread over `repeat` runs of fn."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.thread_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--points", type=int, default=1_000_000)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--clusters", default="threads,processes", help="threads (processes=False), processes, or both")
    a = p.parse_args()

    for name, d in [("engine step", chalk.deployment("llama-3.1-70b", "h100-sxm")),
                    ("engine step MoE", chalk.deployment("deepseek-v3", "gb200-nvl72")),
                    ("roofline", chalk.deployment("llama-3.1-70b", "h100-sxm", roofline=True))]:
        n = 200_000
        # Each result dropped at once, as a loop over steps would: a list holding 50,000
        # dicts timed the allocator (10-13 us a dict on an idle machine), not to_dict.
        t, c = median_wall_cpu(lambda: calls(lambda: d.decode_step(64, 4096), n), a.repeat)
        t_dict, c_dict = median_wall_cpu(lambda: calls(lambda: d.decode_step(64, 4096).to_dict(), n), a.repeat)
        print(f"decode_step ({name}, {d.model} on {d.chips} x {d.hardware}): {1e6 * t / n:.2f} us per call "
              f"(target 2 us; CPU {1e6 * c / n:.2f} us); with .to_dict(): {1e6 * t_dict / n:.2f} us (CPU {1e6 * c_dict / n:.2f} us)")

    # The grid: 3 models x hypothetical chips x batches, n points in all.
    batches = [2 ** k for k in range(13)]
    per_chip = max(1, a.points // (3 * len(batches) * 4))
    side = max(1, round(per_chip ** (1 / 3)))
    lists = dict(model=["llama-3.1-70b", "qwen3-235b-a22b", "deepseek-v3"], chips=[8],
                 compute_tflop_per_s=[500.0 + 100 * i for i in range(side)],
                 hbm_tb_per_s_per_chip=[2.0 + 0.25 * i for i in range(side)],
                 hbm_gb_per_chip=[80.0 + 8 * i for i in range(max(1, a.points // (3 * len(batches) * 4 * side * side)))],
                 batch=batches, context_tokens=[1024, 4096, 16384, 65536])
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start)")
    t_grid = median(lambda: chalk.grid(**lists), a.repeat)
    points = chalk.grid(**lists)
    n = len(points)
    t_sweep, c_sweep = median_wall_cpu(lambda: chalk.roofline_sweep(points, hardware="h100-sxm"), a.repeat)
    t_both = median(lambda: chalk.roofline_sweep(chalk.grid(**lists), hardware="h100-sxm"), a.repeat)
    print(f"grid of {n:,} points: {t_grid:.3f} s to build")
    print(f"roofline_sweep, {n:,} points, one core: {t_sweep:.3f} s ({1e9 * t_sweep / n:.0f} ns per point; target 2 s per million; "
          f"CPU {c_sweep:.3f} s); grid + sweep {t_both:.3f} s")

    import pandas as pd
    from distributed import Client, LocalCluster
    serial = chalk.roofline_sweep(points, hardware="h100-sxm")
    cores = os.cpu_count() or 1
    for kind in [k for k in a.clusters.split(",") if k]:
        for w in [int(x) for x in a.workers.split(",") if x]:
            if w > cores:
                print(f"dask_sweep on {w} workers: skipped ({cores} cores present)")
                continue
            with LocalCluster(n_workers=w, threads_per_worker=1, processes=kind == "processes", dashboard_address=None,
                              silence_logs=50) as cluster, Client(cluster) as client:
                run = lambda: chalk.dask_sweep(lists, client=client, hardware="h100-sxm")
                got = run()  # warm: imports and deployments on every worker
                pd.testing.assert_frame_equal(got, serial)  # the same DataFrame as the serial sweep
                del got
                w0, c0 = client.run(cpu_s), cpu_s()
                t = median(run, a.repeat)
                w1, c1 = client.run(cpu_s), cpu_s()
                label = f"{w} worker thread(s)" if kind == "threads" else f"{w} worker process(es)"
                workers = "" if kind == "threads" else ", workers " + " + ".join(f"{(w1[k] - w0[k]) / a.repeat:.3f}" for k in w1)
                print(f"dask_sweep, {n:,} points, LocalCluster of {label}: {t:.3f} s "
                      f"(the one-core sweep / this: {t_sweep / t:.2f}, grid + sweep / this: {t_both / t:.2f}; ideal {w}); "
                      f"CPU s per run: this process {(c1 - c0) / a.repeat:.3f}{workers}")
    print(f"(load average {os.getloadavg()[0]:.1f} on {cores} cores at the end)")


if __name__ == "__main__":
    main()
