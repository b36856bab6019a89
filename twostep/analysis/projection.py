r"""The exact term seen through its predicted left vector: an alignment test that memorised
inputs cannot fake.

Under reuse the top singular vectors of the exact term :math:`T_k` are often single training
inputs (memorised (neuron, sample) pieces), and such an input, selected for its large label,
carries an overlap of a few times :math:`1/\sqrt d` with :math:`\beta^\star` by itself. The
theory says more than "the top vector is aligned": it says :math:`T_k` contains the spike
:math:`S_k\propto a^{\circ(k+1)}\tilde u_k^\top`. So look at :math:`T_k` through that left
vector,

.. math::
    r_k = T_k^\top a^{\circ(k+1)} = X_2^\top w,\qquad
    w_j = \frac{\eta_2}{n\,k!}\,y_j\sum_i a_i^{k+2}\,\sigma^{(k+1)}(P_{ij})\,\Delta_{ij}^k ,

a weighted sum of *all* training inputs (:func:`twostep.analysis._core.term_weights`),
which tends to :math:`\tilde u_k`'s direction when the spike dominates and whose overlap with
:math:`\beta^\star` is :math:`O(1)`, not :math:`O(1/\sqrt d)`. :func:`projected_alignment`
measures it with three controls on the same run:

* a left vector with the same entry sizes and random signs, :math:`|a|^{\circ(k+1)}\odot\varepsilon`:
  it sees the same memorised pieces but not the spike;
* the memorised-input null: the inputs that dominate :math:`r_k` (largest
  :math:`|w_j|\,\|x_j\|`), whose span's overlap with :math:`\beta^\star` is the most that
  those inputs could carry on their own;
* :math:`r_k` with those inputs' contributions removed.
"""

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
    r"""The exact term :math:`T_k` seen through its predicted left vector, with its controls.

    Parameters
    ----------
    run : TwoStepRun
        With a polynomial activation (numpy, CuPy or PyTorch arrays).
    k : int
        Order of the term, in :math:`[0, L-1]`.
    signs : array of shape (N,)
        Random signs :math:`\varepsilon_i = \pm1` for the control left vector
        :math:`|a|^{\circ(k+1)}\odot\varepsilon` (draw them from the experiment's generator, the
        same for the reused and the fresh run of a pair), on ``run``'s device.
    memorised : int
        Number :math:`m` of dominant inputs in the memorised-input null, in :math:`[1, n]`.
    pre : (P, D), optional
        :func:`twostep.analysis.decomposition.pre_activations` of ``run``, if already computed.

    Returns
    -------
    dict
        ``overlap`` ``(r,)``: :math:`|\cos(T_k^\top a^{\circ(k+1)}, \beta^\star_r)|`;
        ``random_sign`` ``(r,)``: the same with the random-sign left vector;
        ``memorised_null`` ``(r,)``: overlap of the span of the :math:`m` inputs with the largest
        :math:`|w_j|\,\|x_j\|` with :math:`\beta^\star_r` (:func:`twostep.subspace_overlap`);
        ``without_memorised`` ``(r,)``: overlap of :math:`\sum_{j\notin J}w_jx_j`, the projection
        without those :math:`m` inputs; ``participation``: :math:`(\sum_jc_j^2)^2/\sum_jc_j^4`
        with :math:`c_j = |w_j|\|x_j\|`, the effective number of inputs in :math:`r_k`;
        ``memorisation``: :math:`\max_j|\cos(r_k, x_j)|`.
    """
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
