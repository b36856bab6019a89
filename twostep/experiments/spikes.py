r"""Single runs of two steps (chapter *Two steps*): the exact terms against their spikes and the
spectrum of W2 at many step sizes of one draw (:func:`spike_experiment`, swept over widths and
seeds by the chapter and run at scale), and the chapter's single draws: how exact the
decomposition is, the pair a reused draw memorises, the spectra at several step sizes and the
components along the powers of :math:`a`."""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from .._validation import (check_alpha_pairs, check_bool, check_choice, check_dtype_name,
                           check_int, check_real, check_rng, check_steps)
from ..analysis.alignment import _overlap, overlaps
from ..analysis.decomposition import _first_step_spike, _second_step_terms, _signal_part
from ..analysis.lanczos import block_lanczos
from ..analysis.rescaling import StepFamily
from ..analysis.spectra import _top_singular, bulk_edge, count_outliers, singular_values
from ..analysis.spikes import (_own_bulk_edge, _term_diagnostics, power_projections,
                               power_projections_null, predicted_spikes,
                               rank_one_sum_singular_values, spike_core)
from ..analysis.theory import n_spikes, spike_terms
from ..model.activations import as_activation
from ..model.steps import BATCHES, _draw_problem, _measured_both, _two_steps


def _polynomial(activation, name="activation"):
    act = as_activation(activation)
    if not getattr(act, "degree", None):
        raise ValueError(f"{name} must be a polynomial activation (e.g. 'poly4'), got {act!r}")
    return act


def _entry(rng, N, activation, c1, alpha1, c2, alpha2):
    # The arguments every run of the chapter checks on entry: N, a polynomial activation and
    # the step sizes ((c1, alpha1), (c2, alpha2)).
    check_rng(rng)
    return check_int(N, "N", 8), _polynomial(activation), check_steps(((c1, alpha1), (c2, alpha2)))


def _run(rng, N, batch, activation, target, steps, dtype="float32", keep_pre=True, second=True):
    # One draw at N = n = d and its two steps, on checked arguments (second: as _two_steps).
    problem = _draw_problem(N, N, N, target, batch, rng, 0.0, np.dtype(dtype))
    return _two_steps(problem, activation, steps, keep_pre, second=second)


def _spike_parts(first, parts, eta_ref, eta1, eta2):
    # The predicted spike part at step sizes (eta1, eta2) as rank-one parts: the first spike
    # (per unit eta1) and the signal parts measured at the reference steps eta_ref, rescaled.
    return [first.scaled(eta1)] + [p.scaled(eta2 * eta1 ** k / (eta_ref[1] * eta_ref[0] ** k))
                                   for k, p in enumerate(parts)]


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
    * for every point of ``grid``: the raw outlier count of :math:`W_2` only.

    Per setting it also counts :math:`W_2`'s outliers against its own bulk edge
    (:func:`twostep.analysis.spikes.own_bulk_edge`: the predicted spikes' left span projected
    out) instead of :math:`W_0`'s edge 2. With ``corrected`` the term diagnostics also compare
    with :math:`S_k^{\rm corr}` and the predicted spike strengths are recomputed with it.

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension (:math:`\psi = \phi = 1`).
    batch : {"reused", "fresh", "both"}
        ``"both"``: the two runs of one draw, the first step taken once (each run bit for bit
        the one its batch gives alone); the result is then ``{"reused": {...}, "fresh": {...}}``.
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
        The arrays of :func:`term_diagnostics` (shape ``(L,)``) and the step-free size
        ``top_free`` (``top`` divided by ``scale``); per setting
        (leading axis ``len(settings)``): ``settings_top`` ``(., n_top)``, ``settings_count``,
        ``settings_count_W1``, ``settings_spikes`` ``(., L + 1)``, ``settings_higher``,
        ``settings_lin_overlap``, ``settings_beta_two``, ``settings_beta_lin``,
        ``settings_edge_own``, ``settings_count_own`` (and ``settings_spikes_corrected`` with
        ``corrected``); per grid point: ``grid_count``; and the spike sum's
        step-free core (:func:`~twostep.analysis.spikes.spike_core` of the first spike per unit
        :math:`\eta_1` and each :math:`S_k` per unit :math:`\eta_2\eta_1^k`, corrected with
        ``corrected``): ``core_left``, ``core_right`` ``(L + 1, L + 1)``, ``core_free`` ``(L + 1,)``.
    """
    N, activation, steps = _entry(rng, N, activation, c1, alpha1, c2, alpha2)
    batch = check_choice(batch, "batch", (*BATCHES, "both"))
    settings = check_alpha_pairs(settings, "settings")
    grid = check_alpha_pairs(grid, "grid")
    n_top = check_int(n_top, "n_top", 1)
    if n_top >= N - 1:
        raise ValueError(f"n_top must be < N - 1 = {N - 1}, got {n_top}")
    margin = check_real(margin, "margin", low=0.0)
    dt = check_dtype_name(dtype)
    check_bool(corrected, "corrected")
    measure = partial(_spike_measures, settings=settings, grid=grid, n_top=n_top, margin=margin,
                      corrected=corrected, c1=c1, c2=c2, shared={})
    if batch == "both":
        problem = _draw_problem(N, N, N, target, "fresh", rng, 0.0, np.dtype(dt))
        return _measured_both(problem, activation, steps, True, measure, second=False)
    return measure(_run(rng, N, batch, activation, target, steps, dt, second=False))


def _spike_measures(run, settings, grid, n_top, margin, corrected, c1, c2, shared) -> dict:
    # spike_experiment's measurements of one run, on checked arguments. The run has no W2
    # (second=False): every W2 measured is rebuilt from the exact terms (StepFamily). ``shared``
    # holds what the two runs of batch="both" have in common (their W1 at every setting, the
    # same first step): measured on the first run, taken as it is by the second.
    N = run.N
    terms = _second_step_terms(run, reuse_first=True)
    out = _term_diagnostics(run, "auto", terms, False, corrected)
    out["top_free"] = out["top"] / out["scale"]
    L = run.activation.degree
    first = _first_step_spike(run.a, run.X1, run.y1, run.activation)  # per unit eta1
    parts_free = [_signal_part(run, k, "auto", False) for k in range(L)]  # at the reference steps
    parts_corr = [_signal_part(run, k, "auto", True) for k in range(L)] if corrected else []
    # The spike sum's core per unit step sizes: its singular values at any (eta1, eta2) cost a
    # (L+1) x (L+1) SVD (the map over the (alpha1, alpha2) plane, twostep.analysis.plane).
    eta_ref = (run.eta1, run.eta2)
    out["core_left"], out["core_right"], out["core_free"] = spike_core(
        _spike_parts(first, parts_corr or parts_free, eta_ref, 1.0, 1.0))
    a = run.a.astype(float)
    beta = run.teacher.directions[0].astype(float)
    family = StepFamily(run, terms)  # rescales the terms in place
    del run, terms
    edge = bulk_edge(1.0)

    # Spectra by block Lanczos, as at scale: ARPACK's single-vector iterations were about a
    # third of this function's time.
    def right_vector(M):
        return block_lanczos(M, 1)[2][:, 0].astype(float)

    def top_values(M, k):
        return block_lanczos(M, k, vectors=False)[0]

    threshold = (1 + margin) * edge

    def count(M, start=None):
        # Outliers among the top n_top, decided by block Lanczos's count test (a Ritz value
        # above the threshold is final at once, one below it once its interval lies below):
        # the values are not needed, and a count of values at a bulk's edge costs ARPACK ten
        # times more. Returns the count and the top Ritz
        # vectors, which warm-start the next matrix of a sweep.
        s, _, _, Q, _ = block_lanczos(M, n_top, vectors=False, above=threshold, start=start)
        return int(np.sum(s > threshold)), Q.T

    m = len(settings)
    shapes = dict(top=(m, n_top), spikes=(m, L + 1), higher=m, lin_overlap=m, beta_two=m,
                  beta_lin=m, edge_own=m, **({"spikes_corrected": (m, L + 1)} if corrected else {}))
    out.update({f"settings_{key}": np.zeros(shape) for key, shape in shapes.items()})
    out.update({f"settings_{key}": np.zeros(m, int) for key in ("count", "count_W1", "count_own")})
    for i, (a1, a2) in enumerate(settings):
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        W2 = family._W2(e1, e2)
        s = top_values(W2, n_top)
        out["settings_top"][i] = s
        out["settings_count"][i] = int(np.sum(s > threshold))
        if ("count_W1", i) not in shared:
            shared[("count_W1", i)] = count(family._W1(e1))[0]
        out["settings_count_W1"][i] = shared[("count_W1", i)]
        out["settings_spikes"][i] = rank_one_sum_singular_values(
            _spike_parts(first, parts_free, eta_ref, e1, e2))
        if corrected:
            out["settings_spikes_corrected"][i] = rank_one_sum_singular_values(
                _spike_parts(first, parts_corr, eta_ref, e1, e2))
        out["settings_edge_own"][i] = _own_bulk_edge(W2, a, L)
        out["settings_count_own"][i] = int(np.sum(s > out["settings_edge_own"][i] * (1 + margin)))
        out["settings_higher"][i] = top_values(family._terms_from(1, e1, e2), 1)[0]
        r2, rlin = right_vector(W2), right_vector(family._linearised(e1, e2))
        del W2
        out["settings_lin_overlap"][i] = _overlap(r2, rlin)
        out["settings_beta_two"][i] = _overlap(r2, beta)
        out["settings_beta_lin"][i] = _overlap(rlin, beta)

    out["grid_count"], start = np.zeros(len(grid), dtype=int), None
    for i, (a1, a2) in enumerate(grid):
        out["grid_count"][i], start = count(family._W2(c1 * N ** a1, c2 * N ** a2), start)
    return out


# --------------------------------------------------------------------------- single draws

def decomposition_check(rng: np.random.Generator, *, N: int, activation="poly4", target="he1",
                        c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                        alpha2: float = 0.25, other=((1.0, 0.1), (0.5, 0.45))) -> dict:
    r"""How exact the decomposition :math:`W_2 - W_1 = \sum_kT_k` and the step-size rescaling are.

    Trains one draw (float64, :math:`N = n = d`, each run from a copy of ``rng``) with both
    batch schemes at :math:`\eta_t = \kappa_tN^{\alpha_t}`, and the same reused draw at the
    step sizes ``other`` :math:`= ((\kappa_1,\alpha_1), (\kappa_2,\alpha_2))`. Returns
    ``sum_error`` (by batch) :math:`\|\sum_kT_k - (W_2-W_1)\|_F/\|W_2-W_1\|_F`;
    ``scale_error`` :math:`\max_k\|T_k' - \eta_2'\eta_1'^k\hat T_k\|_F/\|T_k'\|_F`, the terms
    at ``other`` rebuilt from the reference run (:class:`StepFamily`); ``w2_error``, the same
    for :math:`W_2'`.
    """
    N, activation, steps = _entry(rng, N, activation, c1, alpha1, c2, alpha2)
    other = check_steps(other)
    runs = {b: _run(copy.deepcopy(rng), N, b, activation, target, steps, "float64", False)
            for b in ("fresh", "reused")}
    moved = _run(copy.deepcopy(rng), N, "reused", activation, target, other, "float64", False)
    family = StepFamily(runs["reused"])

    def error(M, exact):    # relative, in Frobenius norm
        return float(np.linalg.norm(M - exact) / np.linalg.norm(exact))

    return dict(sum_error={b: error(sum(_second_step_terms(r)), r.W2 - r.W1) for b, r in runs.items()},
                scale_error=max(error(family.term(k, moved.eta1, moved.eta2), T)
                                for k, T in enumerate(_second_step_terms(moved))),
                w2_error=error(family.W2(moved.eta1, moved.eta2), moved.W2))


def one_draw(rng: np.random.Generator, *, N: int, batch: str = "fresh", activation="poly4",
             target="he1", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
             alpha2: float = 0.25, settings=((0.4, 0.25),)) -> dict:
    r"""One draw (float32, :math:`N = n = d`) rescaled to each :math:`(\alpha_1,\alpha_2)` of
    ``settings`` (:class:`StepFamily`, the constants :math:`\kappa_1, \kappa_2` kept): its
    spectra and predicted spikes there, the top vectors of its terms, and the neuron and
    sample that carry the top singular pair of the highest term.

    Returns ``spec``, per setting a dict: ``a1``, ``a2``, ``lam`` (:math:`\Lambda`), ``sv2``
    and ``sv_lin`` (the spectra of :math:`W_2` and of :math:`W_{\rm lin} = W_1 + T_0`, one step
    of size :math:`\eta_1+\eta_2` for a reused batch, ``(N,)``), ``sv1`` (top 6 of :math:`W_1`),
    ``learned`` (top 8 of :math:`W_2-W_0`), ``sizes`` :math:`\|S_k\|` and ``strengths`` (the top
    ``L`` singular values of the predicted spike part :math:`\eta_1\mu_1av^\top + \sum_kS_k`,
    :func:`rank_one_sum_singular_values`), ``(L,)``, and the outlier counts ``n2``, ``n1``
    beyond :math:`2(1.05)`; ``W0`` (the spectrum of :math:`W_0`), ``a`` ``(N,)``; ``U``
    ``(L, N)``, the top left vectors of the :math:`T_k` at the reference steps, ``left`` their
    cosines with :math:`a^{\circ(k+1)}`; ``second_cos_a2``, the cosine of :math:`W_2`'s second
    left singular vector at the last setting with :math:`a^{\circ2}`. For
    :math:`i^\star = \arg\max_i|U_i|` (the top left vector :math:`U` of :math:`T_{L-1}`) and
    :math:`j^\star = \arg\max_j|\langle x_j, V\rangle|/\|x_j\|` (its top right vector
    :math:`V`, the second batch's inputs): ``loc`` :math:`= |U_{i^\star}|`, ``cos`` (that
    largest cosine), ``P`` :math:`= P_{i^\star j^\star}`, ``dsigma``
    :math:`= \sigma'(P_{i^\star j^\star})`, ``rank_P`` (the fraction of the neuron's
    :math:`|P_{i^\star j}|` below it), ``y`` :math:`= y_{j^\star}`, ``rank_y``.
    """
    N, activation, steps = _entry(rng, N, activation, c1, alpha1, c2, alpha2)
    batch = check_choice(batch, "batch", BATCHES)
    settings = check_alpha_pairs(settings, "settings")
    L = activation.degree
    run = _run(rng, N, batch, activation, target, steps)
    terms = _second_step_terms(run)
    diag = _term_diagnostics(run, "auto", terms, True, False)
    i_star = int(np.argmax(np.abs(diag["U"][L - 1])))
    cosines = np.abs(run.X2 @ diag["Vt"][L - 1]) / np.linalg.norm(run.X2, axis=1)
    j_star = int(np.argmax(cosines))
    P_row = run.W0[i_star] @ run.X2.T          # neuron i's pre-activations on all samples
    P_star = float(P_row[j_star])
    out = dict(loc=float(abs(diag["U"][L - 1][i_star])), cos=float(cosines[j_star]), P=P_star,
               dsigma=float(activation.derivative(P_star, 1)),
               rank_P=float(np.mean(np.abs(P_row) < abs(P_star))), y=float(run.y2[j_star]),
               rank_y=float(np.mean(np.abs(run.y2) < abs(run.y2[j_star]))),
               W0=singular_values(run.W0), a=run.a.astype(float), U=np.asarray(diag["U"]),
               left=np.asarray(diag["left"]), spec=[])
    first = _first_step_spike(run.a, run.X1, run.y1, activation)   # mu1 a v^T
    parts_ref = [_signal_part(run, k, "auto", False) for k in range(L)]
    eta_ref = (run.eta1, run.eta2)
    family = StepFamily(run, terms)   # rescales terms in place
    del terms
    for a1, a2 in settings:
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        W2 = family.W2(e1, e2)
        sv2 = singular_values(W2)
        sv1 = _top_singular(family.W1(e1), 6)[0]
        parts = _spike_parts(first, parts_ref, eta_ref, e1, e2)
        out["spec"].append(dict(
            a1=a1, a2=a2, lam=n_spikes(a1, a2, L), sv2=sv2,
            sv_lin=singular_values(family.linearised(e1, e2)), sv1=sv1,
            learned=_top_singular(W2 - family.W0, 8)[0], sizes=np.array([p.value for p in parts[1:]]),
            strengths=rank_one_sum_singular_values(parts)[:L], n2=count_outliers(sv2, 2.0),
            n1=count_outliers(sv1, 2.0)))
    U2 = _top_singular(W2, 2)[1]     # the second singular pair of W2 at the last setting
    out["second_cos_a2"] = float(abs(U2[:, 1].astype(float) @ parts_ref[1].left))
    return out


def power_components(rng: np.random.Generator, *, N: int, activation="poly4", target="he1",
                     c1: float = 0.2, alpha1: float = 0.45, c2: float = 0.2, alpha2: float = 0.3,
                     powers: int = 6, null_seed: int = 1) -> dict:
    r"""Components of :math:`W_2-W_1` along the orthonormalised powers :math:`q_m` of :math:`a`.

    One fresh draw (float32, :math:`N = n = d`, :math:`\eta_t = \kappa_tN^{\alpha_t}`, any
    activation with Hermite coefficients, e.g. ``"tanh"``): ``measured``
    :math:`\|q_m^\top(W_2-W_1)\|` (:func:`~twostep.analysis.spikes.power_projections`),
    ``predicted`` (the same for :math:`\sum_kS_k`, :func:`predicted_spikes`), ``null``
    (random-sign directions, ``default_rng(null_seed)``) and ``ratio`` (measured / null), each
    ``(powers,)``; ``mu``, :math:`\mu_0..\mu_8` (0 below :math:`10^{-12}`); ``terms``, the
    orders :math:`1\le k\le\Lambda` with :math:`\mu_{k+1}\ne0` (:func:`twostep.spike_terms`);
    ``degree``.
    """
    check_rng(rng)
    N, activation = check_int(N, "N", 8), as_activation(activation)
    steps = check_steps(((c1, alpha1), (c2, alpha2)))
    powers = check_int(powers, "powers", 1)
    run = _run(rng, N, "fresh", activation, target, steps, keep_pre=False)
    update = run.W2 - run.W1
    predicted_sum = sum(S.matrix() for S in predicted_spikes(run, powers))
    mu = np.array(activation.hermite_coefficients(8))
    mu[np.abs(mu) < 1e-12] = 0.0
    measured = power_projections(update, run.a, powers)
    null = power_projections_null(update, run.a, powers,
                                  np.random.default_rng(check_int(null_seed, "null_seed", 0)))
    return dict(measured=measured, predicted=power_projections(predicted_sum, run.a, powers),
                null=null, ratio=measured / null, mu=mu, degree=activation.degree,
                terms=spike_terms(alpha1, alpha2, mu[: (activation.degree + 1 if activation.degree else 8)]))
