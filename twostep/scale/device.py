"""The book's two-step measurements on a GPU: draws, steps, exact terms (the array-API code of
the model and the analysis) and block-Lanczos spectra on the device. Every function checks its
arguments, step sizes and memory before it allocates; ``check_only`` stops there.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import (check_alpha_pairs, check_choice, check_dtype_name, check_fits,
                           check_int, check_real, check_step_growth, check_steps, check_type,
                           memory_limit)
from ..analysis._core import (RankOne, exact_term, first_step_spike_core, run_pre_activations,
                              second_step_terms_core, signal_part_core, weighted_direction)
from ..model.activations import PolynomialActivation, as_activation, host_array, namespace
from ..model._core import draw_problem_core, two_steps_core
from ..model.steps import BATCHES, Problem, TwoStepRun
from ..model.targets import Teacher, target_links
from .backend import Backend, device_bytes, get_backend
from ..analysis.lanczos import array_dtype, block_lanczos, top_singular_on  # noqa: F401 (its API)

def _backend(backend) -> Backend:
    return backend if isinstance(backend, Backend) else get_backend(backend)

def _normal(bk: Backend, seed: int, dtype):
    """``shape -> standard normals`` on the device, from its own generator."""
    if bk.name == "torch":
        torch = bk.xp
        gen = torch.Generator(device=bk.device).manual_seed(seed)
        tdt = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}[dtype]
        return lambda shape: torch.randn(shape, generator=gen, device=bk.device, dtype=tdt)
    gen = bk.xp.random.default_rng(seed)     # CuPy's generator
    return lambda shape: gen.standard_normal(shape, dtype=dtype)

def draw_problem_on(backend, N: int, n: int, d: int, target, batch: str, seed: int,
                    noise: float = 0.0, dtype="float32") -> Problem:
    r"""A problem drawn on the device as :func:`twostep.model.steps.draw_problem` draws it (that,
    on numpy), from the device's generator seeded with ``seed``; only :math:`X\beta^*` visits
    the host."""
    return _draw_problem_on(_backend(backend), *_checked_draw(N, n, d, target, batch, seed, noise,
                                                              dtype))

def _checked_draw(N, n, d, target, batch, seed, noise, dtype):
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_choice(batch, "batch", BATCHES)
    seed = check_int(seed, "seed", 0)
    noise = check_real(noise, "noise", low=0.0)
    return N, n, d, target, batch, seed, noise, check_dtype_name(dtype)

def _draw_problem_on(bk, N, n, d, target, batch, seed, noise, dt):
    if bk.name == "numpy":
        return draw_problem_core(N, n, d, target, batch, np.random.default_rng(seed), noise, dt)
    links, noise_given = target_links(target)
    noise = noise or noise_given
    normal = _normal(bk, seed, dt)
    xp = bk.xp
    Q, R = xp.linalg.qr(normal((d, len(links))))
    B = (Q * xp.sign(xp.diagonal(R))[None, :]).T          # (r, d), orthonormal rows
    W0 = normal((N, d)) * (1.0 / math.sqrt(d))
    a = normal((N,)) * (1.0 / math.sqrt(N))

    def batch_draw():
        X = normal((n, d))
        Z = bk.to_numpy(X @ B.T).astype(np.float64)       # (n, r): the host sees only this
        y = bk.asarray(sum(g(Z[:, r]) for r, g in enumerate(links)).astype(dt))
        if noise > 0:
            y = y + noise * normal((n,))
        return X, y

    X1, y1 = batch_draw()
    X2, y2 = (X1, y1) if batch == "reused" else batch_draw()
    teacher = Teacher.from_directions(links, bk.to_numpy(B).astype(np.float64), noise)
    return Problem(teacher, W0, a, X1, y1, X2, y2)

def to_host(problem: Problem, backend) -> Problem:
    """The same problem with every array copied to numpy (the reused batch stays shared)."""
    bk = _backend(backend)
    W0, a, X1, y1 = (bk.to_numpy(x) for x in (problem.W0, problem.a, problem.X1, problem.y1))
    reused = problem.X2 is problem.X1
    X2, y2 = (X1, y1) if reused else (bk.to_numpy(problem.X2), bk.to_numpy(problem.y2))
    return Problem(problem.teacher, W0, a, X1, y1, X2, y2)

def _scaled_into(out, x, c: float):
    """``out[...] = c * x`` without a temporary (the array API has no ``out=``)."""
    if isinstance(out, np.ndarray):
        np.multiply(x, c, out=out)
    else:
        out[...] = x
        if c != 1.0:
            out *= c

def _like(xp, x: np.ndarray, W):
    """The host array ``x`` in ``W``'s library and dtype, on ``W``'s device."""
    x = xp.asarray(x.astype(array_dtype(W)))
    device = getattr(W, "device", None)
    return x if xp is np or device is None else xp.asarray(x, device=device)

def _cos(xp, x, y) -> float:
    nx, ny = float(xp.linalg.vector_norm(x)), float(xp.linalg.vector_norm(y))
    return abs(float(xp.sum(x * y))) / (nx * ny) if nx > 0 and ny > 0 else 0.0

#: Columns beyond ``n_top`` in the Lanczos blocks of a grid's spectra.
GRID_OVERSAMPLE = 2
#: The most Lanczos blocks per spectrum of :func:`count_on`.
COUNT_ITERATIONS = 200

def measure_on(run: TwoStepRun, grid=(), margin: float = 0.05, n_top: int = 6) -> dict:
    r"""The exact terms of one draw and the outlier count over a step-size grid, on ``run``'s device.

    ``run`` (polynomial activation, any array library); :math:`W_2` is rebuilt at each
    :math:`(\alpha_1, \alpha_2)` of ``grid`` (same :math:`c_1, c_2`) and its singular values above
    :math:`(1+\text{margin})(1+\sqrt{N/d})` among its top ``n_top`` counted (``grid_count``).
    With :math:`S_k = S_k^{\rm corr}` (``signal_part(kind="auto", corrected=True)``) and
    :math:`T_k`'s top vectors :math:`\hat\ell_k, \hat r_k`, arrays ``(L,)``: ``top``
    :math:`s_1(T_k)`, ``signal`` :math:`\|S_k\|`, ``residual`` :math:`\|T_k-S_k\|_{op}`, ``left``
    :math:`|\cos(\hat\ell_k, a^{\circ(k+1)})|`, ``right`` :math:`|\cos(\hat r_k, r(S_k))|`,
    ``beta`` :math:`|\cos(\hat r_k, \beta^*)|`, ``scale`` :math:`\eta_2\eta_1^k`.
    """
    check_type(run, "run", TwoStepRun, "a TwoStepRun")
    if not isinstance(run.activation, PolynomialActivation):
        raise TypeError("measure_on needs a PolynomialActivation (exact terms)")
    return _measure_on(run, *_measure_options(min(run.W0.shape), grid, margin, n_top))

def _measure_options(m, grid=(), margin=0.05, n_top=6):
    # m = min(N, d) bounds n_top.
    n_top = check_int(n_top, "n_top")
    if n_top > m:
        raise ValueError(f"n_top must be in [1, min(N, d)] = [1, {m}], got {n_top}")
    return check_alpha_pairs(grid, "grid"), check_real(margin, "margin", low=0.0), n_top

def _measure_on(run, grid, margin, n_top):
    xp, W0 = namespace(run.W0)
    N, d = W0.shape
    beta = _like(xp, run.teacher.directions[0], W0)
    keys = ("top", "signal", "residual", "left", "right", "beta", "scale")
    out = {key: np.zeros(run.activation.degree) for key in keys}
    terms = second_step_terms_core(run)     # T_0 .. T_{L-1} at the run's steps eta1, eta2
    for k, T in enumerate(terms):
        S = signal_part_core(run, k, "auto", True)
        sv, U, V, block, _ = block_lanczos(T, 1)
        out["top"][k], out["signal"][k] = sv[0], S.value
        out["left"][k] = _cos(xp, U[:, 0], S.left)
        out["right"][k] = _cos(xp, V[:, 0], S.right)
        out["beta"][k] = _cos(xp, V[:, 0], beta)
        out["residual"][k] = block_lanczos(T, 1, vectors=False, minus=(S.value, S.left, S.right),
                                           start=block.T)[0][0]
        out["scale"][k] = run.eta2 * run.eta1 ** k
    c1, c2 = run.eta1 / N ** run.params["alpha1"], run.eta2 / N ** run.params["alpha2"]
    edge = (1 + margin) * (1 + math.sqrt(N / d))
    counts, block = [], None
    etas = [(float(c1 * N ** a1), float(c2 * N ** a2)) for a1, a2 in grid]
    for W2 in _rescaled_W2(run, terms, etas):
        top, _, _, block, _ = block_lanczos(W2, n_top, oversample=GRID_OVERSAMPLE, vectors=False,
                                            above=edge, start=None if block is None else block.T)
        counts.append(int(np.sum(top > edge)))
    out["grid_count"] = np.array(counts, dtype=int)
    return out

def _rescaled_W2(run: TwoStepRun, terms, etas):
    r"""Yield :math:`W_2(e_1, e_2) = B + (e_2/\eta_2)H` for each of ``etas``, in one buffer:
    :math:`B = W_0 + x(W_1 - W_0)`, :math:`H = \sum_kx^kT_k`, :math:`x = e_1/\eta_1`, both
    rebuilt only when :math:`e_1` changes (buffers allocated once: fresh pages cost more)."""
    if not etas:
        return
    xp, W0 = namespace(run.W0)
    B, H, W2 = (xp.empty_like(W0) for _ in range(3))
    row = None
    for e1, e2 in etas:
        x = e1 / run.eta1
        if e1 != row:
            row = e1
            _scaled_into(B, W0, 1.0 / x - 1.0)      # B = x (W1 + (1/x - 1) W0), x > 0
            B += run.W1
            B *= x
            _scaled_into(H, terms[-1], 1.0)
            for T in terms[-2::-1]:
                H *= x
                H += T
        _scaled_into(W2, H, e2 / run.eta2)
        W2 += B
        yield W2
    del B, H, W2

def run_two_steps_on(backend, N: int, n: int, d: int, activation, target, steps, batch: str,
                     seed: int = 0, noise: float = 0.0, dtype="float32", terms: int = 0,
                     check_only: bool = False) -> TwoStepRun | None:
    r"""Draw a problem on the device (:func:`draw_problem_on`) and take the two steps there,
    once :func:`~twostep.scale.backend.device_bytes` (``terms`` to measure) fits its memory."""
    bk = _backend(backend)
    activation = as_activation(activation)
    if not isinstance(activation, PolynomialActivation):
        raise TypeError("activation must be a PolynomialActivation (e.g. 'poly4') on a device "
                        f"backend, got {activation.name}")
    steps = check_steps(steps)
    N, n, d, target, batch, seed, noise, dt = _checked_draw(N, n, d, target, batch, seed, noise,
                                                            dtype)
    target_links(target)
    check_step_growth(steps[0][0], steps[1][0], activation.degree, dt)
    need = device_bytes(N, n, d, batch, dt, check_int(terms, "terms", 0))
    budget = memory_limit() if bk.device == "cpu" else (bk.memory_free(), "its free memory")
    check_fits(need, f"two steps at N={N}, n={n}, d={d} ({dt.name}, {batch} batch) on "
               f"{bk.name}/{bk.device}", budget, "reduce N, n or d")
    if check_only:
        return None
    return two_steps_core(_draw_problem_on(bk, N, n, d, target, batch, seed, noise, dt),
                          activation, steps, False)

def spike_on(backend, N: int, batch: str, activation="poly4", target="he1", c1: float = 0.2,
             alpha1: float = 0.4, c2: float = 0.2, alpha2: float = 0.25, grid=(),
             seed: int = 0, dtype="float32", check_only: bool = False, **options) -> dict | None:
    r"""Draw on the device, take two steps there and :func:`measure_on` (``N = n = d``)."""
    L = as_activation(activation).degree or 0
    options = _measure_options(check_int(N, "N"), grid, **options)
    run = run_two_steps_on(backend, N, N, N, activation, target, ((c1, alpha1), (c2, alpha2)),
                           batch, seed, dtype=dtype, terms=L, check_only=check_only)
    return None if check_only else _measure_on(run, *options)

def count_points(N: int, settings, kappas=(0.2,), extra_kappas=(), extra_max_N: int = 0) -> np.ndarray:
    r"""Rows :math:`(\kappa, \alpha_1, \alpha_2)` ``(P, 3)``: every setting at every ``kappas``
    (and ``extra_kappas`` while ``N <= extra_max_N``), kappa-major."""
    ks = list(kappas) + (list(extra_kappas) if N <= extra_max_N else [])
    return np.array([[float(k), float(a1), float(a2)] for k in ks for a1, a2 in settings],
                    dtype=float).reshape(-1, 3)

def count_on(backend, N: int, batch: str, activation="poly4", target="he1", c: float = 0.2,
             ref=(0.4, 0.25), settings=(), kappas=(0.2,), extra_kappas=(), extra_max_N: int = 0,
             margin: float = 0.05, n_top: int = 8, seed: int = 0, dtype="float32",
             check_only: bool = False) -> dict | None:
    r"""The outliers of :math:`W_2` against its own bulk edge, one draw (:math:`N = n = d`).

    :math:`W_2` is rebuilt from the exact terms at the reference :math:`\eta_t = cN^{\alpha_t}`
    (``ref``) at every point of :func:`count_points` (:math:`\eta_t = \kappa N^{\alpha_t}`).
    Returns ``points`` ``(P, 3)``; ``edge_own`` ``(P,)``, :math:`s_1((I - QQ^\top)W_2)`,
    :math:`Q` spanning :math:`a, \dots, a^{\circ L}`; ``count_own`` and ``count_raw`` ``(P,)``
    beyond ``1 + margin`` times that edge and :math:`W_0`'s edge 2; ``top`` ``(P, n_top)``, the
    Ritz values that settled ``count_own``; ``spike_sum`` ``(P, L + 1)``, of
    :math:`\eta_1\mu_1av^\top + \sum_kS_k^{\rm corr}`; its core ``core_left``, ``core_right``
    ``(L + 1, L + 1)``, ``core_free`` ``(L + 1,)``.
    """
    from ..analysis.spikes import core_singular_values, power_basis, spike_core, spike_sum_factors

    bk = _backend(backend)
    act = as_activation(activation)
    L = act.degree or 0
    pts = count_points(N, settings, kappas, extra_kappas, extra_max_N)
    if not len(pts) or np.any((pts[:, 1:] < 0) | (pts[:, 1:] >= 0.5)) or np.any(pts[:, 0] <= 0):
        raise ValueError("settings must be (alpha1, alpha2) pairs in [0, 1/2) and kappas > 0, "
                         f"at least one point; got {pts.tolist()}")
    _, margin, n_top = _measure_options(check_int(N, "N"), (), margin, n_top)
    top_c = max(check_real(c, "c", low=0.0, low_open=True), float(pts[:, 0].max()))
    check_step_growth(top_c, top_c, L, check_dtype_name(dtype), names=("c or kappa",) * 2)
    run = run_two_steps_on(bk, N, N, N, act, target, ((c, ref[0]), (c, ref[1])), batch, seed,
                           dtype=dtype, terms=L, check_only=check_only)
    if check_only:
        return None
    xp, W0 = namespace(run.W0)
    terms = second_step_terms_core(run)
    first = first_step_spike_core(run.a, run.X1, run.y1, act)
    parts = [first] + [signal_part_core(run, k, "auto", True).scaled(
        1.0 / (run.eta2 * run.eta1 ** k)) for k in range(L)]
    R_L, R_R, theta = spike_core([RankOne(p.value, host_array(p.left), host_array(p.right))
                                  for p in parts])
    Q = _like(xp, power_basis(host_array(run.a).astype(np.float64), L), W0)
    etas = [(k * N ** a1, k * N ** a2) for k, a1, a2 in pts]
    raw_edge = 1 + math.sqrt(N / N)
    out = {"points": pts, "edge_own": np.zeros(len(pts)), "count_own": np.zeros(len(pts), int),
           "count_raw": np.zeros(len(pts), int), "top": np.zeros((len(pts), n_top)),
           "spike_sum": core_singular_values(R_L, R_R, theta,
                                             spike_sum_factors(*np.array(etas).T, L)),
           "core_left": R_L, "core_right": R_R, "core_free": theta}
    block = edge_block = None
    for i, W2 in enumerate(_rescaled_W2(run, terms, etas)):
        # The own edge lies inside a bulk: the value test, not the residual's.
        edge, _, _, edge_block, _ = block_lanczos(
            W2, 1, COUNT_ITERATIONS, vectors=False, tol=1e-5, project=Q,
            start=None if edge_block is None else edge_block.T)
        out["edge_own"][i] = edge[0]
        for key, threshold in (("count_own", (1 + margin) * edge[0]),
                               ("count_raw", (1 + margin) * raw_edge)):
            top, _, _, block, _ = block_lanczos(W2, n_top, COUNT_ITERATIONS, GRID_OVERSAMPLE,
                                                vectors=False, above=threshold,
                                                start=None if block is None else block.T)
            out[key][i] = int(np.sum(top > threshold))
            if key == "count_own":
                out["top"][i] = top
    del terms
    return out

def _memorised(xp, X, Vt):
    """(max_j |cos(v_i, x_j)| for each row v_i of ``Vt``, the argmax j's)."""
    C = xp.abs(X @ Vt.T) / (xp.linalg.vector_norm(X, axis=1)[:, None]
                            * xp.linalg.vector_norm(Vt, axis=1)[None, :])
    C = host_array(C)
    return C.max(axis=0), C.argmax(axis=0)

def reuse_on(backend, N: int, target, batch: str, activation="poly4", c1: float = 0.2,
             alpha1: float = 0.4, c2: float = 0.2, alpha2: float = 0.25, term: int = 2,
             top: int = 8, seed: int = 0, dtype="float32", check_only: bool = False) -> dict | None:
    r""":func:`twostep.experiments.reuse.reuse_experiment` on the device (:math:`N = n = d`, no
    ``alpha2s``), plus ``term_input_overlap`` and ``projected_<key>``
    (:func:`~twostep.analysis.projection.projected_alignment`, signs from
    ``default_rng([seed, 1])``); only blocks of vectors and memorised rows visit the host."""
    from ..analysis.alignment import overlaps, subspace_overlap, unmemorised_overlap
    from ..analysis.projection import projected_alignment

    bk = _backend(backend)
    activation = as_activation(activation)
    L = activation.degree or 0
    term = check_int(term, "term", 0)
    if term > L - 1:
        raise ValueError(f"term must be in [0, L-1] = [0, {L - 1}] for a degree-{L} activation, "
                         f"got {term}")
    top = check_int(top, "top")
    if top > N:
        raise ValueError(f"top must be in [1, N] = [1, {N}], got {top}")
    run = run_two_steps_on(bk, N, N, N, activation, target, ((c1, alpha1), (c2, alpha2)),
                           batch, seed, dtype=dtype, terms=1, check_only=check_only)
    if check_only:
        return None
    xp = namespace(run.W0)[0]
    B = run.teacher.directions
    s = run.X2 @ run.v
    U = [bk.to_numpy(weighted_direction(run.X2, run.y2, s ** k)) for k in range(L)]
    out = {"signal": overlaps(np.array(U, dtype=float), B)}
    out["signal_reuse"] = overlaps(bk.to_numpy(signal_part_core(run, term, "auto", False).right)
                                   .astype(float), B)[0]
    pre = run_pre_activations(run)      # once, for T_k and its projection
    T = exact_term(run, term, *pre)
    sv, _, V, _, _ = block_lanczos(T, 1)
    Vt = V.T
    del T
    out["term_value"] = float(sv[0])
    out["term_overlap"] = overlaps(bk.to_numpy(Vt).astype(float), B)[0]
    memo, J = _memorised(xp, run.X2, Vt)
    out["term_memorisation"] = float(memo[0])
    out["term_input_overlap"] = overlaps(bk.to_numpy(run.X2[int(J[0])]).astype(float), B)[0]
    # One sign vector per seed, the same for both batches.
    signs = np.random.default_rng([seed, 1]).choice([-1.0, 1.0], size=N)
    proj = projected_alignment(run, term, signs=bk.asarray(signs.astype(np.dtype(dtype))), pre=pre)
    del pre
    out.update({f"projected_{key}": value for key, value in proj.items()})
    sv, _, V, _, _ = block_lanczos(run.W2, top)
    Vt = V.T
    memo, J = _memorised(xp, run.X2, Vt)
    V = bk.to_numpy(Vt).astype(float)
    rows = np.array([bk.to_numpy(run.X2[j, :]) for j in sorted(set(J.tolist()))], dtype=float)
    out["top_values"], out["top_overlap"], out["top_memorisation"] = sv, overlaps(V, B), memo
    out["subspace"] = np.array([subspace_overlap(V[:K], B) for K in range(1, len(V) + 1)])
    out["subspace_unmemorised"] = np.array([unmemorised_overlap(V[:K], B, rows)
                                            for K in range(1, len(V) + 1)])
    return out
