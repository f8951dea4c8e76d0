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
   where the work went. The clusters are all started first, and each of the --repeat rounds
   times the serial sweep and then every cluster, so that a ratio compares runs made under
   the same load (the median of the rounds' ratios is printed), with the speed-up the
   machine offered two processes of pure Python in that round (headroom): the ceiling of
   any 2-worker speed-up then.
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


def spin(n):
    """Pure Python work for the machine's parallel headroom (holds its process's GIL)."""
    s = 0
    for i in range(n):
        s += i
    return s


def headroom(workers, n=5_000_000):
    """How many times one process's work the machine gives `workers` processes right now:
    the time of `workers` spins one after the other over their time in a process pool of
    that size. On the shared development machine other sessions' compilers often leave less
    than its 2 cores: this is the speed-up any cluster could show at that moment."""
    import multiprocessing
    t0 = time.perf_counter()
    for _ in range(workers):
        spin(n)
    one_by_one = time.perf_counter() - t0
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.map(spin, [10] * workers)  # started
        t0 = time.perf_counter()
        pool.map(spin, [n] * workers)
        return one_by_one / (time.perf_counter() - t0)


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
    print(f"grid of {n:,} points: {t_grid:.3f} s to build")

    import contextlib
    import pandas as pd
    from distributed import Client, LocalCluster
    serial = chalk.roofline_sweep(points, hardware="h100-sxm")
    cores = os.cpu_count() or 1
    # All clusters are started first, then each round times the serial sweep and every
    # cluster one after the other, so that each ratio compares runs made under the same load.
    setups = []
    with contextlib.ExitStack() as stack:
        for kind in [k for k in a.clusters.split(",") if k]:
            for w in [int(x) for x in a.workers.split(",") if x]:
                if w > cores:
                    print(f"dask_sweep on {w} workers: skipped ({cores} cores present)")
                    continue
                cluster = stack.enter_context(LocalCluster(n_workers=w, threads_per_worker=1, processes=kind == "processes",
                                                           dashboard_address=":0", silence_logs=50))
                client = stack.enter_context(Client(cluster))
                got = chalk.dask_sweep(lists, client=client, hardware="h100-sxm")  # warm: imports, deployments
                pd.testing.assert_frame_equal(got, serial)  # the same DataFrame as the serial sweep
                del got
                label = f"{w} worker thread(s)" if kind == "threads" else f"{w} worker process(es)"
                setups.append((label, kind, w, client, {"wall": [], "ratio": [], "ratio_both": [], "cpu": [], "workers": []}))
        sweeps, boths, sweep_cpus, room = [], [], [], []
        for _ in range(a.repeat):
            t_sweep, c_sweep = median_wall_cpu(lambda: chalk.roofline_sweep(points, hardware="h100-sxm"), 1)
            t_both = median(lambda: chalk.roofline_sweep(chalk.grid(**lists), hardware="h100-sxm"), 1)
            sweeps.append(t_sweep), boths.append(t_both), sweep_cpus.append(c_sweep)
            if "2" in a.workers.split(","):
                room.append(headroom(2))
            for label, kind, w, client, r in setups:
                w0, c0 = client.run(cpu_s), cpu_s()
                t = median(lambda: chalk.dask_sweep(lists, client=client, hardware="h100-sxm"), 1)
                w1, c1 = client.run(cpu_s), cpu_s()
                r["wall"].append(t), r["ratio"].append(t_sweep / t), r["ratio_both"].append(t_both / t)
                r["cpu"].append(c1 - c0), r["workers"].append([w1[k] - w0[k] for k in w1])
        med = statistics.median
        print(f"roofline_sweep, {n:,} points, one core: {med(sweeps):.3f} s ({1e9 * med(sweeps) / n:.0f} ns per point; "
              f"target 2 s per million; CPU {med(sweep_cpus):.3f} s); grid + sweep {med(boths):.3f} s")
        if room:
            print(f"the machine's headroom: 2 processes of pure Python ran {med(room):.2f}x one (the ceiling of a "
                  f"2-worker speed-up under this load; {', '.join(f'{x:.2f}' for x in room)})")
        for label, kind, w, client, r in setups:
            workers = "" if kind == "threads" else ", workers " + " + ".join(f"{med(x):.3f}" for x in zip(*r["workers"]))
            print(f"dask_sweep, {n:,} points, LocalCluster of {label}: {med(r['wall']):.3f} s (the one-core sweep / this: "
                  f"{med(r['ratio']):.2f}, grid + sweep / this: {med(r['ratio_both']):.2f}; ideal {w}); CPU s per run: "
                  f"this process {med(r['cpu']):.3f}{workers}")
    print(f"(load average {os.getloadavg()[0]:.1f} on {cores} cores at the end)")


if __name__ == "__main__":
    main()
