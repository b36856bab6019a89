r"""Single runs of two steps (chapter *Two steps*): the exact terms against their spikes and
:math:`W_2`'s spectrum at many step sizes of one draw, and the chapter's single draws."""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from .._validation import (check_alpha_pairs, check_bool, check_choice, check_dtype_name,
                           check_int, check_real, check_rng, check_steps)
from ..analysis._core import (first_step_spike_core, overlap_core, own_bulk_edge_core,
                              second_step_terms_core, signal_part_core, term_diagnostics_core,
                              top_singular_core)
from ..analysis.alignment import overlaps
from ..analysis.lanczos import block_lanczos
from ..analysis.rescaling import StepFamily
from ..analysis.spectra import bulk_edge, count_outliers, singular_values
from ..analysis.spikes import (power_projections, power_projections_null, predicted_spikes,
                               rank_one_sum_singular_values, spike_core)
from ..analysis.theory import n_spikes, spike_terms
from ..model._core import draw_problem_core, measure_both_batches, two_steps_core
from ..model.activations import as_activation
from ..model.steps import BATCHES

def _polynomial(activation, name="activation"):
    act = as_activation(activation)
    if not getattr(act, "degree", None):
        raise ValueError(f"{name} must be a polynomial activation (e.g. 'poly4'), got {act!r}")
    return act

def _entry(rng, N, activation, c1, alpha1, c2, alpha2):
    check_rng(rng)
    return check_int(N, "N", 8), _polynomial(activation), check_steps(((c1, alpha1), (c2, alpha2)))

def _run(rng, N, batch, activation, target, steps, dtype="float32", keep_pre=True, second=True):
    # One draw at N = n = d and its two steps.
    problem = draw_problem_core(N, N, N, target, batch, rng, 0.0, np.dtype(dtype))
    return two_steps_core(problem, activation, steps, keep_pre, second=second)

def _spike_parts(first, parts, eta_ref, eta1, eta2):
    # The predicted spike part at (eta1, eta2): the first spike (per unit eta1) and the signal
    # parts measured at eta_ref, rescaled.
    return [first.scaled(eta1)] + [p.scaled(eta2 * eta1 ** k / (eta_ref[1] * eta_ref[0] ** k))
                                   for k, p in enumerate(parts)]

def two_step_spectrum(rng: np.random.Generator, *, N: int, n: int | None = None,
                      d: int | None = None, activation="poly4", target="he1",
                      batch: str = "reused", c1: float = 0.2, alpha1: float = 0.4,
                      c2: float = 0.2, alpha2: float = 0.25, top: int = 4,
                      dtype="float64") -> dict:
    r"""Two steps (:math:`\eta_t = c_tN^{\alpha_t}`; ``n``, ``d`` default to ``N``), then ``top``
    ``(top,)``, :math:`W_2`'s top singular values, ``overlap`` ``(top, r)``,
    :math:`|\langle v_i, \beta_j^*\rangle|` of their right vectors, ``eta1`` and ``eta2``."""
    check_rng(rng)
    N = check_int(N, "N")
    n, d = check_int(N if n is None else n, "n"), check_int(N if d is None else d, "d")
    top = check_int(top, "top", 1)
    if top >= min(N, d):
        raise ValueError(f"top must be in [1, min(N, d) - 1] = [1, {min(N, d) - 1}], got {top}")
    activation = as_activation(activation)
    steps = check_steps(((c1, alpha1), (c2, alpha2)))
    problem = draw_problem_core(N, n, d, target, check_choice(batch, "batch", BATCHES), rng,
                                0.0, check_dtype_name(dtype))
    run = two_steps_core(problem, activation, steps, False)
    s, _, Vt = top_singular_core(run.W2, top)
    return {"top": s.astype(float), "overlap": overlaps(Vt.astype(float), run.teacher.directions),
            "eta1": run.eta1, "eta2": run.eta2}

def spike_experiment(rng: np.random.Generator, *, N: int, batch: str = "reused",
                     activation="poly4", target="he1", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                     alpha2: float = 0.25, settings=(), grid=(), n_top: int = 6,
                     margin: float = 0.05, dtype="float32", corrected: bool = False) -> dict:
    r"""One draw, :math:`N = n = d`: the term diagnostics and :math:`W_2`'s spectrum at many step
    sizes :math:`\eta_t = \kappa_tN^{\alpha_t}`, rebuilt by the exact rescaling
    (:class:`~twostep.analysis.rescaling.StepFamily`).

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension.
    batch : {"reused", "fresh", "both"}
        ``"both"``: the two runs of one draw (each bit for bit its own), as
        ``{"reused": {...}, "fresh": {...}}``.
    activation, target : names or objects
        A polynomial activation; :math:`\beta^*` is the target's first direction.
    c1, alpha1, c2, alpha2 : float
        Reference step sizes :math:`\kappa_t N^{\alpha_t}`.
    settings, grid : sequence of (alpha1, alpha2)
        Where all the measures are taken, and where only :math:`W_2`'s outliers are counted.
    n_top : int
        Top singular values per matrix (a count of ``n_top`` means "at least").
    margin : float
        Outliers lie above :math:`2(1+\text{margin})`.
    dtype : {"float32", "float64"}
    corrected : bool
        Also against the corrected signal parts :math:`S_k^{\rm corr}`.

    Returns
    -------
    dict
        :func:`term_diagnostics`' arrays ``(L,)`` and ``top_free`` (``top / scale``); per setting,
        ``settings_<key>`` for ``top`` ``(., n_top)``, ``count``, ``count_W1``, ``spikes``
        ``(., L + 1)`` (and ``spikes_corrected``), ``higher``, ``lin_overlap``, ``beta_two``,
        ``beta_lin``, ``edge_own``, ``count_own``; ``grid_count``; the spike sum's step-free core
        ``core_left``, ``core_right`` ``(L + 1, L + 1)``, ``core_free`` ``(L + 1,)``.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> out = ts.spike_experiment(np.random.default_rng(0), N=40, settings=[(0.4, 0.25)])
    >>> out["top"].shape, out["settings_top"].shape    # (L,), (settings, n_top)
    ((4,), (1, 6))
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
        problem = draw_problem_core(N, N, N, target, "fresh", rng, 0.0, np.dtype(dt))
        return measure_both_batches(problem, activation, steps, True, measure, second=False)
    return measure(_run(rng, N, batch, activation, target, steps, dt, second=False))

def _spike_measures(run, settings, grid, n_top, margin, corrected, c1, c2, shared) -> dict:
    # Every W2 is rebuilt from the exact terms (the run has none). ``shared``: what the runs of
    # batch="both" have in common (W1's counts), measured on the first.
    N = run.N
    terms = second_step_terms_core(run, reuse_first=True)
    out = term_diagnostics_core(run, "auto", terms, False, corrected)
    out["top_free"] = out["top"] / out["scale"]
    L = run.activation.degree
    first = first_step_spike_core(run.a, run.X1, run.y1, run.activation)  # per unit eta1
    parts_free = [signal_part_core(run, k, "auto", False) for k in range(L)]  # at the reference steps
    parts_corr = [signal_part_core(run, k, "auto", True) for k in range(L)] if corrected else []
    # The spike sum's core per unit step sizes: an (L+1) x (L+1) SVD at any (eta1, eta2).
    eta_ref = (run.eta1, run.eta2)
    out["core_left"], out["core_right"], out["core_free"] = spike_core(
        _spike_parts(first, parts_corr or parts_free, eta_ref, 1.0, 1.0))
    a = run.a.astype(float)
    beta = run.teacher.directions[0].astype(float)
    family = StepFamily(run, terms)  # rescales the terms in place
    del run, terms
    edge = bulk_edge(1.0)

    # Block Lanczos, as at scale: ARPACK took a third of this function's time.
    def right_vector(M):
        return block_lanczos(M, 1)[2][:, 0].astype(float)

    def top_values(M, k):
        return block_lanczos(M, k, vectors=False)[0]

    threshold = (1 + margin) * edge

    def count(M, start=None):
        # Outliers among the top n_top by Lanczos's count test (values at a bulk's edge cost
        # ARPACK ten times more), and the Ritz vectors that warm-start the next matrix.
        s, _, _, Q, _ = block_lanczos(M, n_top, vectors=False, above=threshold, start=start)
        return int(np.sum(s > threshold)), Q.T

    m = len(settings)
    shapes = dict(top=(m, n_top), spikes=(m, L + 1), higher=m, lin_overlap=m, beta_two=m,
                  beta_lin=m, edge_own=m, **({"spikes_corrected": (m, L + 1)} if corrected else {}))
    out.update({f"settings_{key}": np.zeros(shape) for key, shape in shapes.items()})
    out.update({f"settings_{key}": np.zeros(m, int) for key in ("count", "count_W1", "count_own")})
    for i, (a1, a2) in enumerate(settings):
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        W2 = family.W2(e1, e2)
        s = top_values(W2, n_top)
        out["settings_top"][i] = s
        out["settings_count"][i] = int(np.sum(s > threshold))
        if ("count_W1", i) not in shared:
            shared[("count_W1", i)] = count(family.W1(e1))[0]
        out["settings_count_W1"][i] = shared[("count_W1", i)]
        out["settings_spikes"][i] = rank_one_sum_singular_values(
            _spike_parts(first, parts_free, eta_ref, e1, e2))
        if corrected:
            out["settings_spikes_corrected"][i] = rank_one_sum_singular_values(
                _spike_parts(first, parts_corr, eta_ref, e1, e2))
        out["settings_edge_own"][i] = own_bulk_edge_core(W2, a, L)
        out["settings_count_own"][i] = int(np.sum(s > out["settings_edge_own"][i] * (1 + margin)))
        out["settings_higher"][i] = top_values(family.terms_from(1, e1, e2), 1)[0]
        r2, rlin = right_vector(W2), right_vector(family.linearised(e1, e2))
        del W2
        out["settings_lin_overlap"][i] = overlap_core(r2, rlin)
        out["settings_beta_two"][i] = overlap_core(r2, beta)
        out["settings_beta_lin"][i] = overlap_core(rlin, beta)

    out["grid_count"], start = np.zeros(len(grid), dtype=int), None
    for i, (a1, a2) in enumerate(grid):
        out["grid_count"][i], start = count(family.W2(c1 * N ** a1, c2 * N ** a2), start)
    return out

def decomposition_check(rng: np.random.Generator, *, N: int, activation="poly4", target="he1",
                        c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                        alpha2: float = 0.25, other=((1.0, 0.1), (0.5, 0.45))) -> dict:
    r"""How exact :math:`W_2 - W_1 = \sum_kT_k` and the step-size rescaling are, on one draw
    (float64, :math:`N = n = d`, each run from a copy of ``rng``): ``sum_error`` (by batch)
    :math:`\|\sum_kT_k - (W_2-W_1)\|_F/\|W_2-W_1\|_F`; ``scale_error``
    :math:`\max_k\|T_k' - \eta_2'\eta_1'^k\hat T_k\|_F/\|T_k'\|_F` of the reused run at the steps
    ``other`` rebuilt from the reference run; ``w2_error``, the same for :math:`W_2'`."""
    N, activation, steps = _entry(rng, N, activation, c1, alpha1, c2, alpha2)
    other = check_steps(other)
    runs = {b: _run(copy.deepcopy(rng), N, b, activation, target, steps, "float64", False)
            for b in ("fresh", "reused")}
    moved = _run(copy.deepcopy(rng), N, "reused", activation, target, other, "float64", False)
    family = StepFamily(runs["reused"])

    def error(M, exact):    # relative, in Frobenius norm
        return float(np.linalg.norm(M - exact) / np.linalg.norm(exact))

    return dict(sum_error={b: error(sum(second_step_terms_core(r)), r.W2 - r.W1)
                           for b, r in runs.items()},
                scale_error=max(error(family.term(k, moved.eta1, moved.eta2), T)
                                for k, T in enumerate(second_step_terms_core(moved))),
                w2_error=error(family.W2(moved.eta1, moved.eta2), moved.W2))

def one_draw(rng: np.random.Generator, *, N: int, batch: str = "fresh", activation="poly4",
             target="he1", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
             alpha2: float = 0.25, settings=((0.4, 0.25),)) -> dict:
    r"""One draw (float32, :math:`N = n = d`) rescaled to each :math:`(\alpha_1,\alpha_2)` of
    ``settings``: its spectra and predicted spikes, its terms' top vectors, and the neuron and
    sample carrying :math:`T_{L-1}`'s top pair.

    ``spec``: per setting ``a1``, ``a2``, ``lam`` (:math:`\Lambda`), ``sv2`` and ``sv_lin``
    (spectra of :math:`W_2` and :math:`W_1 + T_0`), ``sv1`` (top 6 of :math:`W_1`), ``learned``
    (top 8 of :math:`W_2-W_0`), ``sizes`` :math:`\|S_k\|`, ``strengths`` (top ``L`` of the
    predicted spike part), counts ``n2``, ``n1`` beyond :math:`2`; ``W0`` (spectrum), ``a``;
    ``U`` ``(L, N)`` (the :math:`T_k`'s top left vectors), ``left`` (their cosines with
    :math:`a^{\circ(k+1)}`); ``second_cos_a2``; for :math:`i^\star = \arg\max_i|U_i|`,
    :math:`j^\star = \arg\max_j|\langle x_j, V\rangle|/\|x_j\|`: ``loc``, ``cos``, ``P``
    :math:`= P_{i^\star j^\star}`, ``dsigma`` :math:`= \sigma'(P)`, ``rank_P``, ``y``, ``rank_y``.
    """
    N, activation, steps = _entry(rng, N, activation, c1, alpha1, c2, alpha2)
    batch = check_choice(batch, "batch", BATCHES)
    settings = check_alpha_pairs(settings, "settings")
    L = activation.degree
    run = _run(rng, N, batch, activation, target, steps)
    terms = second_step_terms_core(run)
    diag = term_diagnostics_core(run, "auto", terms, True, False)
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
    first = first_step_spike_core(run.a, run.X1, run.y1, activation)   # mu1 a v^T
    parts_ref = [signal_part_core(run, k, "auto", False) for k in range(L)]
    eta_ref = (run.eta1, run.eta2)
    family = StepFamily(run, terms)   # rescales terms in place
    del terms
    for a1, a2 in settings:
        e1, e2 = c1 * N ** a1, c2 * N ** a2
        W2 = family.W2(e1, e2)
        sv2 = singular_values(W2)
        sv1 = top_singular_core(family.W1(e1), 6)[0]
        parts = _spike_parts(first, parts_ref, eta_ref, e1, e2)
        out["spec"].append(dict(
            a1=a1, a2=a2, lam=n_spikes(a1, a2, L), sv2=sv2,
            sv_lin=singular_values(family.linearised(e1, e2)), sv1=sv1,
            learned=top_singular_core(W2 - family.W0, 8)[0], sizes=np.array([p.value for p in parts[1:]]),
            strengths=rank_one_sum_singular_values(parts)[:L], n2=count_outliers(sv2, 2.0),
            n1=count_outliers(sv1, 2.0)))
    U2 = top_singular_core(W2, 2)[1]     # the second singular pair of W2 at the last setting
    out["second_cos_a2"] = float(abs(U2[:, 1].astype(float) @ parts_ref[1].left))
    return out

def power_components(rng: np.random.Generator, *, N: int, activation="poly4", target="he1",
                     c1: float = 0.2, alpha1: float = 0.45, c2: float = 0.2, alpha2: float = 0.3,
                     powers: int = 6, null_seed: int = 1) -> dict:
    r"""Components of :math:`W_2-W_1` along the orthonormalised powers :math:`q_m` of :math:`a`,
    one fresh draw (float32, :math:`N = n = d`, any activation): ``measured``
    :math:`\|q_m^\top(W_2-W_1)\|`, ``predicted`` (of :math:`\sum_kS_k`), ``null`` (random signs,
    ``default_rng(null_seed)``), ``ratio`` (measured / null), each ``(powers,)``; ``mu``
    (:math:`\mu_0..\mu_8`), ``terms`` (:func:`twostep.spike_terms`), ``degree``."""
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
