r"""``python -m twostep``: run the book's experiments by name, at any size, on any scheduler.

Examples
--------
List the experiments and their defaults::

    python -m twostep --list

Two steps at N = n = d = 8000, five seeds, both batches, two worker processes::

    python -m twostep two_steps -N 8000 -g batch=reused,fresh --seeds 0:5 -j 2 \
        -p dtype=float32 -o results/two_steps_8000.json

The same sweep on a Dask cluster (joblib's ``dask`` backend; the experiment code is
unchanged)::

    python -m twostep two_steps -N 8000 -g batch=reused,fresh --seeds 0:5 \
        --backend dask --scheduler tcp://scheduler:8786

``-p KEY=VALUE`` fixes a parameter, ``-g KEY=V1,V2,...`` sweeps it (the Cartesian product
of all ``-g`` and ``-N`` is run for every seed); values are read as JSON when they parse
(``0.25``, ``[[0.4, 0.25]]``, ``null``) and as strings otherwise. A grid whose values
are lists is given as one JSON list: ``-g 'settings=[[[0.4,0.25]],[[0.3,0.2]]]'``.

The output (``-o``, default ``results/<experiment>.json``) holds the parameters, the
seeds, the package version and one record per task; read it with
:func:`twostep.read_results`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from functools import partial

from .._version import __version__
from .registry import (EXPERIMENTS, check_memory, experiment_params,
                          get_experiment, run_experiment)
from .results import write_results
from ..analysis.sweep import sweep

SCHEDULER_ENV = "TWOSTEP_DASK_SCHEDULER"
#: loky and dask run tasks in CPU worker processes; cupy and torch run them one after another
#: on this machine's GPU, drawn and measured there (twostep.scale.device).
BACKENDS = ("loky", "dask", "cupy", "torch")
DEVICES = ("cupy", "torch")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _split(item: str, option: str):
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"{option} must look like KEY=VALUE, got {item!r}")
    return key.strip(), value.strip()


def parse_params(items) -> dict:
    """``["c1=0.3", "batch=fresh"]`` -> ``{"c1": 0.3, "batch": "fresh"}``."""
    return {k: _value(v) for k, v in (_split(i, "--param") for i in items or [])}


def parse_grid(items) -> dict:
    """``["batch=reused,fresh", "alpha2=[0.1,0.2]"]`` -> dict of lists (JSON list or comma list)."""
    grid = {}
    for item in items or []:
        key, text = _split(item, "--grid")
        value = _value(text)
        if isinstance(value, list):
            grid[key] = value
        else:
            grid[key] = [_value(v.strip()) for v in text.split(",") if v.strip()]
        if not grid[key]:
            raise ValueError(f"--grid {key} must list at least one value, got {text!r}")
    return grid


def parse_seeds(items) -> list[int]:
    """``["0:5"]`` -> ``[0, 1, 2, 3, 4]``; ``["3", "7"]`` -> ``[3, 7]``; seeds are integers >= 0."""
    seeds = []
    for item in items or ["0"]:
        for part in str(item).split(","):
            part = part.strip()
            try:
                if ":" in part:
                    lo, hi = part.split(":")
                    seeds.extend(range(int(lo), int(hi)))
                elif part:
                    seeds.append(int(part))
            except ValueError:
                raise ValueError(f"--seeds must be integers >= 0 or ranges START:STOP, "
                                 f"got {item!r}") from None
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds must give at least one integer >= 0, got {items!r}")
    return seeds


def parse_bytes(text: str) -> float:
    """``"16G"`` -> 17179869184; accepts K, M, G, T suffixes (binary) or plain bytes."""
    t = str(text).strip().lower().rstrip("ib").rstrip("b") if text else ""
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    number = t[:-1] if unit else t
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise ValueError(f"--max-memory must be a size such as 800M or 16G, got {text!r}") from None
    if not value > 0:
        raise ValueError(f"--max-memory must be positive, got {text!r}")
    return value


def _describe() -> str:
    lines = []
    for name, exp in EXPERIMENTS.items():
        lines.append(f"  {name:<11} {exp.summary}")
        params = ", ".join(f"{k}={json.dumps(v)}" for k, v in exp.parameters().items())
        lines.append(f"  {'':<11} parameters: {params}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m twostep",
        description="Run an experiment of the book 'Two steps of gradient descent' over sizes, "
                    "seeds and parameter grids, and write the results (with the parameters "
                    "and the package version) to a JSON file that twostep.read_results reads.",
        epilog="experiments (every parameter with its default; -p and -g accept these keys):\n"
               + _describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", nargs="?", help=f"one of: {', '.join(EXPERIMENTS)}")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("-N", "--N", dest="sizes", type=int, nargs="+", metavar="N",
                   help="width(s) N to sweep (n and d default to N)")
    p.add_argument("-p", "--param", action="append", metavar="KEY=VALUE", default=[],
                   help="fix a parameter of the routine (JSON value or string)")
    p.add_argument("-g", "--grid", action="append", metavar="KEY=V1,V2", default=[],
                   help="sweep a parameter over values (comma list or JSON list)")
    p.add_argument("-s", "--seeds", nargs="+", metavar="SEED", default=["0"],
                   help="seeds: integers and START:STOP ranges (default 0)")
    p.add_argument("-j", "--jobs", type=int, default=1,
                   help="worker processes on this machine (loky backend; default 1)")
    p.add_argument("--backend", choices=BACKENDS, default="loky",
                   help="where tasks run: loky (worker processes on this machine), dask (a Dask "
                        "distributed cluster), or cupy / torch (this machine's NVIDIA GPU; the "
                        "spike and reuse experiments, drawn and measured on the device)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help=f"Dask scheduler address, e.g. tcp://host:8786, or 'local' for a "
                        f"LocalCluster (default: ${SCHEDULER_ENV})")
    p.add_argument("-o", "--output", default=None, metavar="PATH",
                   help="results file (default results/<experiment>.json)")
    p.add_argument("--max-memory", default=None, metavar="SIZE",
                   help="memory budget per machine, e.g. 64G (default: the memory available now)")
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None,
                      help="always show a progress bar")
    prog.add_argument("--no-progress", dest="progress", action="store_false",
                      help="never show a progress bar (default: only at a terminal)")
    p.add_argument("--version", action="version", version=f"twostep {__version__}")
    return p


def _dask_client(address):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("--backend dask needs dask.distributed: "
                          "pip install 'dask[distributed]'") from None
    if address == "local":
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                               dashboard_address=None)
        return Client(cluster), cluster
    return Client(address), None


def run(args) -> dict:
    """Run the sweep described by parsed ``args``; returns the written document's summary."""
    exp = get_experiment(args.experiment)
    params = parse_params(args.param)
    grid = parse_grid(args.grid)
    if args.sizes:
        grid = {"N": args.sizes, **grid}
    both = sorted(set(params) & set(grid))
    if both:
        raise ValueError(f"parameters {both} are given both by --param and --grid/-N")
    seeds = parse_seeds(args.seeds)
    if args.jobs < 1:
        raise ValueError(f"--jobs must be an integer >= 1, got {args.jobs}")
    max_memory = None if args.max_memory is None else parse_bytes(args.max_memory)

    keys = list(grid)
    from itertools import product
    tasks = [{**params, **dict(zip(keys, values))} for values in product(*grid.values())] or [params]
    full = [experiment_params(exp.name, t) for t in tasks]
    out = args.output or os.path.join("results", f"{exp.name}.json")
    folder = os.path.dirname(os.path.abspath(out))
    if args.output and not os.path.isdir(folder):
        # Only the default folder is created: a typo in -o should not make a new tree.
        raise ValueError(f"--output folder {folder} does not exist; create it first")
    if args.backend in DEVICES:
        return _run_on_device(args, exp, params, grid, tasks, seeds, out)
    if args.backend == "dask":
        # The tasks run on the cluster's workers: check one task against the budget given.
        need = check_memory(exp.name, full, 1, max_memory) if max_memory else None
    else:
        need = check_memory(exp.name, full, min(args.jobs, len(full) * len(seeds)), max_memory)

    func = partial(run_experiment, exp.name)
    func.__name__ = exp.name  # the progress bar's label
    start = time.perf_counter()
    if args.backend == "dask":
        import joblib
        address = args.scheduler or os.environ.get(SCHEDULER_ENV)
        if not address:
            raise ValueError(f"--backend dask needs --scheduler ADDRESS (or ${SCHEDULER_ENV}); "
                             "use --scheduler local for a LocalCluster on this machine")
        client, cluster = _dask_client(address)
        try:
            with joblib.parallel_config(backend="dask"):
                records = sweep(func, tasks, seeds, n_jobs=max(2, args.jobs),
                                progress=args.progress)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        records = sweep(func, tasks, seeds, n_jobs=args.jobs, progress=args.progress)
    elapsed = time.perf_counter() - start
    effective = {k: v for k, v in full[0].items() if k not in grid}
    write_results(out, exp.name, records, params=effective, grid=grid, seeds=seeds,
                  backend=args.backend, jobs=args.jobs, elapsed=elapsed,
                  estimated_bytes=need, command=getattr(args, "command", None))
    return {"path": out, "tasks": len(records), "elapsed": elapsed}


def _run_on_device(args, exp, params, grid, tasks, seeds, out) -> dict:
    """Every task and seed in turn on the GPU; a size that cannot fit stops the run before
    it allocates (MemoryError from twostep.scale.device)."""
    from .backend import get_backend

    on_device = [exp.device_params(experiment_params(exp.name, task)) for task in tasks]
    bk = get_backend(args.backend)
    records = []
    start = time.perf_counter()
    for task, full in zip(tasks, on_device):
        for seed in seeds:
            t0 = time.perf_counter()
            result = exp.device(bk, seed=seed, **full)
            bk.synchronize()
            records.append({**task, "seed": seed, "wall_s": time.perf_counter() - t0, **result})
            print(f"{exp.name} {task} seed {seed}: {records[-1]['wall_s']:.1f} s",
                  file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    effective = {k: v for k, v in experiment_params(exp.name, tasks[0]).items() if k not in grid}
    write_results(out, exp.name, records, params=effective, grid=grid, seeds=seeds,
                  backend=args.backend, jobs=1, elapsed=elapsed, device=bk.device_name(),
                  command=getattr(args, "command", None))
    return {"path": out, "tasks": len(records), "elapsed": elapsed}


def main(argv=None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command = " ".join(["python -m twostep"] + [shlex.quote(a) for a in argv])
    if args.list:
        print(_describe())
        return 0
    if not args.experiment:
        parser.error(f"give an experiment: one of {', '.join(EXPERIMENTS)} (or --list)")
    try:
        summary = run(args)
    except (ValueError, TypeError, MemoryError, ImportError) as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    print(f"wrote {summary['tasks']} record(s) to {summary['path']} "
          f"in {summary['elapsed']:.1f} s", file=sys.stderr)
    return 0
