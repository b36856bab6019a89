#!/usr/bin/env python3
"""Regenerate results/at_scale/: the book's measurements at widths beyond the build.

    .venv/bin/python tools/at_scale.py --backend cupy                     # on a GPU (the intended run)
    OPENBLAS_NUM_THREADS=2 nice -n 10 .venv/bin/python tools/at_scale.py \\
        --backend numpy --max-N 8000 --seeds spike=1000:3,2000:3,4000:3,8000:1 \\
        --seeds reuse=1000:10,2000:10,4000:10,8000:2                  # on the CPU (float32)

Two files, both written by twostep.scale.results.write_results with the command, the
backend, the device's name, the library versions, the date and the wall time of every task:

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

The widths run in increasing order, each width for both files (every seed, both batches),
and a file is rewritten after every task, so an interrupted run loses one task and
``--resume`` continues it (``complete`` in the file says whether the run finished).
The seeds per width (``--seeds NAME=N:COUNT,...``; default SEEDS) are 0 .. COUNT-1. The
smallest width is recomputed on the CPU by tests/test_at_scale.py, so a change of the code
that no longer reproduces these files fails CI. Stdlib + twostep only.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from twostep.scale.backend import get_backend  # noqa: E402
from twostep.scale.device import reuse_on, spike_on  # noqa: E402
from twostep.scale.results import read_results, write_results  # noqa: E402

OUT = ROOT / "results" / "at_scale"
WIDTHS = (1000, 2000, 4000, 8000, 16000, 32000, 45000)
DTYPE = "float32"
#: The phase-diagram grid of the chapter *Two steps* (ALPHAS on both axes, no point on a boundary).
ALPHAS = (0.05, 0.14, 0.23, 0.32, 0.41)
GRID = [[a1, a2] for a1 in ALPHAS for a2 in ALPHAS]
#: name -> (function, batches, fixed keywords): the chapters' parameters.
EXPERIMENTS = {
    "spike": (spike_on, ("fresh", "reused"),
              dict(c1=0.2, alpha1=0.4, c2=0.2, alpha2=0.25, activation="poly4", target="he1",
                   grid=GRID)),
    "reuse": (reuse_on, ("reused", "fresh"),
              dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25, activation="poly4", target="odd",
                   term=2, top=4)),
}
#: Seeds per width on a GPU: name -> {N: count}; widths not listed get the last count below them.
SEEDS = {"spike": {1000: 3, 16000: 3, 32000: 1},
         "reuse": {1000: 10, 16000: 10, 32000: 2}}


def seeds_for(name: str, N: int, table: dict | None = None) -> list[int]:
    """Seeds ``0 .. count-1`` of experiment ``name`` at width ``N``: the count of the largest
    listed width ``<= N`` in ``table`` (default ``SEEDS[name]``)."""
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


def measure(name: str, bk, N: int, batch: str, seed: int, dtype: str = DTYPE) -> dict:
    """One record of experiment ``name``: what the file stores for (N, batch, seed), with its
    wall time. tests/test_at_scale.py recomputes the committed records through this function."""
    func, _, extra = EXPERIMENTS[name]
    t0 = time.perf_counter()
    out = func(bk, N=N, batch=batch, seed=seed, dtype=dtype, **extra)
    bk.synchronize()
    return {"N": N, "batch": batch, "seed": seed, "wall_s": time.perf_counter() - t0, **out}


def write(name: str, records: list, widths, seeds: dict, bk, commands: list, dtype: str,
          elapsed: float, out_dir: Path, complete: bool) -> Path:
    """Write ``records`` of ``name`` with its provenance: ``command`` is the last of ``commands``
    (all of them, in order, when a run was resumed), ``elapsed`` the wall time of all of them."""
    func, batches, extra = EXPERIMENTS[name]
    done = sorted({r["N"] for r in records})
    path = out_dir / f"{name}.json"
    write_results(path, name, records, params={**extra, "dtype": dtype},
                  grid={"N": done, "batch": list(batches)},
                  seeds=sorted({r["seed"] for r in records}),
                  seeds_per_width={str(N): sorted({r["seed"] for r in records if r["N"] == N})
                                   for N in done},
                  seeds_planned={str(N): seeds_for(name, N, seeds.get(name)) for N in widths},
                  function=f"{func.__module__}.{func.__name__}", dtype=dtype,
                  backend=bk.name, device=bk.device_name(), host=host(), command=commands[-1],
                  commands=commands,
                  elapsed=elapsed, complete=complete, widths_planned=list(widths))
    return path


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
    p.add_argument("--out", type=Path, default=OUT, help="folder for the two files")
    p.add_argument("--resume", action="store_true",
                   help="keep the records already in the files that this run would compute "
                        "(same N, batch, seed) and compute only the others")
    args = p.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    names = args.only or list(EXPERIMENTS)
    bk = get_backend(args.backend)
    widths = sorted(args.widths or [N for N in WIDTHS if N <= args.max_N])
    for name in names:   # fail before anything runs
        for N in widths:
            seeds_for(name, N, seeds.get(name))
    command = "python tools/at_scale.py " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    args.out.mkdir(parents=True, exist_ok=True)
    records = {name: [] for name in names}
    elapsed = {name: 0.0 for name in names}
    commands = {name: [command] for name in names}
    if args.resume:
        for name in names:
            path = args.out / f"{name}.json"
            if path.exists():
                old = read_results(path)
                records[name] = [r for r in old["records"] if r["N"] in widths
                                 and r["seed"] in seeds_for(name, r["N"], seeds.get(name))]
                elapsed[name] = float(old.get("elapsed", 0.0))
                commands[name] = list(old.get("commands", [old.get("command")])) + [command]
    def save(name, complete):
        records[name].sort(key=lambda r: (r["N"], r["seed"], EXPERIMENTS[name][1].index(r["batch"])))
        write(name, records[name], widths, seeds, bk, commands[name], DTYPE, elapsed[name],
              args.out, complete=complete)

    for i, N in enumerate(widths):
        for name in names:
            have = {(r["N"], r["batch"], r["seed"]) for r in records[name]}
            for seed in seeds_for(name, N, seeds.get(name)):
                for batch in EXPERIMENTS[name][1]:
                    if (N, batch, seed) in have:
                        continue
                    start = time.perf_counter()
                    rec = measure(name, bk, N, batch, seed)
                    records[name].append(rec)
                    elapsed[name] += time.perf_counter() - start
                    print(f"{name} {batch} N={N} seed={seed}: {rec['wall_s']:.1f} s", flush=True)
                    save(name, complete=False)     # after every task: a stopped run loses one
    for name in names:
        save(name, complete=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
