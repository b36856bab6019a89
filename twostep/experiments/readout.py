"""Single runs of the readout comparison (chapter *What the features buy*): five first layers of
one problem (:func:`train_schemes`), each scored by a ridge readout and by the ideal readout of
the directions it learned (:func:`payoff_experiment`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import check_alpha, check_dtype, check_int, check_type
from ..model.activations import Activation, as_activation
from ..analysis.alignment import overlaps
from ..analysis.decomposition import weighted_direction
from ..analysis.readout import Step, best_linear_error, paired_readout, subspace_error
from ..analysis.spectra import SVDS_TOL, top_singular
from ..model.targets import Teacher
from ..analysis.theory import spike_terms
from ..model.steps import draw_problem, step_size, steps_along

SCHEMES = ("W0", "W1", "W1_total", "W2_reused", "W2_fresh")

#: The schemes whose weights depend on :math:`\alpha_2`.
SECOND_STEP_SCHEMES = ("W1_total", "W2_reused", "W2_fresh")

@dataclass
class TrainedSchemes:
    r"""The five first layers of one problem: ``W0, W1`` ``(N, d)``; ``W1_total, W2_reused,
    W2_fresh``, one ``(N, d)`` per ``alpha2s``; ``gradients``: :math:`\nabla L(W_0; X_1)`,
    :math:`\nabla L(W_1; X_1)`, :math:`\nabla L(W_1; X_2)` (``"W0"``, ``"reused"``, ``"fresh"``)."""

    W0: np.ndarray
    a: np.ndarray
    W1: np.ndarray
    W1_total: list
    W2_reused: list
    W2_fresh: list
    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray
    eta1: float
    eta2s: tuple
    alpha1: float
    alpha2s: tuple
    activation: Activation
    teacher: Teacher
    gradients: dict

    def weights(self, i: int) -> dict:
        """The five first layers for ``alpha2s[i]``, by scheme name."""
        i = check_int(i, "i", 0)
        if i >= len(self.alpha2s):
            raise ValueError(f"i must be < len(alpha2s) = {len(self.alpha2s)}, got {i}")
        return {"W0": self.W0, "W1": self.W1, "W1_total": self.W1_total[i],
                "W2_reused": self.W2_reused[i], "W2_fresh": self.W2_fresh[i]}

def _alpha2s(alpha2s) -> tuple:
    alpha2s = (alpha2s,) if isinstance(alpha2s, (int, float)) else alpha2s
    if not isinstance(alpha2s, (Sequence, np.ndarray)) or len(alpha2s) == 0:
        raise TypeError("alpha2s must be a non-empty sequence of exponents in [0, 1/2)")
    return tuple(check_alpha(float(a), "alpha2") for a in alpha2s)

def train_schemes(rng: np.random.Generator, *, N: int, n: int | None = None,
                  d: int | None = None, activation="poly4", target="he1", c: float = 0.5,
                  alpha1: float = 0.4, alpha2s=(0.25,), dtype="float64") -> TrainedSchemes:
    r"""Draw one problem (fresh second batch) and build, with :math:`\eta_t = cN^{\alpha_t}`, the
    first layers ``W0``, ``W1`` (step :math:`\eta_1`), ``W1_total`` (step :math:`\eta_1+\eta_2`),
    ``W2_reused`` and ``W2_fresh`` (a second step on batch 1 or 2), for each of ``alpha2s``.

    Parameters
    ----------
    rng : numpy.random.Generator
    N, n, d : int
        Width, batch size and dimension (``n``, ``d`` default to ``N``).
    activation, target
        As in :func:`twostep.run_two_steps` (names or objects).
    c, alpha1 : float
        :math:`\eta_1 = cN^{\alpha_1}`.
    alpha2s : sequence of float
        The second step's exponents, each in ``[0, 1/2)``.
    dtype : {"float64", "float32"}

    Returns
    -------
    TrainedSchemes

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> sch = ts.train_schemes(np.random.default_rng(0), N=30, alpha2s=(0.25, 0.45))
    >>> sch.W1.shape, len(sch.W2_fresh), [round(e, 2) for e in sch.eta2s]
    ((30, 30), 2, [1.17, 2.31])
    """
    n, d = N if n is None else n, N if d is None else d
    activation = as_activation(activation)
    alpha1, alpha2s = check_alpha(alpha1, "alpha1"), _alpha2s(alpha2s)
    p = draw_problem(N, n, d, target, "fresh", rng, dtype=check_dtype(dtype))
    eta1 = step_size(c, alpha1, N)
    eta2s = tuple(step_size(c, a2, N) for a2 in alpha2s)
    G0, (W1, *W1_total) = steps_along(p.W0, p.a, p.X1, p.y1, activation,
                                      [eta1] + [eta1 + e2 for e2 in eta2s])
    G_reused, W2_reused = steps_along(W1, p.a, p.X1, p.y1, activation, eta2s)
    G_fresh, W2_fresh = steps_along(W1, p.a, p.X2, p.y2, activation, eta2s)
    return TrainedSchemes(p.W0, p.a, W1, W1_total, W2_reused, W2_fresh, p.X1, p.y1, p.X2,
                          p.y2, eta1, eta2s, alpha1, alpha2s, activation, p.teacher,
                          {"W0": G0, "reused": G_reused, "fresh": G_fresh})

def learned_directions(schemes: TrainedSchemes, i: int) -> dict:
    r"""The directions each first layer learned by the spectral picture: with
    :math:`v_t = X_t^\top y_t/n`, :math:`u_k = X_2^\top(y_2\odot(X_2v_1)^{\circ k})/n`
    (:math:`X_2 = X_1` when reused), :math:`k\in` :func:`twostep.spike_terms`: none for ``W0``,
    :math:`v_1` for ``W1`` and ``W1_total``, :math:`v_1, u_k` for ``W2_reused``,
    :math:`\eta_1v_1+\eta_2v_2, u_k` for ``W2_fresh``.

    Parameters
    ----------
    schemes : TrainedSchemes
        From :func:`train_schemes`.
    i : int
        Which of its ``alpha2s``.

    Returns
    -------
    dict of ndarray
        Of shape ``(k, d)`` each, by scheme.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> sch = ts.train_schemes(np.random.default_rng(0), N=30, alpha2s=(0.45,))
    >>> {name: u.shape[0] for name, u in ts.learned_directions(sch, 0).items()}
    {'W0': 0, 'W1': 1, 'W1_total': 1, 'W2_reused': 4, 'W2_fresh': 4}
    """
    check_type(schemes, "schemes", TrainedSchemes, "a TrainedSchemes")
    i = check_int(i, "i", 0)
    if i >= len(schemes.alpha2s):
        raise ValueError(f"i must be < len(alpha2s) = {len(schemes.alpha2s)}, got {i}")
    act = schemes.activation
    L = act.degree if act.degree is not None else 8
    ks = spike_terms(schemes.alpha1, schemes.alpha2s[i], act.hermite_coefficients(L))
    n = schemes.X1.shape[0]
    v1 = schemes.X1.T @ schemes.y1 / n
    v2 = schemes.X2.T @ schemes.y2 / n
    d = v1.size
    reused = [v1] + [weighted_direction(schemes.X1, schemes.y1, (schemes.X1 @ v1) ** k) for k in ks]
    fresh = [schemes.eta1 * v1 + schemes.eta2s[i] * v2] + [
        weighted_direction(schemes.X2, schemes.y2, (schemes.X2 @ v1) ** k) for k in ks]
    return {"W0": np.zeros((0, d)), "W1": v1[None, :], "W1_total": v1[None, :],
            "W2_reused": np.array(reused), "W2_fresh": np.array(fresh)}

def measured_directions(schemes: TrainedSchemes, i: int) -> dict:
    r"""For each first layer, as many top right singular vectors of its weights as
    :func:`learned_directions` lists, ``(k, d)`` by scheme."""
    learned = learned_directions(schemes, i)
    W = schemes.weights(i)
    return {s: v if v.shape[0] == 0 else top_singular(np.asarray(W[s], dtype=np.float64),
                                                      v.shape[0], vectors="right", tol=SVDS_TOL)[1]
            for s, v in learned.items()}

def payoff_experiment(rng: np.random.Generator, *, N: int, n: int | None = None,
                      d: int | None = None, activation="poly4", target="he1", c: float = 0.5,
                      alpha1: float = 0.4, alpha2s=(0.25,), n_train: int | None = None,
                      n_test: int | None = None, scalings=("standardised",),
                      dtype="float64", feature_dtype=None,
                      measured_ideal: bool = False) -> dict:
    r"""One problem: train the five first layers, read each out on shared data, and score.

    Parameters
    ----------
    rng : numpy.random.Generator
        Drawn by :func:`train_schemes`, then :func:`twostep.paired_readout`.
    N, n, d, activation, target, c, alpha1, alpha2s, dtype
        As in :func:`train_schemes` (``dtype`` also of the features; ridge solves in float64).
    n_train, n_test : int, optional
        Sizes of the readout's fresh training and test sets (default ``d`` and ``2d``).
    scalings : sequence of {"standardised", "raw"}
    feature_dtype : {"float64", "float32"}, optional
        Of the readout's products and features alone (default ``dtype``).
    measured_ideal : bool
        Also ``ideal_svd_<scheme>``, of the measured directions (:func:`measured_directions`).

    Returns
    -------
    dict
        Test errors over the zero predictor's, population errors over :math:`\mathbb{E}[y^2]`:
        ``err_<scheme><suffix>`` and ``edge_<scheme><suffix>`` (+1.0 or -1.0: the penalty at
        the grid's end; suffix ``""`` standardised, ``"_raw"`` raw), a float for ``W0``,
        ``W1``, ``linear``, an array over ``alpha2s`` for the others; ``ideal_<scheme>``
        (:func:`twostep.subspace_error` of :func:`learned_directions`); ``max_row_<scheme>``;
        ``best_linear``; ``overlap_v`` ``(r,)``; ``overlap_u_reused``, ``overlap_u_fresh``
        ``(L-1, r)``, of :math:`u_1..u_{L-1}`.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> out = ts.payoff_experiment(np.random.default_rng(0), N=30)
    >>> out["err_W0"] > out["err_linear"]     # a linear target: ridge on x is best
    True
    """
    if not isinstance(measured_ideal, (bool, np.bool_)):
        raise TypeError(f"measured_ideal must be True or False, got {measured_ideal!r}")
    sch = train_schemes(rng, N=N, n=n, d=d, activation=activation, target=target, c=c,
                        alpha1=alpha1, alpha2s=alpha2s, dtype=dtype)
    teacher, activation, (n, d) = sch.teacher, sch.activation, sch.X1.shape
    m = len(sch.alpha2s)
    # Each later layer is a step along one of three gradients: the readout shares its products.
    start = {"W1_total": (sch.W0, "W0"), "W2_reused": (sch.W1, "reused"),
             "W2_fresh": (sch.W1, "fresh")}
    etas = {"W1_total": [sch.eta1 + e for e in sch.eta2s], "W2_reused": sch.eta2s,
            "W2_fresh": sch.eta2s}
    weights = {"W0": sch.W0, "W1": sch.W1}
    for name in SECOND_STEP_SCHEMES:
        base, key = start[name]
        for i, W in enumerate(getattr(sch, name)):
            weights[f"{name}[{i}]"] = Step(W, base, etas[name][i], sch.gradients[key])
    res = paired_readout(weights, activation, teacher, d if n_train is None else n_train,
                         2 * d if n_test is None else n_test, rng, scalings=scalings, dtype=dtype,
                         feature_dtype=feature_dtype)
    m2 = teacher.second_moment
    out = {"best_linear": best_linear_error(teacher) / m2}

    def per_layer(name, value):
        # value(i) at alpha2s[i]: one float for W0, W1 and linear, an array for the others
        return np.array([value(i) for i in range(m)]) if name in SECOND_STEP_SCHEMES else value(0)

    key = lambda name, i: f"{name}[{i}]" if name in SECOND_STEP_SCHEMES else name
    for s, r in res.items():
        suffix = "" if s == "standardised" else "_raw"
        for name in ("W0", "W1", "linear") + SECOND_STEP_SCHEMES:
            out[f"err_{name}{suffix}"] = per_layer(
                name, lambda i: r[key(name, i)].test_mse / r["zero"].test_mse)
            out[f"edge_{name}{suffix}"] = per_layer(name, lambda i: float(r[key(name, i)].edge))
    ideal = [learned_directions(sch, i) for i in range(m)]
    measured = [measured_directions(sch, i) for i in range(m)] if measured_ideal else None
    for name in SCHEMES:
        out[f"ideal_{name}"] = per_layer(name, lambda i: subspace_error(teacher, ideal[i][name]) / m2)
        if measured_ideal:
            out[f"ideal_svd_{name}"] = per_layer(
                name, lambda i: subspace_error(teacher, measured[i][name]) / m2)
        out[f"max_row_{name}"] = per_layer(
            name, lambda i: float(np.linalg.norm(sch.weights(i)[name], axis=1).max()))
    B = teacher.directions
    v1 = sch.X1.T @ sch.y1 / n
    out["overlap_v"] = overlaps(v1, B)[0]
    L = activation.degree if activation.degree is not None else 4
    ks = range(1, L)
    out["overlap_u_reused"] = overlaps(np.array([weighted_direction(sch.X1, sch.y1, (sch.X1 @ v1) ** k) for k in ks]), B)
    out["overlap_u_fresh"] = overlaps(np.array([weighted_direction(sch.X2, sch.y2, (sch.X2 @ v1) ** k) for k in ks]), B)
    return out

def neuron_memorisation(D, X) -> np.ndarray:
    r""":math:`\max_j |\cos(d_i, x_j)|` for every row :math:`d_i` of ``D`` (zero rows: 0): the
    row-wise :func:`twostep.memorisation`.

    Parameters
    ----------
    D : ndarray, shape (N, d)
    X : ndarray, shape (n, d)
        Non-zero rows.

    Returns
    -------
    ndarray, shape (N,)

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.neuron_memorisation(np.array([[2.0, 0.0], [0.0, 0.0]]), np.eye(2))
    array([1., 0.])
    """
    D = np.asarray(D, dtype=float)
    X = np.asarray(X, dtype=float)
    if D.ndim != 2 or X.ndim != 2 or D.shape[1] != X.shape[1]:
        raise ValueError(f"D and X must be (N, d) and (n, d) with the same d, got {D.shape} and {X.shape}")
    nd = np.linalg.norm(D, axis=1)
    nx = np.linalg.norm(X, axis=1)
    if np.any(nx == 0):
        raise ValueError("rows of X must be non-zero")
    C = np.abs(D @ X.T) / nx[None, :]
    out = np.zeros(D.shape[0])
    ok = nd > 0
    out[ok] = C[ok].max(axis=1) / nd[ok]
    return out
