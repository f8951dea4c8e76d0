"""Sweeps on Dask workers: dask_sweep (python/README.md, issue 19)."""
from __future__ import annotations

import itertools
import math
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _chalk
from ._sweep import (_OUT_TYPES, _Spec, _floats, _frame_inputs, _frame_keys, _ints, _product_columns, _product_size, _roofline_deployment,
                     _product_slice, assemble, packed_outputs, pd, roofline_sweep, with_results)


def _partitions(n: int, parts: int) -> List[Tuple[int, int]]:
    step = max(1, -(-n // max(1, parts)))
    return [(s, min(n, s + step)) for s in range(0, n, step)]


#: the most rows of a roofline partition by default (its results: 74 B a row, 9.7 MB, one
#: buffer, see packed_outputs). Fewer, larger partitions leave a worker idle at the end when
#: their costs differ (an MoE model's points cost several times a dense one's, and the
#: models are the grid's slowest axis); each partition costs about 3 ms of Dask's
#: bookkeeping (10 ms across processes on the busy 2-core machine).
ROWS_PER_PARTITION = 131_072


def _roofline_partitions(n: int, npartitions: Optional[int], workers: int) -> List[Tuple[int, int]]:
    """npartitions partitions of n rows, or by default at least two per worker and at most
    ROWS_PER_PARTITION rows each."""
    if npartitions is None:
        npartitions = max(2 * workers, -(-n // ROWS_PER_PARTITION))
    return _partitions(n, npartitions)


def dask_sweep(points: Any, fn: Callable[..., "pd.DataFrame"] = roofline_sweep, *, npartitions: Optional[int] = None,
               client: Any = None, address: Optional[str] = None, direct: Optional[bool] = None,
               **kwargs: Any) -> "pd.DataFrame":
    """Evaluates ``fn(partition, **kwargs)`` (default roofline_sweep) over ``points`` on Dask workers.

    ``points``: a DataFrame of inputs, or a dict of lists whose Cartesian product is the grid
    (grid(**points)). The grid is split into ``npartitions`` (default 2 per worker; for
    roofline_sweep at least that and at most ROWS_PER_PARTITION rows each), each evaluated
    as one task on a worker (``client.map``; without a client, dask.delayed tasks or
    dask.dataframe ``map_partitions`` on the default scheduler), and the results are
    gathered into one DataFrame equal to the serial ``fn(grid)``, index included.

    For roofline_sweep only arrays travel: a product is swept on the workers from its lists
    (the small lists travel, not the grid), a DataFrame's input columns are sliced and
    scattered; each worker returns its result columns as views of one buffer, fetched as
    soon as partitions finish, while the client builds the grid's own columns, and the
    DataFrame is made of those and the joined results without copying them. Any other
    ``fn`` gets and returns DataFrame partitions.

    Runs on ``client`` (a distributed.Client, e.g. over a LocalCluster), or on a new client
    of the scheduler at ``address`` ("tcp://host:8786", closed afterwards), or else on the
    current default Dask scheduler. ``direct``: results are gathered (and a DataFrame's
    partitions scattered) straight between this process and the workers (default, unless
    the client was made with direct_to_workers=False); False sends them through the
    scheduler, for clusters whose workers the client cannot reach. ChalkError raised on a
    worker is raised here, its row counted in the whole grid. For roofline_sweep every
    (model, hardware, chips) of the sweep is resolved here first, so an unknown name or chips
    that cannot hold the model raise one ChalkError before any task is sent.
    """
    own = None
    if client is None and address is not None:
        from distributed import Client
        client = own = Client(address)
    try:
        if direct is None:
            direct = client is None or getattr(client, "direct_to_workers", None) is not False
        workers = max(1, len(client.scheduler_info()["workers"]) if client is not None else (os.cpu_count() or 1))
        if fn is roofline_sweep:
            return _roofline_on_dask(points, npartitions, workers, client, direct, kwargs)
        return _fn_on_dask(points, fn, npartitions or 2 * workers, client, direct, kwargs)
    finally:
        if own is not None:
            own.close()


def _run(client: Any, direct: bool, task: Callable[[Any], Any], args: Sequence[Any], bounds: Sequence[Tuple[int, int]],
         n: int, local: Optional[Callable[[], Any]] = None):
    """task(arg) for each arg as one Dask task, its result arrays filling rows bounds[i] of
    n; ``local`` runs here meanwhile. With a client the results are fetched as soon as they
    are done (distributed.as_completed, in batches), so fetching overlaps sweeping. Returns (the joined
    arrays, local's result)."""
    out = {c: np.empty(n, dtype=t) for c, t in _OUT_TYPES}

    def put(i: int, r: Dict[str, np.ndarray]) -> None:
        a, b = bounds[i]
        for c, _ in _OUT_TYPES:
            out[c][a:b] = r[c]

    if client is not None:
        from distributed import as_completed
        futures = client.map(task, list(args), pure=False)
        where = {f.key: i for i, f in enumerate(futures)}
        here = local() if local is not None else None
        # The partitions done since the last fetch, fetched together: one gather (a who_has
        # and one get_data per worker) for several rather than two round trips for each.
        for batch in as_completed(futures).batches():
            for f, r in zip(batch, client.gather(batch, direct=direct)):
                put(where[f.key], r)
                f.release()  # the worker may drop it now
        return out, here
    import dask
    here = local() if local is not None else None
    for i, r in enumerate(dask.compute(*[dask.delayed(task, pure=False)(a) for a in args])):
        put(i, r)
    return out, here


def _roofline_on_dask(points: Any, npartitions: Optional[int], workers: int, client: Any, direct: bool,
                      kwargs: Dict[str, Any]) -> "pd.DataFrame":
    options = dict(kwargs)
    model, hardware, chips = options.pop("model", None), options.pop("hardware", None), options.pop("chips", None)
    if isinstance(points, dict):
        lists = {k: list(v) for k, v in points.items()}
        n = _product_size(lists)
        spec = _Spec(list(lists), model, hardware, chips, options)
        _resolve_here(spec, itertools.product(*(lists[k] for k in spec.group_by)))
        # The workers sweep their partitions while this process builds the grid's columns;
        # the DataFrame is made once, of those columns and the joined results, copying none.
        bounds = _roofline_partitions(n, npartitions, workers)
        out, columns = _run(client, direct, _ProductSweep(lists, spec), bounds, bounds, n,
                            local=lambda: _product_columns(lists, 0, n))
        return with_results(columns, out, pd.RangeIndex(0, n))
    df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
    spec = _Spec(list(df.columns), model, hardware, chips, options)
    _resolve_here(spec, df[spec.group_by].drop_duplicates().itertuples(index=False, name=None) if spec.group_by else [()])
    codes, levels = _frame_keys(df, spec.group_by)
    if len(df) == 0:
        return assemble(df, spec.evaluate(_frame_inputs(df, slice(None)), 0, codes, levels))
    bounds = _roofline_partitions(len(df), npartitions, workers)
    chunks = [(_frame_inputs(df, slice(a, b)), None if codes is None else codes[a:b], a) for a, b in bounds]
    if client is not None:
        chunks = client.scatter(chunks, direct=direct)
    out, _ = _run(client, direct, _ColumnSweep(spec, levels), chunks, bounds, len(df))
    return assemble(df, out)


# At most this many (model, hardware, chips) deployments are resolved on the client before
# the tasks go out; a larger grid's others are resolved (and reported) by the workers.
_RESOLVE_HERE_MAX = 4096


def _resolve_here(spec: _Spec, combos: Iterable[Tuple[Any, ...]]) -> None:
    """Resolves the sweep's deployments in this process before any task is sent, so an
    unknown model or hardware name, or chips that cannot hold the model, raises one
    ChalkError here naming the field, instead of a traceback per worker (issue 30 item 10).
    The resolved deployments stay in this process's cache (_roofline_deployment)."""
    for combo in itertools.islice(combos, _RESOLVE_HERE_MAX):
        named = dict(spec.defaults)
        named.update(zip(spec.group_by, combo))
        _roofline_deployment(named["model"], named["hardware"], int(named["chips"] or 0), spec.options)


class _ProductSweep:
    """One partition (start, stop) of a product grid, roofline-swept on a worker by one C++
    call (_chalk.roofline_product_sweep): each row's inputs are stepped along in C++ from
    the lists, so no column of the grid is built; returns the raw result arrays."""

    def __init__(self, lists: Dict[str, List[Any]], spec: _Spec) -> None:
        self.lists = lists
        self.spec = spec

    def __call__(self, bounds: Tuple[int, int]) -> Dict[str, np.ndarray]:
        start, stop = bounds
        strides, stride = {}, 1
        for name in reversed(list(self.lists)):  # the last list varies fastest, as grid()
            strides[name] = stride
            stride *= len(self.lists[name])
        columns = {c: (_ints(np.asarray(self.lists[c]), c), strides[c]) for c in ("batch", "context_tokens")}
        for c in self.spec.overrides:
            columns[c] = (_floats(np.asarray(self.lists[c]), c), strides[c])
        levels = [self.lists[k] for k in self.spec.group_by]
        group_axes = [(len(self.lists[k]), strides[k]) for k in self.spec.group_by]
        met = _codes_met(group_axes, start, stop)
        resolved = {code: self.spec.deployment(code, levels) for code in met}
        # Only the codes of rows start..stop-1 are resolved (a worker meets a few of many
        # models x systems x chips); C++ never reads the others' slots, which repeat one.
        some = resolved[met[0]] if met else None
        deployments = [resolved.get(code, some) for code in range(math.prod(len(v) for v in levels))] if met else []
        out = packed_outputs(stop - start)
        return _chalk.roofline_product_sweep(deployments, group_axes, columns, start, stop, out)


def _codes_met(group_axes: List[Tuple[int, int]], start: int, stop: int) -> List[int]:
    """The group codes (mixed radix over group_axes, the first most significant) of rows
    start..stop-1 of a product. Each axis's stride is a multiple of the smallest, g, so
    the code is constant on the aligned blocks of g rows: one row per block is enough."""
    if stop <= start:
        return []
    if not group_axes:
        return [0]
    g = min(stride for _, stride in group_axes)
    rows = np.arange(start // g, (stop - 1) // g + 1, dtype=np.int64) * g
    codes = np.zeros(len(rows), dtype=np.int64)
    for size, stride in group_axes:
        codes = codes * size + (rows // stride) % size
    return np.unique(codes).tolist()


class _ColumnSweep:
    """One partition of a DataFrame grid (its input arrays, group codes and first row),
    roofline-swept on a worker; returns the raw result arrays."""

    def __init__(self, spec: _Spec, levels: List[List[Any]]) -> None:
        self.spec = spec
        self.levels = levels

    def __call__(self, chunk: Tuple[Dict[str, np.ndarray], Optional[np.ndarray], int]) -> Dict[str, np.ndarray]:
        cols, codes, first_row = chunk
        return self.spec.evaluate(cols, len(cols["batch"]), codes, self.levels, first_row=first_row, packed=True)


def _fn_on_dask(points: Any, fn: Callable[..., Any], npartitions: int, client: Any, direct: bool,
                kwargs: Dict[str, Any]) -> "pd.DataFrame":
    """Any fn over DataFrame partitions: a product's built on the workers, a DataFrame's scattered."""
    if client is not None:
        if isinstance(points, dict):
            n = _product_size(points)
            parts = client.map(_ProductPart(points, fn, kwargs), _partitions(n, npartitions), pure=False)
        else:
            df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
            chunks = [df.iloc[a:b] for a, b in _partitions(len(df), npartitions)] if len(df) else [df]
            parts = client.map(_FramePart(fn, kwargs), client.scatter(chunks, direct=direct), pure=False)
        return pd.concat(client.gather(parts, direct=direct))
    import dask.dataframe as dd
    if isinstance(points, dict):
        n = _product_size(points)
        bounds = _partitions(n, npartitions)
        meta = fn(_product_slice(points, 0, 1), **kwargs).iloc[:0]
        ddf = dd.from_map(_ProductPart(points, fn, kwargs), bounds, meta=meta,
                          divisions=[s for s, _ in bounds] + [n - 1], enforce_metadata=False)
    else:
        df = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
        meta = fn(df.iloc[:1], **kwargs).iloc[:0]
        ddf = dd.from_pandas(df, npartitions=npartitions, sort=False).map_partitions(fn, meta=meta, **kwargs)
    return ddf.compute()


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
