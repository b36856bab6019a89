r"""Exact dependence of the two-step weights on the step sizes.

The first update is :math:`W_1 - W_0 = \eta_1 G_1` with :math:`G_1 = -\nabla L(W_0; X_1, y_1)`,
which does not depend on :math:`\eta_1`. For a polynomial :math:`\sigma` the exact term
:math:`T_k` of the second update (:mod:`twostep.analysis.decomposition`) is :math:`\eta_2`
times a product with :math:`\Delta^{\circ k}`, :math:`\Delta = (W_1 - W_0)X_2^\top =
\eta_1 G_1X_2^\top`, so :math:`T_k = \eta_2\eta_1^k\,\hat T_k` with a *step-free* term :math:`\hat T_k` that
depends only on the draw :math:`(W_0, a, X_1, y_1, X_2, y_2)`. Hence, for the same draw and
any step sizes :math:`(\eta_1', \eta_2')`,

.. math::
    W_2(\eta_1', \eta_2') = W_0 + \eta_1' G_1 + \eta_2'\sum_{k=0}^{L-1}\eta_1'^{\,k}\,\hat T_k .

The step-size exponents :math:`(\alpha_1, \alpha_2)` and constants :math:`(c_1, c_2)`
therefore change only the *scale* of each term, never its singular vectors or the
ratio of its spike to its remainder. :class:`StepFamily` stores :math:`W_0`, :math:`G_1`
and the :math:`\hat T_k` of one run and rebuilds :math:`W_1, W_2` for other step sizes
at the cost of a few additions instead of a new training run.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_real, check_type
from .decomposition import second_step_terms
from ..model.steps import TwoStepRun


class StepFamily:
    r"""Two-step weights of one draw for every step size (polynomial :math:`\sigma`).

    Parameters
    ----------
    run : TwoStepRun
        Any run with a :class:`~twostep.model.activations.PolynomialActivation`; its own
        step sizes only fix the reference from which :math:`\hat T_k` is obtained.
    terms : list of ndarray, optional
        ``second_step_terms(run)`` if already computed. They are divided by
        :math:`\eta_2\eta_1^k` *in place* (no copy: at :math:`N = 4000` each is 64 MB in
        float32) and belong to the family afterwards.

    Attributes
    ----------
    W0 : ndarray, shape (N, d)
    G1 : ndarray, shape (N, d)
        :math:`-\nabla L(W_0; X_1, y_1) = (W_1 - W_0)/\eta_1`, the first update per unit step size.
    terms : list of ndarray, each (N, d)
        Step-free terms :math:`\hat T_k = T_k/(\eta_2\eta_1^k)`, :math:`k = 0, \dots, L-1`
        (``L`` of them, the degree of the activation).
    N, d : int
    """

    def __init__(self, run: TwoStepRun, terms=None):
        check_type(run, "run", TwoStepRun, "a TwoStepRun (from run_two_steps)")
        if terms is None:
            terms = second_step_terms(run)  # validates the activation
        elif not isinstance(terms, list) or len(terms) != run.activation.degree or any(
                not isinstance(T, np.ndarray) or T.shape != run.W0.shape for T in terms):
            raise ValueError("terms must be the list returned by second_step_terms(run)")
        self.W0 = run.W0
        # W1 - W0 = eta1 * G1 exactly up to rounding (relative 1e-7 in float32): no new gradient.
        self.G1 = run.W1 - run.W0
        self.G1 *= self.G1.dtype.type(1.0 / run.eta1)
        for k, T in enumerate(terms):
            T *= T.dtype.type(1.0 / (run.eta2 * run.eta1 ** k))
        self.terms = terms
        self.N, self.d = run.W0.shape

    def term(self, k: int, eta1: float, eta2: float) -> np.ndarray:
        r""":math:`T_k = \eta_2\eta_1^k\hat T_k` at step sizes ``(eta1, eta2)``, shape ``(N, d)``."""
        k = check_int(k, "k", 0)
        if k >= len(self.terms):
            raise ValueError(f"k must be in [0, {len(self.terms) - 1}], got {k}")
        eta1, eta2 = _etas(eta1, eta2)
        return self.terms[k] * self.terms[k].dtype.type(eta2 * eta1 ** k)

    def W1(self, eta1: float) -> np.ndarray:
        r""":math:`W_1 = W_0 + \eta_1 G_1`, shape ``(N, d)``."""
        return self.W0 + self.G1.dtype.type(check_real(eta1, "eta1", low=0.0)) * self.G1

    def W2(self, eta1: float, eta2: float) -> np.ndarray:
        r""":math:`W_2 = W_0 + \eta_1G_1 + \eta_2\sum_k\eta_1^k\hat T_k`, shape ``(N, d)``."""
        out = self.terms_from(0, eta1, eta2)
        out += self.W1(eta1)
        return out

    def linearised(self, eta1: float, eta2: float) -> np.ndarray:
        r""":math:`W_{\rm lin} = W_1 + T_0 = W_0 + \eta_1G_1 - \eta_2\nabla L(W_0; X_2, y_2)`, shape ``(N, d)``.

        The second gradient taken at :math:`W_0` instead of :math:`W_1`. With a reused batch
        :math:`T_0 = \eta_2G_1`, so it is one step of size :math:`\eta_1+\eta_2`,
        :math:`W_0 + (\eta_1+\eta_2)G_1` (``W1(eta1 + eta2)``): two steps differ from it by
        their terms of order :math:`k\ge1` only. In both schemes
        :math:`W_2 - W_{\rm lin} = \sum_{k\ge1}T_k`, of order :math:`N^{\alpha_2-(1/2-\alpha_1)}`.
        """
        eta1, eta2 = _etas(eta1, eta2)
        out = self.terms[0] * self.terms[0].dtype.type(eta2)
        out += self.W1(eta1)
        return out

    def terms_from(self, start: int, eta1: float, eta2: float) -> np.ndarray:
        r""":math:`\sum_{k\ge\text{start}}\eta_2\eta_1^k\hat T_k`, shape ``(N, d)`` (from 1:
        :math:`W_2 - W_{\rm lin}`), term by term in place."""
        start = check_int(start, "start", 0)
        eta1, eta2 = _etas(eta1, eta2)
        out = np.zeros_like(self.W0)
        for k, T in enumerate(self.terms[start:], start=start):
            out += T.dtype.type(eta2 * eta1 ** k) * T
        return out


def _etas(eta1, eta2):
    return check_real(eta1, "eta1", low=0.0), check_real(eta2, "eta2", low=0.0)
