r"""Exact dependence of the two-step weights on the step sizes (polynomial :math:`\sigma`)."""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_real, check_type
from .decomposition import second_step_terms
from ..model.steps import TwoStepRun

class StepFamily:
    r"""Two-step weights of one draw for every step size: ``W0``, ``G1`` and ``terms``
    :math:`\hat T_k = T_k/(\eta_2\eta_1^k)`, all ``(N, d)``."""

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
        r""":math:`W_{\rm lin} = W_1 + T_0 = W_0 + \eta_1G_1 - \eta_2\nabla L(W_0; X_2, y_2)`, ``(N, d)``;
        reused: :math:`W_0 + (\eta_1+\eta_2)G_1`. :math:`W_2 - W_{\rm lin} = \sum_{k\ge1}T_k`."""
        eta1, eta2 = _etas(eta1, eta2)
        out = self.terms[0] * self.terms[0].dtype.type(eta2)
        out += self.W1(eta1)
        return out

    def terms_from(self, start: int, eta1: float, eta2: float) -> np.ndarray:
        r""":math:`\sum_{k\ge\text{start}}\eta_2\eta_1^k\hat T_k`, ``(N, d)``."""
        start = check_int(start, "start", 0)
        eta1, eta2 = _etas(eta1, eta2)
        out = np.zeros_like(self.W0)
        for k, T in enumerate(self.terms[start:], start=start):
            out += T.dtype.type(eta2 * eta1 ** k) * T
        return out

def _etas(eta1, eta2):
    return check_real(eta1, "eta1", low=0.0), check_real(eta2, "eta2", low=0.0)
