r"""Cui, Pesce, Dandi, Krzakala, Lu, Zdeborová and Loureiro (2024) in the book's terms.

Their code is the SPOC group's repository SPOC-group/OneStepGD_asymptotics, read at commits
6dda8e9fbf29 (``Simulations.ipynb``) and 3494d103b5f3 (``theory.ipynb``). What the book
needs from it is data: the settings, the stored outputs, and the three expressions of
:math:`\gamma`, :math:`r` and :math:`c`, transcribed (not copied) into
:func:`cui_cell7_parameters`. Their first step and their readout are run with the
package's own functions (:func:`peer_first_layer`, :func:`peer_test_error`), and their
parameters follow from the book's one-step formulas (:func:`cui_parameters`).
"""

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
    """The teacher link ``"tanh"`` or ``"sin"`` of the peer's settings, as a :class:`Link` (their
    student is :class:`twostep.Tanh`)."""
    return Link({"tanh": np.tanh, "sin": np.sin}[name], name)


def cui_parameters(link: Link, activation: Activation, alpha0: float, eta_tilde: float,
                   degree: int = 140) -> dict:
    r"""The spiked-random-features parameters of Cui et al. from the book's one-step formulas.

    In the peer's normalisation (rows of :math:`W_0` of unit norm, :math:`a_i = 1/\sqrt N`,
    :math:`\eta = \tilde\eta\sqrt N`) every row moves by :math:`\eta a_i = \tilde\eta`, so the
    book's formulas with :math:`\psi = \alpha_0` give ``gamma`` :math:`= |c_1|/\sqrt{c_1^2 +
    \mathbb E[y^2]/\alpha_0}` (``one_step_overlap``, the overlap of :math:`\hat v` with
    :math:`\beta^\star`), ``r`` :math:`= \tilde\eta|\mu_1|\sqrt{c_1^2 + \mathbb E[y^2]/\alpha_0}`
    (``spike_strength`` at :math:`\eta = \tilde\eta`, a row's shift along :math:`\hat v`; the
    book's :math:`\theta` is :math:`\sqrt N\,r`) and ``c`` :math:`= 1 + \tilde\eta^2 R^2`, with
    :math:`R^2 = \mathbb E[y^2]\,\mathrm{Var}\,\sigma'/\alpha_0` (``fluctuation_variance_limit``,
    Hermite series of length ``degree``: for tanh its tail beyond 140 is below 1e-13), a row's
    squared norm orthogonally to :math:`\hat v`.
    """
    c1, m2 = float(link.coefficients[1]), float(link.second_moment)
    mu = activation.hermite_coefficients(degree)
    return {"gamma": one_step_overlap(c1, m2, alpha0),
            "r": spike_strength(eta_tilde, mu[1], c1, m2, alpha0),
            "c": 1.0 + eta_tilde ** 2 * fluctuation_variance_limit(mu, m2, alpha0)}


def cui_cell7_parameters(teacher, student, student_derivative, alpha0: float,
                         eta_tilde: float) -> dict:
    r"""The peer's own expressions of :math:`\gamma`, :math:`r` and :math:`c`, as
    ``theory.ipynb`` cell 7 writes them, evaluated with ``scipy.integrate.quad``.

    With :math:`\tilde\mu_1 = \mathbb E[z\sigma_\star(z)]`, :math:`\tilde\mu_2 = \mathbb
    E[\sigma_\star(z)^2]`, :math:`\mu_1 = \mathbb E[z\sigma(z)]` and :math:`\check h =
    \mathbb E[(\sigma'(z)-\mu_1)^2]`:
    :math:`\gamma = \tilde\mu_1/\sqrt{\tilde\mu_2/\alpha_0+\tilde\mu_1^2}`,
    :math:`r = \tilde\eta\sqrt{\tilde\mu_2/\alpha_0+\tilde\mu_1^2}\,\mu_1`, and the square
    :math:`c = c_W^2 = 1 + \tilde\eta^2\tilde\mu_2\check h\,\mu_1^2/\alpha_0` of their bulk
    scale ``cW_th``: the cell carries a factor :math:`\mu_1^2` that the book's
    :math:`c` does not (:func:`cui_parameters`). ``teacher``, ``student`` and
    ``student_derivative`` are vectorised callables.
    """
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
    r"""Cui et al.'s first step, with twostep's functions: width :math:`p = N = d`.

    Their network :math:`a^\top\sigma(Wx)/\sqrt p`, :math:`a_i = 1/\sqrt p`, rows of :math:`W_0`
    of unit norm, is the book's network with second layer :math:`1/p`, and their step
    ``W0 + eta*sqrt(p)*G.T``, :math:`\eta = \tilde\eta\sqrt p`, is
    ``one_step(..., eta=eta_tilde * p, loss="squared")`` on it (:math:`\eta a_i = \tilde\eta`
    moves the rows), on :math:`n_0 = \alpha_0 d` samples. Draws the teacher's direction,
    :math:`W_0`, then the batch from ``rng``.

    Returns ``(W1, teacher, measured)`` with ``measured`` the dict of the spike's
    overlap ``gamma`` :math:`= |\langle\hat v,\beta^\star\rangle|`, the mean row shift
    ``r`` along :math:`\hat v` and the mean squared row norm ``c`` orthogonally to
    :math:`\hat v`, for :math:`v = X^\top(y - f_0)/n_0` (the residual's direction).
    """
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
    r"""Test error of the peer's readout on the frozen first layer ``W1``.

    Their ridge :math:`\hat w = (A^\top A+\lambda I)^{-1}A^\top y` on :math:`A = \sigma(XW_1^\top)/\sqrt p`
    is twostep's :func:`twostep.analysis.readout.ridge` on :math:`F = \sigma(XW_1^\top)` with
    penalty :math:`\lambda p/n`; it is fitted on ``n`` fresh samples from ``rng`` and scored
    by the mean squared error on the test features ``F_test`` (float64,
    ``features(W1, X_test, activation)``, computed once for several ``n``) and labels ``y_test``.
    """
    p = W1.shape[0]
    X, y = teacher.sample(n, rng, W1.dtype)
    F = features(W1, X, activation).astype(np.float64)
    coef = ridge(F, y.astype(np.float64), lam * p / n, solver="gram")
    r = y_test.astype(np.float64) - F_test @ coef
    return float(r @ r / r.size)
