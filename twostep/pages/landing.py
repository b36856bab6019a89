r"""The landing page (``book/index.md``): the count, one network, its terms and "How to cite"."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap

from ..analysis.alignment import chance_maximum, memorisations
from ..analysis.spikes import term_diagnostics
from ..analysis.summary import Summary
from ..analysis.spectra import (bulk_edge, count_outliers, marchenko_pastur_density,
                                singular_values, top_singular)
from ..analysis.theory import n_spikes, phase_boundaries, spike_exponent
from ..model.activations import get_activation
from ..model.steps import one_step, run_two_steps
from ..model.targets import hermite_link
from .figures import COLORS, attach_data, finished

def summary_data(N: int = 1000, c: float = 0.2, alpha1: float = 0.4, alpha2: float = 0.25,
                 seed: int = 0, margin: float = 0.05, n_marked: int = 6) -> dict:
    r"""One network, :math:`N = n = d`, :math:`\sigma_4`, target :math:`\mathrm{He}_1`,
    :math:`\eta_t = cN^{\alpha_t}`: the second step on a fresh batch and, from the same
    :math:`W_1`, on the first batch again."""
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
    memo = memorisations(V, run.X1)[0]
    L = activation.degree
    lam = n_spikes(alpha1, alpha2, L)
    exponents = [spike_exponent(k, alpha1, alpha2) for k in range(1, lam + 1)]
    return dict(alpha1=alpha1, alpha2=alpha2, L=L, n_spikes=lam, exponents=exponents,
                margin=margin, n_marked=n_marked, edge=edge, s_W1=s_W1, s_W2=s_W2, s_W2r=s_W2r,
                count=count, memo=memo, memo_null=chance_maximum(N, N))

def terms_data(N: int = 1000, c: float = 0.2, alpha1: float = 0.4, alpha2: float = 0.25,
               seeds=(0, 1, 2)) -> Summary:
    r"""The exact terms :math:`T_k` against their corrected spikes: ``ratio``, ``left``."""
    activation = get_activation("poly4")
    records = []
    for seed in seeds:
        run = run_two_steps(N, N, N, activation, hermite_link(1), ((c, alpha1), (c, alpha2)),
                            "fresh", np.random.default_rng(seed))
        diag = term_diagnostics(run, corrected=True)
        records.append({"N": N, "seed": seed, "ratio": diag["top"] / diag["signal_corrected"],
                        "left": diag["left"]})
    return Summary(records, ("N",), ("ratio", "left"))

def plot_summary(data: dict, terms: Summary):
    r"""(a) :math:`\Lambda(\alpha_1, \alpha_2)` with the simulated point; (b) each exact term against
    its spike; below, the spectra of both :math:`W_2` against the Marchenko--Pastur law."""
    L = data["L"]
    fig = plt.figure(figsize=(7.0, 6.6))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.1, 1])
    ax_phase = fig.add_subplot(grid[0, 0])
    ax_rows = [fig.add_subplot(grid[1, 0])]
    ax_rows.append(fig.add_subplot(grid[1, 1], sharey=ax_rows[0], sharex=ax_rows[0]))
    rows = _plot_terms(fig.add_subplot(grid[0, 1]), terms)

    a = np.linspace(0, 0.5, 251)[:-1]
    A1, A2 = np.meshgrid(a, a)
    counts = np.vectorize(lambda x, y: n_spikes(x, y, L))(A1, A2)
    cmap = ListedColormap(["#f4f4f4", "#dcdcdc", "#b0b0b0", "#808080"])
    mesh = ax_phase.pcolormesh(A1, A2, counts, cmap=cmap, norm=BoundaryNorm(np.arange(-0.5, L), L),
                               shading="auto", rasterized=True)
    for k in range(1, L):
        ax_phase.plot(a, phase_boundaries(a, k), color="0.3", lw=0.8)
    ax_phase.plot(data["alpha1"], data["alpha2"], ls="none", marker="*", ms=13, color="white",
                  mec="k", mew=0.9, label="simulated")
    ax_phase.set(xlim=(0, 0.5), ylim=(0, 0.5), xlabel=r"$\alpha_1$", ylabel=r"$\alpha_2$",
                 title=rf"(a) theory: $\Lambda(\alpha_1, \alpha_2)$, $L = {L}$")
    ax_phase.grid(False)
    bar = fig.colorbar(mesh, ax=ax_phase, ticks=range(L), fraction=0.06, pad=0.03)
    bar.set_label(r"new outliers $\Lambda$")
    ax_phase.legend(loc="upper left", frameon=True)

    edge, margin, n_marked = data["edge"], data["margin"], data["n_marked"]
    bins = np.linspace(0, 1.04 * max(data["s_W1"][0], data["s_W2"][0], data["s_W2r"][0]), 120)
    s_grid = np.linspace(0, edge, 300)
    spectra = [(data["s_W2"], "fresh batch", COLORS["fresh"]),
               (data["s_W2r"], "reused batch", COLORS["reused"])]
    for i, (ax, (s, name, color)) in enumerate(zip(ax_rows, spectra)):
        beyond = s[s > edge * (1 + margin)]
        density, _, _ = ax.hist(s, bins=bins, density=True, color="0.7", label="$W_2$")
        panel = f"c{i + 1}"
        rows += [_row(panel, "W2 histogram", b, d) for b, d in zip(bins[:-1], density)]
        rows += [_row(panel, "counted outlier", x, np.nan) for x in beyond[:n_marked]]
        rows += [_row(panel, "outlier of W1", x, np.nan)
                 for x in data["s_W1"][:data["count"]["W1"]]]
        ax.plot(s_grid, marchenko_pastur_density(s_grid, 1.0), color=COLORS["theory"], lw=1.2,
                label=r"bulk of $W_0$")
        ax.axvline(edge, color=COLORS["theory"], ls=":", lw=1)
        for x in data["s_W1"][:data["count"]["W1"]]:
            ax.axvline(x, ymax=0.4, color=COLORS["one-step"], lw=1.4, ls="--")
        for x in beyond[:n_marked]:
            ax.axvline(x, ymax=0.4, color=color, lw=1.6)
        shown = f"largest {n_marked} of " if beyond.size > n_marked else ""
        ax.plot([], [], color=color, lw=1.6, label=f"{shown.removeprefix('largest ')}{beyond.size} beyond")
        ax.plot([], [], color=COLORS["one-step"], lw=1.4, ls="--", label=r"outlier of $W_1$")
        ax.set(xlabel="singular value", ylim=(0, 1.45),
               title=f"(c{i + 1}) $W_2$, {name}")
        ax.legend(loc="upper right", handlelength=1.4, borderaxespad=0.3)
    ax_rows[0].set_ylabel("density")
    ax_rows[1].tick_params(labelleft=False)
    return finished(attach_data(fig, rows))

def _row(panel, series, x, y, sem=np.nan, prediction=np.nan) -> dict:
    return {"panel": panel, "series": series, "x": float(x), "y": float(y), "sem": float(sem),
            "prediction": float(prediction)}

def _plot_terms(ax, terms: Summary) -> list:
    # Measured ratio and cosine per order k, mean and standard error over seeds, against the
    # prediction 1 and the cosine's chance level.
    N = terms.axis()[0]
    rows = []
    for key, label, color, shift in (("ratio", r"$s_1(T_k)\,/\,\|S_k^{\rm corr}\|$", COLORS["fresh"], -0.08),
                                     ("left", r"$|\cos(\hat\ell_k, a^{\circ(k+1)})|$", COLORS["reused"], 0.08)):
        mean = terms.at(key, N=N)
        k = np.arange(mean.size)
        sem = terms.at(key, sem=True, N=N)
        ax.errorbar(k + shift, mean, yerr=sem, fmt="o", ms=5, capsize=3, color=color, label=label)
        rows += [_row("b", key, kk, m, e, 1.0 if key == "ratio" else np.nan)
                 for kk, m, e in zip(k, mean, sem)]
    ax.axhline(1.0, color=COLORS["theory"], lw=1.2, label="prediction")
    chance = 1 / np.sqrt(N)
    ax.axhline(chance, color=COLORS["chance"], ls=":", lw=1.2, label=r"chance $1/\sqrt{N}$")
    # The axis starts below zero so that the chance line, near 0, stands clear of the spine;
    # its value is written beside it.
    ax.annotate(f"chance {chance:.3f}", (1.0, chance), xycoords=("axes fraction", "data"),
                xytext=(-3, 3), textcoords="offset points", ha="right", va="bottom",
                color=COLORS["chance"])
    ax.set(xticks=k, xlabel="order $k$ of the exact term", ylabel="ratio; |cosine|",
           ylim=(-0.15, 1.45), title=f"(b) exact terms, {terms.count(N=N)} seeds")
    ax.legend(loc="lower left", borderaxespad=0.3)
    return rows

def registered_run(folder=None) -> tuple:
    """``(registry, header)`` of the registered confirmatory run, checked by its SHA-256."""
    import json

    from ..analysis import confirmatory
    from .spikes import results_folder

    folder = results_folder() if folder is None else Path(folder)
    results = folder / Path(confirmatory.RESULTS_PATH).name
    registry_file = folder.parent / "registry.json"
    if not registry_file.is_file():        # a reader's folder: the files side by side
        registry_file = folder / "registry.json"
    header = {k: v for k, v in json.loads(results.read_text(encoding="utf-8")).items()
              if k != "records"}
    confirmatory.check_registered(header, registry_file)
    return confirmatory.read_registry(registry_file), header

# --- How to cite: rendered from CITATION.cff, the one source --------------------------------

def _bib_text(text) -> str:
    # BibTeX reads & % $ # _ as markup; the book's titles have "&".
    return re.sub(r"([&%$#_])", r"\\\1", " ".join(str(text).split()))

def _bib_authors(authors, field: str) -> str:
    names = []
    for i, person in enumerate(authors):
        if "family-names" in person:
            given = person.get("given-names")
            names.append(_bib_text(person["family-names"]) + (f", {_bib_text(given)}" if given else ""))
        elif "name" in person:
            names.append("{" + _bib_text(person["name"]) + "}")   # an entity: one name, never split
        else:
            raise ValueError(f"{field}[{i}] has neither family-names nor name: {person!r}")
    return " and ".join(names)

def _bib_entry(kind: str, key: str, fields: dict) -> str:
    width = max(map(len, fields))
    body = ",\n".join(f"  {name.ljust(width)} = {{{value}}}" for name, value in fields.items())
    return f"@{kind}{{{key},\n{body},\n}}"

def bibtex_entries(cff: dict) -> tuple[str, list[str]]:
    """(the book's ``@software`` entry, one entry per item of ``references``) from a parsed
    CITATION.cff (a dict). A reference with an ``arXiv:`` identifier is a ``@misc`` with its
    ``eprint``; any other an ``@article``."""
    if not isinstance(cff, dict):
        raise TypeError(f"cff must be a dict (a parsed CITATION.cff), got {type(cff).__name__}")
    for name in ("title", "authors"):
        if name not in cff:
            raise ValueError(f"cff has no {name!r}")
    book = {"title": _bib_text(cff["title"]), "author": _bib_authors(cff["authors"], "authors")}
    for name, field in (("version", "version"), ("repository-code", "url"), ("url", "url")):
        if cff.get(name) and field not in book:
            book[field] = _bib_text(cff[name])
    entries = []
    for i, ref in enumerate(cff.get("references") or []):
        fields = {"title": _bib_text(ref["title"]),
                  "author": _bib_authors(ref["authors"], f"references[{i}].authors")}
        if "year" in ref:
            fields["year"] = str(ref["year"])
        arxiv = [str(x.get("value", ""))[6:] for x in ref.get("identifiers") or []
                 if str(x.get("value", "")).startswith("arXiv:")]
        if arxiv:
            fields.update(eprint=arxiv[0], archiveprefix="arXiv")
        elif ref.get("journal"):
            fields["journal"] = _bib_text(ref["journal"])
        if ref.get("url"):
            fields["url"] = ref["url"]
        first = ref["authors"][0]
        word = next((w for w in re.findall(r"[a-z]+", ref["title"].lower()) if len(w) > 3), "")
        key = re.sub(r"\W", "", str(first.get("family-names", first.get("name", "ref"))).lower())
        entries.append(_bib_entry("misc" if arxiv else "article",
                                  f"{key}{ref.get('year', '')}{word}", fields))
    return _bib_entry("software", "twostep", book), entries

def citation(path=None):
    """The landing page's "How to cite" from CITATION.cff, as ``IPython.display.Markdown``."""
    import yaml
    from IPython.display import Markdown

    if path is None:
        path = Path(__file__).resolve().parents[2] / "CITATION.cff"
        path = path if path.is_file() else Path.cwd() / "CITATION.cff"
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a path to CITATION.cff, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no CITATION.cff at {path}: run the notebook in the repository, "
                                "or put the file beside it")
    cff = yaml.safe_load(path.read_text(encoding="utf8"))
    book, papers = bibtex_entries(cff)
    fence = "```"
    parts = [" ".join(str(cff.get("message", "")).split())]
    parts += ["The paper:" if len(papers) == 1 else "The papers:"]
    parts += [f"{fence}bibtex\n{entry}\n{fence}" for entry in papers]
    parts += ["The book" + (f" (version {cff['version']})" if cff.get("version") else "") + ":",
              f"{fence}bibtex\n{book}\n{fence}"]
    return Markdown("\n\n".join(p for p in parts if p))
