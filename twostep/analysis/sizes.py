r"""How large things get: a spike's size against the width (:func:`fading_width`), an order's
term weight against the step constant (:func:`matched_constant`), and the largest label of a
batch (:func:`typical_max_label`)."""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_real, check_rng
from ..model.activations import as_activation
from ..model.targets import get_link


def fading_width(exponent: float, N0: int, factor: float = 2.0) -> float:
    r"""Width at which a spike whose size scales like :math:`N^{e}` has changed by ``factor``
    relative to width ``N0``: :math:`N_0\,\text{factor}^{1/|e|}`."""
    e = check_real(exponent, "exponent")
    if e == 0:
        raise ValueError("exponent must be non-zero (a spike of constant size never fades)")
    return check_int(N0, "N0", 1) * check_real(factor, "factor", low=1.0, low_open=True) ** (1 / abs(e))


def matched_constant(reference, activation, c: float, order: int = 2) -> float:
    r"""The step constant :math:`c'` at which ``activation`` gives its order-``order`` term the
    weight ``reference`` gives it at ``c``.

    The order-:math:`k` term of :math:`W_2` carries :math:`\mu_{k+1}\mu_1^k c^{k+1}` (model
    notes), so :math:`c' = c\,\bigl(|\mu_1^k\mu_{k+1}|_{\rm ref} /
    |\mu_1^k\mu_{k+1}|\bigr)^{1/(k+1)}`, with :math:`\mu_j = \mathbb E[\sigma(z)\mathrm{He}_j(z)]`.
    """
    k = check_int(order, "order", 1)
    c = check_real(c, "c", low=0.0, low_open=True)

    def weight(act):
        mu = as_activation(act).hermite_coefficients(k + 1)
        w = abs(mu[1] ** k * mu[k + 1])
        if w < 1e-12:   # quadrature leaves ~1e-17 where a coefficient vanishes by symmetry
            raise ValueError(f"activation {as_activation(act).name!r} has mu_1^{k} mu_{k + 1} = 0: "
                             f"no order-{k} term to match")
        return w

    return c * (weight(reference) / weight(activation)) ** (1 / (k + 1))


def typical_max_label(targets, n: int, rng: np.random.Generator, draws: int = 50) -> dict:
    r"""Median over ``draws`` samples of :math:`\max_{j\le n}|g(z_j)|`, :math:`z_j\sim N(0,1)`,
    for each target link name in ``targets`` (drawn in that order, ``draws`` samples each)."""
    n, draws = check_int(n, "n"), check_int(draws, "draws")
    check_rng(rng)
    return {t: float(np.median([np.abs(get_link(t)(rng.standard_normal(n))).max()
                                for _ in range(draws)])) for t in targets}
