r"""Chapter *Reused versus fresh batches*: its experiments.

:func:`signal_overlap_experiment` measures, from data alone, the overlaps of the
signal directions :math:`u_k` (and of the reuse-aware :math:`\tilde u_k`) with the
target directions; :func:`reuse_experiment` trains the network and measures where
the top singular vectors of :math:`W_2` and of the exact term :math:`T_k` point.
Their large-:math:`n` limits are in :mod:`twostep.analysis.population`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._validation import check_alpha, check_choice, check_int, check_rng
from ..analysis.alignment import memorisation, overlaps, subspace_overlap, unmemorised_overlap
from ..analysis.decomposition import second_step_term, signal_directions, signal_part
from ..analysis.spectra import top_singular
from ..model.activations import get_activation
from ..model.steps import BATCHES, run_two_steps, step_size
from ..model.targets import make_teacher


def signal_overlap_experiment(rng: np.random.Generator, n: int, d: int, target, batch: str,
                              ks=(0, 1, 2, 3), activation=None) -> dict:
    r"""Draw a teacher and data and measure the overlaps of :math:`u_k` with the target directions.

    No network is needed: :math:`u_k` depends on the data only. For :func:`twostep.sweep`.

    Returns
    -------
    dict
        ``overlaps`` (``(len(ks), r)``) and ``norms`` (``(len(ks),)``) of the :math:`u_k`;
        with ``activation`` given, also ``overlaps_reuse`` (``(len(ks), r)``) of the
        reuse-aware :math:`\tilde u_k` (see :func:`signal_directions`).
    """
    check_rng(rng)
    n, d = check_int(n, "n"), check_int(d, "d")
    batch = check_choice(batch, "batch", BATCHES)
    teacher = make_teacher(target, d, rng)
    X1, y1 = teacher.sample(n, rng)
    second = teacher.sample(n, rng) if batch == "fresh" else (None, None)
    U = signal_directions(X1, y1, ks, *second)
    out = {"overlaps": overlaps(U, teacher.directions), "norms": np.linalg.norm(U, axis=1)}
    if activation is not None:
        Ur = signal_directions(X1, y1, ks, *second, activation=activation)
        out["overlaps_reuse"] = overlaps(Ur, teacher.directions)
    return out


def reuse_experiment(rng: np.random.Generator, N: int, target, batch: str, steps,
                     activation="poly4", term: int | None = 2, top: int = 8,
                     alpha2s=()) -> dict:
    r"""Two steps at :math:`N = n = d`, and where the learned directions point.

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension.
    target : see :func:`target_links`
    batch : {"reused", "fresh"}
    steps : ((c1, alpha1), (c2, alpha2))
    activation : PolynomialActivation or str
    term : int or None
        Order :math:`k` of the exact term :math:`T_k` whose top right singular vector is
        measured, and of the reuse-aware direction :math:`\tilde u_k`; ``None`` skips both
        (they cost one more :math:`N\times n\times d` product).
    top : int
        Number of top right singular vectors of :math:`W_2` to measure.
    alpha2s : sequence of float
        Other second-step exponents :math:`\alpha_2'` (same :math:`c_2`, same
        :math:`\alpha_1`) at which to measure the learned subspace of the *same draw*. Since
        :math:`W_2 - W_1 = \eta_2\sum_k\eta_1^k\hat T_k` (:mod:`twostep.rescaling`), at fixed
        :math:`\eta_1` the whole second update scales with :math:`\eta_2`:
        :math:`W_2' = W_1 + (\eta_2'/\eta_2)(W_2 - W_1)` exactly, so no new run is needed.

    Returns
    -------
    dict
        ``signal``: overlaps of :math:`u_0..u_{L-1}` with the directions, ``(L, r)``;
        ``top_values``: top singular values of :math:`W_2`, ``(top,)``;
        ``top_overlap``: their right vectors' overlaps, ``(top, r)``;
        ``top_memorisation``: their :func:`twostep.memorisation`, ``(top,)``;
        ``subspace`` and ``subspace_unmemorised``: overlap of the span of the first
        :math:`K` vectors, :math:`K = 1..top`, without and with memorised inputs set
        aside (:func:`unmemorised_overlap`), ``(top, r)``; if ``term`` is given
        ``signal_reuse`` (``(r,)``), ``term_value``, ``term_overlap`` (``(r,)``),
        ``term_memorisation``; if ``alpha2s`` is given, ``rescaled_subspace`` and
        ``rescaled_subspace_unmemorised``, ``(len(alpha2s), top, r)``, the same two
        quantities for :math:`W_2'` at each :math:`\alpha_2'`.
    """
    check_rng(rng)
    N = check_int(N, "N")
    top = check_int(top, "top")
    if isinstance(alpha2s, (int, float)) or not isinstance(alpha2s, Sequence):
        raise TypeError(f"alpha2s must be a sequence of exponents in [0, 1/2), got {alpha2s!r}")
    alpha2s = [check_alpha(a2, "alpha2s") for a2 in alpha2s]
    if isinstance(activation, str):
        activation = get_activation(activation)
    teacher = make_teacher(target, N, rng)
    run = run_two_steps(N, N, N, activation, teacher, steps, batch, rng)
    B = teacher.directions
    L = activation.degree
    second = (None, None) if run.batch == "reused" else (run.X2, run.y2)
    out = {"signal": overlaps(signal_directions(run.X1, run.y1, range(L), *second), B)}
    if term is not None:
        term = check_int(term, "term", 0)
        out["signal_reuse"] = overlaps(signal_part(run, term, "auto").right, B)[0]
        T = second_step_term(run, term)
        s, _, Vt = top_singular(T, 1)
        del T
        out["term_value"] = float(s[0])
        out["term_overlap"] = overlaps(Vt, B)[0]
        out["term_memorisation"] = memorisation(Vt[0], run.X2)[0]
    s, _, Vt = top_singular(run.W2, top)
    out["top_values"] = s
    out["top_overlap"] = overlaps(Vt, B)
    out["top_memorisation"] = np.array([memorisation(v, run.X2)[0] for v in Vt])
    out["subspace"], out["subspace_unmemorised"] = _learned_subspace(Vt, B, run.X2)
    if alpha2s:
        update = run.W2 - run.W1
        sub, unm = [], []
        for a2 in alpha2s:
            scale = step_size(run.params["c2"], a2, N) / run.eta2
            _, _, Vt = top_singular(run.W1 + scale * update, top)
            sub_a2, unm_a2 = _learned_subspace(Vt, B, run.X2)
            sub.append(sub_a2)
            unm.append(unm_a2)
        out["rescaled_subspace"], out["rescaled_subspace_unmemorised"] = np.array(sub), np.array(unm)
    return out


def _learned_subspace(Vt, B, X):
    # Overlaps of the spans of the first K rows of Vt, K = 1..len(Vt): raw and with memorised
    # inputs set aside; each (len(Vt), r).
    raw = np.array([subspace_overlap(Vt[:K], B) for K in range(1, len(Vt) + 1)])
    clean = np.array([unmemorised_overlap(Vt[:K], B, X) for K in range(1, len(Vt) + 1)])
    return raw, clean
