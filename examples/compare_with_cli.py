# %% [markdown]
# # chalk from Python against the command line
#
# A notebook as a script (jupytext "percent" cells; run `build/py/bin/python
# examples/compare_with_cli.py`, with the `chalk` binary at build/release/chalk or $CHALK_BIN).
#
# The Python functions run the CLI's own code in process, so for the same inputs they must
# return exactly what `chalk ... --json` prints. This notebook asks the lecture's questions
# both ways, shows the answers side by side, and times one answer each way: a process
# start per answer against a function call.

# %%
import json
import os
import subprocess
import time

import chalk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHALK = os.environ.get("CHALK_BIN", os.path.join(ROOT, "build", "release", "chalk"))


def cli(*args):
    out = subprocess.run([CHALK, *map(str, args), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def records(frame):
    """A DataFrame's rows as the CLI's JSON gives them: a missing figure (a batch that does not
    fit has no cost) is NaN in a float column, null (None) in JSON; None here too."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


# %% [markdown]
# ## The balance batch (lecture 15:53-19:52)
# Decode stops being weight-bound near B* = N_total b_w F / (2 N_active W): ~295 for a dense
# bf16 model on H100 (F/W = 989.4 / 3.35).

# %%
py = chalk.serving_balance(model="llama-3.1-70b", hardware="h100-sxm")
sh = cli("serving", "balance", "-m", "llama-3.1-70b", "-H", "h100-sxm")
print("same answer:", py == sh)
print({k: v for k, v in py.items() if "balance" in k or k.startswith("b_")})

# %% [markdown]
# ## DeepSeek-V3 decode on a GB200 NVL72 rack, by batch

# %%
steps = chalk.decode(model="deepseek-v3", hardware="gb200-nvl72", batch="1:4096")
sh = cli("decode", "-m", "deepseek-v3", "-H", "gb200-nvl72", "-b", "1:4096")
print("same rows:", records(steps) == sh["rows"])
print(steps[["batch", "t_step_ms", "bound", "governs", "tok_per_s_per_user", "tok_per_s_per_chip", "cost_usd_per_mtok"]].to_string(index=False))

# %% [markdown]
# ## Fast and slow modes, the frontier, and what prices reveal

# %%
for name, fn, argv in [
    ("modes", lambda: chalk.serving_modes(model="deepseek-v3", hardware="gb200-nvl72"), ["serving", "modes", "-m", "deepseek-v3", "-H", "gb200-nvl72"]),
    ("frontier", lambda: chalk.serving_frontier(model="llama-3.1-70b", hardware="h200", frame=False),
     ["serving", "frontier", "-m", "llama-3.1-70b", "-H", "h200"]),
    ("prices infer", lambda: chalk.prices_infer("gemini-1.5-pro"), ["prices", "infer", "gemini-1.5-pro"]),
    ("train run", lambda: chalk.train_run(model="deepseek-v3", hardware="h800-sxm", tokens=14.8e12, chips=2048, mfu=0.4373),
     ["train", "run", "-m", "deepseek-v3", "-H", "h800-sxm", "--tokens", "14.8e12", "--chips", "2048", "--mfu", "0.4373"]),
]:
    print(f"{name:14s} same answer: {fn() == cli(*argv)}")

# %% [markdown]
# ## One answer: a process against a call

# %%
n = 20
t0 = time.perf_counter()
for _ in range(n):
    cli("decode", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-b", "64")
t_cli = (time.perf_counter() - t0) / n
t0 = time.perf_counter()
for _ in range(n):
    chalk.decode(model="llama-3.1-70b", hardware="h100-sxm", batch=64, frame=False)
t_py = (time.perf_counter() - t0) / n
d = chalk.deployment("llama-3.1-70b", "h100-sxm")
m = 100_000
t0 = time.perf_counter()
for _ in range(m):
    d.decode_step(64, 4096)
t_step = (time.perf_counter() - t0) / m
print(f"chalk decode as a process: {1e3 * t_cli:.1f} ms; chalk.decode() in process: {1e3 * t_py:.2f} ms; "
      f"Deployment.decode_step(): {1e6 * t_step:.2f} us")
