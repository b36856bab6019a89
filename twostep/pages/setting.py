r"""Chapter *The setting*: the gradient against finite differences (with :func:`kink_margin`
for the centred ReLU), the sizes of one step at two widths (:func:`step_scaling_data`), the
Hermite tables of the activations and targets, and the spectrum of :math:`W_0` against the
Marchenko--Pastur law (:func:`w0_spectrum_data`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.spectra import bulk_edge, ks_distance, singular_values, top_singular
from ..analysis.summary import Summary
from ..experiments.first_step import first_update
from ..model.activations import Activation, get_activation
from ..model.network import initialise
from ..model.steps import step_size
from ..model.targets import Link, hermite_link
from .figures import ACTIVATION_LABELS, TARGET_LABELS, finished, plot_spectrum
from .report import pm, sci


def coefficient_text(x: float) -> str:
    """A Hermite coefficient for a table: ``"0"`` when ``|x| < 1e-12``, else four decimals."""
    return "0" if abs(x) < 1e-12 else f"{x:.4f}"


# --- the gradient check -------------------------------------------------------------------

def kink_margin(W, X, h: float) -> tuple[float, float]:
    r"""How far the finite differences of step ``h`` stay from the kink of a ReLU at 0:
    ``(min_pre, max_shift)``, :math:`\min_{ij}|\langle w_i,x_j\rangle|` (``W``: ``(N, d)``, ``X``:
    ``(n, d)``) and :math:`h\max_{jk}|x_{jk}|`, the most a perturbation :math:`\pm h` of one
    :math:`W_{ik}` moves a pre-activation; no quotient straddles the kink if the first is larger."""
    return float(np.abs(W @ X.T).min()), float(h * np.abs(X).max())


def gradient_check_table(errors: dict) -> tuple[list, list]:
    """Header and rows of the finite-difference check: per activation its relative discrepancy
    ``errors[name]`` (:func:`twostep.gradient_check`)."""
    rows = [[ACTIVATION_LABELS.get(k, k), sci(v, 2)] for k, v in errors.items()]
    # no "|" inside a cell: it would end the cell of a pipe table
    return ["activation", r"$\max\lvert\nabla - \widehat\nabla\rvert / \max\lvert\nabla\rvert$"], rows


# --- the size of one step -------------------------------------------------------------------

def displacement(N: int, seed: int, c: float, alpha: float, activation: Activation,
                 target: Link) -> tuple[float, float]:
    r"""One step at :math:`N = n = d` from the generator ``default_rng([N, seed])``
    (:func:`~twostep.experiments.first_step.first_update`): the median row norm
    :math:`\operatorname{median}_i\|w_i^{(1)} - w_i^{(0)}\|` of :math:`D = W_1 - W_0 = \eta G`
    and its operator norm :math:`\|D\|_{op}`, with :math:`\eta = \kappa N^\alpha` (``c`` is
    :math:`\kappa`).
    """
    D = step_size(c, alpha, N) * first_update(np.random.default_rng([N, seed]), N, activation,
                                              target)[1]
    return float(np.median(np.linalg.norm(D, axis=1))), float(top_singular(D, 1)[0][0])


def step_scaling_data(widths, n_seeds: int, c: float, alpha: float,
                      activation: Activation) -> Summary:
    r"""Per-neuron and whole-matrix size of one step (:func:`displacement`, target
    :math:`\mathrm{He}_1`) for the seeds ``0..n_seeds-1`` at each width, summarised by
    ``("N",)``: ``row`` (the median row move), ``op`` (:math:`\|W_1-W_0\|_{op}`) and ``eta``."""
    target = hermite_link(1)
    records = [dict(N=N, seed=s, eta=step_size(c, alpha, N),
                    **dict(zip(("row", "op"), displacement(N, s, c, alpha, activation, target))))
               for N in widths for s in range(n_seeds)]
    return Summary(records, ("N",), ("row", "op", "eta"))


def scaling_numbers(data: Summary) -> dict:
    r"""Named values for the prose: ``move_gap_large``, :math:`\|W_1-W_0\|_{op}` over the median
    neuron move at the last width, and ``scale_edge``, the bulk edge of :math:`W_0` (:math:`N = d`)."""
    large = data.axis()[-1]
    return dict(move_gap_large=data.at("op", N=large) / data.at("row", N=large),
                scale_edge=bulk_edge(1.0))


def scaling_table(data: Summary, alpha: float) -> tuple[list, list]:
    r"""Header and rows: per quantity (step size, median neuron move, :math:`\|W_1-W_0\|_{op}`, the
    same per unit step) its mean ± standard error at the first and last width, their ratio
    :math:`r = \bar m_L/\bar m_S` ± :math:`r\sqrt{(\mathrm{se}_L/\bar m_L)^2 + (\mathrm{se}_S/\bar m_S)^2}`
    and the ratio that the step exponent ``alpha`` predicts (:math:`N^{\alpha-1/2}` for a
    neuron, :math:`N^{\alpha}` for the matrix)."""
    small, large = data.axis()[0], data.axis()[-1]
    e_small, e_large = (data.at("eta", N=N) for N in (small, large))
    op_pred = f"{(large / small) ** alpha:.2f} ($N^{{\\alpha}}$)"
    # per quantity: (mean, standard error) at each width, per unit step for the last row
    row, op = ([(data.at(key, N=N), data.at(key, N=N, sem=True)) for N in (small, large)]
               for key in ("row", "op"))
    grad = [(m / e, s / e) for (m, s), e in zip(op, (e_small, e_large))]

    def ratio(pair):
        (ms, ss), (ml, sl) = pair
        r = ml / ms
        return pm(r, r * np.hypot(sl / ml, ss / ms))

    header = ["", f"$N = {small}$", f"$N = {large}$", "ratio", "predicted ratio"]
    rows = [
        [r"step $\eta = \kappa N^\alpha$", f"{e_small:.2f}", f"{e_large:.2f}",
         f"{e_large / e_small:.2f}", op_pred],
        [r"median neuron move $\lVert w_i^{(1)} - w_i^{(0)}\rVert$", pm(*row[0], 3),
         pm(*row[1], 3), ratio(row),
         f"{(large / small) ** (alpha - 0.5):.2f} ($N^{{\\alpha - 1/2}}$)"],
        [r"matrix move $\lVert W_1 - W_0\rVert_{op}$", pm(*op[0]), pm(*op[1]),
         ratio(op), op_pred],
        [r"per unit step $\lVert W_1 - W_0\rVert_{op}/\eta$", pm(*grad[0]),
         pm(*grad[1]), ratio(grad), "1"],
    ]
    return header, rows


# --- the Hermite tables ------------------------------------------------------------------

def activation_table(names=tuple(ACTIVATION_LABELS), kmax: int = 4) -> tuple[list, list]:
    r"""Header and rows of :math:`\mu_0, \dots, \mu_{k_{max}}` and the degree, one row per
    activation name (:func:`twostep.get_activation`)."""
    rows = []
    for key in names:
        act = get_activation(key)
        mu = act.hermite_coefficients(kmax)
        rows.append([ACTIVATION_LABELS.get(key, key)] + [coefficient_text(m) for m in mu]
                    + [str(act.degree) if act.degree else "∞"])
    return ["activation"] + [f"$\\mu_{k}$" for k in range(kmax + 1)] + ["degree"], rows


def target_table(targets: dict, kmax: int = 4) -> tuple[list, list]:
    r"""Header and rows of :math:`\mathbb E[y^2]`, :math:`c_0, \dots, c_{k_{max}}` and the
    information exponent, one row per ``name -> Link`` of ``targets`` (named as in
    :data:`~twostep.pages.figures.TARGET_LABELS`)."""
    rows = []
    for name, g in targets.items():
        c = g.coefficients
        coeffs = [coefficient_text(c[k]) if k < len(c) else "0" for k in range(kmax + 1)]
        rows.append([TARGET_LABELS.get(name, name), coefficient_text(g.second_moment)] + coeffs
                    + [str(g.information_exponent)])
    return (["link $g$", "$\\mathbb{E}[y^2]$"] + [f"$c_{k}$" for k in range(kmax + 1)] + ["inf. exp."],
            rows)


# --- the spectrum at initialisation --------------------------------------------------------

def w0_spectrum_data(shapes) -> dict:
    r"""``(N, d) -> singular values`` (descending) of :math:`W_0` (:math:`\mathcal N(0,1/d)`
    entries) drawn from ``default_rng(N + d)``, for each ``(N, d)`` of ``shapes``."""
    return {(N, d): singular_values(initialise(N, d, np.random.default_rng(N + d))[0])
            for N, d in shapes}


def plot_w0_spectrum(data: dict):
    """The chapter's figure of the spectrum at initialisation: one histogram per shape of
    :func:`w0_spectrum_data` against the Marchenko--Pastur density and the bulk edge.
    Returns a ``matplotlib.figure.Figure``."""
    fig, axes = plt.subplots(1, len(data), figsize=(6.6, 3.0), squeeze=False)
    for ax, ((N, d), s) in zip(axes[0], data.items()):
        plot_spectrum(ax, s, N / d)
        ax.set_title(f"N = {N}, d = {d} (N/d = {N / d:g})")
        ax.set_ylim(0, 1.5 * ax.get_ylim()[1])
        ax.legend(loc="upper right", fontsize=9)
    return finished(fig)


def w0_spectrum_table(data: dict) -> tuple[list, list]:
    r"""Header and rows per shape of :func:`w0_spectrum_data`: :math:`N`, :math:`d`, :math:`N/d`,
    the Kolmogorov--Smirnov distance to the Marchenko--Pastur law of :math:`\gamma = N/d`, the
    gap :math:`s_1 - (1+\sqrt\gamma)` of the largest value to the bulk edge and the
    edge-fluctuation scale :math:`\min(N,d)^{-2/3}`."""
    header = ["$N$", "$d$", "$N/d$", "KS distance", r"$s_1 - (1+\sqrt{N/d})$",
              r"$\min(N, d)^{-2/3}$"]
    rows = [[f"{N}", f"{d}", f"{N / d:g}", f"{ks_distance(s, N / d):.4f}",
             f"{s[0] - bulk_edge(N / d):+.4f}", f"{min(N, d) ** (-2 / 3):.3f}"]
            for (N, d), s in data.items()]
    return header, rows
