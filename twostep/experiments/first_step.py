r"""Single runs of the first step (chapter *One step*): the update against its spike, the data
direction per target, the spikes of the feature matrix, and Cui et al.'s experiment."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.linalg import svd
from scipy.sparse.linalg import LinearOperator

from .._validation import (check_alpha, check_dtype, check_fits, check_int, check_pairs,
                           check_real, check_rng, check_type)
from ..analysis._core import first_step_spike_core, overlap_core, top_singular_core
from ..analysis.peer import peer_first_layer, peer_link, peer_test_error
from ..analysis.readout import features
from ..analysis.spectra import SVDS_TOL
from ..model._core import (draw_problem_core, gradient_core, initialise_core, labels_core,
                           make_teacher_core, one_step_core, pre_activations_into, sample_core)
from ..model.activations import Activation, Tanh, as_activation, check_activation
from ..model.network import gaussian_inputs, initialise
from ..model.steps import one_step
from ..model.targets import Link, Teacher, check_links, target_links

def _residual_top(G, spike, seed):
    # Top singular value and right vector of G - spike, matrix-free.
    N, d = G.shape
    lv = G.dtype.type(spike.value) * spike.left.astype(G.dtype, copy=False)
    right = spike.right.astype(G.dtype, copy=False)

    def matvec(x):
        x = np.ravel(x)
        return G @ x - lv * (right @ x)

    def rmatvec(x):
        x = np.ravel(x)
        return G.T @ x - right * (lv @ x)

    R = LinearOperator((N, d), matvec=matvec, rmatvec=rmatvec, dtype=G.dtype)
    s, Vt = top_singular_core(R, 1, "right", SVDS_TOL, seed)
    return float(s[0]), Vt[0].astype(float)

def first_step_diagnostics(rng: np.random.Generator, *, N: int, n: int | None = None,
                           d: int | None = None, activation="poly4", target="he1",
                           steps: Sequence = (), top: int = 1, noise: float = 0.0,
                           dtype="float64") -> dict:
    r"""Draw a problem (as :func:`twostep.run_two_steps`), take the first gradient :math:`G`, and
    measure how close it is to a spike.

    Parameters
    ----------
    rng : numpy.random.Generator
    N, n, d : int
        Width, batch size, input dimension (``n`` and ``d`` default to ``N``).
    activation : Activation or str
    target : Link, sequence of Link, Teacher or link names (``"he1"``)
        The first direction ``teacher.directions[0]`` is :math:`\beta^*`.
    steps : sequence of (c, alpha)
        Step sizes :math:`\eta = cN^\alpha` at which :math:`W_1 = W_0+\eta G` is examined.
    top : int
        How many top singular values of each :math:`W_1` to return (``1 <= top < min(N, d)``).
    noise : float
        Label-noise standard deviation (ignored when a Teacher is given).
    dtype : float64 or float32

    Returns
    -------
    dict
        ``residual`` :math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}`; ``remainder_sample_overlap``:
        cosine of the top right vector of :math:`G-\mu_1av^\top` with :math:`x_{j^*}`,
        :math:`j^* = \arg\max_j|y_j|`; ``max_label`` :math:`\max_j|y_j|`; ``best_residual``
        :math:`s_2(G)/s_1(G)`; ``update_norm`` :math:`\|G\|_{op}`; ``spike``
        :math:`|\mu_1|\|a\|\|v\|`; ``v_overlap`` :math:`|\langle v/\|v\|,\beta^*\rangle|`;
        ``eta`` ``(len(steps),)``; ``top`` ``(len(steps), top)`` of each :math:`W_1`;
        ``right_overlap`` ``(len(steps),)``, cosines of :math:`W_1`'s top right vector with
        :math:`\beta^*`; ``right_v_overlap``: the same with :math:`v`.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> out = ts.first_step_diagnostics(np.random.default_rng(0), N=60, steps=[(0.2, 0.0)])
    >>> round(out["residual"], 2), out["top"].shape
    (0.57, (1, 1))
    """
    check_rng(rng)
    N = check_int(N, "N")
    n, d = check_int(N if n is None else n, "n"), check_int(N if d is None else d, "d")
    activation = as_activation(activation)
    steps, top = _checked_steps_top(steps, top, N, d, "")
    dt = check_dtype(dtype)
    problem = draw_problem_core(N, n, d, target, "reused", rng, noise, dt)
    G = gradient_core(problem.W0, problem.a, problem.X1, problem.y1, activation)
    G *= -1
    return _first_step_measures(problem.W0, problem.a, problem.X1, problem.y1,
                                problem.teacher.directions[0], G, activation, steps, top)

def _checked_case(case, i, N, d):
    if not isinstance(case, Sequence) or isinstance(case, str) or len(case) != 4:
        raise TypeError(f"cases[{i}] must be an (activation, target, steps, top) tuple, "
                        f"got {case!r}")
    activation, target, steps, top = case
    steps, top = _checked_steps_top(steps, top, N, d, f"cases[{i}] ")
    links, _ = target_links(target)
    return as_activation(activation), links, steps, top

def _checked_steps_top(steps, top, N, d, prefix):
    # ``prefix`` names where they came from: "" or "cases[i] ".
    steps = [(check_real(c, f"{prefix}steps[{j}] c", low=0.0, low_open=True),
              check_alpha(alpha, f"{prefix}steps[{j}] alpha"))
             for j, (c, alpha) in enumerate(check_pairs(steps, f"{prefix}steps",
                                                        "a (c, alpha) pair"))]
    top = check_int(top, f"{prefix}top", 1)
    if top >= min(N, d) - 1:
        raise ValueError(f"{prefix}top must be in [1, min(N, d) - 2] = [1, {min(N, d) - 2}], "
                         f"got {top}")
    return steps, top

def first_step_cases(rng: np.random.Generator, *, N: int, cases, n: int | None = None,
                     d: int | None = None, dtype="float64") -> dict:
    r"""``{"results": [...]}``: :func:`first_step_diagnostics` of each case ``(activation,
    target, steps, top)`` (targets of one rank, no noise) from ``rng``'s state, bit for bit, on
    one draw and one :math:`W_0X^\top`."""
    check_rng(rng)
    N = check_int(N, "N")
    n, d = check_int(N if n is None else n, "n"), check_int(N if d is None else d, "d")
    if min(N, d) < 3:
        raise ValueError(f"min(N, d) must be at least 3, got {min(N, d)}")
    if not isinstance(cases, Sequence) or isinstance(cases, str) or not cases:
        raise TypeError(f"cases must be a non-empty sequence of (activation, target, steps, "
                        f"top) tuples, got {cases!r}")
    cases = [_checked_case(case, i, N, d) for i, case in enumerate(cases)]
    dt = check_dtype(dtype)
    problem = draw_problem_core(N, n, d, cases[0][1], "reused", rng, 0.0, dt)
    teachers = [problem.teacher.relabelled(links, f"cases[{i}] target")
                for i, (_, links, _, _) in enumerate(cases)]
    W0, a, X, B = problem.W0, problem.a, problem.X1, problem.teacher.directions
    Z = pre_activations_into(W0, X, np.empty((N, n), dtype=dt))
    out = []
    for (activation, _, steps, top), teacher in zip(cases, teachers):
        y = labels_core(teacher, X)
        G = gradient_core(W0, a, X, y, activation, pre_in=Z)
        G *= -1
        out.append(_first_step_measures(W0, a, X, y, B[0], G, activation, steps, top))
    return {"results": out}

def _first_step_measures(W0, a, X, y, beta, G, activation, steps, top) -> dict:
    dt = W0.dtype
    etas = np.array([c * W0.shape[0] ** alpha for c, alpha in steps], dtype=float)  # c N^alpha
    spike = first_step_spike_core(a, X, y, activation)
    sG = top_singular_core(G, 2, False, SVDS_TOL)
    remainder, r1 = _residual_top(G, spike, 0)
    extreme = X[int(np.argmax(np.abs(y)))].astype(float)
    out = {
        "residual": remainder / float(sG[0]),
        "remainder_sample_overlap": overlap_core(r1, extreme),
        "max_label": float(np.max(np.abs(y))),
        "best_residual": float(sG[1] / sG[0]),
        "update_norm": float(sG[0]),
        "spike": spike.value,
        "v_overlap": overlap_core(spike.right, beta) if spike.value > 0 else 0.0,
        "eta": etas,
        "top": np.zeros((len(steps), top)),
        "right_overlap": np.zeros(len(steps)),
        "right_v_overlap": np.zeros(len(steps)),
    }
    W1 = np.empty_like(W0)
    for i, eta in enumerate(etas):
        np.multiply(G, dt.type(eta), out=W1)
        W1 += W0
        s, Vt = top_singular_core(W1, top, "right", SVDS_TOL)
        out["top"][i] = s
        out["right_overlap"][i] = overlap_core(Vt[0].astype(float), beta)
        if spike.value > 0:
            out["right_v_overlap"][i] = overlap_core(Vt[0].astype(float), spike.right.astype(float))
    return out

def learned_direction_overlaps(n: int, d: int, links, rng: np.random.Generator,
                               noise: float = 0.0, dtype=np.float64) -> np.ndarray:
    r"""Overlaps :math:`|\langle v_k/\|v_k\|,\beta^*\rangle|` of the data directions
    :math:`v_k = X^\top y_k/n`, :math:`y_k = g_k(X\beta^*) + \varepsilon_k`, of several links
    on one batch; draws :math:`\beta^*`, :math:`X`, then each link's noise.

    Parameters
    ----------
    n, d : int
        Batch size and dimension.
    links : Link or sequence of Link
    rng : numpy.random.Generator
    noise : float
        Label-noise standard deviation.
    dtype : float64 or float32

    Returns
    -------
    ndarray, shape (len(links),)

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> links = [ts.hermite_link(1), ts.hermite_link(2)]
    >>> ts.learned_direction_overlaps(4000, 100, links, np.random.default_rng(0)).round(2)
    array([0.99, 0.1 ])
    """
    n, d = check_int(n, "n"), check_int(d, "d")
    links = check_links(links)
    check_rng(rng)
    noise = check_real(noise, "noise", low=0.0)
    dt = check_dtype(dtype)
    check_fits(dt.itemsize * n * d, f"learned direction overlaps at n={n}, d={d} ({dt})")
    beta = rng.standard_normal(d)
    beta /= np.linalg.norm(beta)
    X = rng.standard_normal((n, d), dtype=dt)
    z = X @ beta.astype(dt)
    out = np.empty(len(links))
    for k, g in enumerate(links):
        y = np.asarray(g(z), dtype=dt)
        if noise > 0:
            y = y + (noise * rng.standard_normal(n)).astype(dt)
        v = X.T @ y
        nv = np.linalg.norm(v)
        out[k] = abs(float(v @ beta)) / nv if nv > 0 else 0.0
    return out

def first_update(rng: np.random.Generator, N: int, activation: Activation, target: Link):
    r"""``(W0, G)`` of one draw at :math:`N = n = d` (float64): :math:`W_1 = W_0 + \eta_1G`."""
    teacher = Teacher(target, N, rng)
    W0, a = initialise(N, N, rng)
    X = gaussian_inputs(N, N, rng)
    return W0, one_step(W0, a, X, teacher.labels(X, rng), activation, 1.0) - W0

def _unit(x):
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x)

def feature_spikes(rng: np.random.Generator, N: int, alphas, activation: Activation,
                   link: Link, margin: float = 0.05, top: int = 8, kmax: int = 4,
                   dtype=np.float64) -> dict:
    r"""The spikes of :math:`F_1 = \sigma(\tilde XW_1^\top)` after one step
    :math:`\eta_1 = N^{\alpha_1}`, for each of ``alphas`` on one draw (:math:`N = n = d`;
    a teacher, :math:`W_0, a`, :math:`(X, y)`, a fresh :math:`\tilde X`, a random unit :math:`u`).

    The bulk edge is :math:`s_1` of :math:`F_1` less the rank-one terms
    :math:`\mu_k s^{\circ k}(\theta^{\circ k})^\top/k!`, :math:`s = \tilde Xv`,
    :math:`\theta = \eta_1\mu_1 a` (orders :math:`\mu_k\ne0` up to the degree, else ``kmax``);
    spikes lie above :math:`(1 + \text{margin})` times it. Returns ``count`` ``(A,)``, ``top``
    ``(A, top)``, ``edge`` ``(A,)``, ``proj_beta`` and ``proj_chance`` ``(A, kmax)`` (norms of
    the projections of :math:`(\tilde X\beta^\star)^{\circ k}` and :math:`(\tilde Xu)^{\circ k}`,
    normalised, on the spikes' left span), ``edge0`` :math:`s_1(F_0)` and ``v_overlap``
    :math:`|\langle\hat v,\beta^\star\rangle|`."""
    check_rng(rng)
    N = check_int(N, "N", 8)
    alphas = [check_alpha(a, f"alphas[{i}]") for i, a in enumerate(alphas)]
    if not alphas:
        raise ValueError("alphas must be a non-empty sequence in [0, 1/2)")
    check_activation(activation)
    check_type(link, "link", Link, "a Link (e.g. twostep.hermite_link(1))")
    margin = check_real(margin, "margin", low=0.0)
    top = check_int(top, "top", 1)
    kmax = check_int(kmax, "kmax", 1)
    if top >= N - 1:
        raise ValueError(f"top must be smaller than N - 1 = {N - 1}, got {top}")
    dt = check_dtype(dtype)
    L = activation.degree
    n = d = N
    teacher = make_teacher_core(link, d, rng, 0.0)
    W0, a = initialise_core(N, d, rng, dt)
    X, y = sample_core(teacher, n, rng, dt)
    Xf = rng.standard_normal((n, d), dtype=dt)
    u = _unit(rng.standard_normal(d))
    beta = teacher.directions[0]
    v = X.T.astype(np.float64) @ y.astype(np.float64) / n
    powers = {name: np.stack([_unit(z ** k) for k in range(1, kmax + 1)], axis=1)
              for name, z in (("beta", Xf @ beta), ("chance", Xf @ u))}
    mu = activation.hermite_coefficients(kmax if L is None else max(kmax, L))
    s_v = (Xf @ v.astype(dt)).astype(np.float64)
    orders = [k for k in range(1, mu.size) if abs(mu[k]) > 1e-12 and (L is None or k <= L)]
    edge0 = float(svd(features(W0, Xf, activation).astype(np.float64), compute_uv=False)[0])
    out = {key: [] for key in ("count", "top", "edge", "proj_beta", "proj_chance")}
    for al in alphas:
        eta = float(N) ** al
        W1 = one_step_core(W0, a, X, y, activation, eta)
        F1 = features(W1, Xf, activation).astype(np.float64)
        U, s, _ = svd(F1, full_matrices=False)
        theta = eta * mu[1] * a.astype(np.float64)
        R = F1.copy()
        for k in orders:
            R -= (mu[k] / math.factorial(k)) * np.outer(s_v ** k, theta ** k)
        edge = float(svd(R, compute_uv=False)[0])
        count = int(np.sum(s > (1 + margin) * edge))
        out["count"].append(count)
        out["top"].append(s[:top])
        out["edge"].append(edge)
        for name in ("beta", "chance"):
            out["proj_" + name].append(np.linalg.norm(U[:, :count].T @ powers[name], axis=0))
    res = {k: np.array(val) for k, val in out.items()}
    res["edge0"] = edge0
    res["v_overlap"] = float(abs(_unit(v) @ beta))
    return res

def cui_experiment(rng: np.random.Generator, setting: dict, d: int, alphas,
                   dtype=np.float32) -> dict:
    r"""One seed of Cui et al.'s experiment at ``setting`` (:mod:`twostep.analysis.peer`), d = p:
    test ``errors`` ``(len(alphas),)`` of readouts on :math:`\alpha d` fresh samples, and the
    measured ``gamma``, ``r``, ``c``."""
    check_rng(rng)
    d, act = check_int(d, "d"), Tanh()
    W1, teacher, measured = peer_first_layer(rng, d, peer_link(setting["teacher"]), act,
                                             setting["alpha0"], setting["eta_tilde"], dtype)
    X_test, y_test = teacher.sample(setting["n_test"], rng, W1.dtype)
    F_test = features(W1, X_test, act).astype(np.float64)     # one test set for every alpha
    errors = [peer_test_error(W1, teacher, act, max(1, int(round(al * d))), setting["lam"],
                              F_test, y_test, rng) for al in alphas]
    return {"errors": np.array(errors), **measured}
