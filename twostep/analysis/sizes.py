"""How large things get: a spike against the width, an order's weight against the step constant, a batch's
largest label."""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_real, check_rng
from ..model.activations import as_activation
from ..model.targets import get_link

def fading_width(exponent: float, N0: int, factor: float = 2.0) -> float:
    r"""Width :math:`N_0\,\text{factor}^{1/|e|}` at which a size :math:`\propto N^{e}` has changed by
    ``factor`` from ``N0``."""
    e = check_real(exponent, "exponent")
    if e == 0:
        raise ValueError("exponent must be non-zero (a spike of constant size never fades)")
    return check_int(N0, "N0", 1) * check_real(factor, "factor", low=1.0, low_open=True) ** (1 / abs(e))

def matched_constant(reference, activation, c: float, order: int = 2) -> float:
    r"""Step constant :math:`c' = c\,(|\mu_1^k\mu_{k+1}|_{\rm ref}/|\mu_1^k\mu_{k+1}|)^{1/(k+1)}`, ``k =
    order``, at which ``activation`` weighs its order-``k`` term as ``reference`` does at ``c``."""
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
    r"""``{target: median over draws of max_j |g(z_j)|}``, :math:`j \le n`, ``draws`` samples per target."""
    n, draws = check_int(n, "n"), check_int(draws, "draws")
    check_rng(rng)
    return {t: float(np.median([np.abs(get_link(t)(rng.standard_normal(n))).max()
                                for _ in range(draws)])) for t in targets}
