r"""Gaussian moments of an activation or a link (Gauss--Hermite quadrature, :math:`z\sim\mathcal N(0,1)`)
quoted by the chapters *The setting* and *One step*, and the sizes of the first step's
remainder built on them.
"""

from __future__ import annotations

import numpy as np

from ..model.activations import Activation
from ..model.hermite import gaussian_expectation
from ..model.targets import Link


def derivative_spread(activation: Activation) -> float:
    r"""Standard deviation of :math:`\sigma'(z)` around its mean :math:`\mu_1`:
    :math:`\mathrm{sd}(\sigma') = \mathbb E[(\sigma'(z)-\mu_1)^2]^{1/2}`."""
    mu1 = float(activation.hermite_coefficients(1)[1])
    return float(np.sqrt(gaussian_expectation(lambda z: (activation.derivative(z, 1) - mu1) ** 2)))


def single_sample_norm(label: float, spread: float, n: int, d: int) -> float:
    r"""Predicted operator norm of one sample's share of the remainder per unit step,
    :math:`\|\frac{y_j}{n}(a\odot(\sigma'(W_0x_j)-\mu_1))x_j^\top\|_{op} \approx
    |y_j|\,\mathrm{sd}(\sigma')\sqrt d/n`, from :math:`\|x_j\|\approx\sqrt d` and
    :math:`\|a\odot(\sigma'-\mu_1)\|\approx\mathrm{sd}(\sigma')` (``spread``, :func:`derivative_spread`)."""
    return abs(label) * spread * float(np.sqrt(d)) / n


def log_corrected_slope(N: float) -> float:
    r"""Local log-log slope of :math:`\sqrt{\log N/N}` at ``N`` (> 1): :math:`-\tfrac12 + 1/(2\log N)`."""
    return -0.5 + 1.0 / (2.0 * np.log(N))


def cross_moment(link: Link) -> float:
    r""":math:`\mathbb E[g(z)^2z^2]` of a link; it sets the finite-size variance
    :math:`(\mathbb E[y^2z^2]-c_1^2)/n` of :math:`v` along :math:`\beta^*`."""
    return float(link.moment(lambda z, gz: gz ** 2 * z ** 2))


def stein_gap(activation: Activation, kmax: int) -> float:
    r"""Largest :math:`|\mathbb E[\sigma(z)\mathrm{He}_k(z)] - \mathbb E[\sigma^{(k)}(z)]|` over
    :math:`1\le k\le k_{max}`, both sides by quadrature (Stein's identity)."""
    return float(max(abs(activation.hermite_coefficients(k)[k]
                         - gaussian_expectation(lambda z, k=k: activation.derivative(z, k)))
                     for k in range(1, kmax + 1)))
