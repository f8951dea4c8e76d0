"""Deployments, grids, the vectorised roofline sweep, and sweeps on Dask."""
from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from ._error import ChalkError
from . import _chalk

try:
    import pandas as pd
except ImportError:  # pragma: no cover
    pd = None

#: the bound column's categories, as chalk::Bound and its to_string (chalk/engine/roofline.h)
BOUNDS = ("compute", "weights", "kv-cache")

#: per-chip overrides roofline_sweep reads from a grid (docs/output-schema.md units)
CHIP_COLUMNS = ("compute_tflop_per_s", "hbm_gb_per_chip", "hbm_tb_per_s_per_chip", "price_usd_per_chip_hour")

_RESULT_COLUMNS = ("t_compute_ms", "t_weights_ms", "t_kv_ms", "t_step_ms", "bound", "tok_per_s", "tok_per_s_per_user",
                   "tok_per_s_per_chip", "cost_usd_per_mtok", "memory_fits", "max_batch_at_context")


def _with_file(value: Any, name: str, fn: Callable[[str], Any]) -> Any:
    """Calls fn with value, or with the path of a temporary JSON file holding a dict value."""
    if not isinstance(value, dict):
        return fn(os.fspath(value) if isinstance(value, os.PathLike) else value)
    with tempfile.TemporaryDirectory(prefix="chalk-") as d:
        path = os.path.join(d, f"{name}.json")
        with open(path, "w") as f:
            json.dump(value, f)
        return fn(path)


def load_model(model: Any) -> Dict[str, Any]:
    """A model as `chalk models MODEL --json` shows it: parameters, KV bytes per token, FLOPs per token.

    ``model``: a built-in name (any case), a HF repo id, a HF snapshot directory, a path to
    a config.json or chalk-model/1 file, or a dict holding such a file. Raises ChalkError.
    """
    return _with_file(model, "model", lambda m: json.loads(_chalk.run_cli(["models", m, "--json"]))[0])


def load_hardware(hardware: Any) -> Dict[str, Any]:
    """A system as `chalk hardware SYSTEM --json` shows it: peaks, HBM, FLOPs per byte, price.

    ``hardware``: a built-in name or alias, a chalk-hardware/1 file, or a dict holding one.
    Raises ChalkError.
    """
    return _with_file(hardware, "hardware", lambda h: json.loads(_chalk.run_cli(["hardware", h, "--json"]))[0])


def deployment(model: Any, hardware: Any, chips: int = 0, **options: Any) -> "_chalk.Deployment":
    """A model placed on hardware, resolved exactly as `chalk decode` resolves its flags.

    ``model`` and ``hardware`` as in load_model / load_hardware; ``chips`` 0 = the smallest
    replica that holds the weights and one sequence of ``context`` tokens (default 4096).
    ``options``: weights, kv_dtype, compute, matmul_efficiency, hbm_efficiency,
    price_usd_per_chip_hour, memory_reserve, roofline, tp, ep, two_batch_overlap,
    dispatch_dtype, context (the CLI's flags with - as _). The result's ``decode_step(batch,
    context)`` and ``prefill_step(prompt, batch, prefix)`` return the CLI's row values.
    Raises ChalkError.
    """
    for key in options:
        if key not in _DEPLOYMENT_OPTIONS:
            raise ChalkError(f"{key}: not an option of deployment (options: {', '.join(_DEPLOYMENT_OPTIONS)})", key)

    def make(m: str) -> Any:
        return _with_file(hardware, "hardware", lambda h: _chalk.deployment(m, h, int(chips), **options))
    try:
        return _with_file(model, "model", make)
    except TypeError as e:  # a value of the wrong type
        raise ChalkError("options: " + " ".join(str(e).split()), "options") from None


_DEPLOYMENT_OPTIONS = ("weights", "kv_dtype", "compute", "matmul_efficiency", "hbm_efficiency", "price_usd_per_chip_hour",
                       "memory_reserve", "roofline", "tp", "ep", "two_batch_overlap", "dispatch_dtype", "context")


def _product_slice(lists: Dict[str, Sequence[Any]], start: int, stop: int) -> "pd.DataFrame":
    """Rows start..stop of the Cartesian product of ``lists`` (the last list varies fastest)."""
    r = np.arange(start, stop, dtype=np.int64)
    columns, stride = {}, 1
    names = list(lists)
    for name in reversed(names):
        values = list(lists[name])
        codes = (r // stride) % len(values)
        array = np.asarray(values)
        if array.dtype.kind in "biuf":
            columns[name] = array[codes]
        elif len(set(values)) == len(values):  # names (models, systems): categorical, cheap to build and to ship
            columns[name] = pd.Categorical.from_codes(codes, categories=values)
        else:
            columns[name] = np.asarray(values, dtype=object)[codes]
        stride *= len(values)
    return pd.DataFrame({n: columns[n] for n in names}, index=pd.RangeIndex(start, stop))


def _product_size(lists: Dict[str, Sequence[Any]]) -> int:
    for name, values in lists.items():
        if len(values) == 0:
            raise ChalkError(f"{name}: an empty list makes an empty grid", name)
    return int(math.prod(len(v) for v in lists.values()))


def grid(**lists: Sequence[Any]) -> "pd.DataFrame":
    """The Cartesian product of the given lists as a DataFrame, one column per keyword
    (the last varies fastest): ``grid(batch=[1, 64], context_tokens=[4096, 32768])``.
    Numbers stay numbers; names (models, systems) become pandas categoricals."""
    return _product_slice(lists, 0, _product_size(lists))


def roofline_sweep(points: Any, model: Any = None, hardware: Any = None, chips: Optional[int] = None, **options: Any) -> "pd.DataFrame":
    """The decode roofline (lecture 2:21-15:30) at every row of ``points``, in C++.

    ``points``: a DataFrame (or dict of columns) with ``batch`` and ``context_tokens``, and
    optionally ``model``, ``hardware``, ``chips`` (else the keyword arguments) and per-chip
    overrides of the hardware: ``compute_tflop_per_s`` (dense, in the deployment's compute
    class), ``hbm_gb_per_chip``, ``hbm_tb_per_s_per_chip``, ``price_usd_per_chip_hour``
    (NaN keeps the system's figure). Each (model, hardware, chips) is resolved once with
    deployment(..., roofline=True, **options); chips 0 or absent = the smallest replica
    of the base system.

    Returns the points with the columns t_compute_ms, t_weights_ms, t_kv_ms, t_step_ms,
    bound, tok_per_s, tok_per_s_per_user, tok_per_s_per_chip, cost_usd_per_mtok (NaN
    without a price), memory_fits, max_batch_at_context (<NA>: unbounded) added, as in
    `chalk decode --roofline --json` (docs/output-schema.md). Raises ChalkError naming the
    column for a bad value.
    """
    if pd is None:  # pragma: no cover
        raise ChalkError("pandas: roofline_sweep needs pandas (Debian: python3-pandas)", "pandas")
    df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
    for need in ("batch", "context_tokens"):
        if need not in df.columns:
            raise ChalkError(f"{need}: the points have no {need} column (columns: {', '.join(map(str, df.columns))})", need)
    keys = {"model": model, "hardware": hardware, "chips": chips}
    for k, v in keys.items():
        if k not in df.columns and v is None and k != "chips":
            raise ChalkError(f"{k}: give a {k} column or the {k}= argument", k)
    n = len(df)
    out = {c: np.empty(n, dtype=t) for c, t in [
        ("t_compute_ms", float), ("t_weights_ms", float), ("t_kv_ms", float), ("t_step_ms", float), ("tok_per_s", float),
        ("tok_per_s_per_user", float), ("tok_per_s_per_chip", float), ("cost_usd_per_mtok", float),
        ("bound_code", np.int8), ("memory_fits", bool), ("max_batch_at_context", np.int64)]}

    def columns_of(rows: Any) -> Dict[str, Any]:
        cols = {"batch": _ints(df["batch"].to_numpy()[rows], "batch"),
                "context_tokens": _ints(df["context_tokens"].to_numpy()[rows], "context_tokens")}
        for c in CHIP_COLUMNS:
            if c in df.columns:
                cols[c] = _floats(df[c].to_numpy()[rows], c)
        return cols

    group_by = [k for k in keys if k in df.columns]
    if not group_by:
        groups = [((), slice(None))]
    else:
        groups = [(k if isinstance(k, tuple) else (k,), idx) for k, idx in df.groupby(group_by, sort=False, observed=True).indices.items()]
    for key, rows in groups:
        named = dict(keys)
        named.update(dict(zip(group_by, key)))
        d = _roofline_deployment(named["model"], named["hardware"], int(named["chips"] or 0), options)
        r = d.roofline_sweep(columns_of(rows))
        for c, a in r.items():
            out[c][rows] = a
    result = df.copy() if df.index.is_unique else df.reset_index(drop=True)
    for c in _RESULT_COLUMNS:
        if c == "bound":
            result[c] = pd.Categorical.from_codes(out["bound_code"], BOUNDS)
        elif c == "max_batch_at_context":  # null (pandas <NA>) when no batch limit, as in the CLI
            result[c] = pd.arrays.IntegerArray(out[c], out[c] < 0)
        else:
            result[c] = out[c]
    return result


# Deployments resolved by roofline_sweep, kept across calls (a Dask worker evaluates many
# partitions of the same few models): key -> Deployment, at most _CACHE_SIZE.
_CACHE: Dict[str, Any] = {}
_CACHE_SIZE = 256


def _roofline_deployment(model: Any, hardware: Any, chips: int, options: Dict[str, Any]) -> Any:
    key = json.dumps([model, hardware, chips, options], sort_keys=True, default=str)
    d = _CACHE.get(key)
    if d is None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        d = _CACHE[key] = deployment(model, hardware, chips, roofline=True, **options)
    return d


def _ints(a: np.ndarray, name: str) -> np.ndarray:
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    try:
        f = a.astype(float)
    except (TypeError, ValueError):
        raise ChalkError(f"{name}: must hold whole numbers, got dtype {a.dtype}", name) from None
    if not np.all(np.isfinite(f)) or not np.all(f == np.floor(f)):
        bad = f[~(np.isfinite(f) & (f == np.floor(f)))][0]
        raise ChalkError(f"{name}: must hold whole numbers, got {bad}", name)
    return f.astype(np.int64)


def _floats(a: np.ndarray, name: str) -> np.ndarray:
    try:
        return a.astype(float, copy=False)
    except (TypeError, ValueError):
        raise ChalkError(f"{name}: must hold numbers, got dtype {a.dtype}", name) from None


def _partitions(n: int, parts: int):
    step = -(-n // parts)
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def dask_sweep(points: Any, fn: Callable[..., "pd.DataFrame"] = roofline_sweep, *, npartitions: Optional[int] = None,
               client: Any = None, address: Optional[str] = None, **kwargs: Any) -> "pd.DataFrame":
    """Evaluates ``fn(partition, **kwargs)`` (default roofline_sweep) over ``points`` on Dask workers.

    ``points``: a DataFrame of inputs, or a dict of lists whose Cartesian product is the grid
    (grid(**points)); a product is built on the workers, partition by partition, so only the
    lists travel. The grid is split into ``npartitions`` (default 4 per worker), each
    evaluated as one task on a worker (``client.map`` of the partitions, scattered for a
    DataFrame; without a client, dask.dataframe ``map_partitions`` on the default
    scheduler); the results are gathered into one DataFrame with the index of the serial
    ``fn(points)``.

    Runs on ``client`` (a distributed.Client, e.g. over a LocalCluster), or on a new client
    of the scheduler at ``address`` ("tcp://host:8786", closed afterwards), or else on the
    current default Dask scheduler. ChalkError raised on a worker is raised here.
    """
    import dask.dataframe as dd

    own = None
    if client is None and address is not None:
        from distributed import Client
        client = own = Client(address)
    try:
        if npartitions is None:
            workers = len(client.scheduler_info()["workers"]) if client is not None else (os.cpu_count() or 1)
            npartitions = max(1, 4 * workers)
        if client is not None:
            # On a distributed client: one task per partition (client.map), gathered and
            # concatenated; dask.dataframe's graph adds seconds per million rows here.
            if isinstance(points, dict):
                n = _product_size(points)
                parts = client.map(_ProductPart(points, fn, kwargs), _partitions(n, npartitions), pure=False)
            else:
                df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
                chunks = [df.iloc[a:b] for a, b in _partitions(len(df), npartitions)] if len(df) else [df]
                parts = client.map(_FramePart(fn, kwargs), client.scatter(chunks), pure=False)
            return pd.concat(client.gather(parts))
        if isinstance(points, dict):
            n = _product_size(points)
            meta = fn(_product_slice(points, 0, 1), **kwargs).iloc[:0]
            ddf = dd.from_map(_ProductPart(points, fn, kwargs), _partitions(n, npartitions), meta=meta,
                              divisions=[s for s, _ in _partitions(n, npartitions)] + [n - 1], enforce_metadata=False)
        else:
            df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
            meta = fn(df.iloc[:1], **kwargs).iloc[:0]
            ddf = dd.from_pandas(df, npartitions=npartitions, sort=False).map_partitions(fn, meta=meta, **kwargs)
        return ddf.compute()
    finally:
        if own is not None:
            own.close()


class _FramePart:
    """fn over one partition of a DataFrame grid, on the worker."""

    def __init__(self, fn: Callable[..., Any], kwargs: Dict[str, Any]) -> None:
        self.fn = fn
        self.kwargs = kwargs

    def __call__(self, part):
        return self.fn(part, **self.kwargs)


class _ProductPart:
    """One partition of a product grid, built and evaluated on the worker."""

    def __init__(self, lists: Dict[str, Sequence[Any]], fn: Callable[..., Any], kwargs: Dict[str, Any]) -> None:
        self.lists = {k: list(v) for k, v in lists.items()}
        self.fn = fn
        self.kwargs = kwargs

    def __call__(self, bounds):
        start, stop = bounds
        return self.fn(_product_slice(self.lists, start, stop), **self.kwargs)
