"""The registered confirmatory run of the count: its registry, per-draw tests and SHA-256 check."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np

from . import verdicts
from .plane import count_test, predicted_count
from .spikes import outlier_strength
from .theory import n_spikes

FORMAT = "twostep-registry"
SCHEMA = 1
#: Paths relative to the repository's root: the registry, the run's results, the exploratory
#: file the settings and N* come from.
REGISTRY_PATH = "results/registry.json"
RESULTS_PATH = "results/at_scale/count_confirm.json"
EXPLORATORY_PATH = "results/at_scale/count.json"
#: Widths of the run and independent draws (seeds) per width and batch.
DRAWS = {1000: 24, 2000: 24, 4000: 24, 8000: 10, 16000: 3}
#: The first confirmatory seed; every earlier run of the project used seeds below 10^5.
SEED_BASE = 1_000_000
#: The twelve settings (alpha1, alpha2) of the count, three per Lambda = 0..3 (chosen on
#: 2026-12-03 from the exploratory map of the plane, twostep.analysis.plane.rank_points).
SETTINGS = [[0.39, 0.09], [0.41, 0.07], [0.09, 0.37],
            [0.25, 0.49], [0.23, 0.49], [0.25, 0.47],
            [0.33, 0.49], [0.33, 0.47], [0.35, 0.43],
            [0.49, 0.49], [0.49, 0.47], [0.49, 0.45]]
#: The measurement (twostep.scale.device.count_on's keywords).
PARAMS = dict(activation="poly4", target="he1", c=0.2, ref=[0.4, 0.25], settings=SETTINGS,
              kappas=[0.2], extra_kappas=[], extra_max_N=0, margin=0.05, n_top=8)
L = 4
KAPPA = 0.2
#: Margins of the outlier threshold over which N* is spread (low to high).
NSTAR_MARGINS = (0.02, 0.10)
#: Widths beyond which an extrapolated N* is reported as "beyond reach".
REACH = 1e6
BATCHES = ("fresh", "reused")
#: The verdict rows per batch: "not reached" when the first test applies to no draw, else the
#: least favourable label of its tests over every Lambda (twostep.analysis.verdicts.worst).
ROWS = {"paper_count": ("full", "at_most"),
        "book_nstar": ("appear", "not_before"),
        "book_finite_n": ("finite_n",)}
#: name -> (what passes, where it applies, the label when the share of draws fails).
TESTS = {
    "full": ("c = 1 + Λ", "N ≥ N⋆_Λ (high), Λ ≥ 1", verdicts.DIFFERS),
    "appear": ("c ≥ 1 + j", "N ≥ N⋆_j (high), j = 1..Λ", verdicts.DIFFERS),
    "not_before": ("c ≤ j", "N < N⋆_j (low), j = 1..Λ", verdicts.DIFFERS),
    "at_most": ("c ≤ 1 + Λ", "every width, every Λ", verdicts.CONTRADICTED),
    "finite_n": ("c = the draw's predicted count", "every width, every Λ", verdicts.DIFFERS),
}

def plan_seeds() -> dict:
    """``{N: [seeds]}``: consecutive seeds from :data:`SEED_BASE`, distinct across widths."""
    out, nxt = {}, SEED_BASE
    for N, k in sorted(DRAWS.items()):
        out[N] = list(range(nxt, nxt + k))
        nxt += k
    return out

def exploratory_nstar(records) -> dict:
    r"""``{batch: (S, L, 3)}``: :math:`N^\star_j` (low, median, high) from the exploratory records."""
    return {b: count_test(records, b, KAPPA, SETTINGS, L, margins=NSTAR_MARGINS).nstar
            for b in BATCHES}

def _json_number(x: float):
    # JSON has no infinity: an N* that is never reached is stored as null.
    return None if not math.isfinite(x) else float(x)

def build_registry(exploratory: dict, exploratory_sha256: str, created: str) -> dict:
    """The registry document, from the exploratory results document ``exploratory``."""
    nstar = exploratory_nstar(exploratory["records"])
    lam = [n_spikes(a1, a2, L) for a1, a2 in SETTINGS]
    return {
        "format": FORMAT, "schema": SCHEMA, "created": created,
        "purpose": "The plan of the confirmatory run of W2's outlier count, fixed before its "
                   "draws exist. The count verdicts of the book come from this run only.",
        "rule": {"confidence": verdicts.CONFIDENCE, "margin": verdicts.MARGIN,
                 "min_draws": verdicts.MIN_DRAWS, "no_spread": verdicts.NO_SPREAD,
                 "unit": "a draw: one seed at one width; items of one draw are one outcome, "
                         "passing when all pass; both batches of a seed are judged apart",
                 "share": "Clopper-Pearson interval of the share of passing draws: confirmed "
                          "at a lower end >= 1 - margin, the test's failure label at an upper "
                          "end < 1 - margin"},
        "measurement": {"function": "twostep.scale.device.count_on", "backend": "numpy",
                        "dtype": "float32", "params": PARAMS, "L": L, "kappa": KAPPA,
                        "lambda": lam},
        "draws": {str(N): seeds for N, seeds in plan_seeds().items()},
        "nstar": {
            "method": "twostep.analysis.plane.count_test on the exploratory draws: for each "
                      "setting, seed and j, the (j+1)-th singular value of the predicted spike "
                      "sum over W2's own edge (scaled to W0's) fitted by a power law in N and "
                      "extrapolated to the strength whose BBP outlier clears the edge by each "
                      "margin; low, median and high over seeds and margins",
            "margins": list(NSTAR_MARGINS), "reach": REACH,
            "source": EXPLORATORY_PATH, "source_sha256": exploratory_sha256,
            "source_seeds": sorted({int(r["seed"]) for r in exploratory["records"]}),
            "values": {b: [[[_json_number(v) for v in nstar[b][s, j]]
                            for j in range(lam[s] + 1)] for s in range(len(SETTINGS))]
                       for b in BATCHES}},
        "prediction": {
            "method": "twostep.analysis.plane.predicted_count: the number of singular values "
                      "of the predicted spike sum (first spike plus the corrected S_k, "
                      "reuse-aware for a reused batch) beyond theta_star times the draw's own "
                      "bulk edge over 2, theta_star the BBP strength whose outlier clears an "
                      "edge by the count's margin (N/d = 1)",
            "margin": PARAMS["margin"], "theta_star": outlier_strength(1.0, PARAMS["margin"])},
        "tests": {name: {"passes": p, "applies": a, "fails": f} for name, (p, a, f) in TESTS.items()},
        "rows": {name: list(tests) for name, tests in ROWS.items()},
        "row_rule": "not reached at these widths when the row's first test applies to no draw; "
                    "otherwise the least favourable label of its tests over every Lambda "
                    "where they apply",
        "results": RESULTS_PATH,
    }

def write_registry(doc: dict, path) -> None:
    """Write the registry ``doc`` to ``path``; an existing registry is never overwritten."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists: a registry is written once")
    with open(path, "x", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")

def file_sha256(path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

def read_registry(path) -> dict:
    """The registry at ``path``, checked for its format and the fields the run reads."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a twostep registry of schema {SCHEMA}")
    for key in ("draws", "measurement", "nstar", "prediction", "tests", "rule"):
        if key not in doc:
            raise ValueError(f"{path}: the registry has no {key!r}")
    return doc

def check_registered(results: dict, registry_path) -> None:
    """Refuse a results document whose ``registry_sha256`` is not that of ``registry_path``."""
    want = file_sha256(registry_path)
    have = results.get("registry_sha256")
    if have != want:
        raise ValueError(f"the results file names registry {have!r}, the registry at "
                         f"{registry_path} is {want}: not this registered run")

def nstar_array(registry: dict, batch: str) -> np.ndarray:
    r"""``(S, L, 3)`` :math:`N^\star` of the registry (``inf``: never reached; ``nan``: beyond
    :math:`\Lambda`)."""
    rows = registry["nstar"]["values"][batch]
    out = np.full((len(rows), L, 3), np.nan)
    for s, per_j in enumerate(rows):
        for j, vals in enumerate(per_j):
            out[s, j] = [np.inf if v is None else v for v in vals]
    return out

def draw_items(records, registry: dict, batch: str) -> dict:
    """``{test: {lam: (passed, draws, widths)}}`` for one batch, for
    :func:`twostep.analysis.verdicts.share`."""
    settings = registry["measurement"]["params"]["settings"]
    lam = registry["measurement"]["lambda"]
    margin = registry["prediction"]["margin"]
    kappa = registry["measurement"]["kappa"]
    ns = nstar_array(registry, batch)
    out = {t: {k: ([], [], []) for k in sorted(set(lam))} for t in TESTS}
    for r in records:
        if r["batch"] != batch:
            continue
        pts = np.asarray(r["points"], dtype=float)
        N, draw = int(r["N"]), (int(r["N"]), int(r["seed"]))
        for s, (a1, a2) in enumerate(settings):
            i = int(np.flatnonzero(np.all(np.isclose(pts, [kappa, a1, a2]), axis=1))[0])
            c, g = int(r["count_own"][i]), lam[s]
            pred = predicted_count(r["spike_sum"][i], r["edge_own"][i], margin)
            cases = [("at_most", c <= 1 + g), ("finite_n", c == pred)]
            if g >= 1 and N >= ns[s, g, 2]:
                cases.append(("full", c == 1 + g))
            for j in range(1, g + 1):
                if N >= ns[s, j, 2]:
                    cases.append(("appear", c >= 1 + j))
                if N < ns[s, j, 0]:
                    cases.append(("not_before", c <= j))
            for test, ok in cases:
                passed, draws, widths = out[test][g]
                passed.append(bool(ok))
                draws.append(draw)
                widths.append(N)
    return out

def judge_rows(records, registry: dict, batch: str) -> dict:
    r"""``{row: label}`` for one batch: each row the worst label of its tests over every :math:`\Lambda`."""
    tests = judge_tests(records, registry, batch)
    out = {}
    for row, names in registry["rows"].items():
        judged = [v for t in names for v in tests[t].values() if v.draws]
        reached = any(v.draws for v in tests[names[0]].values())
        out[row] = verdicts.worst(judged) if reached else verdicts.NOT_REACHED
    return out

def judge_tests(records, registry: dict, batch: str) -> dict:
    """``{test: {lam: Verdict}}`` for one batch (:func:`twostep.analysis.verdicts.share`)."""
    items = draw_items(records, registry, batch)
    return {t: {g: verdicts.share(p, d, fails=TESTS[t][2]) for g, (p, d, _) in per.items()
                if not (t in ("full", "appear", "not_before") and g == 0)}
            for t, per in items.items()}
