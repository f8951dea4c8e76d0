"""Deployments, grids and the vectorised roofline sweep (dask_sweep: _dask.py)."""
from __future__ import annotations

import json
import math
import os
import re
import tempfile
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from ._error import ChalkError, python_field
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
    return _with_file(model, "model", lambda m: json.loads(_chalk.run_cli(["models", m, "--json"]))["rows"][0])


def load_hardware(hardware: Any) -> Dict[str, Any]:
    """A system as `chalk hardware SYSTEM --json` shows it: peaks, HBM, FLOPs per byte, price.

    ``hardware``: a built-in name or alias, a chalk-hardware/1 file, or a dict holding one.
    Raises ChalkError.
    """
    return _with_file(hardware, "hardware", lambda h: json.loads(_chalk.run_cli(["hardware", h, "--json"]))["rows"][0])


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
    except ChalkError as e:  # name the argument, not the CLI flag
        raise python_field(e, ("model", "hardware", "chips") + _DEPLOYMENT_OPTIONS) from None


_DEPLOYMENT_OPTIONS = ("weights", "kv_dtype", "compute", "matmul_efficiency", "hbm_efficiency", "price_usd_per_chip_hour",
                       "memory_reserve", "roofline", "tp", "ep", "two_batch_overlap", "dispatch_dtype", "context")


def _axis_column(values: np.ndarray, stride: int, start: int, stop: int) -> np.ndarray:
    """values[(row // stride) % len(values)] for rows start..stop-1 (one list of a product),
    by repeating and tiling: memory-speed, no division per row."""
    n, size = stop - start, len(values)
    period = size * stride
    if n <= 0:
        return values[:0]
    if period <= 2 * n:  # a period or more: tile one period, cut out the rows
        offset = start % period
        return np.tile(np.repeat(values, stride), -(-(offset + n) // period))[offset:offset + n]
    first, last = start // stride, (stop - 1) // stride  # a few long runs of one value each
    bounds = np.arange(first, last + 2, dtype=np.int64) * stride
    bounds[0], bounds[-1] = start, stop
    return np.repeat(values[np.arange(first, last + 1) % size], np.diff(bounds))


def _product_slice(lists: Dict[str, Sequence[Any]], start: int, stop: int) -> "pd.DataFrame":
    """Rows start..stop of the Cartesian product of ``lists`` (the last list varies fastest)."""
    return pd.DataFrame(_product_columns(lists, start, stop), index=pd.RangeIndex(start, stop), copy=False)


def _product_columns(lists: Dict[str, Sequence[Any]], start: int, stop: int) -> Dict[str, Any]:
    """The columns of _product_slice, as arrays (names: categoricals). A DataFrame made of
    them with copy=False keeps one block per column: the default (copy=True) consolidates
    the columns of one dtype into one block, a copy of each (0.09 s per million rows)."""
    columns, stride = {}, 1
    names = list(lists)
    for name in reversed(names):
        values = list(lists[name])
        array = np.asarray(values)
        if array.dtype.kind in "biuf":
            columns[name] = _axis_column(array, stride, start, stop)
        elif len(set(values)) == len(values):  # names (models, systems): categorical, cheap to build and to ship
            codes = _axis_column(np.arange(len(values), dtype=np.min_scalar_type(-len(values))), stride, start, stop)
            columns[name] = pd.Categorical.from_codes(codes, categories=values)
        else:
            columns[name] = _axis_column(np.asarray(values, dtype=object), stride, start, stop)
        stride *= len(values)
    return {n: columns[n] for n in names}


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
    column (and the row, counted from 0 in ``points``) for a bad value.
    """
    if pd is None:  # pragma: no cover
        raise ChalkError("pandas: roofline_sweep needs pandas (Debian: python3-pandas)", "pandas")
    df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
    spec = _Spec(list(df.columns), model, hardware, chips, options)
    codes, levels = _frame_keys(df, spec.group_by)
    out = spec.evaluate(_frame_inputs(df, slice(None)), len(df), codes, levels)
    return assemble(df, out)


#: the raw result arrays of _chalk.Deployment.roofline_sweep and their dtypes
_OUT_TYPES = (("t_compute_ms", float), ("t_weights_ms", float), ("t_kv_ms", float), ("t_step_ms", float),
              ("tok_per_s", float), ("tok_per_s_per_user", float), ("tok_per_s_per_chip", float),
              ("cost_usd_per_mtok", float), ("bound_code", np.int8), ("memory_fits", bool), ("max_batch_at_context", np.int64))


def packed_outputs(n: int) -> Dict[str, np.ndarray]:
    """Empty result arrays (_OUT_TYPES) of n rows, all views of one buffer (74 B a row; the
    8-byte columns first, so every view stays aligned). One buffer of 4 MB or more is one
    allocation numpy asks the kernel to back with huge pages: a Dask worker process
    returns its memory to the system after each partition (Dask's nanny sets
    MALLOC_TRIM_THRESHOLD_=65536), so a partition's results are always fresh memory, and
    eleven separate arrays under 4 MB each faulted in 4 kB pages (1.5-2x the C++ sweep's
    CPU, measured)."""
    types = sorted(_OUT_TYPES, key=lambda ct: -np.dtype(ct[1]).itemsize)
    buffer = np.empty(sum(np.dtype(t).itemsize for _, t in types) * n, dtype=np.uint8)
    out, offset = {}, 0
    for c, t in types:
        size = np.dtype(t).itemsize * n
        out[c] = buffer[offset:offset + size].view(t)
        offset += size
    return {c: out[c] for c, _ in _OUT_TYPES}


class _Spec:
    """What a roofline sweep needs besides its points: the checked column names, which of
    model / hardware / chips come from columns (``group_by``) and which from arguments
    (``defaults``), and the deployment options. Small and picklable: it travels to Dask
    workers, which evaluate partitions with ``evaluate`` exactly as the serial sweep does."""

    def __init__(self, columns: Sequence[Any], model: Any, hardware: Any, chips: Optional[int], options: Dict[str, Any]) -> None:
        for need in ("batch", "context_tokens"):
            if need not in columns:
                raise ChalkError(f"{need}: the points have no {need} column (columns: {', '.join(map(str, columns))})", need)
        self.defaults = {"model": model, "hardware": hardware, "chips": chips}
        for k, v in self.defaults.items():
            if k not in columns and v is None and k != "chips":
                raise ChalkError(f"{k}: give a {k} column or the {k}= argument", k)
        self.group_by = [k for k in self.defaults if k in columns]
        self.overrides = [c for c in CHIP_COLUMNS if c in columns]
        self.options = dict(options)

    def deployment(self, code: int, levels: Sequence[Sequence[Any]]) -> Any:
        """The deployment of group code ``code`` (see evaluate), resolved once per process."""
        named = dict(self.defaults)
        named.update(_decode_key(code, levels, self.group_by))
        return _roofline_deployment(named["model"], named["hardware"], int(named["chips"] or 0), self.options)

    def evaluate(self, cols: Dict[str, np.ndarray], n: int, codes: Optional[np.ndarray], levels: Sequence[Sequence[Any]],
                 first_row: int = 0, packed: bool = False) -> Dict[str, np.ndarray]:
        """The raw result arrays (_OUT_TYPES) of n points. ``cols``: batch, context_tokens and
        the overrides as arrays; ``codes``: each point's (model, hardware, chips) as one
        mixed-radix code over ``levels`` (the values of each group_by column), None when
        none is a column. Rows of one code are evaluated by one C++ call: on views of the
        inputs and the outputs when they are few contiguous runs (a grid's usual layout),
        else gathered and scattered. ``first_row``: the
        position of row 0 in the whole grid, for error messages; ``packed``: the results are
        views of one buffer (packed_outputs), for a partition a worker returns."""
        resolved: Dict[int, Any] = {}
        out = packed_outputs(n) if packed else {c: np.empty(n, dtype=t) for c, t in _OUT_TYPES}
        for code, rows in _groups(codes, n):
            d = resolved.get(code)
            if d is None:
                d = resolved[code] = self.deployment(code, levels)
            try:
                if isinstance(rows, slice):  # C++ writes straight into the result arrays
                    d.roofline_sweep({k: v[rows] for k, v in cols.items()}, {c: a[rows] for c, a in out.items()})
                else:
                    for c, a in d.roofline_sweep({k: v[rows] for k, v in cols.items()}).items():
                        out[c][rows] = a
            except ChalkError as e:
                raise _at_row(e, rows, first_row) from None
        return out


def _groups(codes: Optional[np.ndarray], n: int):
    """(code, rows) for each run of equal codes: slices when the runs are few, else index
    arrays of each code (a stable sort), so a code meets the C++ sweep once or a few times."""
    if codes is None:
        return [(0, slice(0, n))]  # even for no points: a bad model or system still raises
    if n == 0:
        return []
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    if len(starts) < max(64, n // 1024):
        bounds = [0, *starts.tolist(), n]
        return [(int(codes[a]), slice(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    cuts = [0, *(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist(), n]
    return [(int(ordered[a]), order[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]


def _decode_key(code: int, levels: Sequence[Sequence[Any]], group_by: Sequence[str]) -> Dict[str, Any]:
    key = {}
    for name, values in zip(reversed(group_by), reversed(levels)):
        code, i = divmod(code, len(values))
        key[name] = values[i]
    return key


def _mixed_radix(digits: Sequence[np.ndarray], levels: Sequence[Sequence[Any]]) -> Optional[np.ndarray]:
    codes = None
    for d, values in zip(digits, levels):
        codes = d.astype(np.int64) if codes is None else codes * len(values) + d
    return codes


def _frame_keys(df: "pd.DataFrame", group_by: Sequence[str]):
    """Each row's group_by values as one code, and the values of each column (factorized)."""
    digits, levels = [], []
    for name in group_by:
        col = df[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            d, values = col.cat.codes.to_numpy(), list(col.cat.categories)
        else:
            d, uniques = pd.factorize(col.to_numpy(), sort=False)
            values = list(uniques)
        if len(d) and d.min() < 0:
            raise ChalkError(f"{name}: row {int(np.flatnonzero(d < 0)[0])} has no {name}", name)
        digits.append(d)
        levels.append(values)
    return _mixed_radix(digits, levels), levels


def _frame_inputs(df: "pd.DataFrame", rows: Any) -> Dict[str, np.ndarray]:
    cols = {"batch": _ints(df["batch"].to_numpy()[rows], "batch"),
            "context_tokens": _ints(df["context_tokens"].to_numpy()[rows], "context_tokens")}
    for c in CHIP_COLUMNS:
        if c in df.columns:
            cols[c] = _floats(df[c].to_numpy()[rows], c)
    return cols


def _at_row(e: ChalkError, rows: Any, first_row: int) -> ChalkError:
    """The C++ sweep counts rows within one call: name the row of the whole grid instead."""
    m = re.search(r"\brow (\d+):", e.message)
    if m is None:
        return e
    local = int(m.group(1))
    row = first_row + (rows.start + local if isinstance(rows, slice) else int(rows[local]))
    return ChalkError(e.message[:m.start(1)] + str(row) + e.message[m.end(1):], e.field)


def assemble(df: "pd.DataFrame", out: Dict[str, np.ndarray], copy: bool = True) -> "pd.DataFrame":
    """The points with the result columns (_RESULT_COLUMNS) of the raw arrays ``out`` added,
    as roofline_sweep returns them; a non-unique index becomes 0..n-1. ``copy=False`` uses
    the columns of ``df`` itself (a grid nobody else holds)."""
    base = df if df.index.is_unique else df.reset_index(drop=True)
    if not base.columns.is_unique:  # a dict cannot hold them: add the results one by one
        base = base.copy() if base is df and copy else base
        for c, v in result_columns(out).items():
            base[c] = v
        return base
    # Column by column: DataFrame.copy() would also consolidate them (a second copy).
    fresh = copy and base is df
    result = with_results({c: base[c].copy() if fresh else base[c] for c in base.columns}, out, base.index)
    result.columns.name = base.columns.name
    return result


def result_columns(out: Dict[str, np.ndarray]) -> Dict[str, Any]:
    """The result columns (_RESULT_COLUMNS, in order) of the raw arrays ``out``, without copying
    them: bound a categorical of BOUNDS, max_batch_at_context nullable (<NA>: no batch
    limit, null in the CLI's JSON)."""
    cols: Dict[str, Any] = {}
    for c in _RESULT_COLUMNS:
        if c == "bound":
            cols[c] = pd.Categorical.from_codes(out["bound_code"], BOUNDS)
        elif c == "max_batch_at_context":
            cols[c] = pd.arrays.IntegerArray(out[c], out[c] < 0)
        else:
            cols[c] = out[c]
    return cols


def with_results(columns: Dict[str, Any], out: Dict[str, np.ndarray], index: "pd.Index") -> "pd.DataFrame":
    """One DataFrame of ``columns`` (arrays or Series on ``index``) and the result columns
    of ``out``, none of them copied: a DataFrame of a dict made with copy=False keeps each
    column as its own block, where adding columns one by one (``df[c] = a``) copies each
    and the default copy=True consolidates (copies) the columns of each dtype: 0.05-0.1 s
    per million rows, the serial part of dask_sweep on the client. A result name that is
    already a column replaces it in place, as ``df[c] = a`` would."""
    cols = dict(columns)
    cols.update(result_columns(out))
    return pd.DataFrame(cols, index=index, copy=False)


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
