"""chalk from Python: the cost and speed of serving and training LLMs on real hardware.

Every command of the ``chalk`` command line is a function here that returns exactly what
``chalk <command> --json`` prints, as plain Python objects (dicts, lists, numbers, strings,
None), with the same keys and units (docs/output-schema.md): the module runs the CLI's own
code in process, so the vocabulary cannot drift. Sweep functions return a pandas DataFrame
when pandas is installed (``frame=False`` gives the CLI's dict). Bad input raises
:class:`ChalkError`, whose ``field`` names the keyword argument or field (``model``, where the CLI's exit-2 line names ``--model``).

Fast paths for sweeps: :func:`deployment` resolves a model on hardware once, as the CLI
does, and its ``decode_step`` / ``prefill_step`` cost about a microsecond each;
:func:`roofline_sweep` evaluates the decode roofline over a grid of points (hypothetical
chips included) in C++; :func:`dask_sweep` spreads a sweep over Dask workers.
python/README.md has the tour.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ._error import ChalkError, python_field
from . import _chalk
from ._sweep import grid, roofline_sweep, deployment, load_model, load_hardware, BOUNDS
from ._dask import dask_sweep
from ._chalk import Deployment, DecodeStep, PrefillStep

__all__ = ["ChalkError", "run", "deployment", "load_model", "load_hardware", "grid", "roofline_sweep", "dask_sweep",
           "commands", "BOUNDS"]
__version__ = "0.1.0"

try:  # pandas is optional: without it sweep functions return the CLI's dict
    import pandas as _pd
except ImportError:  # pragma: no cover - Debian's python3-pandas is installed by scripts/setup
    _pd = None


def commands() -> List[Dict[str, Any]]:
    """Every command of the CLI: path, description and options (from the CLI11 app itself)."""
    return _chalk.cli_commands()


_COMMANDS = {tuple(c["path"]): c for c in _chalk.cli_commands()}


class _TempInputs:
    """Writes dict inputs (a model's config.json or chalk-model file, a chalk-hardware file)
    to temporary files for the duration of one call."""

    def __init__(self) -> None:
        self.dir: Optional[tempfile.TemporaryDirectory] = None

    def path(self, value: Any, name: str) -> str:
        if isinstance(value, dict):
            if self.dir is None:
                self.dir = tempfile.TemporaryDirectory(prefix="chalk-")
            path = os.path.join(self.dir.name, f"{name}.json")
            n = 1
            while os.path.exists(path):
                n += 1
                path = os.path.join(self.dir.name, f"{name}{n}.json")
            with open(path, "w") as f:
                json.dump(value, f)
            return path
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    def __enter__(self) -> "_TempInputs":
        return self

    def __exit__(self, *exc) -> None:
        if self.dir is not None:
            self.dir.cleanup()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _argv(path: Sequence[str], args: Sequence[Any], kwargs: Dict[str, Any], tmp: _TempInputs) -> List[str]:
    info = _COMMANDS[tuple(path)]
    options = {o["name"].lstrip("-").replace("-", "_"): o for o in info["options"]}
    positional = [o for o in info["options"] if o["positional"]]
    argv = list(path)
    for value in args:
        if not positional:
            raise ChalkError(f"arguments: chalk {' '.join(path)} takes no positional arguments, got {value!r}", "arguments")
        values = value if isinstance(value, (list, tuple)) else [value]
        argv += [tmp.path(v, "input") for v in values]
    for key, value in kwargs.items():
        o = options.get(key)
        if o is None or key in ("json", "csv"):
            near = ", ".join(sorted(k for k in options if k not in ("json", "csv")))
            raise ChalkError(f"{key}: not an option of chalk {' '.join(path)} (options: {near})", key)
        if value is None or value is False and o["flag"]:
            continue
        if o["positional"]:
            values = value if isinstance(value, (list, tuple)) else [value]
            argv += [tmp.path(v, key) for v in values]
            continue
        flag = "--" + o["name"].lstrip("-")
        if o["flag"]:
            if value is not True:
                raise ChalkError(f"{flag}: is a flag: pass True or False, got {value!r}", flag)
            argv.append(flag)
        elif isinstance(value, (list, tuple)) and o["repeated"]:
            for v in value:
                argv += [flag, _text(v)]
        elif isinstance(value, (list, tuple, range)):
            argv += [flag, ",".join(_text(v) for v in value)]
        else:
            argv += [flag, _text(tmp.path(value, key) if key in ("model", "hardware") else value)]
    return argv


def run(*args: str) -> Any:
    """Runs ``chalk <args...> --json`` in this process and returns the parsed JSON.

    ``chalk.run("decode", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-b", "1,64")`` is the
    dict ``chalk decode -m llama-3.1-8b -H h100-sxm -b 1,64 --json`` prints.
    Raises ChalkError on bad input, as the CLI exits 2.
    """
    argv = [str(a) for a in args]
    if "--json" not in argv:
        argv.append("--json")
    return json.loads(_chalk.run_cli(argv))


def _frame(result: Any) -> Any:
    """The rows of a command's JSON envelope as a DataFrame, its columns in the order of the
    CLI's table (the envelope's ``columns``); the other keys in ``.attrs``."""
    if _pd is None:
        return result
    df = _pd.DataFrame(result["rows"], columns=result["columns"])
    df.attrs.update({k: v for k, v in result.items() if k != "rows"})
    return df


def _keywords(info: Dict[str, Any]) -> set:
    """The keyword arguments of a command: its flags with - as _."""
    return {o["name"].lstrip("-").replace("-", "_") for o in info["options"]}


def _command(name: str, path: Sequence[str], sweep: bool = False):
    info = _COMMANDS[tuple(path)]

    def call(*args: Any, frame: bool = sweep, **kwargs: Any) -> Any:
        with _TempInputs() as tmp:
            try:
                argv = _argv(path, args, kwargs, tmp) + ["--json"]
                result = json.loads(_chalk.run_cli(argv))
            except ChalkError as e:  # name the keyword argument, not the CLI flag
                raise python_field(e, _keywords(info), info["options"]) from None
        return _frame(result) if frame else result

    lines = [f"`chalk {' '.join(path)} --json`: {info['description']}.", ""]
    if sweep:
        lines += ["Returns a pandas DataFrame of the JSON's rows, columns in the CLI's order "
                  "(other keys in .attrs) when pandas is present, or with frame=False the CLI's JSON.", ""]
    else:
        lines += ["Returns the CLI's JSON as plain Python objects.", ""]
    lines.append("Keyword arguments (flags with - as _; lists become comma lists; True sets a flag):")
    for o in info["options"]:
        if o["name"].lstrip("-") in ("json", "csv"):
            continue
        default = f" (default {o['default']})" if o["default"] else ""
        lines.append(f"    {o['name'].lstrip('-').replace('-', '_')}: {o['description']}{default}")
    lines += ["", "Raises ChalkError(message, field) on bad input; field names the keyword argument (model, not --model)."]
    call.__name__ = call.__qualname__ = name
    call.__doc__ = "\n".join(lines)
    return call


# The commands: name, CLI path, and whether a DataFrame of the envelope's rows is the default.
models = _command("models", ["models"], sweep=True)
hardware = _command("hardware", ["hardware"], sweep=True)
decode = _command("decode", ["decode"], sweep=True)
prefill = _command("prefill", ["prefill"], sweep=True)
layouts = _command("layouts", ["layouts"], sweep=True)
serving_sweep = _command("serving_sweep", ["serving", "sweep"], sweep=True)
serving_balance = _command("serving_balance", ["serving", "balance"])
serving_window = _command("serving_window", ["serving", "window"])
serving_frontier = _command("serving_frontier", ["serving", "frontier"], sweep=True)
serving_modes = _command("serving_modes", ["serving", "modes"])
prices_list = _command("prices_list", ["prices", "list"], sweep=True)
prices_show = _command("prices_show", ["prices", "show"])
prices_infer = _command("prices_infer", ["prices", "infer"])
prices_forward = _command("prices_forward", ["prices", "forward"])
_prices_compare_json = _command("prices_compare", ["prices", "compare"])


def prices_compare(*args: Any, frame: bool = True, **kwargs: Any) -> Any:
    result = _prices_compare_json(*args, **kwargs)
    if not frame or _pd is None:
        return result
    # One row per offer and system (each row's systems[]; --csv prints one per offer): the JSON's columns (the CSV's header first, in
    # its order; an offer's row carries its shown system's figures) with each system's own; an
    # offer's why_not (no system reaches its speed) is offer_why_not beside the system's.
    rows, columns = [], [c for c in result["columns"] if c != "systems"]
    for offer in result["rows"]:
        own = {k for row in offer["systems"] for k in row}  # a system's keys: never the shown one's copy
        host = {k: v for k, v in offer.items() if k != "systems" and k not in own}
        if offer.get("cheapest_system") is None and "why_not" in offer:
            host["offer_why_not"] = offer["why_not"]
        for row in offer["systems"]:
            rows.append({**host, **row, "cheapest": row["system"] == offer["cheapest_system"]})
            columns += [k for k in row if k not in columns]
    if any("offer_why_not" in r for r in rows):
        columns.append("offer_why_not")
    df = _pd.DataFrame(rows, columns=columns + ["cheapest"] if rows else None)
    df.attrs.update({k: v for k, v in result.items() if k != "rows"})
    return df


prices_compare.__doc__ = (_prices_compare_json.__doc__.split("\n", 1)[0] + "\n\n"
                          "Returns a pandas DataFrame with one row per host offer and system: the host's figures "
                          "(provider, prices, stated speed, or the assumed one with speed_assumed; offer_why_not when no system reaches its speed) beside "
                          "chalk's cost on that system at that speed (why_not where there is none), and cheapest "
                          "(the offer's cheapest system); model, workload and notes in .attrs. With frame=False, "
                          "or without pandas, the CLI's JSON (rows[].systems[]).\n\n"
                          + _prices_compare_json.__doc__.split("\n\n", 2)[2])
validate = _command("validate", ["validate"])
scaleup = _command("scaleup", ["scaleup"])
train_step = _command("train_step", ["train", "step"])
train_memory = _command("train_memory", ["train", "memory"])
train_layouts = _command("train_layouts", ["train", "layouts"], sweep=True)
train_run = _command("train_run", ["train", "run"])
train_chinchilla = _command("train_chinchilla", ["train", "chinchilla"])
train_equilibrium = _command("train_equilibrium", ["train", "equilibrium"])
train_moe = _command("train_moe", ["train", "moe"])
train_plot_run = _command("train_plot_run", ["train", "plot", "run"])
simulate = _command("simulate", ["simulate"])
plan = _command("plan", ["plan"])
fleet = _command("fleet", ["fleet"])
calibrate = _command("calibrate", ["calibrate"])
step = _command("step", ["step"], sweep=True)


def step_time(batches: Any, model: Any = None, hardware: Any = None, **kwargs: Any) -> List[float]:
    """The engine step time, in seconds, of each batch: the request simulator's own step
    (``chalk step --batches``; docs/simulator.md, "chalk as a step-time predictor").

    ``batches`` is a list of batches (or one batch), each a dict in one of three forms:
    chalk's ``{"prefill": [[tokens, cached], ...], "decode": [context, ...]}``, BLIS's
    StepConfig ``{"prefill_requests": [{"progress_index": P, "num_new_prefill_tokens": N}],
    "decode_requests": [{"progress_index": C, "num_new_decode_tokens": 1}]}`` or SGLang's
    simulator's ``{"reqs": [{"extend_length": N, "past_kv_length": P}]}``. A decode's context
    is the tokens already in its KV cache (its new token excluded). ``kwargs`` are
    ``chalk step``'s flags (chips, tp, engine, max_batched_tokens, kv_dtype, ...), as for
    :func:`step`; pass ``engine`` and ``chips`` as the simulation you compare with ran.

    ``chalk.step_time([{"prefill": [[512, 0]], "decode": [1024] * 32}], model="llama-3.1-8b",
    hardware="h100-sxm", chips=1)`` is one float. Raises ChalkError on bad input, naming the
    item ("batches[0].decode[3]: ..."), as the CLI exits 2.
    """
    if isinstance(batches, dict):
        batches = [batches]
    result = step(batches=json.dumps(list(batches)), model=model, hardware=hardware, frame=False, **kwargs)
    return [row["t_step_ms"] / 1e3 for row in result["rows"]]

# (function name, CLI path) of every command bound above; tests check it covers the CLI.
BINDINGS = {f.__name__: p for f, p in [
    (models, ("models",)), (hardware, ("hardware",)), (decode, ("decode",)), (prefill, ("prefill",)),
    (layouts, ("layouts",)), (serving_sweep, ("serving", "sweep")), (serving_balance, ("serving", "balance")),
    (serving_window, ("serving", "window")), (serving_frontier, ("serving", "frontier")),
    (serving_modes, ("serving", "modes")), (prices_list, ("prices", "list")), (prices_show, ("prices", "show")),
    (prices_infer, ("prices", "infer")), (prices_forward, ("prices", "forward")), (prices_compare, ("prices", "compare")),
    (validate, ("validate",)),
    (scaleup, ("scaleup",)), (train_step, ("train", "step")), (train_memory, ("train", "memory")),
    (train_layouts, ("train", "layouts")), (train_run, ("train", "run")),
    (train_chinchilla, ("train", "chinchilla")), (train_equilibrium, ("train", "equilibrium")),
    (train_moe, ("train", "moe")), (train_plot_run, ("train", "plot", "run")),
    (simulate, ("simulate",)), (plan, ("plan",)), (fleet, ("fleet",)), (calibrate, ("calibrate",)), (step, ("step",))]}
__all__ += list(BINDINGS) + ["step_time"]
