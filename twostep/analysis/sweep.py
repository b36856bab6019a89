"""Running an experiment over seeds (``SeedSequence(seed)`` each) and parameter grids, and summarising it."""

from __future__ import annotations

import numbers
import os
import sys
from itertools import product
from typing import Callable, Iterable

import numpy as np

from .._validation import check_int

def _interactive() -> bool:
    # A progress bar at a terminal, not in the book build (no TTY).
    if os.environ.get("TWOSTEP_PROGRESS") in ("0", "1"):
        return os.environ["TWOSTEP_PROGRESS"] == "1"
    return sys.stderr.isatty()

def rng_for(seed: int) -> np.random.Generator:
    """The generator ``numpy.random.default_rng(numpy.random.SeedSequence(seed))`` of a task.

    Parameters
    ----------
    seed : int >= 0
    Returns
    -------
    numpy.random.Generator
    Examples
    --------
    >>> import twostep as ts
    >>> int(ts.rng_for(3).integers(10)) == int(ts.rng_for(3).integers(10))
    True
    """
    return np.random.default_rng(np.random.SeedSequence(check_int(seed, "seed", 0)))

#: Names a grid may not use: every record gets ``seed`` from ``seeds``, and ``func`` gets ``rng``.
RESERVED = ("seed", "rng")

def _expand(grid) -> list[dict]:
    if grid is None:
        return [{}]
    if isinstance(grid, dict):
        for key, values in grid.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(f"grid[{key!r}] must be a list of values to sweep, got {values!r} "
                                f"(write grid={{{key!r}: [{values!r}]}} for one value)")
        keys = list(grid)
        grid = [dict(zip(keys, values)) for values in product(*(list(grid[k]) for k in keys))]
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__iter__"):
        raise TypeError(f"grid must be a dict of lists or a list of dicts, got {grid!r}")
    grid = list(grid)
    if not all(isinstance(g, dict) for g in grid):
        raise TypeError("grid must be a dict of lists or a list of dicts")
    for g in grid:
        reserved = [k for k in RESERVED if k in g]
        if reserved:
            raise ValueError(f"grid key {reserved[0]!r} is reserved: seeds are given by seeds=, "
                             f"and each task's generator is passed as rng")
    return grid

def keep_freed_memory() -> bool:
    """Let this process reuse freed large blocks (glibc ``mallopt``), for long runs and
    :func:`sweep`'s workers; returns whether glibc took the settings."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4          # glibc's malloc.h
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2 ** 31 - 1))

def _start_worker(parent: int) -> None:
    # worker_pool's initializer: die with the run, reuse freed pages (no page faults).
    _die_with_parent(parent)
    if keep_freed_memory():
        _memory_kept_is_no_leak()

def _memory_kept_is_no_leak() -> None:
    # loky restarts a worker whose memory grew 300 MB past its first task's, taking memory
    # kept by keep_freed_memory for a leak: a growing grid lost its workers mid-run. Kept
    # memory is by design here; loky has no public setting, and reads this flag every check.
    try:
        from joblib.externals.loky import process_executor
    except ImportError:
        return
    if hasattr(process_executor, "_USE_PSUTIL"):
        process_executor._USE_PSUTIL = False

def _die_with_parent(parent: int) -> None:
    # A worker must not outlive a run killed with SIGKILL: PR_SET_PDEATHSIG (Linux). Ctrl-C is
    # the parent's to handle (it saves the finished tasks); a worker ignores it.
    import signal
    global _ARMED
    if _ARMED == parent:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)   # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:   # the parent died before the line above
        os._exit(1)
    _ARMED = parent

_ARMED = None

def worker_pool(n_jobs: int, **kwargs):
    """A ``joblib.Parallel`` of ``n_jobs`` whose workers die with this process and keep freed memory."""
    from joblib import Parallel
    # Armed by the initializer, not by a task: a Dask worker's parent is its nanny.
    return Parallel(n_jobs=check_int(n_jobs, "n_jobs", 1), initializer=_start_worker,
                    initargs=(os.getpid(),), **kwargs)

def _task(func, params, seed, index):
    out = func(rng=rng_for(seed), **params)
    if not isinstance(out, dict):
        raise TypeError(f"func must return a dict, got {type(out).__name__}")
    clash = sorted(set(out) & (set(params) | {"seed"}))
    if clash:
        raise ValueError(f"func's result key(s) {clash} would overwrite the task's parameter(s) "
                         f"of the same name; rename the result or the parameter")
    return index, {**params, "seed": seed, **out}

def run_tasks(func: Callable, tasks: list[tuple[dict, int]], n_jobs: int = 1,
              progress: bool | None = None, on_record: Callable | None = None,
              cost: Callable | None = None) -> list[dict]:
    """:func:`sweep` over ``tasks``, a list of ``(params, seed)``, records in their order."""
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    n_jobs = check_int(n_jobs, "n_jobs", 1)
    tasks = [(dict(p), check_int(s, "seed", 0)) for p, s in tasks]
    return _run_tasks(func, tasks, n_jobs, progress, on_record, _check_cost(cost))

def _check_cost(cost):
    if cost is not None and not callable(cost):
        raise TypeError(f"cost must be None or a callable of a task's parameters, got "
                        f"{type(cost).__name__}")
    return cost

def _run_tasks(func, tasks, n_jobs, progress, on_record, cost=None):
    # run_tasks on checked arguments (sweep's, or run_tasks').
    show = _interactive() if progress is None else bool(progress)
    name = getattr(func, "__name__", "sweep")
    out: list = [None] * len(tasks)
    # Started in decreasing cost (stable); records are placed by index, in the given order.
    order = list(range(len(tasks)))
    if cost is not None:
        order.sort(key=lambda i: -float(cost(tasks[i][0])))

    def collect(results):
        if show:
            from tqdm.auto import tqdm
            results = tqdm(results, total=len(tasks), desc=name)
        for index, record in results:
            out[index] = record
            if on_record is not None:
                on_record(record)

    if n_jobs == 1:
        collect(_task(func, *tasks[i], i) for i in order)
        return out

    from joblib import delayed
    parallel = worker_pool(n_jobs, return_as="generator_unordered")
    results = parallel(delayed(_task)(func, *tasks[i], i) for i in order)
    try:
        collect(results)
    finally:
        # Close the suspended generator before stopping the workers (the other order deadlocks
        # against joblib's dispatch callback).
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            results.close()
        _stop_workers()
    return out

def _stop_workers() -> None:
    # loky's workers idle for minutes: a finished or interrupted run stops them. The executor
    # that ran the tasks itself (get_reusable_executor() would build a second and leave the
    # first to the garbage collector, whose semaphore then upset loky's resource tracker).
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:
        return
    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)
        import gc
        gc.collect()

def sweep(func: Callable, grid: Iterable[dict] | dict | None = None, seeds: Iterable[int] = (0,),
          n_jobs: int = 1, progress: bool | None = None,
          on_record: Callable | None = None, cost: Callable | None = None) -> list[dict]:
    """Run ``func(rng=..., **params)`` for every parameter set and seed.

    Parameters
    ----------
    func : callable
        Returns a dict of results for one task (no key named as a parameter or ``seed``).
    grid : dict of lists, list of dicts, or None
        A dict expands to its Cartesian product; ``seed`` and ``rng`` are reserved.
    seeds : iterable of int >= 0
    n_jobs : int
        Worker processes (joblib, loky); 1 runs in this process.
    progress : bool or None
        A tqdm bar; ``None``: only in an interactive terminal.
    on_record : callable, optional
        Called with each record as its task finishes (e.g. to checkpoint).
    cost : callable, optional
        ``cost(params)``: tasks start in decreasing cost; the records keep the grid's order.
    Returns
    -------
    list of dict
        One record per task: its parameters, ``seed`` and ``func``'s results (any ``n_jobs``, up to
        the rounding of BLAS threads).
    Examples
    --------
    >>> import twostep as ts
    >>> def draw(rng, N):
    ...     return {"mean": float(rng.standard_normal(N).mean())}
    >>> records = ts.sweep(draw, {"N": [10, 1000]}, seeds=(0, 1))
    >>> [(r["N"], r["seed"]) for r in records]
    [(10, 0), (10, 1), (1000, 0), (1000, 1)]
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    grid = _expand(grid)
    if isinstance(seeds, (numbers.Integral, str)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a sequence of integers >= 0, got {seeds!r}")
    seeds = [check_int(s, "seed", 0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must be a non-empty sequence of integers >= 0, got none")
    return _run_tasks(func, [(params, seed) for params in grid for seed in seeds],
                      check_int(n_jobs, "n_jobs", 1), progress, on_record, _check_cost(cost))

def split_batches(records: list[dict], order: Iterable[str]) -> list[dict]:
    """One record per batch of ``order`` (outermost) from tasks run with ``batch="both"``."""
    order = list(order)
    if not order or any(b not in ("reused", "fresh") for b in order):
        raise ValueError(f"order must name batches among ('reused', 'fresh'), got {order!r}")
    out = []
    for b in order:
        for r in records:
            if r.get("batch") != "both" or b not in r:
                raise ValueError(f"records must come from tasks run with batch='both', each "
                                 f"holding the results of {order!r}")
            out.append({**{k: v for k, v in r.items() if k not in ("reused", "fresh")},
                        "batch": b, **r[b]})
    return out

def split_cases(records: list[dict], key: str, name: str, order=None) -> list[dict]:
    """One record per case (``record[key]``, ``record["results"]``) as ``name``; sorted by ``order`` if
    given."""
    out = [{**{k: v for k, v in r.items() if k not in (key, "results")}, name: case, **result}
           for r in records for case, result in zip(r[key], r["results"])]
    return out if order is None else sorted(out, key=order)

def summarise(records: list[dict], by: Iterable[str], values: Iterable[str]) -> list[dict]:
    """Mean, standard error (``std(ddof=1)/sqrt(count)``) and count of ``values`` over the records of
    each group of keys ``by``.

    Parameters
    ----------
    records : list of dict
    by, values : sequence of str
    Returns
    -------
    list of dict
        One per group: its keys ``by``, ``"<value>"``, ``"<value>_sem"`` and ``"count"``.
    Examples
    --------
    >>> import twostep as ts
    >>> records = [{"N": 10, "seed": 0, "x": 1.0}, {"N": 10, "seed": 1, "x": 3.0}]
    >>> [{k: float(v) for k, v in group.items()} for group in ts.summarise(records, ["N"], ["x"])]
    [{'N': 10.0, 'x': 2.0, 'x_sem': 1.0, 'count': 2.0}]
    """
    by, values = list(by), list(values)
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in by), []).append(r)
    out = []
    for key, rows in groups.items():
        entry = dict(zip(by, key))
        for v in values:
            x = np.asarray([row[v] for row in rows], dtype=float)
            entry[v] = x.mean(axis=0)
            entry[v + "_sem"] = (x.std(axis=0, ddof=1) / np.sqrt(len(x))
                                 if len(x) > 1 else np.zeros_like(x[0]))
        entry["count"] = len(rows)
        out.append(entry)
    return out

def linear_fit(x, y) -> tuple:
    r"""``(slope, se, intercept)`` of :math:`y \approx a + b x`, ``x`` ``(m,)``, ``y`` ``(m, ...)``:
    :math:`\mathrm{se} = \sqrt{\sum_i r_i^2/(m-2) / \sum_i (x_i-\bar x)^2}` (NaN for :math:`m = 2`)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.size < 2 or y.ndim < 1 or y.shape[0] != x.size:
        raise ValueError(f"x must be 1-d of length >= 2 and y of shape (len(x), ...), got "
                         f"{x.shape} and {y.shape}")
    if np.ptp(x) == 0:
        raise ValueError("x must take at least two distinct values")
    dx = x - x.mean()
    sxx = float(np.sum(dx * dx))
    ym = y.mean(axis=0)
    slope = np.tensordot(dx, y - ym, axes=(0, 0)) / sxx
    intercept = ym - slope * x.mean()
    if x.size > 2:
        resid = y - intercept - np.multiply.outer(x, slope)
        se = np.sqrt(np.sum(resid * resid, axis=0) / (x.size - 2) / sxx)
    else:
        se = np.full(np.shape(slope), np.nan)
    if y.ndim == 1:
        return float(slope), float(se), float(intercept)
    return slope, se, intercept

def linear_slope(x, y) -> tuple[float, float]:
    """Least-squares slope and standard error of :func:`linear_fit`.

    Parameters
    ----------
    x, y : array_like, shape (m,), m >= 2
    Returns
    -------
    slope, se : float
    Examples
    --------
    >>> import twostep as ts
    >>> slope, se = ts.linear_slope([1, 2, 3, 4], [1.0, 3.1, 4.9, 7.0])
    >>> round(slope, 3), round(se, 3)
    (1.98, 0.042)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"x and y must be 1-d arrays of the same length >= 2, got {x.shape} and {y.shape}")
    slope, se, _ = linear_fit(x, y)
    return slope, se

def loglog_slope(x, y) -> tuple[float, float]:
    r""":func:`linear_slope` of :math:`\log y` against :math:`\log x`.

    Parameters
    ----------
    x, y : array_like, shape (m,), positive
    Returns
    -------
    slope, se : float
    Examples
    --------
    >>> import twostep as ts
    >>> slope, se = ts.loglog_slope([1, 2, 4, 8], [3.0, 6.0, 12.0, 24.0])
    >>> round(slope, 6), round(se, 6)
    (1.0, 0.0)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive for a log-log fit")
    return linear_slope(np.log(x), np.log(y))
