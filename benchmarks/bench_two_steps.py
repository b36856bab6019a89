"""Benchmark: two gradient steps against the hardware floor and against PyTorch.

Prints, for N = n = d in the chosen sizes (float64, one process, all BLAS threads):

  (a) one N x N x N matrix product: the floor unit
  (b) twostep's two-step run (sampling included) and the two steps alone
  (c) (b) / 4(a): the four products no implementation can avoid    target <= 1.2
  (d) top-20 singular triplets of W_2, and (d) / (b)                target <= 0.2
  (e) peak memory of the run against the arrays it must hold       target <= 1.0
  (f) the same two steps with PyTorch autograd (CPU), torch / twostep  target >= 1.0
  (g) the float32 run and its speed-up over float64

Run:  python3 tools/dev.py bench        (or: .venv/bin/python benchmarks/bench_two_steps.py)
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np

import twostep as ts

STEPS = ((0.2, 0.4), (0.2, 0.25))


def best_time(func, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def run(N, batch="reused", dtype=np.float64, seed=0):
    return ts.run_two_steps(N, N, N, ts.get_activation("poly4"), ts.hermite_link(1), STEPS,
                            batch, np.random.default_rng(seed), dtype=dtype)


def peak_memory(N, batch):
    """Peak bytes numpy allocates during a run, and the bytes the run must hold."""
    gc.collect()
    tracemalloc.start()
    r = run(N, batch)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    unit = N * N * 8
    held = 3 * unit + (1 if batch == "reused" else 2) * unit  # W0, W1, W2 and the batch(es)
    necessary = held + unit  # ... plus one N x n intermediate
    del r
    return peak, necessary


def torch_two_steps(r, threads):
    """The two steps as a researcher would write them with autograd."""
    import torch

    torch.set_num_threads(threads)
    mu = r.activation.mu  # sigma = sum_k mu_k He_k / k!
    W0 = torch.from_numpy(r.W0)
    a = torch.from_numpy(r.a)
    X1, y1 = torch.from_numpy(r.X1), torch.from_numpy(r.y1)
    X2, y2 = torch.from_numpy(r.X2), torch.from_numpy(r.y2)

    def sigma(z):
        he = [torch.ones_like(z), z, z * z - 1, z ** 3 - 3 * z, z ** 4 - 6 * z * z + 3]
        facts = [1, 1, 2, 6, 24]
        return sum(mu[k] / facts[k] * he[k] for k in range(1, 5))

    def step(W, X, y, eta):
        W = W.detach().requires_grad_(True)
        loss = -(y * (sigma(X @ W.T) @ a)).mean()
        (g,) = torch.autograd.grad(loss, W)
        return (W - eta * g).detach()

    def both():
        W1 = step(W0, X1, y1, r.eta1)
        return W1, step(W1, X2, y2, r.eta2)

    return both


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    try:
        import torch
        threads = torch.get_num_threads()
    except ImportError:
        torch = None
    from threadpoolctl import threadpool_info

    blas = [(i["internal_api"], i["num_threads"], i.get("architecture")) for i in threadpool_info()]
    print(f"twostep {ts.__version__}, numpy {np.__version__}, BLAS {blas}")
    print(f"torch {torch.__version__ if torch else 'not installed (pip install torch==2.13.0)'}")
    rows = []
    for N in args.sizes:
        rng = np.random.default_rng(0)
        A, B = rng.standard_normal((N, N)), rng.standard_normal((N, N))
        t_mm = best_time(lambda: A @ B, args.repeat + 1)
        del A, B
        t_run = best_time(lambda: run(N), args.repeat)
        r = run(N)
        act = r.activation
        t_steps = best_time(lambda: ts.one_step(ts.one_step(r.W0, r.a, r.X1, r.y1, act, r.eta1),
                                                r.a, r.X2, r.y2, act, r.eta2), args.repeat)
        t_svd = best_time(lambda: ts.top_singular(r.W2, 20), args.repeat)
        t32 = best_time(lambda: run(N, dtype=np.float32), args.repeat)
        peak, necessary = peak_memory(N, "reused")
        peak_f, necessary_f = peak_memory(N, "fresh")
        t_torch = np.nan
        if torch is not None:
            both = torch_two_steps(r, threads)
            W1t, W2t = both()
            assert np.allclose(W2t.numpy(), r.W2, rtol=1e-8, atol=1e-10), "torch disagrees"
            t_torch = best_time(both, args.repeat)
        rows.append(dict(N=N, mm=t_mm, run=t_run, steps=t_steps, svd=t_svd, f32=t32,
                         peak=peak, nec=necessary, peak_f=peak_f, nec_f=necessary_f, torch=t_torch))
        del r
        gc.collect()

    print()
    print(f"{'N':>6} {'(a) NxNxN':>10} {'(b) run':>9} {'steps':>8} {'(c) run/4a':>11} "
          f"{'(d) top-20':>11} {'(d)/(b)':>8} {'(e) peak/need':>14} {'fresh':>6} "
          f"{'(f) torch':>10} {'torch/ours':>11} {'(g) f32':>8} {'f64/f32':>8}")
    for r in rows:
        print(f"{r['N']:>6} {r['mm']:>9.3f}s {r['run']:>8.3f}s {r['steps']:>7.3f}s "
              f"{r['run'] / (4 * r['mm']):>11.2f} {r['svd']:>10.3f}s {r['svd'] / r['run']:>8.3f} "
              f"{r['peak'] / r['nec']:>14.2f} {r['peak_f'] / r['nec_f']:>6.2f} "
              f"{r['torch']:>9.3f}s {r['torch'] / r['steps']:>11.2f} {r['f32']:>7.3f}s "
              f"{r['run'] / r['f32']:>8.2f}")
    last = rows[-1]
    print()
    print(f"targets at N = {last['N']}:")
    checks = [
        ("(c) run / four products", last["run"] / (4 * last["mm"]), "<=", 1.2),
        ("(d) top-20 / run", last["svd"] / last["run"], "<=", 0.2),
        ("(e) peak / necessary (reused)", last["peak"] / last["nec"], "<=", 1.0),
        ("(e) peak / necessary (fresh)", last["peak_f"] / last["nec_f"], "<=", 1.0),
        ("(f) torch / twostep (two steps)", last["torch"] / last["steps"], ">=", 1.0),
    ]
    for name, value, op, target in checks:
        ok = value <= target if op == "<=" else value >= target
        verdict = "n/a" if np.isnan(value) else ("met" if ok else "NOT MET")
        print(f"  {name:34} {value:6.2f}  target {op} {target:<4}  {verdict}")
    print("  necessary = W0, W1, W2, the batch(es) and one N x n intermediate, in float64;")
    print("  peak = largest total of numpy allocations during run_two_steps (tracemalloc).")


if __name__ == "__main__":
    main()
