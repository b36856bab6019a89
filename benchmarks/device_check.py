"""Device check: two steps, the hardware floor, and the book's measurement on a GPU.

For N = n = d in SIZES (float32, poly4, He1 target, reused batch), with the problem drawn
on the device by its own generator (twostep.scale.device.draw_problem_on), prints:

* the time of the two steps, and the floor measured in the same run on the same device:
  one N x N x N float32 matrix product (mean of 3 after a warm-up), times 4, the number of
  such products the two steps need; the ratio two-steps / floor is the target of issue 15
  (at most 1.5 at N = 32000);
* the time of the top-k singular values of W2 by block Lanczos
  (twostep.scale.device.top_singular_on);
* with --measure, the time of the book's measurement of one draw
  (twostep.scale.device.measure_on: the exact terms T_k, their spikes, cosines and the
  outlier count over the 25-point phase grid) and its ratio to the N^3 products it needs;
* the peak device memory, and at the first size the agreement with the numpy path on the
  same draw copied to the host: max |W2_gpu - W2_cpu| / max |W2_cpu| and the largest relative
  error of the top-k singular values against scipy's svds.

A size the device cannot hold (estimated before allocating, twostep.scale.backend.device_bytes)
is reported and skipped. Without a GPU it says so and exits with status 0; `--backend numpy`
(or `--cpu` with torch) runs the same flow on the host to check the script itself
(tests/unit/scale/test_device.py does that at N = 300).

Run:  .venv/bin/python benchmarks/device_check.py [--backend auto|cupy|torch|numpy]
          [--sizes 4000 16000 32000] [--top 8] [--measure] [--cpu]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import twostep as ts
from twostep.model.steps import two_steps
from twostep.scale.backend import Backend, BackendUnavailable, get_backend
from twostep.scale.device import measure_on, run_two_steps_on, to_host, top_singular_on

SIZES = (4000, 16000, 32000)
STEPS = ((0.2, 0.4), (0.2, 0.25))
TOP = 8
ACTIVATION, TARGET = ts.get_activation("poly4"), ts.get_link("he1")
#: The phase-diagram grid of the chapter *Two steps* and of tools/at_scale.py.
ALPHAS = (0.05, 0.14, 0.23, 0.32, 0.41)
GRID = [(a1, a2) for a1 in ALPHAS for a2 in ALPHAS]


def floor_seconds(bk: Backend, N: int, repeat: int = 3) -> float:
    """Mean time of one N x N x N float32 product on ``bk`` (after a warm-up)."""
    rng = np.random.default_rng(1)
    A = bk.asarray(rng.standard_normal((N, N), dtype=np.float32))
    B = bk.asarray(rng.standard_normal((N, N), dtype=np.float32))
    C = A @ B
    bk.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeat):
        C = A @ B
    bk.synchronize()
    del A, B, C
    return (time.perf_counter() - t0) / repeat


def agreement(bk: Backend, run, s_dev: np.ndarray) -> tuple[float, float]:
    """(max|dW2|/max|W2|, max relative error of ``s_dev``) against the numpy path on the same
    draw, copied to the host."""
    host = two_steps(to_host(_problem(run), bk), ACTIVATION, STEPS)
    W2 = bk.to_numpy(run.W2)
    dw = float(np.abs(W2 - host.W2).max() / np.abs(host.W2).max())
    s_cpu = ts.top_singular(host.W2, len(s_dev))[0]
    return dw, float(np.max(np.abs(s_dev - s_cpu) / s_cpu))


def _problem(run):
    from twostep.model.steps import Problem
    return Problem(run.teacher, run.W0, run.a, run.X1, run.y1, run.X2, run.y2)


def check(bk: Backend, sizes, top: int = TOP, measure: bool = False, out=print) -> list[dict]:
    """Time the two steps (and, with ``measure``, the measurement) at each N on ``bk``.

    Prints one line per size through ``out``; returns one record per size with keys
    ``N, steps_s, floor_s, ratio, topk_s, device_gb`` (``None`` where the size was skipped for
    memory), ``measure_s, measure_ratio`` with ``measure``, and at the first size that ran
    ``dW2, dtop`` (see :func:`agreement`).
    """
    out(f"backend {bk.name} on {bk.device}; float32; poly4 activation, He1 target, reused batch, "
        f"drawn on the device; top-{top} singular values")
    out(f"{'N=n=d':>7} {'two steps s':>12} {'4 N^3 s':>9} {'ratio':>6} {'top-k s':>8} "
        f"{'measure s':>10} {'ratio':>6} {'device GB':>10}  agreement with CPU")
    records, compared = [], False
    L = ACTIVATION.degree
    for N in sizes:
        try:
            bk.synchronize()
            t0 = time.perf_counter()
            run = run_two_steps_on(bk, N, N, N, ACTIVATION, TARGET, STEPS, "reused", seed=0,
                                   terms=L if measure else 0)
            bk.synchronize()
            t1 = time.perf_counter()
        except MemoryError as err:
            out(f"{N:>7} skipped: {err}")
            records.append({"N": N, "steps_s": None, "floor_s": None, "ratio": None,
                            "topk_s": None, "device_gb": None})
            continue
        s_dev = top_singular_on(run.W2, top, vectors=False)
        bk.synchronize()
        t2 = time.perf_counter()
        floor = floor_seconds(bk, N)
        rec = {"N": N, "steps_s": t1 - t0, "floor_s": floor, "ratio": (t1 - t0) / (4 * floor),
               "topk_s": t2 - t1}
        m_text = f"{'':>10} {'':>6}"
        if measure:
            bk.synchronize()
            t3 = time.perf_counter()
            measure_on(run, grid=GRID)
            bk.synchronize()
            # The measurement's N^3 products: W0 X2^T, (W1 - W0) X2^T and one per term T_k.
            rec["measure_s"] = time.perf_counter() - t3
            rec["measure_ratio"] = rec["measure_s"] / ((2 + L) * floor)
            m_text = f"{rec['measure_s']:>10.2f} {rec['measure_ratio']:>6.2f}"
        rec["device_gb"] = bk.memory_used() / 1e9
        note = ""
        if not compared:
            rec["dW2"], rec["dtop"] = agreement(bk, run, s_dev)
            note = f"max|dW2|/max|W2| = {rec['dW2']:.1e}, max rel. error of top-k = {rec['dtop']:.1e}"
            compared = True
        out(f"{N:>7} {rec['steps_s']:>12.2f} {4 * floor:>9.2f} {rec['ratio']:>6.2f} "
            f"{rec['topk_s']:>8.2f} {m_text} {rec['device_gb']:>10.2f}  {note}")
        records.append(rec)
        del run
    return records


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cupy", "torch", "numpy"))
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--top", type=int, default=TOP)
    p.add_argument("--measure", action="store_true",
                   help="also time the book's measurement of one draw (measure_on, 25-point grid)")
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
    check(bk, args.sizes, args.top, args.measure, out=lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
