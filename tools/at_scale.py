#!/usr/bin/env python3
"""Regenerate results/at_scale/: the book's measurements at widths beyond the build.

    .venv/bin/python tools/at_scale.py --backend cupy            # on a GPU (the intended run)
    .venv/bin/python tools/at_scale.py --backend numpy --max-N 4000   # on the CPU (float32)

Two files, both written by twostep.scale.results.write_results with the command, the
backend, the device's name, the library versions, the date and the wall time of every task:

* ``spike.json``: twostep.scale.device.spike_on (sigma_4, He_1 target, c = 0.2, reference
  step sizes (0.4, 0.25), float32, N = n = d), fresh and reused batches: per order k the size
  of T_k, of its predicted spike and of the remainder, the cosines of T_k's top singular
  vectors with a^(k+1), u_k and beta*, and W2's raw outlier count over the 25-point grid of
  the phase diagram (from the rescaling identity).
* ``reuse.json``: twostep.scale.device.reuse_on with the odd bounded target (information
  exponent 3): the overlap of T_2's top right singular vector with beta*, fresh and reused.

Every width runs the seeds in SEEDS (fewer above 16000, where one run takes minutes even on a
GPU). The smallest widths are recomputed on the CPU by tests/test_at_scale.py, so a change of
the code that no longer reproduces these files fails CI. Stdlib + twostep only.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from twostep.scale.backend import get_backend  # noqa: E402
from twostep.scale.device import reuse_on, spike_on  # noqa: E402
from twostep.scale.results import write_results  # noqa: E402

OUT = ROOT / "results" / "at_scale"
WIDTHS = (1000, 2000, 4000, 8000, 16000, 32000, 45000)
STEPS = dict(c1=0.2, alpha1=0.4, c2=0.2, alpha2=0.25)
GRID = [[a1, a2] for a1 in (0.0, 0.1, 0.2, 0.3, 0.4) for a2 in (0.05, 0.15, 0.25, 0.35, 0.45)]


def seeds_for(N: int) -> list[int]:
    """Three seeds up to N = 16000, one beyond."""
    return [0, 1, 2] if N <= 16000 else [0]


def run(name: str, func, widths, batches, bk, extra: dict, command: str, dtype: str,
        out_dir: Path = OUT) -> Path:
    records, start = [], time.perf_counter()
    for batch in batches:
        for N in widths:
            for seed in seeds_for(N):
                t0 = time.perf_counter()
                out = func(bk, N=N, batch=batch, seed=seed, dtype=dtype, **STEPS, **extra)
                bk.synchronize()
                wall = time.perf_counter() - t0
                records.append({"N": N, "batch": batch, "seed": seed, "wall_s": wall, **out})
                print(f"{name} {batch} N={N} seed={seed}: {wall:.1f} s", flush=True)
    path = out_dir / f"{name}.json"
    write_results(path, name, records, params={**STEPS, **extra, "dtype": dtype},
                  grid={"N": list(widths), "batch": list(batches)}, seeds=seeds_for(widths[0]),
                  backend=bk.name, device=bk.device_name(), command=command,
                  elapsed=time.perf_counter() - start)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cupy", "torch", "numpy"))
    p.add_argument("--max-N", type=int, default=WIDTHS[-1], help="largest width to run")
    p.add_argument("--widths", type=int, nargs="+", default=None,
                   help="run these widths instead of the standard ones (e.g. a quick check)")
    p.add_argument("--out", type=Path, default=OUT, help="folder for the two files")
    args = p.parse_args(argv)
    bk = get_backend(args.backend)
    widths = args.widths or [N for N in WIDTHS if N <= args.max_N]
    command = "python tools/at_scale.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    args.out.mkdir(parents=True, exist_ok=True)
    run("spike", spike_on, widths, ("fresh", "reused"), bk,
        {"activation": "poly4", "target": "he1", "grid": GRID}, command, "float32", args.out)
    run("reuse", reuse_on, widths, ("reused", "fresh"), bk,
        {"activation": "poly4", "target": "odd", "term": 2, "top": 4}, command, "float32",
        args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
