r"""Gaussian moments of an activation or a link (:math:`z\sim\mathcal N(0,1)`) and the sizes built on them."""

from __future__ import annotations

import numpy as np

from ..model.activations import Activation
from ..model.hermite import gaussian_expectation
from ..model.targets import Link

def derivative_spread(activation: Activation) -> float:
    r""":math:`\mathrm{sd}(\sigma') = \mathbb E[(\sigma'(z)-\mu_1)^2]^{1/2}`."""
    mu1 = float(activation.hermite_coefficients(1)[1])
    return float(np.sqrt(gaussian_expectation(lambda z: (activation.derivative(z, 1) - mu1) ** 2)))

def single_sample_norm(label: float, spread: float, n: int, d: int) -> float:
    r"""One sample's share of the first step's remainder per unit step."""
    return abs(label) * spread * float(np.sqrt(d)) / n

def log_corrected_slope(N: float) -> float:
    r"""Local log-log slope :math:`-\tfrac12 + 1/(2\log N)` of :math:`\sqrt{\log N/N}` at ``N > 1``."""
    return -0.5 + 1.0 / (2.0 * np.log(N))

def cross_moment(link: Link) -> float:
    r""":math:`\mathbb E[g(z)^2z^2]` of a link (the variance of :math:`v` along :math:`\beta^*` is
    :math:`(\cdot - c_1^2)/n`)."""
    return float(link.moment(lambda z, gz: gz ** 2 * z ** 2))

def stein_gap(activation: Activation, kmax: int) -> float:
    r""":math:`\max_{1\le k\le k_{max}}|\mathbb E[\sigma(z)\mathrm{He}_k(z)] - \mathbb E[\sigma^{(k)}(z)]|`
    (Stein's identity), both by quadrature."""
    return float(max(abs(activation.hermite_coefficients(k)[k]
                         - gaussian_expectation(lambda z, k=k: activation.derivative(z, k)))
                     for k in range(1, kmax + 1)))
