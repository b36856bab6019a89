"""Device check: two steps and the top of the spectrum on an NVIDIA GPU (CuPy or PyTorch).

On a machine with a GPU, for N = n = d in SIZES (float32, poly4, he1 target, reused
batch), prints the time of the two steps, the time of the top-k singular values, the
peak device memory, and at the first size the agreement with the CPU (numpy) run of the
same draw: max |W2_gpu - W2_cpu| / max |W2_cpu| and the largest relative error of the
top-k singular values against scipy's svds on the host. The largest size holds
3 N^2 + N^2 float32 = 16.4 GB at N = 32000; a size the device cannot hold (estimated
before allocating, `twostep.scale.backend.device_bytes`) is reported and skipped.

Budget: the work is about 4 products of N^3 per size (two steps), so ~2.6e14 flops at
N = 32000, about 15-30 s at the FP32 rate of a current data-centre GPU; the CPU reference
at N = 4000 takes ~5 s on two cores. The whole check is meant to finish in under 5 min.

Without a GPU it says so and exits with status 0. `--backend numpy` (or `--cpu` with
torch) runs the same measurements on the host, at sizes of your choice, to check the
script itself; `tests/test_backend.py` does that at N = 300.

Run:  .venv/bin/python benchmarks/device_check.py [--backend auto|cupy|torch|numpy]
                                                  [--sizes 4000 16000 32000] [--top 8] [--cpu]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import twostep as ts
from twostep.scale.backend import (Backend, BackendUnavailable, get_backend, run_two_steps_on,
                             top_singular_values_on)

SIZES = (4000, 16000, 32000)
STEPS = ((0.2, 0.4), (0.2, 0.25))
TOP = 8
ACTIVATION, TARGET = ts.get_activation("poly4"), ts.get_link("he1")


def agreement(bk: Backend, run, s_dev: np.ndarray, N: int) -> tuple[float, float]:
    """(max|dW2|/max|W2|, max relative error of ``s_dev``) against the numpy run of the same draw.

    ``s_dev`` are the top singular values computed on the device; the reference ones are
    scipy's svds of the host's W2.
    """
    cpu = ts.run_two_steps(N, N, N, ACTIVATION, TARGET, STEPS, "reused", np.random.default_rng(0),
                           dtype=np.float32)
    W2 = bk.to_numpy(run.W2)
    dw = float(np.abs(W2 - cpu.W2).max() / np.abs(cpu.W2).max())
    s_cpu = ts.top_singular(cpu.W2, len(s_dev))[0]
    return dw, float(np.max(np.abs(s_dev - s_cpu) / s_cpu))


def check(bk: Backend, sizes, top: int = TOP, out=print) -> list[dict]:
    """Time two steps and the top-``top`` singular values at each N of ``sizes`` on ``bk``.

    Prints one line per size through ``out`` and returns one record per size with keys
    ``N, steps_s, topk_s, device_gb`` (``None`` where the size was skipped for memory) and,
    at the first size that ran, ``dW2, dtop`` (see :func:`agreement`).
    """
    out(f"backend {bk.name} on {bk.device}; float32; poly4 activation, He1 target, reused batch; "
        f"top-{top} singular values")
    out(f"{'N=n=d':>7} {'two steps s':>12} {'top-k s':>9} {'device GB':>10}  agreement with CPU")
    records, compared = [], False
    for N in sizes:
        try:
            bk.synchronize()
            t0 = time.perf_counter()
            run = run_two_steps_on(bk, N, N, N, ACTIVATION, TARGET, STEPS, "reused",
                                   np.random.default_rng(0), dtype=np.float32)
        except MemoryError as err:
            out(f"{N:>7} skipped: {err}")
            records.append({"N": N, "steps_s": None, "topk_s": None, "device_gb": None})
            continue
        bk.synchronize()
        t1 = time.perf_counter()
        s_dev = top_singular_values_on(bk, run.W2, top)
        bk.synchronize()
        t2 = time.perf_counter()
        rec = {"N": N, "steps_s": t1 - t0, "topk_s": t2 - t1, "device_gb": bk.memory_used() / 1e9}
        note = ""
        if not compared:
            rec["dW2"], rec["dtop"] = agreement(bk, run, s_dev, N)
            note = f"max|dW2|/max|W2| = {rec['dW2']:.1e}, max rel. error of top-k = {rec['dtop']:.1e}"
            compared = True
        out(f"{N:>7} {rec['steps_s']:>12.2f} {rec['topk_s']:>9.2f} {rec['device_gb']:>10.2f}  {note}")
        records.append(rec)
        del run
    return records


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cupy", "torch", "numpy"))
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--top", type=int, default=TOP)
    p.add_argument("--cpu", action="store_true",
                   help="with --backend torch: run PyTorch on the CPU (checks the script, not a GPU)")
    args = p.parse_args(argv)
    if args.cpu and args.backend != "torch":
        p.error("--cpu goes with --backend torch")
    try:
        if args.cpu:
            import torch
            bk = Backend("torch", torch, "cpu")
        else:
            bk = get_backend(args.backend)
    except (BackendUnavailable, ImportError) as err:
        print(f"device check: no GPU backend available: {err}")
        return 0
    if bk.name == "numpy" and args.backend == "auto":
        print("device check: no NVIDIA GPU is present (neither CuPy nor PyTorch sees one); "
              "nothing to check. `--backend numpy` runs the same measurements on the host.")
        return 0
    check(bk, args.sizes, args.top, out=lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
