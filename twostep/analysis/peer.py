"""Cui, Pesce, Dandi, Krzakala, Lu, Zdeborová and Loureiro (2024) in the book's terms (their repository
SPOC-group/OneStepGD_asymptotics at 6dda8e9fbf29 and 3494d103b5f3)."""

from __future__ import annotations

import numpy as np

from ..model.activations import Activation
from ..model.network import initialise, residuals
from ..model.steps import one_step
from ..model.targets import Link, Teacher
from .readout import features, ridge
from .theory import fluctuation_variance_limit, one_step_overlap, spike_strength

#: First setting (``Simulations.ipynb``, cells 3 and 5): tanh teacher and tanh student,
#: ``d = p = 2000``, first batch ``n0 = alpha0 d``, step ``eta~``, ridge penalty ``lam``,
#: ``n_test`` test samples, one first layer and 3 seeds of readout data per ``alpha``.
CUI_SETTING_1 = {"teacher": "tanh", "alpha0": 0.5, "eta_tilde": 1.0, "lam": 0.01, "d": 2000,
                 "n_test": 5000}

#: Test errors printed by ``Simulations.ipynb``, cell 12 (execution count 21), for the
#: ``alphas = np.linspace(.2, 3, 7)`` of cell 5, three seeds each (``alpha`` as printed).
CUI_SIMULATED = {
    0.2: (0.2990775949993957, 0.2898524418194445, 0.29418381263621085),
    0.6666666666666666: (0.3218365759752591, 0.31863128816064645, 0.3151598647331156),
    1.1333333333333333: (0.26713115046865477, 0.2885155886165104, 0.27541431235674196),
    1.5999999999999999: (0.19540339213297506, 0.21767984115339958, 0.20400605095996252),
    2.0666666666666664: (0.16899557812018212, 0.17510121804693074, 0.1724069785141186),
    2.533333333333333: (0.15161510868072295, 0.1566964898890306, 0.15631225980360028),
    3.0: (0.1426574683324664, 0.14221553063145795, 0.1485439373561868),
}

#: Second setting (``theory.ipynb``, cells 3, 7 and 20): sin teacher, tanh student.
CUI_SETTING_2 = {"teacher": "sin", "alpha0": 20.0, "eta_tilde": 3.0, "lam": 0.1, "d": 2000,
                 "n_test": 5000}

#: Asymptotic test errors of the Gaussian-equivalence theory printed by ``theory.ipynb``,
#: cell 21 (execution count 32), at ``alphas = np.linspace(.2, 3, 5)`` (as printed).
CUI_THEORY = {0.2: 0.048595388918455905, 0.8999999999999999: 0.04311805329862696,
              1.5999999999999999: 0.038072437563481894, 2.3: 0.03511150660016416,
              3.0: 0.033340014535464826}

def peer_link(name: str) -> Link:
    """The peer's teacher link ``"tanh"`` or ``"sin"`` (their student is :class:`twostep.Tanh`)."""
    return Link({"tanh": np.tanh, "sin": np.sin}[name], name)

def cui_parameters(link: Link, activation: Activation, alpha0: float, eta_tilde: float,
                   degree: int = 140) -> dict:
    r"""Cui et al.'s ``gamma`` :math:`= |c_1|/\sqrt{c_1^2 + \mathbb E[y^2]/\alpha_0}`, ``r`` :math:`=
    \tilde\eta|\mu_1|\sqrt{c_1^2 + \mathbb E[y^2]/\alpha_0}` and ``c`` :math:`= 1 + \tilde\eta^2R^2` from the
    book's formulas (:math:`\eta a_i = \tilde\eta`, :math:`\psi = \alpha_0`, ``degree`` Hermite terms)."""
    c1, m2 = float(link.coefficients[1]), float(link.second_moment)
    mu = activation.hermite_coefficients(degree)
    return {"gamma": one_step_overlap(c1, m2, alpha0),
            "r": spike_strength(eta_tilde, mu[1], c1, m2, alpha0),
            "c": 1.0 + eta_tilde ** 2 * fluctuation_variance_limit(mu, m2, alpha0)}

def cui_cell7_parameters(teacher, student, student_derivative, alpha0: float,
                         eta_tilde: float) -> dict:
    r"""The peer's own :math:`\gamma`, :math:`r`, :math:`c` (``theory.ipynb`` cell 7: a factor
    :math:`\mu_1^2` more than the book's), by ``quad``."""
    from scipy.integrate import quad

    def mean(f):
        return quad(lambda z: f(z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi), -np.inf, np.inf,
                    epsabs=1e-14, epsrel=1e-13, limit=200)[0]

    mu1 = mean(lambda z: z * student(z))
    mu1t, mu2t = mean(lambda z: z * teacher(z)), mean(lambda z: teacher(z) ** 2)
    check = mean(lambda z: (student_derivative(z) - mu1) ** 2)
    norm = np.sqrt(mu2t / alpha0 + mu1t ** 2)
    return {"gamma": float(mu1t / norm), "r": float(eta_tilde * norm * mu1),
            "c": float(1 + eta_tilde ** 2 / alpha0 * mu2t * check * mu1 ** 2),
            "mu1": float(mu1), "check_h": float(check)}

def peer_first_layer(rng: np.random.Generator, d: int, link: Link, activation: Activation,
                     alpha0: float, eta_tilde: float, dtype=np.float32):
    r"""Cui et al.'s first step, ``one_step(..., eta=eta_tilde * p, loss="squared")`` at :math:`p = N = d`,
    unit rows, :math:`a_i = 1/p`, :math:`n_0 = \alpha_0 d`: ``(W1, teacher, measured)``, the measured
    ``gamma``, ``r``, ``c`` along :math:`v = X^\top(y - f_0)/n_0`."""
    dt = np.dtype(dtype)
    p = d
    teacher = Teacher(link, d, rng)
    W0, a = initialise(p, d, rng, dt, rows="unit", second_layer="constant")
    a = a / dt.type(np.sqrt(p))
    n0 = max(1, int(round(alpha0 * d)))
    X, y = teacher.sample(n0, rng, dt)
    W1 = one_step(W0, a, X, y, activation, eta=eta_tilde * p, loss="squared")
    v = X.T @ residuals(W0, a, X, y, activation) / n0
    v_hat = (v / np.linalg.norm(v)).astype(np.float64)
    shift = (W1 - W0).astype(np.float64) @ v_hat
    W1v = W1.astype(np.float64) @ v_hat
    rows = np.sum(W1.astype(np.float64) ** 2, axis=1) - W1v ** 2
    measured = {"gamma": float(abs(teacher.directions[0] @ v_hat)), "r": float(np.mean(shift)),
                "c": float(np.mean(rows))}
    return W1, teacher, measured

def peer_test_error(W1, teacher, activation: Activation, n: int, lam: float, F_test, y_test,
                    rng: np.random.Generator) -> float:
    r"""Test error of the peer's ridge on the frozen ``W1``: :func:`~twostep.analysis.readout.ridge` with
    penalty :math:`\lambda p/n` on ``n`` fresh samples, scored on ``F_test``, ``y_test``."""
    p = W1.shape[0]
    X, y = teacher.sample(n, rng, W1.dtype)
    F = features(W1, X, activation).astype(np.float64)
    coef = ridge(F, y.astype(np.float64), lam * p / n, solver="gram")
    r = y_test.astype(np.float64) - F_test @ coef
    return float(r @ r / r.size)
