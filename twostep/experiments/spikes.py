r"""Single runs of two steps (chapter *Two steps*): the exact terms against their spikes and the spectrum of W2 at many step sizes of one draw."""

from __future__ import annotations

import numpy as np

from .._validation import (check_alpha, check_alpha_pairs, check_bool, check_choice,
                           check_dtype_name, check_int, check_ints, check_pairs, check_real,
                           check_rng, check_steps)
from ..analysis.alignment import _overlap, overlaps
from ..analysis.decomposition import _first_step_spike, _second_step_terms, _signal_part
from ..analysis.lanczos import block_lanczos
from ..analysis.rescaling import StepFamily
from ..analysis.spectra import _top_singular, bulk_edge
from ..analysis.spikes import (_own_bulk_edge, _term_diagnostics, rank_one_sum_singular_values,
                               spike_core)
from ..model.activations import as_activation
from ..model.steps import BATCHES, _draw_problem, _two_steps
from ..model.targets import Link, get_link


# --------------------------------------------------------------------------- checks
# The pages of *Two steps* check their arguments with these (twostep.pages.two_steps).

_check_settings = check_alpha_pairs
_check_ints = check_ints


def _check_alpha_pair(pair, name):
    (a1, a2), = check_pairs([pair], name, "an (alpha1, alpha2) pair")
    return check_alpha(a1, f"{name}[0]"), check_alpha(a2, f"{name}[1]")


def _target(target):
    if isinstance(target, str):
        return get_link(target)
    if not isinstance(target, Link):
        raise TypeError(f"target must be a link name such as 'he1' or a Link, got {type(target).__name__}")
    return target


def _polynomial(activation, name="activation"):
    act = as_activation(activation)
    if not getattr(act, "degree", None):
        raise ValueError(f"{name} must be a polynomial activation (e.g. 'poly4'), got {act!r}")
    return act


def _steps(c, ref):
    return ((c, ref[0]), (c, ref[1]))


# --------------------------------------------------------------------------- the experiment

def two_step_spectrum(rng: np.random.Generator, *, N: int, n: int | None = None,
                      d: int | None = None, activation="poly4", target="he1",
                      batch: str = "reused", c1: float = 0.2, alpha1: float = 0.4,
                      c2: float = 0.2, alpha2: float = 0.25, top: int = 4,
                      dtype="float64") -> dict:
    r"""Two steps, then the top of :math:`W_2`'s spectrum and where its right vectors point.

    Parameters
    ----------
    rng : numpy.random.Generator
    N, n, d : int
        Width, batch size and dimension (``n`` and ``d`` default to ``N``).
    activation, target : names or objects (see :func:`twostep.run_two_steps`)
    batch : {"reused", "fresh"}
    c1, alpha1, c2, alpha2 : float
        Step sizes :math:`\eta_t = \kappa_tN^{\alpha_t}`.
    top : int
        Number of singular values, ``1 <= top < min(N, d)``.
    dtype : {"float64", "float32"}

    Returns
    -------
    dict
        ``top``: :math:`s_1 \ge \dots \ge s_{\rm top}` of :math:`W_2`, ``(top,)``;
        ``overlap``: :math:`|\langle v_i, \beta_j^*\rangle|` of their right vectors,
        ``(top, r)``; ``eta1``, ``eta2``.
    """
    check_rng(rng)
    N = check_int(N, "N")
    n, d = check_int(N if n is None else n, "n"), check_int(N if d is None else d, "d")
    top = check_int(top, "top", 1)
    if top >= min(N, d):
        raise ValueError(f"top must be in [1, min(N, d) - 1] = [1, {min(N, d) - 1}], got {top}")
    activation = as_activation(activation)
    steps = check_steps(((c1, alpha1), (c2, alpha2)))
    problem = _draw_problem(N, n, d, target, check_choice(batch, "batch", BATCHES), rng, 0.0,
                            check_dtype_name(dtype))
    run = _two_steps(problem, activation, steps, False)
    s, _, Vt = _top_singular(run.W2, top)
    return {"top": s.astype(float), "overlap": overlaps(Vt.astype(float), run.teacher.directions),
            "eta1": run.eta1, "eta2": run.eta2}


def spike_experiment(rng: np.random.Generator, *, N: int, batch: str = "reused",
                     activation="poly4", target="he1", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                     alpha2: float = 0.25, settings=(), grid=(), n_top: int = 6,
                     margin: float = 0.05, dtype="float32", corrected: bool = False) -> dict:
    r"""One draw, :math:`N = n = d`: the term diagnostics and the spectrum of :math:`W_2` at many step sizes.

    Runs two steps with :math:`\eta_t = \kappa_tN^{\alpha_t}` (reference exponents ``alpha1``,
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

    Per setting it also counts :math:`W_2`'s outliers against its own bulk edge
    (:func:`twostep.analysis.spikes.own_bulk_edge`: the predicted spikes' left span projected
    out) instead of :math:`W_0`'s edge 2. With ``corrected`` the term diagnostics also compare
    with :math:`S_k^{\rm corr}` and the predicted spike strengths are recomputed with it.

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
        Reference step sizes :math:`\kappa_t N^{\alpha_t}`.
    settings, grid : sequence of (alpha1, alpha2)
    n_top : int
        Number of top singular values computed per matrix (a count equal to ``n_top`` means
        "at least").
    margin : float
        Passed to :func:`twostep.count_outliers` (edge :math:`2(1+\text{margin})`).
    dtype : {"float32", "float64"}
    corrected : bool
        Also measure against the corrected signal parts :math:`S_k^{\rm corr}`.

    Returns
    -------
    dict
        The arrays of :func:`term_diagnostics` (shape ``(L,)``) and the step-free sizes
        ``top_free``, ``signal_free``, ``residual_free`` (divided by ``scale``); per setting
        (leading axis ``len(settings)``): ``settings_top`` ``(., n_top)``, ``settings_count``,
        ``settings_count_W1``, ``settings_spikes`` ``(., L + 1)``, ``settings_higher``,
        ``settings_lin_overlap``, ``settings_beta_two``, ``settings_beta_lin``,
        ``settings_edge_own``, ``settings_count_own`` (and ``settings_spikes_corrected`` with
        ``corrected``); per grid point: ``grid_count``, ``grid_count_W1``; and the spike sum's
        step-free core (:func:`~twostep.analysis.spikes.spike_core` of the first spike per unit
        :math:`\eta_1` and each :math:`S_k` per unit :math:`\eta_2\eta_1^k`, corrected with
        ``corrected``): ``core_left``, ``core_right`` ``(L + 1, L + 1)``, ``core_free`` ``(L + 1,)``.
    """
    check_rng(rng)
    N = check_int(N, "N", 8)
    batch = check_choice(batch, "batch", BATCHES)
    activation = _polynomial(activation)
    steps = check_steps(((c1, alpha1), (c2, alpha2)))
    settings = check_alpha_pairs(settings, "settings")
    grid = check_alpha_pairs(grid, "grid")
    n_top = check_int(n_top, "n_top", 1)
    if n_top >= N - 1:
        raise ValueError(f"n_top must be < N - 1 = {N - 1}, got {n_top}")
    margin = check_real(margin, "margin", low=0.0)
    dt = check_dtype_name(dtype)
    check_bool(corrected, "corrected")
    run = _two_steps(_draw_problem(N, N, N, target, batch, rng, 0.0, dt), activation, steps, True)
    terms = _second_step_terms(run)
    out = _term_diagnostics(run, "auto", terms, False, corrected)
    for key in ("top", "signal", "residual"):
        out[key + "_free"] = out[key] / out["scale"]
    L = run.activation.degree
    first = _first_step_spike(run.a, run.X1, run.y1, run.activation)  # per unit eta1
    parts_free = [_signal_part(run, k, "auto", False) for k in range(L)]  # at the reference steps
    parts_corr = [_signal_part(run, k, "auto", True) for k in range(L)] if corrected else []
    # The spike sum's core per unit step sizes: its singular values at any (eta1, eta2) cost a
    # (L+1) x (L+1) SVD (the map over the (alpha1, alpha2) plane, twostep.analysis.plane).
    out["core_left"], out["core_right"], out["core_free"] = spike_core(
        [first] + [p.scaled(1.0 / (run.eta2 * run.eta1 ** k))
                   for k, p in enumerate(parts_corr or parts_free)])
    a = run.a.astype(float)
    beta = run.teacher.directions[0].astype(float)
    eta1_ref, eta2_ref = run.eta1, run.eta2
    family = StepFamily(run, terms)  # rescales the terms in place
    del run, terms
    edge = bulk_edge(1.0)

    # Spectra by block Lanczos, as at scale: ARPACK's single-vector iterations cost 6.4 s of
    # this function's 20.7 s at N = 4000 on one core.
    def right_vector(M):
        return block_lanczos(M, 1)[2][:, 0].astype(float)

    def top_values(M, k):
        return block_lanczos(M, k, vectors=False)[0]

    threshold = (1 + margin) * edge

    def count(M, start=None):
        # Outliers among the top n_top, decided by block Lanczos's count test (a Ritz value
        # above the threshold is final at once, one below it once its interval lies below):
        # the values are not needed, and a count of values at a bulk's edge costs ARPACK ten
        # times more (1.5 s against 0.14 s at N = 4000). Returns the count and the top Ritz
        # vectors, which warm-start the next matrix of a sweep.
        s, _, _, Q, _ = block_lanczos(M, n_top, vectors=False, above=threshold, start=start)
        return int(np.sum(s > threshold)), Q.T

    m = len(settings)
    for key, shape in (("settings_top", (m, n_top)), ("settings_spikes", (m, L + 1))):
        out[key] = np.zeros(shape)
    for key in ("settings_higher", "settings_lin_overlap", "settings_beta_two", "settings_beta_lin"):
        out[key] = np.zeros(m)
    out["settings_count"] = np.zeros(m, dtype=int)
    out["settings_count_W1"] = np.zeros(m, dtype=int)
    out["settings_count_own"] = np.zeros(m, dtype=int)
    out["settings_edge_own"] = np.zeros(m)
    if corrected:
        out["settings_spikes_corrected"] = np.zeros((m, L + 1))
    for i, (a1, a2) in enumerate(settings):
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        W2 = family._W2(e1, e2)
        s = top_values(W2, n_top)
        out["settings_top"][i] = s
        out["settings_count"][i] = int(np.sum(s > threshold))
        out["settings_count_W1"][i] = count(family._W1(e1))[0]
        parts = [first.scaled(e1)] + [p.scaled(e2 * e1 ** k / (eta2_ref * eta1_ref ** k))
                                      for k, p in enumerate(parts_free)]
        out["settings_spikes"][i] = rank_one_sum_singular_values(parts)
        if corrected:
            out["settings_spikes_corrected"][i] = rank_one_sum_singular_values(
                [first.scaled(e1)] + [p.scaled(e2 * e1 ** k / (eta2_ref * eta1_ref ** k))
                                      for k, p in enumerate(parts_corr)])
        out["settings_edge_own"][i] = _own_bulk_edge(W2, a, L)
        out["settings_count_own"][i] = int(np.sum(s > out["settings_edge_own"][i] * (1 + margin)))
        out["settings_higher"][i] = top_values(family._terms_from(1, e1, e2), 1)[0]
        r2, rlin = right_vector(W2), right_vector(family._linearised(e1, e2))
        del W2
        out["settings_lin_overlap"][i] = _overlap(r2, rlin)
        out["settings_beta_two"][i] = _overlap(r2, beta)
        out["settings_beta_lin"][i] = _overlap(rlin, beta)

    out["grid_count"] = np.zeros(len(grid), dtype=int)
    out["grid_count_W1"] = np.zeros(len(grid), dtype=int)
    cache1, start = {}, None
    for i, (a1, a2) in enumerate(grid):
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        out["grid_count"][i], start = count(family._W2(e1, e2), start)
        if a1 not in cache1:
            cache1[a1] = count(family._W1(e1))[0]
        out["grid_count_W1"][i] = cache1[a1]
    return out
