"""Device check: two steps and the top of the spectrum on an NVIDIA GPU (CuPy or PyTorch).

On a machine with a GPU, for N = n = d in SIZES (float32, poly4, he1 target, reused
batch), prints the time of the two steps, the time of the top-k singular values, the
device memory held, and at the first size the agreement with the CPU (numpy) run of the
same draw: max |W2_gpu - W2_cpu| / max |W2_cpu| and the relative error of the top-k
singular values. Designed to finish in under 5 minutes on one recent GPU (the largest
size holds ~5 arrays of 32000^2 float32 = ~20 GB; use --sizes to skip it on smaller cards).

Without a GPU it says so and exits with status 0.

Run:  .venv/bin/python benchmarks/device_check.py [--backend auto|cupy|torch] [--sizes 4000 16000 32000]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import twostep as ts
from twostep.backend import (BackendUnavailable, get_backend, run_two_steps_on,
                             top_singular_values_on)

SIZES = (4000, 16000, 32000)
STEPS = ((0.2, 0.4), (0.2, 0.25))
TOP = 8


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cupy", "torch"))
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--top", type=int, default=TOP)
    args = p.parse_args(argv)
    try:
        bk = get_backend(args.backend)
    except BackendUnavailable as err:
        print(f"device check: no GPU backend available: {err}")
        return 0
    if bk.name == "numpy":
        print("device check: no NVIDIA GPU is present (neither CuPy nor PyTorch sees one); "
              "nothing to check. The numpy path is covered by tests/test_backend.py.")
        return 0
    act, link = ts.get_activation("poly4"), ts.get_link("he1")
    print(f"backend {bk.name} on {bk.device}; float32; top-{args.top} singular values")
    print(f"{'N=n=d':>7} {'two steps s':>12} {'top-k s':>9} {'device GB':>10}  agreement with CPU")
    for i, N in enumerate(args.sizes):
        bk.synchronize()
        t0 = time.perf_counter()
        run = run_two_steps_on(bk, N, N, N, act, link, STEPS, "reused", np.random.default_rng(0),
                               dtype=np.float32)
        bk.synchronize()
        t1 = time.perf_counter()
        s_dev = top_singular_values_on(bk, run.W2, args.top)
        bk.synchronize()
        t2 = time.perf_counter()
        mem = bk.memory_used() / 1e9
        note = ""
        if i == 0:
            cpu = ts.run_two_steps(N, N, N, act, link, STEPS, "reused", np.random.default_rng(0),
                                   dtype=np.float32)
            s_cpu = ts.top_singular(cpu.W2, args.top)[0]
            W2 = bk.to_numpy(run.W2)
            dw = float(np.abs(W2 - cpu.W2).max() / np.abs(cpu.W2).max())
            ds = float(np.max(np.abs(s_dev - s_cpu) / s_cpu))
            note = f"max|dW2|/max|W2| = {dw:.1e}, max rel. error of top-k = {ds:.1e}"
            del cpu, W2
        print(f"{N:>7} {t1 - t0:>12.2f} {t2 - t1:>9.2f} {mem:>10.2f}  {note}", flush=True)
        del run
    return 0


if __name__ == "__main__":
    sys.exit(main())
