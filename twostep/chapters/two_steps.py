r"""Chapter *Two steps, several spikes*: its experiment.

:func:`spike_experiment` draws one problem at :math:`N = n = d`, measures whether each
exact term :math:`T_k` of the second update is its predicted spike
(:func:`twostep.analysis.spikes.term_diagnostics`), and, through the exact step-size
rescaling of :class:`~twostep.analysis.rescaling.StepFamily`, the spectrum of
:math:`W_2` at many :math:`(\alpha_1, \alpha_2)` on the same draw.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_int, check_pairs, check_real, check_rng
from ..analysis.alignment import overlap
from ..analysis.decomposition import first_step_spike, second_step_terms, signal_part
from ..analysis.rescaling import StepFamily
from ..analysis.spectra import SVDS_TOL, bulk_edge, count_outliers, top_singular
from ..analysis.spikes import rank_one_sum_singular_values, term_diagnostics
from ..model.activations import as_activation
from ..model.steps import run_two_steps


def _check_settings(settings, name):
    return [(check_real(a1, f"{name}[{i}][0]", low=0.0, high=0.5, high_open=True),
             check_real(a2, f"{name}[{i}][1]", low=0.0, high=0.5, high_open=True))
            for i, (a1, a2) in enumerate(check_pairs(settings, name, "an (alpha1, alpha2) pair"))]


def spike_experiment(rng: np.random.Generator, N: int, batch: str, activation="poly4",
                     target="he1", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                     alpha2: float = 0.25, settings=(), grid=(), n_top: int = 6,
                     margin: float = 0.05, dtype="float32") -> dict:
    r"""One draw, :math:`N = n = d`: the term diagnostics and the spectrum of :math:`W_2` at many step sizes.

    Runs two steps with :math:`\eta_t = c_tN^{\alpha_t}` (reference exponents ``alpha1``,
    ``alpha2``), measures :func:`term_diagnostics`, and then, using the exact step-size
    rescaling of :class:`~twostep.analysis.rescaling.StepFamily` on the same draw (same
    constants :math:`c_1, c_2`):

    * for every :math:`(\alpha_1,\alpha_2)` in ``settings``: the top ``n_top`` singular values
      and the raw outlier counts of :math:`W_2` and :math:`W_1`; the singular values of the
      predicted spike part :math:`\eta_1\mu_1av^\top + \sum_kS_k` (:func:`rank_one_sum_singular_values`;
      reuse-aware :math:`\tilde S_k` for a reused batch); and the comparison of :math:`W_2` with
      :math:`W_{\rm lin} = W_1 + T_0` (one step of size :math:`\eta_1+\eta_2` when reused):
      :math:`\|W_2 - W_{\rm lin}\|_{op} = \|\sum_{k\ge1}T_k\|_{op}` and cosines of top right
      singular vectors with each other and with :math:`\beta^*`;
    * for every point of ``grid``: the raw outlier counts of :math:`W_2` and :math:`W_1` only.

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension (:math:`\psi = \phi = 1`).
    batch : {"reused", "fresh"}
    activation : str or PolynomialActivation
    target : str, Link, sequence of Link or Teacher
        The target (e.g. ``"he1"``); :math:`\beta^*` is its first direction.
    c1, alpha1, c2, alpha2 : float
        Reference step sizes :math:`c_t N^{\alpha_t}`.
    settings, grid : sequence of (alpha1, alpha2)
    n_top : int
        Number of top singular values computed per matrix (a count equal to ``n_top`` means
        "at least").
    margin : float
        Passed to :func:`twostep.count_outliers` (edge :math:`2(1+\text{margin})`).
    dtype : {"float32", "float64"}

    Returns
    -------
    dict
        The arrays of :func:`term_diagnostics` (shape ``(L,)``) and the step-free sizes
        ``top_free``, ``signal_free``, ``residual_free`` (divided by ``scale``); per setting
        (leading axis ``len(settings)``): ``settings_top`` ``(., n_top)``, ``settings_count``,
        ``settings_count_W1``, ``settings_spikes`` ``(., L + 1)``, ``settings_higher``,
        ``settings_lin_overlap``, ``settings_beta_two``, ``settings_beta_lin``; per grid point:
        ``grid_count``, ``grid_count_W1``.
    """
    check_rng(rng)
    N = check_int(N, "N", 8)
    activation = as_activation(activation)
    settings = _check_settings(settings, "settings")
    grid = _check_settings(grid, "grid")
    n_top = check_int(n_top, "n_top", 1)
    if n_top >= N - 1:
        raise ValueError(f"n_top must be < N - 1 = {N - 1}, got {n_top}")
    dtype = check_choice(dtype, "dtype", ("float32", "float64"))
    run = run_two_steps(N, N, N, activation, target, ((c1, alpha1), (c2, alpha2)), batch, rng,
                        dtype=np.dtype(dtype))
    terms = second_step_terms(run)
    out = term_diagnostics(run, terms=terms)
    for key in ("top", "signal", "residual"):
        out[key + "_free"] = out[key] / out["scale"]
    L = run.activation.degree
    first = first_step_spike(run.a, run.X1, run.y1, run.activation)   # per unit eta1
    parts_free = [signal_part(run, k) for k in range(L)]               # at the reference steps
    beta = run.teacher.directions[0].astype(float)
    eta1_ref, eta2_ref = run.eta1, run.eta2
    family = StepFamily(run, terms)  # rescales the terms in place
    del run, terms
    edge = bulk_edge(1.0)

    def right_vector(M):
        return top_singular(M, 1, vectors="right", tol=SVDS_TOL)[1][0].astype(float)

    def top_values(M, k):
        return top_singular(M, k, vectors=False, tol=SVDS_TOL)

    m = len(settings)
    for key, shape in (("settings_top", (m, n_top)), ("settings_spikes", (m, L + 1))):
        out[key] = np.zeros(shape)
    for key in ("settings_higher", "settings_lin_overlap", "settings_beta_two", "settings_beta_lin"):
        out[key] = np.zeros(m)
    out["settings_count"] = np.zeros(m, dtype=int)
    out["settings_count_W1"] = np.zeros(m, dtype=int)
    for i, (a1, a2) in enumerate(settings):
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        W2 = family.W2(e1, e2)
        s = top_values(W2, n_top)
        out["settings_top"][i] = s
        out["settings_count"][i] = count_outliers(s, edge, margin)
        out["settings_count_W1"][i] = count_outliers(top_values(family.W1(e1), n_top), edge, margin)
        parts = [first.scaled(e1)] + [p.scaled(e2 * e1 ** k / (eta2_ref * eta1_ref ** k))
                                      for k, p in enumerate(parts_free)]
        out["settings_spikes"][i] = rank_one_sum_singular_values(parts)
        out["settings_higher"][i] = top_values(family.higher_orders(e1, e2), 1)[0]
        r2, rlin = right_vector(W2), right_vector(family.linearised(e1, e2))
        del W2
        out["settings_lin_overlap"][i] = overlap(r2, rlin)
        out["settings_beta_two"][i] = overlap(r2, beta)
        out["settings_beta_lin"][i] = overlap(rlin, beta)

    out["grid_count"] = np.zeros(len(grid), dtype=int)
    out["grid_count_W1"] = np.zeros(len(grid), dtype=int)
    cache1 = {}
    for i, (a1, a2) in enumerate(grid):
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        out["grid_count"][i] = count_outliers(top_values(family.W2(e1, e2), n_top), edge, margin)
        if a1 not in cache1:
            cache1[a1] = count_outliers(top_values(family.W1(e1), n_top), edge, margin)
        out["grid_count_W1"][i] = cache1[a1]
    return out
