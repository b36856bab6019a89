r"""The landing page (``book/index.md``): the count :math:`\Lambda` and one simulated network.

:func:`summary_data` draws one problem at :math:`N = n = d`, takes the second step on a
fresh batch and, from the same :math:`W_1`, on the first batch again, and measures the
outliers of :math:`W_1` and of both :math:`W_2`; :func:`terms_data` measures, over several
seeds, whether each exact term :math:`T_k` of the second update is its predicted spike;
:func:`plot_summary` draws the phase diagram of :math:`\Lambda(\alpha_1, \alpha_2)`, the
exact terms against their predictions, and the two raw spectra.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_alpha, check_int, check_real
from ..analysis.alignment import memorisation
from ..analysis.spikes import term_diagnostics
from ..analysis.spectra import (bulk_edge, count_outliers, marchenko_pastur_density,
                                singular_values, top_singular)
from ..analysis.theory import n_spikes, phase_boundaries, spike_exponent
from ..analysis.verdicts import rule_rows
from ..model.activations import get_activation
from ..model.steps import one_step, run_two_steps
from ..model.targets import hermite_link
from .figures import COLORS
from .report import VERDICT_SYMBOLS, markdown_table, num


@dataclass
class Summary:
    """What the landing figure shows (one draw; see :func:`summary_data`)."""

    N: int
    c: float
    alpha1: float
    alpha2: float
    seed: int
    L: int
    margin: float
    n_marked: int
    edge: float
    s_W1: np.ndarray      # top 4 singular values of W1
    s_W2: np.ndarray      # all singular values of W2, fresh second batch
    s_W2r: np.ndarray     # all singular values of W2, reused batch
    count: dict           # outliers beyond (1 + margin) * edge: "W1", "W2", "W2r"
    memo: np.ndarray      # max_j |cos(v, x_j)| of the marked reused outliers' right vectors
    memo_null: float      # sqrt(2 log n / d): the same for an unrelated direction

    @property
    def n_spikes(self) -> int:
        r""":math:`\Lambda(\alpha_1, \alpha_2)` for this activation's degree."""
        return n_spikes(self.alpha1, self.alpha2, self.L)

    @property
    def exponents(self) -> list:
        r""":math:`e_k = \alpha_2 - k(1/2-\alpha_1)` for :math:`k = 1..\Lambda`."""
        return [spike_exponent(k, self.alpha1, self.alpha2) for k in range(1, self.n_spikes + 1)]


def summary_data(N: int = 1000, c: float = 0.2, alpha1: float = 0.4, alpha2: float = 0.25,
                 seed: int = 0, margin: float = 0.05, n_marked: int = 6) -> Summary:
    r"""One network, :math:`N = n = d`, :math:`\sigma_4`, target :math:`\mathrm{He}_1`,
    :math:`\eta_t = cN^{\alpha_t}`: the second step on a fresh batch and, from the same
    :math:`W_1`, on the first batch again; outliers counted beyond ``(1 + margin)`` times the
    bulk edge :math:`1 + \sqrt{N/d}`."""
    N = check_int(N, "N", 8)
    c = check_real(c, "c", low=0.0, low_open=True)
    alpha1, alpha2 = check_alpha(alpha1, "alpha1"), check_alpha(alpha2, "alpha2")
    seed = check_int(seed, "seed", 0)
    margin = check_real(margin, "margin", low=0.0)
    n_marked = check_int(n_marked, "n_marked", 1)
    activation = get_activation("poly4")
    run = run_two_steps(N, N, N, activation, hermite_link(1), ((c, alpha1), (c, alpha2)),
                        "fresh", np.random.default_rng(seed))
    # Same W0, a, X1, y1 and hence W1: only the data of the second step differ.
    W2_reused = one_step(run.W1, run.a, run.X1, run.y1, activation, run.eta2)
    s_W2, s_W2r = singular_values(run.W2), singular_values(W2_reused)
    s_W1 = top_singular(run.W1, 4)[0]
    edge = bulk_edge(1.0)
    count = {name: count_outliers(s, edge, margin)
             for name, s in (("W1", s_W1), ("W2", s_W2), ("W2r", s_W2r))}
    if count["W1"] >= s_W1.size:
        raise RuntimeError("W1 has more outliers than computed")
    _, _, V = top_singular(W2_reused, max(min(count["W2r"], n_marked), 1))
    memo = np.array([memorisation(v, run.X1)[0] for v in V])
    return Summary(N, c, alpha1, alpha2, seed, activation.degree, margin, n_marked, edge,
                   s_W1, s_W2, s_W2r, count, memo, float(np.sqrt(2 * np.log(N) / N)))


@dataclass
class Terms:
    r"""Per order :math:`k = 0..L-1` (arrays of shape ``(seeds, L)``): ``ratio`` =
    :math:`s_1(T_k)/\|S_k^{\rm corr}\|` and ``left`` = :math:`|\cos(\hat\ell_k, a^{\circ(k+1)})|`
    (:func:`twostep.analysis.spikes.term_diagnostics` with ``corrected=True``), fresh batch."""

    N: int
    seeds: tuple
    ratio: np.ndarray
    left: np.ndarray

    def mean_sem(self, key: str) -> tuple:
        """Mean and standard error over the seeds of ``ratio`` or ``left``, each ``(L,)``."""
        x = getattr(self, key)
        return x.mean(axis=0), x.std(axis=0, ddof=1) / np.sqrt(len(x))


def terms_data(N: int = 1000, c: float = 0.2, alpha1: float = 0.4, alpha2: float = 0.25,
               seeds=(0, 1, 2)) -> Terms:
    r"""The exact terms :math:`T_k` of the second update (fresh batch, the settings of
    :func:`summary_data`) against their corrected spikes, one draw per seed
    (``numpy.random.default_rng(seed)``, as :func:`summary_data` draws)."""
    N = check_int(N, "N", 8)
    seeds = tuple(check_int(s, "seeds[i]", 0) for s in seeds)
    if len(seeds) < 2:
        raise ValueError(f"seeds must hold at least two seeds (for a standard error), got {seeds}")
    activation = get_activation("poly4")
    ratio, left = [], []
    for seed in seeds:
        run = run_two_steps(N, N, N, activation, hermite_link(1), ((c, alpha1), (c, alpha2)),
                            "fresh", np.random.default_rng(seed))
        diag = term_diagnostics(run, corrected=True)
        ratio.append(diag["top"] / diag["signal_corrected"])
        left.append(diag["left"])
    return Terms(N, seeds, np.array(ratio), np.array(left))


def plot_summary(data: Summary, terms: Terms | None = None):
    r"""(a) :math:`\Lambda(\alpha_1, \alpha_2)` with the lines :math:`\alpha_2 = k(1/2-\alpha_1)`
    and the simulated point; with ``terms``, (b) each exact term's top singular value over its
    predicted spike, and its left vector's cosine with :math:`a^{\circ(k+1)}`, against 1 and
    chance :math:`1/\sqrt N`; below, the spectra of both :math:`W_2` against the
    Marchenko--Pastur law, with their outliers and :math:`W_1`'s marked.

    Drawn for the text column (7 in wide): the theory and the terms side by side on top,
    the two spectra side by side below (without ``terms``, the phase diagram is alone on top).
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm, ListedColormap

    L = data.L
    if terms is not None and not isinstance(terms, Terms):
        raise TypeError(f"terms must be a Terms (from terms_data) or None, got {type(terms).__name__}")
    fig = plt.figure(figsize=(7.0, 6.6))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.1, 1])
    ax_phase = fig.add_subplot(grid[0, 0] if terms is not None else grid[0, :])
    ax_rows = [fig.add_subplot(grid[1, 0])]
    ax_rows.append(fig.add_subplot(grid[1, 1], sharey=ax_rows[0], sharex=ax_rows[0]))
    if terms is not None:
        _plot_terms(fig.add_subplot(grid[0, 1]), terms)
    spectra = "b" if terms is None else "c"

    a = np.linspace(0, 0.5, 251)[:-1]
    A1, A2 = np.meshgrid(a, a)
    counts = np.vectorize(lambda x, y: n_spikes(x, y, L))(A1, A2)
    cmap = ListedColormap(["#f4f4f4", "#dcdcdc", "#b0b0b0", "#808080"])
    mesh = ax_phase.pcolormesh(A1, A2, counts, cmap=cmap, norm=BoundaryNorm(np.arange(-0.5, L), L),
                               shading="auto", rasterized=True)
    for k in range(1, L):
        ax_phase.plot(a, phase_boundaries(a, k), color="0.3", lw=0.8)
    ax_phase.plot(data.alpha1, data.alpha2, ls="none", marker="*", ms=13, color="white", mec="k",
                  mew=0.9, label="simulated")
    ax_phase.set(xlim=(0, 0.5), ylim=(0, 0.5), xlabel=r"$\alpha_1$", ylabel=r"$\alpha_2$",
                 title=rf"(a) theory: $\Lambda(\alpha_1, \alpha_2)$, $L = {L}$")
    ax_phase.grid(False)
    bar = fig.colorbar(mesh, ax=ax_phase, ticks=range(L), fraction=0.06, pad=0.03)
    bar.set_label(r"new outliers $\Lambda$")
    ax_phase.legend(loc="upper left", frameon=True)

    edge, margin, n_marked = data.edge, data.margin, data.n_marked
    bins = np.linspace(0, 1.04 * max(data.s_W1[0], data.s_W2[0], data.s_W2r[0]), 120)
    s_grid = np.linspace(0, edge, 300)
    rows = [(data.s_W2, "fresh batch", COLORS["fresh"]),
            (data.s_W2r, "reused batch", COLORS["reused"])]
    for i, (ax, (s, name, color)) in enumerate(zip(ax_rows, rows)):
        beyond = s[s > edge * (1 + margin)]
        ax.hist(s, bins=bins, density=True, color="0.7", label="$W_2$")
        ax.plot(s_grid, marchenko_pastur_density(s_grid, 1.0), color=COLORS["theory"], lw=1.2,
                label=r"bulk of $W_0$")
        ax.axvline(edge, color=COLORS["theory"], ls=":", lw=1)
        for x in data.s_W1[:data.count["W1"]]:
            ax.axvline(x, ymax=0.4, color=COLORS["one-step"], lw=1.4, ls="--")
        for x in beyond[:n_marked]:
            ax.axvline(x, ymax=0.4, color=color, lw=1.6)
        shown = f"largest {n_marked} of " if beyond.size > n_marked else ""
        ax.plot([], [], color=color, lw=1.6, label=f"{shown.removeprefix('largest ')}{beyond.size} beyond")
        ax.plot([], [], color=COLORS["one-step"], lw=1.4, ls="--", label=r"outlier of $W_1$")
        ax.set(xlabel="singular value", ylim=(0, 1.45),
               title=f"({spectra}{i + 1}) $W_2$, {name}")
        ax.legend(loc="upper right", handlelength=1.4, borderaxespad=0.3)
    ax_rows[0].set_ylabel("density")
    ax_rows[1].tick_params(labelleft=False)
    plt.close(fig)
    return fig


def _plot_terms(ax, terms: Terms) -> None:
    # Measured ratio and cosine per order k, mean and standard error over seeds, against the
    # prediction 1 and the cosine's chance level.
    k = np.arange(terms.ratio.shape[1])
    for key, label, color, shift in (("ratio", r"$s_1(T_k)\,/\,\|S_k^{\rm corr}\|$", COLORS["fresh"], -0.08),
                                     ("left", r"$|\cos(\hat\ell_k, a^{\circ(k+1)})|$", COLORS["reused"], 0.08)):
        mean, sem = terms.mean_sem(key)
        ax.errorbar(k + shift, mean, yerr=sem, fmt="o", ms=5, capsize=3, color=color, label=label)
    ax.axhline(1.0, color=COLORS["theory"], lw=1.2, label="prediction")
    ax.axhline(1 / np.sqrt(terms.N), color=COLORS["chance"], ls=":", lw=1.2,
               label=r"chance $1/\sqrt{N}$")
    ax.set(xticks=k, xlabel="order $k$ of the exact term", ylabel="ratio; |cosine|", ylim=(0, 1.45),
           title=f"(b) exact terms, {len(terms.seeds)} seeds")
    ax.legend(loc="lower left", borderaxespad=0.3)


def spectra_table(data: Summary):
    r"""Table *tab-summary-spectra*: for :math:`W_1` and both :math:`W_2` of one draw, the number
    of singular values beyond ``(1 + margin)`` times the bulk edge, the two largest values, and
    the theory's count as :math:`N\to\infty` (1 for :math:`W_1`, :math:`1+\Lambda` for
    :math:`W_2`)."""
    if not isinstance(data, Summary):
        raise TypeError(f"data must be a Summary (from summary_data), got {type(data).__name__}")
    threshold = data.edge * (1 + data.margin)
    rows = [["$W_1$ (one step)", data.s_W1, data.count["W1"], 1],
            ["$W_2$, fresh batch", data.s_W2, data.count["W2"], 1 + data.n_spikes],
            ["$W_2$, reused batch", data.s_W2r, data.count["W2r"], 1 + data.n_spikes]]
    return markdown_table(
        f"The raw spectra of the figure above, one draw (seed {data.seed}), $N = n = d = {data.N}$: "
        f"singular values beyond {num(1 + data.margin)} times the bulk edge {num(data.edge)} "
        f"(the threshold {num(threshold)}), the two largest values, and the theory's count as "
        r"$N\to\infty$.",
        "tab-summary-spectra",
        ["matrix", "beyond the threshold", "$s_1$", "$s_2$", "theory"],
        [[name, str(count), num(s[0]), num(s[1], ".3f"), str(theory)] for name, s, count, theory in rows])


def rules_table():
    r"""Table *tab-verdict-rules*: what each verdict means, the margin and its reason, and the
    interval, from the constants of :mod:`twostep.analysis.verdicts`
    (:func:`~twostep.analysis.verdicts.rule_rows`)."""
    return markdown_table(
        "The rule behind the verdicts, from the constants of the code that applies it "
        "(twostep.analysis.verdicts): each verdict is computed from a chapter's measurements "
        "over seeds, the claim's prediction and a null (the value without the effect: chance, "
        "a control, a single spike).",
        "tab-verdict-rules", ["verdict", "when"], rule_rows())


def symbols_key() -> str:
    """The key to the symbols of the table of verdicts at each width, as one line of text."""
    return "; ".join(f"{symbol} {label}" for label, symbol in VERDICT_SYMBOLS.items()) + \
        "; — not measured at that width"
