r"""Running an experiment over seeds and parameter grids, and summarising it.

Each task gets its own ``numpy.random.Generator`` from
``numpy.random.SeedSequence(seed)``, so results do not depend on the number
of worker processes or on the order in which tasks finish.
"""

from __future__ import annotations

import numbers
import os
import sys
from itertools import product
from typing import Callable, Iterable

import numpy as np

from .._validation import check_int


def _interactive() -> bool:
    # A progress bar helps a reader at a terminal or in JupyterLab; in the
    # book build (no TTY, NB execution via nbclient) it would only add noise.
    if os.environ.get("TWOSTEP_PROGRESS") in ("0", "1"):
        return os.environ["TWOSTEP_PROGRESS"] == "1"
    return sys.stderr.isatty()


def rng_for(seed: int) -> np.random.Generator:
    """The generator a task with this ``seed`` receives."""
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
    """Let this process reuse the memory of freed arrays instead of returning it to the system.

    glibc gives every block over 32 MB its own ``mmap`` and unmaps it when freed, so each new
    ``(N, N)`` array of an at-scale task starts on fresh pages, and the kernel zeroes and maps
    them page by page, in system time that grows with the array (``benchmarks/bench_at_scale.py``
    measures it for the reuse task). Here large blocks come
    from the heap, which is never trimmed below 2 GiB of free top, so a task's arrays land on
    pages the task before it used: no page faults after the first task. Returns whether glibc
    took the settings (False off glibc, where nothing changes). For long runs in one process
    (``tools/at_scale.py``, ``benchmarks/bench_at_scale.py``) and the worker processes of
    :func:`sweep` (which end with their sweep, so the memory they keep is returned then), not
    for a caller's own process: its memory would stay at its peak.
    """
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
    # The initializer of every worker process of worker_pool: it dies with the run, and its
    # tasks' large arrays reuse the pages of the arrays freed before them (no page faults
    # after a worker's largest task; bench_at_scale.py measures what that saves).
    _die_with_parent(parent)
    if keep_freed_memory():
        _memory_kept_is_no_leak()


def _memory_kept_is_no_leak() -> None:
    # loky checks each worker for leaks: when, after a task, the worker's resident memory
    # (after a garbage collection) exceeds what it held after its first task by 300 MB,
    # it stops the worker and starts another, warning "A worker stopped while some jobs
    # were given to the executor" on the parent's stderr. Memory kept by keep_freed_memory
    # never leaves the process, so the first task larger than the worker's first by 300 MB
    # set this off: a sweep whose grid grows (the readout chapter's widths) lost its
    # workers, and their kept pages, mid-run. In this worker the kept memory is by design,
    # so loky's check is off; loky has no public setting for it, and reads the flag below
    # (module state of this process) before every check.
    try:
        from joblib.externals.loky import process_executor
    except ImportError:
        return
    if hasattr(process_executor, "_USE_PSUTIL"):
        process_executor._USE_PSUTIL = False


def _die_with_parent(parent: int) -> None:
    # A worker process (loky) must not outlive the run that started it, even when that run
    # is killed with SIGKILL and cannot shut its workers down: Linux's PR_SET_PDEATHSIG sends
    # the worker SIGKILL when its parent dies. Ctrl-C is the parent's to handle (it saves the
    # finished tasks and stops the workers); a worker ignores it.
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
    """A ``joblib.Parallel`` of ``n_jobs`` whose worker processes die with this process.

    Each worker arms :func:`_die_with_parent` as it starts, and takes
    :func:`keep_freed_memory` (joblib's ``initializer``, which
    the loky and multiprocessing backends run in every new worker and the threading and dask
    backends ignore), not at its first task: a run killed after its workers started but
    before each had a task (while it writes its first checkpoint, say) would otherwise leave
    them idling for loky's five-minute timeout. A task never arms its process: on a Dask
    worker, whose parent is its nanny, the check that the run is alive would end the worker.
    Every pool of a run is built here with the same ``initializer``, so joblib reuses one
    executor. ``kwargs`` go to ``Parallel``.
    """
    from joblib import Parallel
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
    """Run ``func(rng=rng_for(seed), **params)`` for each ``(params, seed)`` of ``tasks``
    and return the records in the order of ``tasks``; ``n_jobs``, ``progress``,
    ``on_record`` and ``cost`` as in :func:`sweep` (the backend may be that of an enclosing
    ``joblib.parallel_config``)."""
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
    # Started in decreasing order of cost (a stable sort: ties keep the given order); records
    # are placed by index, so the list returned is in the given order either way.
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
        # An interrupt between two results (e.g. while on_record writes a file) leaves the
        # generator suspended: closing it lets joblib abort its dispatching before the workers
        # are stopped (stopping them first deadlocks against joblib's dispatch callback).
        import warnings
        with warnings.catch_warnings():
            # joblib warns that dispatched tasks were cancelled: that is the point here.
            warnings.simplefilter("ignore", UserWarning)
            results.close()
        _stop_workers()
    return out


def _stop_workers() -> None:
    # joblib keeps loky's workers for reuse (they idle for minutes); a run that is over, or
    # interrupted, stops them now so that none outlives it. The executor that ran the tasks
    # is shut down itself: loky's get_reusable_executor() with its default arguments would
    # build a second executor and leave the first to the garbage collector, which could free
    # a semaphore at exit without telling loky's resource tracker; the tracker then warned
    # on stderr (3 of 180 Ctrl-C'd CLI runs, three at a time on two cores; 0 of 540 since).
    # Collecting here frees what the shut-down executor's threads held, in this thread.
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
        Returns a dict of results (numbers or arrays) for one task; a result key may not be
        the name of a parameter of the task or ``seed`` (it would overwrite it in the record).
    grid : dict of lists, list of dicts, or None
        A dict ``{"N": [500, 1000], "batch": ["reused", "fresh"]}`` expands to its
        Cartesian product; a list of dicts is used as given. ``seed`` and ``rng`` are reserved.
    seeds : iterable of int
        At least one, each an integer >= 0.
    n_jobs : int
        Worker processes (joblib, ``loky`` backend); 1 runs in this process. Workers are
        stopped when the sweep ends, and die with this process if it is killed.
    progress : bool or None
        Show a tqdm bar; ``None`` shows it only in an interactive terminal.
    on_record : callable, optional
        Called with each record as soon as its task finishes (in the order they finish),
        e.g. to checkpoint a results file.
    cost : callable, optional
        ``cost(params)``, a number: tasks are started in decreasing order of it (largest first,
        ties in the grid's order), so that the last tasks to start are short and no worker
        idles while another finishes a long one. The records are in the grid's order either
        way, and the same (see Notes).

    Returns
    -------
    list of dict
        One record per task: its parameters, ``seed``, and ``func``'s results.

    Notes
    -----
    The records do not depend on ``n_jobs`` beyond rounding: joblib gives each of ``n_jobs``
    workers ``cpu_count // n_jobs`` BLAS threads, and another thread count sums matrix
    products in another order (relative differences about 1e-15 in float64). On one BLAS
    thread in every process (``threadpoolctl.threadpool_limits(1)``,
    ``OPENBLAS_NUM_THREADS=1``) serial and parallel records are identical.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    grid = _expand(grid)
    if isinstance(seeds, (numbers.Integral, str)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a sequence of integers >= 0, got {seeds!r}")
    seeds = [check_int(s, "seed", 0) for s in seeds]
    if not seeds:
        # No seed means no task: an empty result would pass for a sweep that ran.
        raise ValueError("seeds must be a non-empty sequence of integers >= 0, got none")
    return _run_tasks(func, [(params, seed) for params in grid for seed in seeds],
                      check_int(n_jobs, "n_jobs", 1), progress, on_record, _check_cost(cost))


def split_batches(records: list[dict], order: Iterable[str]) -> list[dict]:
    """Records of tasks run with ``batch="both"`` (whose results are ``{"reused": {...},
    "fresh": {...}}``, e.g. :func:`twostep.experiments.spikes.spike_experiment`) as one record
    per batch with ``batch`` set, every batch of ``order`` in turn, each in the records' order:
    the records that a grid over ``batch`` (outermost) would have given."""
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
    """Records of tasks that ran several cases on one draw (``record[key]`` the cases,
    ``record["results"]`` one result each, e.g. :func:`twostep.experiments.reuse.reuse_cases`)
    as one record per case: the task's other parameters, its seed, the case as ``name`` and
    its result. Task by task and case by case, or, with ``order`` (a function of a record),
    sorted by it, ties in that order (tasks of one draw per seed keep their seeds ascending)."""
    out = [{**{k: v for k, v in r.items() if k not in (key, "results")}, name: case, **result}
           for r in records for case, result in zip(r[key], r["results"])]
    return out if order is None else sorted(out, key=order)


def summarise(records: list[dict], by: Iterable[str], values: Iterable[str]) -> list[dict]:
    """Mean, standard error and count of ``values`` over seeds, grouped by the keys ``by``.

    Returns one dict per group, with ``"<value>"`` (mean), ``"<value>_sem"``
    (standard error of the mean, ``std(ddof=1)/sqrt(count)``) and ``"count"``.
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
    r"""Least-squares line :math:`y \approx a + b x` over paired values: ``x`` of length
    :math:`m \ge 2`, ``y`` of shape ``(m,)`` or ``(m, ...)`` (one fit per trailing index).

    Returns the slope :math:`b`, its standard error
    :math:`\sqrt{\hat\sigma^2 / \sum_i (x_i-\bar x)^2}` with
    :math:`\hat\sigma^2 = \sum_i r_i^2/(m-2)` (NaN when :math:`m = 2`), and the intercept
    :math:`a`; floats for a 1-d ``y``, arrays of ``y.shape[1:]`` otherwise. The fit has
    :math:`m - 2` degrees of freedom."""
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
    r"""Slope and standard error of :func:`linear_fit` for 1-d ``x`` and ``y``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"x and y must be 1-d arrays of the same length >= 2, got {x.shape} and {y.shape}")
    slope, se, _ = linear_fit(x, y)
    return slope, se


def loglog_slope(x, y) -> tuple[float, float]:
    r"""Least-squares slope of :math:`\log y` against :math:`\log x`, and its standard error
    (:func:`linear_slope` on the logarithms, which checks the shapes)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive for a log-log fit")
    return linear_slope(np.log(x), np.log(y))
