#!/usr/bin/env python3
"""Regenerate results/at_scale/: the book's measurements at widths beyond the build.

    .venv/bin/python tools/at_scale.py --backend cupy --out results/at_scale   # on a GPU
    OPENBLAS_NUM_THREADS=2 .venv/bin/python tools/at_scale.py --backend numpy \\
        --widths 1000 2000 4000 8000 --seeds spike=1000:3,2000:3,4000:3,8000:2 \\
        --seeds reuse=1000:10,2000:10,4000:10,8000:4 \\
        --seeds reuse_he2=1000:10,2000:10,4000:10,8000:2 --out results/at_scale --force
    OPENBLAS_NUM_THREADS=2 .venv/bin/python tools/at_scale.py --backend numpy --only spike \\
        --widths 16000 --seeds spike=16000:2 --out results/at_scale --resume
    OPENBLAS_NUM_THREADS=2 .venv/bin/python tools/at_scale.py --backend numpy --only reuse \\
        --widths 16000 --seeds reuse=16000:3 --out results/at_scale --resume
    OPENBLAS_NUM_THREADS=2 .venv/bin/python tools/at_scale.py --backend numpy --only reuse \\
        --widths 24000 --seeds reuse=24000:3 --out results/at_scale --resume  # on the CPU
    OPENBLAS_NUM_THREADS=2 .venv/bin/python tools/at_scale.py --backend numpy --only count \\
        --widths 1000 2000 4000 8000 16000 \\
        --seeds count=1000:10,2000:10,4000:6,8000:3,16000:3 --out results/at_scale
    .venv/bin/python tools/at_scale.py --backend numpy --widths 40 \\
        --seeds spike=40:1 --seeds reuse=40:1 --force                 # a check, in artifacts/

Four files, each written by twostep.scale.results.write_results with the command, the
backend, the device's name, the library versions, the date, and the wall time and peak memory
of every task:

* ``spike.json``: twostep.scale.device.spike_on (sigma_4, He_1 target, c = 0.2, reference
  step sizes (0.4, 0.25), float32, N = n = d), fresh and reused batches: per order k the size
  of T_k, of its predicted spike and of the remainder, the cosines of T_k's top singular
  vectors with a^(k+1), u_k and beta*, and W2's raw outlier count over the 25-point grid of
  the phase diagram of the chapter *Two steps* (from the rescaling identity).
* ``reuse.json``: twostep.scale.device.reuse_on with the odd bounded target (information
  exponent 3) at the step sizes of the chapter *Reuse* (c = 0.5, (0.4, 0.25)): the overlap of
  T_2's top right singular vector with beta*, of the reuse-aware direction, of W2's top
  vectors, fresh and reused. The same seed draws the same beta*, W0, a and X1 for both batches
  (twostep.model.steps.draw_problem; twostep.scale.device.draw_problem_on on a device), so
  reused-minus-fresh differences are paired.
* ``count.json``: twostep.scale.device.count_on (sigma_4, He_1 target), fresh and reused: W2's
  outliers against its own bulk edge, that edge, and the singular values of the predicted spike
  sum at the twelve settings of COUNT_SETTINGS (kappa = 0.2; also 0.1 and 0.5 up to N = 2000),
  each rebuilt from one draw by the rescaling identity (the chapter *Two steps*, "The count
  where it can be seen"). Exploratory: seeds 0-9.
* ``count_confirm.json``: the registered confirmatory run of the same measurement
  (twostep.analysis.confirmatory): its widths, seeds and parameters come from the committed
  registry ``results/registry.json``, never from the command line. It runs only from a clean
  checkout in which the registry is committed:

      OPENBLAS_NUM_THREADS=2 .venv/bin/python tools/at_scale.py --backend numpy \\
          --only count_confirm --out results/at_scale

Every file records the commit it ran at (``commit``, ``dirty``: whether tracked files differed
from it) and the SHA-256 of the registry present then (``registry_sha256``), both read here,
never typed.

The files go to ``artifacts/at_scale/`` (git-ignored) unless ``--out results/at_scale`` asks
for the committed folder. An existing file is refused unless ``--resume`` (continue it) or
``--force`` (overwrite it) is given. ``--resume`` refuses a file of another experiment,
parameters, dtype, backend, schema or package version, naming the fields that differ, and
keeps every record of the file (also those at widths or seeds this run does not plan); it
computes only the tasks the file lacks.

The widths run in increasing order, each width for both files (every seed, both batches).
A file is written when its first task ends and rewritten atomically after every task
(twostep.scale.results.ResultsWriter), so a run killed at any moment loses at most the task
in progress, every file on disk reads, and ``--resume`` continues it (``complete`` in the
file says whether the run finished; a file not yet written starts afresh). Ctrl-C or SIGTERM
stops with one line saying what is saved. tests/unit/scale/test_crash_safety.py kills a run right
before and right after each of its writes and resumes it to the records of an
uninterrupted run.
The seeds per width (``--seeds NAME=N:COUNT,...``; default SEEDS) are 0 .. COUNT-1. The
smallest width is recomputed on the CPU by tests/unit/scale/test_at_scale.py, so a change of the code
that no longer reproduces these files fails CI. Stdlib + twostep only.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from twostep.analysis import confirmatory  # noqa: E402
from twostep.scale.backend import get_backend, keep_freed_memory  # noqa: E402
from twostep.scale.device import count_on, reuse_on, spike_on  # noqa: E402
from twostep.scale.results import ResultsWriter  # noqa: E402

#: Where a run writes unless told: a scratch folder (git-ignored). The committed files are
#: written only by an explicit ``--out results/at_scale``.
OUT = ROOT / "artifacts" / "at_scale"
COMMITTED = ROOT / "results" / "at_scale"
KEY = ("N", "batch", "seed")
WIDTHS = (1000, 2000, 4000, 8000, 16000, 32000, 45000)
DTYPE = "float32"
#: The phase-diagram grid of the chapter *Two steps* (ALPHAS on both axes, no point on a boundary).
ALPHAS = (0.05, 0.14, 0.23, 0.32, 0.41)
GRID = [[a1, a2] for a1 in ALPHAS for a2 in ALPHAS]
#: The settings of the count test (chapter *Two steps*, "The count where it can be seen"):
#: for each Lambda = 0..3 the three points of the chapter's map (twostep.analysis.plane over the
#: scaling study's fresh draws, N = 500..4000, 3 seeds, kappa = 0.2) ranked best, fixed on
#: 2026-12-03 before any count was measured. Lambda >= 1: the smallest predicted width N* at
#: which the (Lambda+1)-th singular value of the spike sum clears W0's edge; Lambda = 0: the
#: second never clearing, ties broken by e_1 nearest 0 (the boundary alpha1 + alpha2 = 1/2), then
#: by grid order (twostep.analysis.plane.rank_points).
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
    # The even-link control of the reuse test: the same runs with He_2 (no spike aligns).
    "reuse_he2": (reuse_on, ("reused", "fresh"),
                  dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25, activation="poly4", target="he2",
                       term=2, top=4)),
    # W2's own outliers at the settings above (kappa = 0.2; also 0.1 and 0.5 up to N = 2000).
    "count": (count_on, ("fresh", "reused"),
              dict(activation="poly4", target="he1", c=0.2, ref=[0.4, 0.25],
                   settings=COUNT_SETTINGS, kappas=[0.2], extra_kappas=[0.1, 0.5],
                   extra_max_N=2000)),
    # The registered confirmatory run: parameters, widths and seeds from the registry.
    "count_confirm": (count_on, ("fresh", "reused"), confirmatory.PARAMS),
}
#: Seeds per width on a GPU: name -> {N: count}; widths not listed get the last count below them.
SEEDS = {"spike": {1000: 3, 16000: 3, 32000: 1},
         "reuse": {1000: 10, 16000: 10, 32000: 2},
         "reuse_he2": {1000: 10, 16000: 3, 32000: 1},
         "count": {1000: 3}}


def git_state() -> tuple:
    """``(commit, dirty)`` of the checkout this runs from: HEAD's hash and whether tracked
    files differ from it (``(None, None)`` outside a git checkout)."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return commit, dirty


def registered_plan() -> dict:
    """``{N: [seeds]}`` of the confirmatory run, from the committed registry; refuses a run
    that could not show which registry and code it followed."""
    import subprocess

    if not REGISTRY.is_file():
        raise ValueError(f"count_confirm needs the registry {confirmatory.REGISTRY_PATH}")
    commit, dirty = git_state()
    if commit is None or dirty:
        raise ValueError("count_confirm runs only from a git checkout whose tracked files are "
                         "committed (its commit is recorded in the file)")
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch",
                              confirmatory.REGISTRY_PATH], capture_output=True).returncode == 0
    if not tracked:
        raise ValueError(f"count_confirm needs {confirmatory.REGISTRY_PATH} committed first")
    reg = confirmatory.read_registry(REGISTRY)
    if reg["measurement"]["params"] != confirmatory.PARAMS:
        raise ValueError("the registry's parameters differ from confirmatory.PARAMS")
    return {int(N): list(seeds) for N, seeds in reg["draws"].items()}


def seeds_for(name: str, N: int, table: dict | None = None) -> list[int]:
    """Seeds ``0 .. count-1`` of experiment ``name`` at width ``N``: the count of the largest
    listed width ``<= N`` in ``table`` (default ``SEEDS[name]``); for ``count_confirm``, the
    registry's seeds of that width."""
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
            raise SystemExit(f"--seeds wants NAME=N:COUNT,... with NAME in {sorted(EXPERIMENTS)}, got {item!r}")
        table = {}
        for part in spec.split(","):
            N, _, count = part.partition(":")
            try:
                table[int(N)] = int(count)
            except ValueError:
                raise SystemExit(f"--seeds: {part!r} is not N:COUNT") from None
            if table[int(N)] < 1:
                raise SystemExit(f"--seeds: a count must be at least 1, got {part!r}")
        out[name] = table
    return out


def host() -> dict:
    """Where the host part ran: cores, BLAS threads asked for, niceness, processor."""
    return {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "nice": os.nice(0)}


def peak_rss_gb() -> float:
    """The process's peak resident memory so far, in GB (0.0 where the OS does not say)."""
    try:
        import resource
    except ImportError:        # not on Windows
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2 ** (30 if sys.platform == "darwin" else 20)   # bytes on macOS, KiB on Linux


def measure(name: str, bk, N: int, batch: str, seed: int, dtype: str = DTYPE) -> dict:
    """One record of experiment ``name``: what the file stores for (N, batch, seed), with its
    wall time and the process's peak resident memory up to its end (the widths run in increasing
    order, so at the last task of a width that is the width's peak). tests/unit/scale/test_at_scale.py
    recomputes the committed records through this function."""
    func, _, extra = EXPERIMENTS[name]
    t0 = time.perf_counter()
    out = func(bk, N=N, batch=batch, seed=seed, dtype=dtype, **extra)
    bk.synchronize()
    return {"N": N, "batch": batch, "seed": seed, "wall_s": time.perf_counter() - t0,
            "peak_rss_gb": peak_rss_gb(), **out}


def provenance(name: str, writer: ResultsWriter, widths, seeds: dict, bk, commands: list,
               dtype: str, elapsed: float, complete: bool) -> dict:
    """The file-level fields of ``name``'s file: the grid and seeds of all its records, the
    seeds and widths planned (by every run that wrote it), the command(s), where it ran."""
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
                function=f"{func.__module__}.{func.__name__}", dtype=dtype,
                backend=bk.name, device=bk.device_name(), host=host(), command=commands[-1],
                commands=commands, elapsed=elapsed, complete=complete,
                widths_planned=sorted(set(old.get("widths_planned", [])) | set(widths)),
                commit=commit, dirty=dirty,
                registry_sha256=(confirmatory.file_sha256(REGISTRY) if REGISTRY.is_file()
                                 else None))


def register(p) -> int:
    """Write the registry of the confirmatory run (twostep.analysis.confirmatory)."""
    from datetime import datetime, timezone

    from twostep.scale.results import read_results

    source = ROOT / confirmatory.EXPLORATORY_PATH
    doc = confirmatory.build_registry(
        read_results(source), confirmatory.file_sha256(source),
        datetime.now(timezone.utc).isoformat(timespec="seconds"))
    try:
        confirmatory.write_registry(doc, REGISTRY)
    except FileExistsError as err:
        p.exit(2, f"{p.prog}: error: {err}\n")
    print(f"wrote {REGISTRY.relative_to(ROOT)} ({confirmatory.file_sha256(REGISTRY)})")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cupy", "torch", "numpy"))
    p.add_argument("--max-N", type=int, default=WIDTHS[-1], help="largest width to run")
    p.add_argument("--widths", type=int, nargs="+", default=None,
                   help="run these widths instead of the standard ones (e.g. a quick check)")
    p.add_argument("--seeds", action="append", metavar="NAME=N:COUNT,...",
                   help="seed counts per width for one file (repeatable), e.g. reuse=1000:10,8000:2")
    p.add_argument("--only", choices=sorted(EXPERIMENTS), action="append",
                   help="write only this file (repeatable, in the order given: at each width "
                        "the files run in this order; default spike, then reuse)")
    p.add_argument("--out", type=Path, default=OUT,
                   help="folder for the two files (default artifacts/at_scale, git-ignored; "
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
    args = p.parse_args(argv)
    if args.register:
        return register(p)
    if args.resume and args.force:
        p.error("--resume keeps a file's records and --force overwrites them: give one")
    seeds = parse_seeds(args.seeds)
    names = args.only or list(EXPERIMENTS)
    if len(set(names)) != len(names):
        p.error(f"--only lists a file twice: {names}")
    if names == ["count_confirm"] and args.widths is None:
        try:
            args.widths = [N for N in sorted(registered_plan()) if N <= args.max_N]
        except ValueError as err:
            p.error(str(err))
    if "count_confirm" in names and args.seeds and "count_confirm" in parse_seeds(args.seeds):
        p.error("count_confirm takes its seeds from the registry, not from --seeds")
    widths = sorted(set(args.widths or [N for N in WIDTHS if N <= args.max_N]))
    if not widths:
        p.error(f"no width to run: --max-N {args.max_N} is below the smallest width {WIDTHS[0]}")
    if widths[0] < 8:
        p.error(f"--widths must be integers >= 8 (the spike experiment's smallest N), "
                f"got {widths[0]}")
    for name in names:   # fail before anything runs
        for N in widths:
            try:
                seeds_for(name, N, seeds.get(name))
            except ValueError as err:
                p.error(str(err))
    bk = get_backend(args.backend)
    if bk.name == "numpy":
        keep_freed_memory()   # every task's arrays on the pages of the task before: no page faults
    command = "python tools/at_scale.py " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    if args.out.exists() and not args.out.is_dir():
        p.exit(2, f"{p.prog}: error: --out {args.out} is a file; give a folder (the files "
                  f"are named after the experiments)\n")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:   # a read-only or virtual file system
        p.exit(2, f"{p.prog}: error: cannot create the output folder {args.out} "
                  f"({err.strerror or err})\n")
    writers, elapsed, commands = {}, {}, {}
    try:
        for name in names:   # every file is checked (exists? belongs?) before the first task
            func, _, extra = EXPERIMENTS[name]
            writers[name] = w = ResultsWriter(
                args.out / f"{name}.json", name, {**extra, "dtype": DTYPE}, key=KEY,
                resume=args.resume, force=args.force, grid_keys=("N", "batch"),
                identity={"backend": bk.name, "dtype": DTYPE,
                          "function": f"{func.__module__}.{func.__name__}",
                          **({"registry_sha256": confirmatory.file_sha256(REGISTRY)}
                             if name == "count_confirm" else {})})
            old = w.previous
            elapsed[name] = float(old.get("elapsed", 0.0))
            commands[name] = list(old.get("commands", [old["command"]] if old.get("command")
                                          else [])) + [command]
    except (FileExistsError, ValueError) as err:
        p.exit(2, f"{p.prog}: error: {err}\n")

    def save(name, complete):
        order = EXPERIMENTS[name][1]
        w = writers[name]
        w.save(order=lambda r: (r["N"], r["seed"], order.index(r["batch"])),
               **provenance(name, w, widths, seeds, bk, commands[name], DTYPE, elapsed[name],
                            complete))

    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        # No file is written before its first record: a run stopped earlier leaves nothing
        # to resume for that file (an empty file of an older version still resumes).
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
                        elapsed[name] += time.perf_counter() - start
                        print(f"{name} {batch} N={N} seed={seed}: {rec['wall_s']:.1f} s",
                              flush=True)
                        save(name, complete=False)   # after every task: a stopped run loses one
        for name in names:
            if writers[name].records:
                save(name, complete=True)
    except KeyboardInterrupt:
        saved = ", ".join(f"{len(writers[n].records)} record(s) in {writers[n].path}"
                          if writers[n].records or writers[n].previous
                          else f"none yet for {writers[n].path}" for n in names)
        print(f"{p.prog}: interrupted: {saved}; the same command with --resume runs the rest",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
