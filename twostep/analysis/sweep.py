r"""Running an experiment over seeds and parameter grids, and summarising it.

Each task gets its own ``numpy.random.Generator`` from
``numpy.random.SeedSequence(seed)``, so results do not depend on the number
of worker processes or on the order in which tasks finish.
"""

from __future__ import annotations

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


def sweep(func: Callable, grid: Iterable[dict] | dict | None = None, seeds: Iterable[int] = (0,),
          n_jobs: int = 1, progress: bool | None = None) -> list[dict]:
    """Run ``func(rng=..., **params)`` for every parameter set and seed.

    Parameters
    ----------
    func : callable
        Returns a dict of results (numbers or arrays) for one task.
    grid : dict of lists, list of dicts, or None
        A dict ``{"N": [500, 1000], "batch": ["reused", "fresh"]}`` expands to its
        Cartesian product; a list of dicts is used as given.
    seeds : iterable of int
    n_jobs : int
        Worker processes (joblib, ``loky`` backend); 1 runs in this process.
    progress : bool or None
        Show a tqdm bar; ``None`` shows it only in an interactive terminal.

    Returns
    -------
    list of dict
        One record per task: its parameters, ``seed``, and ``func``'s results.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    if grid is None:
        grid = [{}]
    elif isinstance(grid, dict):
        keys = list(grid)
        grid = [dict(zip(keys, values)) for values in product(*(grid[k] for k in keys))]
    grid = list(grid)
    if not all(isinstance(g, dict) for g in grid):
        raise TypeError("grid must be a dict of lists or a list of dicts")
    seeds = [check_int(s, "seed", 0) for s in seeds]
    n_jobs = check_int(n_jobs, "n_jobs", 1)
    tasks = [(params, seed) for params in grid for seed in seeds]
    show = _interactive() if progress is None else bool(progress)

    def one(params, seed):
        out = func(rng=rng_for(seed), **params)
        if not isinstance(out, dict):
            raise TypeError(f"func must return a dict, got {type(out).__name__}")
        return {**params, "seed": seed, **out}

    if n_jobs == 1:
        iterator = tasks
        if show:
            from tqdm.auto import tqdm
            iterator = tqdm(tasks, desc=getattr(func, "__name__", "sweep"))
        return [one(p, s) for p, s in iterator]

    from joblib import Parallel, delayed
    parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    results = parallel(delayed(one)(p, s) for p, s in tasks)
    if show:
        from tqdm.auto import tqdm
        results = tqdm(results, total=len(tasks), desc=getattr(func, "__name__", "sweep"))
    return list(results)


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


def loglog_slope(x, y) -> tuple[float, float]:
    r"""Least-squares slope of :math:`\log y` against :math:`\log x`, and its standard error."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"x and y must be 1-d arrays of the same length >= 2, got {x.shape} and {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive for a log-log fit")
    lx, ly = np.log(x), np.log(y)
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, res, *_ = np.linalg.lstsq(A, ly, rcond=None)
    if x.size > 2:
        sigma2 = np.sum((ly - A @ coef) ** 2) / (x.size - 2)
        se = float(np.sqrt(sigma2 / np.sum((lx - lx.mean()) ** 2)))
    else:
        se = float("nan")
    return float(coef[0]), se
