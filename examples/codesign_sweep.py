# %% [markdown]
# # Hardware co-design: what buys the most tokens per dollar?
#
# A notebook as a script (jupytext "percent" cells: open it in Jupyter or VS Code, or run
# `build/py/bin/python examples/codesign_sweep.py [--dask N]`).
#
# We sweep hypothetical chips, varying dense bf16 FLOP/s, HBM bandwidth, HBM capacity and
# the scale-up domain size, against three models (a dense 70B, a mid-size MoE and
# DeepSeek-V3), and ask which chip serves each model at the lowest cost per million output
# tokens while every user still gets at least 20 tokens/s (TPOT <= 50 ms).
#
# What the figures are: the decode **roofline** (lecture 2:21-15:30), the lower bound:
# compute, weight fetch and KV fetch at the base system's measured efficiencies (H100's
# MAMF and STREAM fractions). It prices no collectives, so the scale-up domain enters only
# as the largest replica allowed (one domain holds a replica: an expert layer's all-to-all
# only runs fast on the scale-up network, lecture 28:13-46:21). The engine step (`chalk
# decode`, `chalk layouts`) adds the collectives for the built systems.

# %%
import argparse
import itertools

import numpy as np
import pandas as pd

import chalk

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--dask", type=int, default=0, help="run the sweep on a LocalCluster of N workers")
args, _ = parser.parse_known_args()

MODELS = ["llama-3.1-70b", "qwen3-235b-a22b", "deepseek-v3"]
BASE = "h100-sxm"  # efficiencies, KV format and every figure not swept come from here

# %% [markdown]
# ## A price for a chip that does not exist
#
# Rental prices of the built chips in the catalog (`chalk.hardware()`), fitted as a
# non-negative sum of what each resource costs: $/h = a x bf16 PFLOP/s + b x HBM TB/s +
# c x HBM TB. The fit is crude (six chips, three prices), and it is printed with its residuals:
# a conclusion that hinges on it is flagged below.

# %%
hw = chalk.hardware()
priced = hw[hw["price_usd_per_chip_hour"].notna() & hw["bf16_tflop_per_s"].notna() & hw["name"].str.match(r"^(a100|h100|h200|b200|b300|mi325x)")]
X = np.column_stack([priced["bf16_tflop_per_s"] / 1e3, priced["hbm_tb_per_s_per_chip"], priced["hbm_gb_per_chip"] / 1e3])
y = priced["price_usd_per_chip_hour"].to_numpy()


def nnls(X, y):
    """Least squares with non-negative coefficients, by trying every subset (3 unknowns)."""
    best = (np.inf, np.zeros(X.shape[1]))
    for k in range(1, X.shape[1] + 1):
        for cols in itertools.combinations(range(X.shape[1]), k):
            c, *_ = np.linalg.lstsq(X[:, cols], y, rcond=None)
            if np.all(c >= 0):
                full = np.zeros(X.shape[1])
                full[list(cols)] = c
                err = float(np.sum((X @ full - y) ** 2))
                best = min(best, (err, full), key=lambda t: t[0])
    return best[1]


coef = nnls(X, y)
priced = priced.assign(fitted_usd_per_chip_hour=X @ coef)
print(f"price model: $/h = {coef[0]:.3f} x PFLOP/s + {coef[1]:.3f} x TB/s + {coef[2]:.3f} x TB of HBM")
print(priced[["name", "bf16_tflop_per_s", "hbm_tb_per_s_per_chip", "hbm_gb_per_chip", "price_usd_per_chip_hour", "fitted_usd_per_chip_hour"]].to_string(index=False))
for name, c in zip(["FLOP/s", "HBM bandwidth", "HBM capacity"], coef):
    if c == 0:
        print(f"warning: the fit prices {name} at zero: more of it looks free below, an artifact of six prices")
print("note: a price linear in the resources with no fixed part makes a chip twice as large in every "
      "resource cost twice as much and serve twice as fast: only the ratios between resources change $/Mtok")

# %% [markdown]
# ## The grid
#
# 4 FLOP/s x 4 bandwidths x 4 capacities x 2 scale-up sizes = 128 chips; per model, every
# replica size up to the scale-up domain and batches from 1 to 4096 at 8k context.

# %%
chips_axis = dict(compute_tflop_per_s=[500.0, 1000.0, 2000.0, 4000.0], hbm_tb_per_s_per_chip=[2.0, 4.0, 8.0, 16.0],
                  hbm_gb_per_chip=[80.0, 144.0, 192.0, 288.0])
lists = dict(model=MODELS, chips=[1, 2, 4, 8, 16, 32, 64], **chips_axis,
             batch=[2 ** k for k in range(13)], context_tokens=[8192])
points = chalk.grid(**lists)
points["price_usd_per_chip_hour"] = (points["compute_tflop_per_s"] / 1e3 * coef[0] + points["hbm_tb_per_s_per_chip"] * coef[1]
                                     + points["hbm_gb_per_chip"] / 1e3 * coef[2])
print(f"{len(points):,} points")

if args.dask:
    from distributed import Client, LocalCluster
    # processes=False: this notebook-as-script runs at module level, so worker processes
    # would re-import it and fail (multiprocessing's spawn); threads share this process.
    with LocalCluster(n_workers=args.dask, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rows = chalk.dask_sweep(points, client=client, hardware=BASE)
else:
    rows = chalk.roofline_sweep(points, hardware=BASE)

# %% [markdown]
# ## Cheapest tokens per chip design, at >= 20 tok/s per user
#
# Each scale-up size allows replicas up to its domain (8 or 72 chips; here up to 64).

# %%
ok = rows[rows["memory_fits"] & (rows["tok_per_s_per_user"] >= 20)]
results = []
for scale_up in (8, 72):
    allowed = ok[ok["chips"] <= scale_up]
    best = allowed.loc[allowed.groupby(["model", *chips_axis], observed=True)["cost_usd_per_mtok"].idxmin()]  # model is categorical
    best = best.assign(scale_up_domain_chips=scale_up)
    results.append(best)
best = pd.concat(results)
design = ["compute_tflop_per_s", "hbm_tb_per_s_per_chip", "hbm_gb_per_chip", "scale_up_domain_chips"]
table = best.pivot_table(index=design, columns="model", values="cost_usd_per_mtok")
table = table.dropna()
table["mean_usd_per_mtok"] = table[MODELS].mean(axis=1)
print(table.sort_values("mean_usd_per_mtok").head(10).round(4).to_string())

# %% [markdown]
# ## What each resource buys
#
# From a middle design (1000 TFLOP/s, 4 TB/s, 144 GB, scale-up 8), double one resource at a
# time (the scale-up domain goes from 8 to 72) and see the cost per Mtok move (the price
# model charges for FLOP/s, bandwidth and capacity; the scale-up network is not priced).

# %%
base_design = (1000.0, 4.0, 144.0, 8)
lines = []
for i, name in enumerate(design):
    d = list(base_design)
    d[i] = d[i] * 2 if name != "scale_up_domain_chips" else 72  # 8 -> 72: an NVL72-sized domain
    if tuple(d) not in table.index or base_design not in table.index:
        continue
    before, after = table.loc[base_design], table.loc[tuple(d)]
    change = {m: after[m] / before[m] - 1 for m in MODELS}
    label = "scale_up_domain_chips 8 -> 72" if name == "scale_up_domain_chips" else f"{name} x2"
    lines.append((label, *[f"{100 * change[m]:+.0f}%" for m in MODELS]))
changes = pd.DataFrame(lines, columns=["change", *MODELS])
print(changes.to_string(index=False))
for m in MODELS:
    best_axis = min(lines, key=lambda l: float(l[1 + MODELS.index(m)].rstrip("%")))
    print(f"{m}: {best_axis[0]} cuts $/Mtok the most ({best_axis[1 + MODELS.index(m)]}) at >= 20 tok/s per user")
