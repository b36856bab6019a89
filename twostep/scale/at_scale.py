r"""``python -m twostep at-scale``: the book's measurements at widths beyond the build.

The commands that wrote ``results/at_scale/`` (from a checkout of the repository; with the
wheel installed, ``python -m twostep at-scale`` runs the same from any folder)::

    python -m twostep at-scale --backend cupy --out results/at_scale          # on a GPU
    OPENBLAS_NUM_THREADS=2 python -m twostep at-scale --backend numpy \
        --widths 1000 2000 4000 8000 --seeds spike=1000:3,2000:3,4000:3,8000:2 \
        --seeds reuse=1000:10,2000:10,4000:10,8000:4 \
        --seeds reuse_he2=1000:10,2000:10,4000:10,8000:2 --only spike --only reuse \
        --only reuse_he2 --out results/at_scale --force
    OPENBLAS_NUM_THREADS=2 python -m twostep at-scale --backend numpy --only spike \
        --widths 16000 --seeds spike=16000:2 --out results/at_scale --resume
    OPENBLAS_NUM_THREADS=2 python -m twostep at-scale --backend numpy --only reuse \
        --widths 16000 --seeds reuse=16000:3 --out results/at_scale --resume
    OPENBLAS_NUM_THREADS=2 python -m twostep at-scale --backend numpy --only reuse \
        --widths 24000 --seeds reuse=24000:3 --out results/at_scale --resume    # on the CPU
    OPENBLAS_NUM_THREADS=2 python -m twostep at-scale --backend numpy --only count \
        --widths 1000 2000 4000 8000 16000 \
        --seeds count=1000:10,2000:10,4000:6,8000:3,16000:3 --out results/at_scale
    python -m twostep at-scale --backend numpy --widths 40 --seeds spike=40:1 \
        --seeds reuse=40:1 --only spike --only reuse --force         # a check, in artifacts/

(``python tools/at_scale.py`` is the same program.) Files: ``spike.json``, ``reuse.json``,
``reuse_he2.json``, ``count.json`` and ``count_confirm.json`` (the registered confirmatory
count: widths, seeds and parameters from the committed ``results/registry.json``).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from ..analysis import confirmatory
from .backend import get_backend, keep_freed_memory
from .cli import PROG, USER_ERRORS, stopped_by_signals
from .device import count_on, reuse_on, spike_on
from .results import ResultsWriter, read_results

def checkout() -> Path:
    """The repository holding this package, else the current folder (a wheel)."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / ".git").exists() else Path.cwd()

ROOT = checkout()
#: Where a run writes unless told (git-ignored); the committed files need ``--out``.
OUT = ROOT / "artifacts" / "at_scale"
KEY = ("N", "batch", "seed")
WIDTHS = (1000, 2000, 4000, 8000, 16000, 32000, 45000)
MIN_WIDTH, MAX_SEEDS = 8, 10_000
DTYPE = "float32"
#: The phase-diagram grid of the chapter *Two steps* (no point on a boundary).
ALPHAS = (0.05, 0.14, 0.23, 0.32, 0.41)
GRID = [[a1, a2] for a1 in ALPHAS for a2 in ALPHAS]
#: The count test's settings, fixed before any count was measured.
COUNT_SETTINGS = confirmatory.SETTINGS
REGISTRY = ROOT / confirmatory.REGISTRY_PATH
#: name -> (function, batches, fixed keywords): the chapters' parameters.
EXPERIMENTS = {
    "spike": (spike_on, ("fresh", "reused"),
              dict(c1=0.2, alpha1=0.4, c2=0.2, alpha2=0.25, activation="poly4", target="he1",
                   grid=GRID)),
    "reuse": (reuse_on, ("reused", "fresh"),
              dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25, activation="poly4", target="odd",
                   term=2, top=4)),
    # The even-link control of the reuse test (no spike aligns).
    "reuse_he2": (reuse_on, ("reused", "fresh"),
                  dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25, activation="poly4", target="he2",
                       term=2, top=4)),
    "count": (count_on, ("fresh", "reused"),
              dict(activation="poly4", target="he1", c=0.2, ref=[0.4, 0.25],
                   settings=COUNT_SETTINGS, kappas=[0.2], extra_kappas=[0.1, 0.5],
                   extra_max_N=2000)),
    "count_confirm": (count_on, ("fresh", "reused"), confirmatory.PARAMS),
}
#: Seeds per width on a GPU: name -> {N: count} (from that width up).
SEEDS = {"spike": {1000: 3, 16000: 3, 32000: 1},
         "reuse": {1000: 10, 16000: 10, 32000: 2},
         "reuse_he2": {1000: 10, 16000: 3, 32000: 1},
         "count": {1000: 3}}

def git(*args) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=True).stdout.strip()

def git_state() -> tuple:
    """``(HEAD's hash, whether tracked files differ)``, ``(None, None)`` outside a checkout."""
    try:
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return None, None

def registered_plan() -> dict:
    """``{N: [seeds]}`` of the confirmatory run, from the registry committed in a clean checkout."""
    if not REGISTRY.is_file():
        raise ValueError(f"count_confirm needs the registry {confirmatory.REGISTRY_PATH}")
    commit, dirty = git_state()
    if commit is None or dirty:
        raise ValueError("count_confirm runs only from a git checkout whose tracked files are "
                         "committed (its commit is recorded in the file)")
    try:
        git("ls-files", "--error-unmatch", confirmatory.REGISTRY_PATH)
    except (OSError, subprocess.CalledProcessError):
        raise ValueError(f"count_confirm needs {confirmatory.REGISTRY_PATH} committed first") from None
    reg = confirmatory.read_registry(REGISTRY)
    if reg["measurement"]["params"] != confirmatory.PARAMS:
        raise ValueError("the registry's parameters differ from confirmatory.PARAMS")
    return {int(N): list(seeds) for N, seeds in reg["draws"].items()}

def seeds_for(name: str, N: int, table: dict | None = None) -> list[int]:
    """Seeds ``0 .. count-1`` of ``name`` at width ``N``, by ``table`` (default ``SEEDS[name]``);
    ``count_confirm``'s from the registry."""
    if name == "count_confirm":
        plan = registered_plan()
        if N not in plan:
            raise ValueError(f"the registry plans no draw of count_confirm at N = {N} "
                             f"(widths {sorted(plan)})")
        return plan[N]
    table = SEEDS[name] if table is None else table
    below = [w for w in table if w <= N]
    if not below:
        raise ValueError(f"no seed count for {name} at N = {N} (listed: {sorted(table)})")
    return list(range(table[max(below)]))

def parse_seeds(items) -> dict:
    """``["spike=1000:3,8000:1", ...]`` -> ``{"spike": {1000: 3, 8000: 1}, ...}``."""
    out = {}
    for item in items or ():
        name, _, spec = item.partition("=")
        if name not in EXPERIMENTS or not spec:
            raise ValueError(f"--seeds wants NAME=N:COUNT,... with NAME in {sorted(EXPERIMENTS)}, "
                             f"got {item!r}")
        if name in out:
            raise ValueError(f"--seeds gives {name} twice; list its widths in one item")
        table = out[name] = {}
        for part in spec.split(","):
            N, _, count = part.partition(":")
            try:
                N, count = int(N), int(count)
            except ValueError:
                raise ValueError(f"--seeds {item}: {part!r} is not N:COUNT (two integers)") from None
            if N < MIN_WIDTH or N in table or not 1 <= count <= MAX_SEEDS:
                raise ValueError(f"--seeds {item}: {part!r} must have a width N >= {MIN_WIDTH} "
                                 f"not listed before and a COUNT in [1, {MAX_SEEDS}]")
            table[N] = count
    return out

def host() -> dict:
    """Where the host part ran: cores, BLAS threads asked for, niceness, processor."""
    return {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "nice": os.nice(0)}

def peak_rss_gb() -> float:
    """The process's peak resident memory so far, in GB (0.0 where unknown)."""
    try:
        import resource
    except ImportError:        # not on Windows
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2 ** (30 if sys.platform == "darwin" else 20)   # bytes on macOS, KiB on Linux

def measure(name: str, bk, N: int, batch: str, seed: int, dtype: str = DTYPE) -> dict:
    """The record of ``name`` for ``(N, batch, seed)``, with its wall time and peak memory."""
    func, _, extra = EXPERIMENTS[name]
    t0 = time.perf_counter()
    out = func(bk, N=N, batch=batch, seed=seed, dtype=dtype, **extra)
    bk.synchronize()
    return {"N": N, "batch": batch, "seed": seed, "wall_s": time.perf_counter() - t0,
            "peak_rss_gb": peak_rss_gb(), **out}

def provenance(name: str, writer: ResultsWriter, widths, seeds: dict, bk, complete: bool) -> dict:
    """The file-level fields of ``name``'s file: grid, seeds, plans, commands, where it ran."""
    func, batches, extra = EXPERIMENTS[name]
    records, old = writer.records, writer.previous
    commit, dirty = git_state()
    done = sorted({r["N"] for r in records})
    planned = {str(k): v for k, v in (old.get("seeds_planned") or {}).items()}
    planned.update({str(N): seeds_for(name, N, seeds.get(name)) for N in widths})
    return dict(grid={"N": done, "batch": list(batches)},
                seeds=sorted({r["seed"] for r in records}),
                seeds_per_width={str(N): sorted({r["seed"] for r in records if r["N"] == N})
                                 for N in done},
                seeds_planned=dict(sorted(planned.items(), key=lambda kv: int(kv[0]))),
                function=f"{func.__module__}.{func.__name__}", dtype=DTYPE,
                backend=bk.name, device=bk.device_name(), host=host(),
                command=writer.commands[-1], commands=writer.commands, elapsed=writer.elapsed,
                complete=complete,
                widths_planned=sorted(set(old.get("widths_planned", [])) | set(widths)),
                commit=commit, dirty=dirty,
                registry_sha256=(confirmatory.file_sha256(REGISTRY) if REGISTRY.is_file()
                                 else None))

def register() -> str:
    """Write the confirmatory run's registry from the exploratory ``count.json``."""
    from datetime import datetime, timezone

    source = ROOT / confirmatory.EXPLORATORY_PATH
    doc = confirmatory.build_registry(
        read_results(source), confirmatory.file_sha256(source),
        datetime.now(timezone.utc).isoformat(timespec="seconds"))
    confirmatory.write_registry(doc, REGISTRY)
    return f"wrote {REGISTRY.relative_to(ROOT)} ({confirmatory.file_sha256(REGISTRY)})"

def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(  # the commands that wrote results/at_scale/ in the help
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n(``python tools")[0].split(": ", 1)[1].replace("``", ""))
    p.add_argument("--backend", default="auto", choices=("auto", "cupy", "torch", "numpy"))
    p.add_argument("--max-N", type=int, default=WIDTHS[-1], help="largest width to run")
    p.add_argument("--widths", type=int, nargs="+", default=None, metavar="N",
                   help="run these widths instead of the standard ones (e.g. a quick check)")
    p.add_argument("--seeds", action="append", metavar="NAME=N:COUNT,...",
                   help="seed counts per width for one file (repeatable), e.g. reuse=1000:10,8000:2")
    p.add_argument("--only", choices=sorted(EXPERIMENTS), action="append",
                   help="write only this file (repeatable, in the order given: at each width "
                        "the files run in this order; default all but count_confirm)")
    p.add_argument("--out", type=Path, default=OUT,
                   help="folder for the files (default artifacts/at_scale, git-ignored; "
                        "the committed files: --out results/at_scale)")
    p.add_argument("--resume", action="store_true",
                   help="continue the files in --out: keep all their records and compute only "
                        "the tasks (N, batch, seed) they lack; a file of other parameters, "
                        "dtype, backend or version is refused")
    p.add_argument("--register", action="store_true",
                   help="write the confirmatory run's registry (results/registry.json) from the "
                        "exploratory count.json and exit; refused if it exists")
    p.add_argument("--force", action="store_true",
                   help="overwrite existing files in --out (without it, or --resume, they are "
                        "refused)")
    return p

def plan(args) -> tuple:
    """``(names, widths, seeds, backend)``, every task checked before any work."""
    if args.resume and args.force:
        raise ValueError("--resume keeps a file's records and --force overwrites them: give one")
    seeds = parse_seeds(args.seeds)
    names = args.only or [n for n in EXPERIMENTS if n != "count_confirm"]
    if len(set(names)) != len(names):
        raise ValueError(f"--only lists a file twice: {names}")
    if "count_confirm" in seeds:
        raise ValueError("count_confirm takes its seeds from the registry, not from --seeds")
    if args.widths is None:
        args.widths = [N for N in (sorted(registered_plan()) if names == ["count_confirm"]
                                   else WIDTHS) if N <= args.max_N]
    widths = args.widths
    if not widths:
        raise ValueError(f"no width to run: --max-N {args.max_N} is below the smallest width")
    if min(widths) < MIN_WIDTH or len(set(widths)) != len(widths):
        raise ValueError(f"--widths must be integers >= {MIN_WIDTH} (the spike experiment's "
                         f"smallest N), each once, got {' '.join(map(str, widths))}")
    widths = sorted(widths)
    table = {name: {N: seeds_for(name, N, seeds.get(name)) for N in widths} for name in names}
    bk = get_backend(args.backend)
    for name in names:
        func, batches, extra = EXPERIMENTS[name]
        for N in widths:
            for batch in batches:
                func(bk, N=N, batch=batch, seed=max(table[name][N]), dtype=DTYPE,
                     check_only=True, **extra)
    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out} is a file; give a folder (the files are named "
                         f"after the experiments)")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:   # a read-only or virtual file system
        raise ValueError(f"cannot create the output folder {args.out} "
                         f"({err.strerror or err})") from None
    return names, widths, seeds, bk

def run(args, writers: dict) -> None:
    """Run the plan of ``args``, every file's writer in ``writers`` before the first task."""
    names, widths, seeds, bk = plan(args)
    if bk.name == "numpy":
        keep_freed_memory()   # each task's arrays on the last task's pages: no page faults
    for name in names:
        func, _, extra = EXPERIMENTS[name]
        writers[name] = w = ResultsWriter(
            args.out / f"{name}.json", name, {**extra, "dtype": DTYPE}, key=KEY,
            resume=args.resume, force=args.force, grid_keys=("N", "batch"), command=args.command,
            identity={"backend": bk.name, "dtype": DTYPE,
                      "function": f"{func.__module__}.{func.__name__}",
                      **({"registry_sha256": confirmatory.file_sha256(REGISTRY)}
                         if name == "count_confirm" else {})})
        if w.note:
            print(f"{args.prog}: note: {w.note}", file=sys.stderr)

    def save(name, complete):
        order = EXPERIMENTS[name][1]
        w = writers[name]
        w.save(order=lambda r: (r["N"], r["seed"], order.index(r["batch"])),
               **provenance(name, w, widths, seeds, bk, complete))

    for N in widths:
        for name in names:
            have = writers[name].done()
            for seed in seeds_for(name, N, seeds.get(name)):
                for batch in EXPERIMENTS[name][1]:
                    if writers[name].task({"N": N, "batch": batch, "seed": seed}) in have:
                        continue
                    start = time.perf_counter()
                    rec = measure(name, bk, N, batch, seed)
                    writers[name].add(rec)
                    writers[name].elapsed += time.perf_counter() - start
                    print(f"{name} {batch} N={N} seed={seed}: {rec['wall_s']:.1f} s", flush=True)
                    save(name, complete=False)   # after every task: a stopped run loses one
    for name in names:
        if writers[name].records:
            save(name, complete=True)

def main(argv=None, prog: str = f"{PROG} at-scale") -> int:
    """The command line (``prog`` names it in messages and in the files)."""
    p = build_parser(prog)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = p.parse_args(argv)
    args.prog, args.command = prog, " ".join([prog] + [shlex.quote(a) for a in argv])
    writers: dict = {}
    with stopped_by_signals():
        try:
            if args.register:
                print(register())
                return 0
            run(args, writers)
        except KeyboardInterrupt:
            saved = ", ".join(f"{w.saved} record(s) in {w.path}" if w.saved
                              else f"none yet for {w.path}" for w in writers.values())
            print(f"{prog}: interrupted: {saved or 'nothing saved'}; the same command with "
                  f"--resume runs the rest", file=sys.stderr)
            return 130
        except USER_ERRORS as err:
            p.exit(2, f"{prog}: error: {err}\n")
        finally:
            for w in writers.values():
                w.close()
    return 0
