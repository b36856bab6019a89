"""``python -m twostep``: run the book's experiments by name over sizes, seeds and grids, e.g.
``python -m twostep two_steps -N 8000 -g batch=reused,fresh --seeds 0:5 -j 2``; every argument
is checked before the first task, the file saved atomically after each, every error one line
(exit status 2). ``at-scale`` and ``verify`` are subcommands of their own modules.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import sys
import threading
import time
from functools import partial

from .._validation import parse_size
from .._version import __version__
from .registry import (EXPERIMENTS, check_memory, check_task, experiment_params,
                          get_experiment, run_task)
from .results import ResultsWriter, blas_threads, check_output_path
from ..analysis.sweep import RESERVED, run_tasks

PROG = "python -m twostep"
SCHEDULER_ENV = "TWOSTEP_DASK_SCHEDULER"
#: What a user's command can run into: each is one line and exit status 2.
USER_ERRORS = (ValueError, TypeError, MemoryError, ImportError, OSError)
BACKENDS = ("loky", "dask")
#: The most tasks (grid points times seeds) one command runs: a larger count is a typo.
MAX_TASKS = 1_000_000

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
    """``["batch=reused,fresh", "alpha2=[0.1,0.2]"]`` -> dict of lists."""
    grid = {}
    for item in items or []:
        key, text = _split(item, "--grid")
        value = _value(text)
        grid[key] = value if isinstance(value, list) else [
            _value(v.strip()) for v in text.split(",") if v.strip()]
        if not grid[key]:
            raise ValueError(f"--grid {key} must list at least one value, got {text!r}")
    return grid

def parse_seeds(items) -> list[int]:
    """``["0:5"]`` -> ``[0, 1, 2, 3, 4]``; ``["3", "7"]`` -> ``[3, 7]``, each in ``[0, 2**63)``."""
    ranges = []
    for part in (p.strip() for item in items or ["0"] for p in str(item).split(",") if p.strip()):
        try:
            lo, hi = map(int, part.split(":")) if ":" in part else (int(part), int(part) + 1)
        except ValueError:
            raise ValueError(f"--seeds must be integers >= 0 or ranges START:STOP, "
                             f"got {part!r}") from None
        if lo < 0 or hi > 2 ** 63:
            raise ValueError(f"--seeds must lie in [0, 2**63), got {part!r}")
        if hi <= lo:
            raise ValueError(f"--seeds range START:STOP needs STOP > START, got {part!r}")
        ranges.append((lo, hi))
    count = sum(hi - lo for lo, hi in ranges)
    if count > MAX_TASKS:
        raise ValueError(f"--seeds {' '.join(map(str, items))} gives {count} seeds; at most "
                         f"{MAX_TASKS} are accepted")
    seeds = [s for lo, hi in ranges for s in range(lo, hi)]
    if not seeds:
        raise ValueError(f"--seeds must give at least one integer >= 0, got {items!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds lists a seed twice: {items!r}")
    return seeds

def _describe() -> str:
    lines = []
    for name, exp in EXPERIMENTS.items():
        lines.append(f"  {name:<11} {exp.summary}")
        params = ", ".join(f"{k}={json.dumps(v)}" for k, v in exp.parameters().items())
        lines.append(f"  {'':<11} parameters: {params}")
    return "\n".join(lines)

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Run an experiment of the book 'Two steps of gradient descent' over sizes, "
                    "seeds and parameter grids, and write the results (with the parameters "
                    "and the package version) to a JSON file that twostep.read_results reads.",
        epilog="experiments (every parameter with its default; -p and -g accept these keys):\n"
               + _describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", nargs="?", help=f"one of: {', '.join(EXPERIMENTS)}; or at-scale "
                   f"(the measurements at widths beyond the build: at-scale --help), or verify "
                   f"(a rerun of a page against the published numbers: verify --help)")
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
                   help="where tasks run: loky (worker processes on this machine) or dask (a "
                        "Dask distributed cluster)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help=f"Dask scheduler address, e.g. tcp://host:8786, or 'local' for a "
                        f"LocalCluster (default: ${SCHEDULER_ENV})")
    p.add_argument("-o", "--output", default=None, metavar="PATH",
                   help="results file (default results/<experiment>.json)")
    p.add_argument("--resume", action="store_true",
                   help="continue the output file of an interrupted run of the same command "
                        "(same experiment, parameters and package version): its records are "
                        "kept and only the missing tasks run")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing output file (without it, an existing file is "
                        "refused)")
    p.add_argument("--max-memory", default=None, metavar="SIZE",
                   help="memory budget per machine, e.g. 64G (default: the memory available now)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="always (or never) show a progress bar (default: only at a terminal)")
    p.add_argument("--version", action="version", version=f"twostep {__version__}")
    return p

def _on_dask(address) -> contextlib.ExitStack:
    """A context in which joblib runs on the Dask cluster at ``address`` (or ``"local"``)."""
    import joblib
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("--backend dask needs dask.distributed: "
                          "pip install 'dask[distributed]'") from None
    stack = contextlib.ExitStack()
    if address == "local":
        address = stack.enter_context(LocalCluster(n_workers=2, threads_per_worker=1,
                                                   processes=False, dashboard_address=None))
    stack.enter_context(Client(address))
    stack.enter_context(joblib.parallel_config(backend="dask"))
    return stack

def _merged(old: dict, new: dict) -> dict:
    # The grid of a resumed file: its values, then this run's new ones, per key.
    out = {k: list(v) for k, v in old.items()}
    for k, values in new.items():
        out[k] = out.get(k, []) + [v for v in values if v not in out.get(k, [])]
    return out

def _worker_threads(jobs: int) -> dict | None:
    # joblib gives each loky worker cpu_count // jobs BLAS threads: ask one.
    if jobs == 1:
        return None
    from joblib import delayed
    from ..analysis.sweep import worker_pool
    return worker_pool(jobs)(delayed(blas_threads)() for _ in range(1))[0]

def plan(args):
    """Everything a run needs, checked before any task."""
    exp = get_experiment(args.experiment)
    params = parse_params(args.param)
    grid = parse_grid(args.grid)
    if args.sizes:
        if "N" in grid:
            raise ValueError("N is given by both -N and --grid N=...; give it once")
        grid = {"N": args.sizes, **grid}
    for key in RESERVED:
        if key in params or key in grid:
            raise ValueError(f"{key} is not a parameter: seeds are given with -s/--seeds")
    both = sorted(set(params) & set(grid))
    if both:
        raise ValueError(f"parameters {both} are given both by --param and --grid/-N")
    for key, values in grid.items():
        if len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            raise ValueError(f"--grid {key} lists a value twice: {values}")
    seeds = parse_seeds(args.seeds)
    if args.jobs < 1:
        raise ValueError(f"--jobs must be an integer >= 1, got {args.jobs}")
    max_memory = None if args.max_memory is None else parse_size(args.max_memory, "--max-memory")
    from itertools import product
    from math import prod
    count = prod(len(v) for v in grid.values()) * len(seeds)
    if count > MAX_TASKS:
        raise ValueError(f"the grid and seeds give {count} tasks; at most {MAX_TASKS} are accepted")
    keys = list(grid)
    tasks = [{**params, **dict(zip(keys, values))} for values in product(*grid.values())] or [params]
    full = [experiment_params(exp.name, t) for t in tasks]
    for task, p in zip(tasks, full):
        check_task(exp.name, p, given=task)
    if args.backend == "dask":
        # The tasks run on the cluster's workers: one task against the budget given.
        need = check_memory(exp.name, full, 1, max_memory, here=False) if max_memory else None
        if not (args.scheduler or os.environ.get(SCHEDULER_ENV)):
            raise ValueError(f"--backend dask needs --scheduler ADDRESS (or ${SCHEDULER_ENV}); "
                             "use --scheduler local for a LocalCluster on this machine")
    else:
        need = check_memory(exp.name, full, min(args.jobs, len(full) * len(seeds)), max_memory)
    out = args.output or os.path.join("results", f"{exp.name}.json")
    if not args.output:
        # Only the default folder is created: a typo in -o makes no new tree.
        os.makedirs(os.path.dirname(out), exist_ok=True)
    check_output_path(out)
    effective = {k: v for k, v in full[0].items() if k not in grid}
    return exp, params, grid, tasks, seeds, out, effective, need

def run(args) -> dict:
    """Run the sweep of ``args``, saving the file after every task; returns a summary."""
    exp, params, grid, tasks, seeds, out, effective, need = plan(args)
    writer = args.writer = ResultsWriter(
        out, exp.name, effective, key=list(grid) + ["seed"], resume=args.resume,
        force=args.force, identity={"backend": args.backend}, grid_keys=list(grid),
        command=args.command)
    if writer.note:
        print(f"{PROG}: note: {writer.note}", file=sys.stderr)
    old = writer.previous
    done = writer.done()
    remaining = [(t, s) for t in tasks for s in seeds if writer.task({**t, "seed": s}) not in done]
    grid_all = _merged(old.get("grid", {}), grid)
    seeds_all = sorted(set(old.get("seeds", [])) | set(seeds))
    # Records in the order of an uninterrupted run.
    from itertools import product
    index = {writer.task({**dict(zip(grid_all, values)), "seed": s}): i
             for i, (values, s) in enumerate(product(product(*grid_all.values()), seeds_all))}
    start = time.perf_counter()
    env = ({"worker_blas_threads": _worker_threads(min(args.jobs, len(remaining)))}
           if args.backend == "loky" and remaining else {})

    def save(complete):
        writer.save(grid=grid_all, seeds=seeds_all,
                    order=lambda r: (0, index[writer.task(r)]) if writer.task(r) in index else (1, 0),
                    backend=args.backend, jobs=args.jobs,
                    elapsed=writer.elapsed + time.perf_counter() - start, estimated_bytes=need,
                    command=args.command, commands=writer.commands, complete=complete,
                    environment=env)

    def checkpoint(record):
        writer.add(record)
        save(False)

    task = partial(run_task, exp.name)
    task.__name__ = exp.name  # the progress bar's label
    dask, address = args.backend == "dask", args.scheduler or os.environ.get(SCHEDULER_ENV)
    with _on_dask(address) if dask else contextlib.nullcontext():
        run_tasks(task, remaining, n_jobs=max(2, args.jobs) if dask else args.jobs,
                  progress=args.progress, on_record=checkpoint)
    if writer.records:
        save(True)
    return {"path": out, "tasks": len(remaining), "records": len(writer.records),
            "elapsed": time.perf_counter() - start}

#: Options whose value may be negative (reported as out of range, not as argparse's error).
_VALUED = ("-s", "--seeds", "--max-memory", "-j", "--jobs", "-N", "--N")

def _join_negative(argv: list[str]) -> list[str]:
    out = []
    for a in argv:
        if out and out[-1] in _VALUED and a[:1] == "-" and a[1:2].isdigit():
            out[-1] += "=" + a
        else:
            out.append(a)
    return out

def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["at-scale"]:
        from .at_scale import main as at_scale
        return at_scale(argv[1:])
    if argv[:1] == ["verify"]:
        from .verify import main as verify
        return verify(argv[1:])
    parser = build_parser()
    args = parser.parse_args(_join_negative(argv))
    args.command = " ".join([PROG] + [shlex.quote(a) for a in argv])
    if args.list:
        print(_describe())
        return 0
    if not args.experiment:
        parser.error(f"give an experiment: one of {', '.join(EXPERIMENTS)} (or --list)")
    with stopped_by_signals():
        try:
            summary = run(args)
        except KeyboardInterrupt:
            writer = getattr(args, "writer", None)
            if writer is None or not writer.saved:
                parser.exit(130, f"{PROG}: interrupted before a record was saved"
                                 f"{'' if writer is None else ' in ' + writer.path}\n")
            parser.exit(130, f"{PROG}: interrupted: {writer.saved} record(s) saved in "
                             f"{writer.path}; the same command with --resume runs the rest\n")
        except USER_ERRORS as err:
            parser.exit(2, f"{PROG}: error: {err}\n")
        finally:
            if getattr(args, "writer", None) is not None:
                args.writer.close()
    print(f"wrote {summary['tasks']} new record(s), {summary['records']} in all, to "
          f"{summary['path']} in {summary['elapsed']:.1f} s", file=sys.stderr)
    return 0

@contextlib.contextmanager
def stopped_by_signals():
    """SIGTERM handled as Ctrl-C while the block runs."""
    previous = (signal.signal(signal.SIGTERM, signal.default_int_handler)
                if threading.current_thread() is threading.main_thread() else None)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
