r"""The exact term seen through its predicted left vector, :math:`r_k = T_k^\top a^{\circ(k+1)} = X_2^\top w`:
a sum over all inputs, aligned :math:`O(1)` when the spike dominates, which memorised inputs cannot fake."""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_int
from ..model.activations import host_array, namespace
from .alignment import overlaps, subspace_overlap
from ._core import check_order, check_pre, check_run, term_weights

#: Default number of dominant inputs in the memorised-input null.
MEMORISED = 8
#: Keys of :func:`projected_alignment`'s result.
PROJECTED_KEYS = ("overlap", "random_sign", "memorised_null", "without_memorised",
                  "participation", "memorisation")

def projected_alignment(run, k: int = 2, *, signs, memorised: int = MEMORISED, pre=None) -> dict:
    r""":math:`r_k = T_k^\top a^{\circ(k+1)}` and its controls for ``run``, order ``k``."""
    run = check_run(run)
    k = check_order(k, run.activation.degree)
    memorised = check_int(memorised, "memorised")
    if memorised > run.n:
        raise ValueError(f"memorised must be in [1, n] = [1, {run.n}], got {memorised}")
    xp = namespace(run.a)[0]
    if xp is np:
        signs = check_array(signs, "signs", ndim=1, shape=(run.N,))
    elif tuple(signs.shape) != (run.N,):
        raise ValueError(f"signs must have shape ({run.N},), got {tuple(signs.shape)}")
    if not bool(xp.all(xp.abs(signs) == 1)):
        raise ValueError("signs must hold only +1 and -1")
    P, D = check_pre(run, pre)
    left = run.a ** (k + 1)
    X2 = run.X2
    w = term_weights(run, k, left, P, D)
    r = X2.T @ w
    r_sign = X2.T @ term_weights(run, k, xp.abs(left) * xp.asarray(signs, dtype=run.a.dtype), P, D)
    # Memorisation of r on the device: only the (n,) cosines come back.
    along = host_array(xp.abs(X2 @ r)).astype(float)
    norms = np.sqrt(host_array(xp.sum(X2 * X2, axis=1)).astype(float))
    w, r, r_sign = (host_array(x).astype(float) for x in (w, r, r_sign))
    B = run.teacher.directions
    c = np.abs(w) * norms
    J = np.sort(np.argsort(c)[::-1][:memorised])
    rows = np.array([host_array(X2[int(j)]) for j in J], dtype=float)        # (m, d) on the host
    rest = r - rows.T @ w[J]
    return {
        "overlap": overlaps(r, B)[0],
        "random_sign": overlaps(r_sign, B)[0],
        "memorised_null": subspace_overlap(rows, B),
        # Zero when the m inputs are all of r (nothing is left to be aligned).
        "without_memorised": overlaps(rest, B)[0] if np.any(rest) else np.zeros(len(B)),
        "participation": float(np.sum(c ** 2) ** 2 / np.sum(c ** 4)),
        "memorisation": float(np.max(along / (norms * np.linalg.norm(r)))),
    }
