r"""Single runs of the reuse experiments (chapter *Reuse*): where the learned directions point
with a reused or a fresh second batch."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Sequence

import numpy as np

from .._validation import (check_alpha, check_choice, check_dtype_name, check_fits, check_int,
                           check_rng, check_steps)
from ..analysis.alignment import (memorisation, memorisations, nested_unmemorised_overlaps,
                                  overlaps, subspace_overlap, unmemorised_overlap)
from ..analysis.decomposition import (pre_activations, second_step_term_operator,
                                      signal_directions, signal_part)
from ..analysis.projection import PROJECTED_KEYS, projected_alignment
from ..analysis._core import top_singular_core
from ..analysis.spectra import top_singular
from ..analysis.theory import n_spikes
from ..model._core import (initial_pre_activations, labels_core, measure_both_batches,
                           take_both_batches, two_steps_core)
from ..model.activations import as_activation
from ..model.steps import BATCHES, draw_problem, step_size
from ..model.targets import make_teacher

def signal_overlap_experiment(rng: np.random.Generator, n: int, d: int, target, batch: str,
                              ks=(0, 1, 2, 3), activation=None) -> dict:
    r"""Draw a teacher and data; the overlaps of :math:`u_k` (data only) with its directions.

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the teacher, then the batch(es).
    n, d : int
        Batch size and dimension.
    target : see :func:`twostep.make_teacher`
    batch : {"reused", "fresh", "both"}
        ``"both"``: one fresh draw serves both (each bit for bit its own).
    ks : sequence of int
        The orders :math:`k`.
    activation : PolynomialActivation or str, optional
        Also measure the reuse-aware :math:`\tilde u_k` (:func:`signal_directions`).

    Returns
    -------
    dict
        ``overlaps`` (``(len(ks), r)``) and ``norms`` (``(len(ks),)``) of the :math:`u_k`; with
        ``activation``, ``overlaps_reuse`` (``(len(ks), r)``). With ``batch="both"``,
        ``{"reused": {...}, "fresh": {...}}``.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> out = ts.signal_overlap_experiment(np.random.default_rng(0), 400, 100, "he1", "reused")
    >>> out["overlaps"].round(2).ravel().tolist(), out["norms"].shape
    ([0.87, 0.11, 0.71, 0.31], (4,))
    """
    return signal_overlap_cases(rng, n, d, [target], batch, ks, activation)["results"][0]

def signal_overlap_cases(rng: np.random.Generator, n: int, d: int, targets, batch: str,
                         ks=(0, 1, 2, 3), activation=None) -> dict:
    r"""``{"results": [...]}``: :func:`signal_overlap_experiment` of each target (one rank, no
    noise) from ``rng``'s state, bit for bit, on one draw of the inputs."""
    check_rng(rng)
    n, d = check_int(n, "n"), check_int(d, "d")
    batch = check_choice(batch, "batch", (*BATCHES, "both"))
    targets = _check_targets(targets)
    check_fits(8 * (1 if batch == "reused" else 2) * n * d,
               f"signal overlaps at n={n}, d={d} ({batch} batch)")
    teacher = make_teacher(targets[0], d, rng)
    X1, y1 = teacher.sample(n, rng)
    X2, y2 = teacher.sample(n, rng) if batch != "reused" else (None, None)
    B = teacher.directions
    labels = [(y1, y2)]
    for i, target in enumerate(targets[1:], start=1):
        other = teacher.relabelled(target, f"targets[{i}]")
        labels.append((labels_core(other, X1), None if X2 is None else labels_core(other, X2)))
    measure = partial(_signal_measures, X1, ks=ks, B=B, activation=activation)
    return {"results": [{"reused": measure(y1, None, None), "fresh": measure(y1, X2, y2)}
                        if batch == "both" else measure(y1, X2, y2) for y1, y2 in labels]}

def _signal_measures(X1, y1, X2, y2, ks, B, activation):
    # One batch scheme (X2 None: reused).
    U = signal_directions(X1, y1, ks, X2, y2)
    out = {"overlaps": overlaps(U, B), "norms": np.linalg.norm(U, axis=1)}
    if activation is not None:
        Ur = signal_directions(X1, y1, ks, X2, y2, activation=activation)
        out["overlaps_reuse"] = overlaps(Ur, B)
    return out

def reuse_experiment(rng: np.random.Generator, *, N: int, target="he1", batch: str = "reused",
                     activation="poly4", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                     alpha2: float = 0.25, term: int | None = 2, top: int = 8,
                     alpha2s=(), dtype="float64") -> dict:
    r"""Two steps at :math:`N = n = d`, and where the learned directions point.

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension.
    target : see :func:`target_links`
    batch : {"reused", "fresh", "both"}
        ``"both"``: the two runs of one draw (each bit for bit its own), as
        ``{"reused": {...}, "fresh": {...}}``.
    c1, alpha1, c2, alpha2 : float
        Step sizes :math:`\eta_t = c_tN^{\alpha_t}`.
    activation : PolynomialActivation or str
    term : int or None
        Order :math:`k` of the exact term :math:`T_k` and of :math:`\tilde u_k` measured
        (``None``: neither).
    top : int
        Number of top right singular vectors of :math:`W_2` to measure.
    alpha2s : sequence of float
        Other exponents :math:`\alpha_2'` of the same draw:
        :math:`W_2' = W_1 + (\eta_2'/\eta_2)(W_2 - W_1)` exactly.
    dtype : {"float64", "float32"}

    Returns
    -------
    dict
        ``signal`` ``(L, r)``: overlaps of :math:`u_0..u_{L-1}`; ``top_values`` ``(top,)``,
        ``top_overlap`` ``(top, r)`` and ``top_memorisation`` ``(top,)`` of :math:`W_2`'s top
        pairs; ``subspace``, ``subspace_unmemorised`` ``(top, r)``: overlaps of the spans of the
        first :math:`K` vectors, raw and without memorised inputs; with ``term``:
        ``signal_reuse``, ``term_value``, ``term_overlap``, ``term_memorisation``; with
        ``alpha2s``: ``rescaled_subspace``, ``rescaled_subspace_unmemorised``
        ``(len(alpha2s), top, r)``.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> out = ts.reuse_experiment(np.random.default_rng(0), N=40, top=2)
    >>> out["top_values"].shape, out["subspace"].shape      # (top,), (top, r)
    ((2,), (2, 1))
    """
    return reuse_cases(rng, N=N, targets=[target], batch=batch, activation=activation, c1=c1,
                       alpha1=alpha1, c2=c2, alpha2=alpha2, term=term, top=top,
                       alpha2s=alpha2s, dtype=dtype)["results"][0]

def reuse_cases(rng: np.random.Generator, *, N: int, targets, batch: str = "both",
                activation="poly4", c1: float = 0.2, alpha1: float = 0.4, c2: float = 0.2,
                alpha2: float = 0.25, term: int | None = 2, top: int = 8, alpha2s=(),
                dtype="float64") -> dict:
    r"""``{"results": [...]}``: :func:`reuse_experiment` of each target (one rank, no noise)
    from ``rng``'s state, bit for bit, on one draw (and one :math:`W_0X_t^\top`); ``alpha2s``:
    one sequence for all, or one per target."""
    check_rng(rng)
    N = check_int(N, "N")
    top = check_int(top, "top")
    if top > N:
        raise ValueError(f"top must be in [1, N] = [1, {N}], got {top}")
    targets = _check_targets(targets)
    alpha2s = _check_sequence(alpha2s, "alpha2s")
    per_target = bool(alpha2s) and all(isinstance(a, Sequence) for a in alpha2s)
    if per_target and len(alpha2s) != len(targets):
        raise ValueError(f"alpha2s must hold one sequence of exponents per target "
                         f"({len(targets)}), got {len(alpha2s)}")
    alpha2s = [[check_alpha(a2, "alpha2s") for a2 in _check_sequence(a, "alpha2s")]
               for a in (alpha2s if per_target else [alpha2s] * len(targets))]
    activation = as_activation(activation)
    if activation.degree is None:
        raise ValueError(f"activation must be a polynomial (e.g. 'poly4'): reuse_experiment "
                         f"measures the exact terms T_k, got {activation.name!r} (for tanh use "
                         "paired_reuse_experiment, which measures W_2 only)")
    dt = check_dtype_name(dtype)
    term = None if term is None else check_int(term, "term", 0)
    if term is not None and term > activation.degree - 1:
        raise ValueError(f"term must be in [0, L-1] = [0, {activation.degree - 1}] for a "
                         f"degree-{activation.degree} activation, got {term}")
    batch = check_choice(batch, "batch", (*BATCHES, "both"))
    steps = check_steps(((c1, alpha1), (c2, alpha2)))
    return {"results": _reuse_cases(rng, N, targets, batch, activation, steps, term, top,
                                    alpha2s, dt)}

def _reuse_cases(rng, N, targets, batch, activation, steps, term, top, alpha2s, dt):
    problem = draw_problem(N, N, N, targets[0], "fresh" if batch == "both" else batch, rng,
                           dtype=dt)
    problems = [problem] + [_relabelled(problem, target, f"targets[{i}]")
                            for i, target in enumerate(targets[1:], start=1)]
    keep = term is not None
    measures = [partial(_reuse_measures, term=term, top=top, alpha2s=a2s, c2=steps[1][0])
                for a2s in alpha2s]
    if batch == "both":
        pre0 = initial_pre_activations(problem) if keep and len(problems) > 1 else None
        return [measure_both_batches(p, activation, steps, keep, m, pre0=pre0)
                for p, m in zip(problems, measures)]
    return [m(two_steps_core(p, activation, steps, keep)) for p, m in zip(problems, measures)]

def _relabelled(problem, target, name):
    other = problem.teacher.relabelled(target, name)
    y1 = labels_core(other, problem.X1)
    y2 = y1 if problem.X2 is problem.X1 else labels_core(other, problem.X2)
    return replace(problem, teacher=other, y1=y1, y2=y2)

def _reuse_measures(run, term, top, alpha2s, c2) -> dict:
    activation, N, B = run.activation, run.N, run.teacher.directions
    second = (None, None) if run.batch == "reused" else (run.X2, run.y2)
    out = {"signal": overlaps(signal_directions(run.X1, run.y1, range(activation.degree),
                                                *second), B)}
    if term is not None:
        value, Vt, right = _top_term(run, term)
        out["signal_reuse"], out["term_value"] = overlaps(right, B)[0], value
        out["term_overlap"] = overlaps(Vt, B)[0]
        out["term_memorisation"] = memorisation(Vt[0], run.X2)[0]
    s, _, Vt = top_singular(run.W2, top)
    out["top_values"] = s
    out["top_overlap"] = overlaps(Vt, B)
    out["top_memorisation"] = memorisations(Vt, run.X2)[0]
    out["subspace"], out["subspace_unmemorised"] = _learned_subspace(Vt, B, run.X2)
    if alpha2s:
        update = run.W2 - run.W1
        spans = [_learned_subspace(top_singular(_rescaled_second_step(
            run, update, step_size(c2, a2, N)), top)[2], B, run.X2) for a2 in alpha2s]
        out["rescaled_subspace"], out["rescaled_subspace_unmemorised"] = map(np.array, zip(*spans))
    return out

#: The per-scheme quantities of the exact term in :func:`paired_reuse_experiment`.
TERM_KEYS = ("term_overlap", "term_memorisation", "term_input_overlap", "signal_reuse",
             *(f"projected_{k}" for k in PROJECTED_KEYS))
#: The per-scheme quantities of :math:`W_2'`, one per second-step exponent.
EXPONENT_KEYS = ("subspace", "subspace_unmemorised", "top_memorisation", "row_ratio")

def paired_reuse_experiment(rng: np.random.Generator, *, N: int, target="odd",
                            activation="poly4", c1: float = 0.5, alpha1: float = 0.4,
                            c2: float = 0.5, alpha2: float = 0.25, alpha2s=(),
                            term: int | None = 2, dtype="float32") -> dict:
    r"""Reused and fresh second batches on the *same* draw (:math:`N = n = d`): paired runs, then
    a random :math:`K`-dimensional subspace (drawn last) as the memorisation null.

    Step sizes :math:`\eta_t = c_tN^{\alpha_t}`, also rescaled to each of ``alpha2s``; a
    polynomial activation adds the exact term :math:`T_{\rm term}`. Returns, for ``s`` in
    ``reused``, ``fresh``: ``<key>_s`` for each of :data:`TERM_KEYS` (NaN without a polynomial);
    per exponent of ``(alpha2, *alpha2s)``, with :math:`K = 1 + \Lambda(\alpha_1, \alpha_2')`,
    ``<key>_s`` for each of :data:`EXPONENT_KEYS` (``row_ratio``:
    :math:`\max_i\|w_i\|/\operatorname{median}_i\|w_i\|`); ``null_subspace``,
    ``null_unmemorised`` and ``K`` ``(len(alpha2s) + 1,)``.
    """
    N = check_int(N, "N", 8)
    steps = check_steps(((c1, alpha1), (c2, alpha2)))
    activation = as_activation(activation)
    a2s = [alpha2] + [check_alpha(a, "alpha2s") for a in _check_sequence(alpha2s, "alpha2s")]
    Ks = [1 + n_spikes(alpha1, a2, activation.degree) for a2 in a2s]
    etas = [step_size(c2, a2, N) for a2 in a2s]
    dt = check_dtype_name(dtype)
    exact = term is not None and activation.degree is not None
    term = check_int(term, "term", 0) if exact else None
    problem = draw_problem(N, N, N, target, "fresh", rng, dtype=dt)
    B = problem.teacher.directions
    out = {"K": np.array(Ks)}
    null_raw, null_clean = [], []
    for K in Ks:
        R = rng.standard_normal((K, N))
        null_raw.append(subspace_overlap(R, B)[0])
        null_clean.append(unmemorised_overlap(R, B, problem.X1)[0])
    out["null_subspace"], out["null_unmemorised"] = np.array(null_raw), np.array(null_clean)
    # Drawn last, so adding them left every earlier number unchanged.
    signs = rng.choice(np.array([-1.0, 1.0], dtype=dt), size=N)
    for run in take_both_batches(problem, activation, steps, exact):
        batch = run.batch
        if exact:
            out.update({f"{k}_{batch}": v for k, v in _term_evidence(run, term, signs).items()})
        else:
            out.update({f"{k}_{batch}": float("nan") for k in TERM_KEYS})
        update = run.W2 - run.W1
        rows = {k: [] for k in EXPONENT_KEYS}
        for eta, K in zip(etas, Ks):
            W = _rescaled_second_step(run, update, eta)
            Vt = top_singular(W, K)[2].astype(float)
            rows["subspace"].append(subspace_overlap(Vt, B)[0])
            rows["subspace_unmemorised"].append(unmemorised_overlap(Vt, B, run.X2)[0])
            rows["top_memorisation"].append(memorisation(Vt[0], run.X2)[0])
            norms = np.linalg.norm(W, axis=1)
            rows["row_ratio"].append(float(norms.max() / np.median(norms)))
        out.update({f"{k}_{batch}": np.array(v, dtype=float) for k, v in rows.items()})
    return out

def _top_term(run, k: int, pre=None) -> tuple:
    # T_k's top singular value and right vector (applied, never formed), and u~_k.
    s, Vt = top_singular_core(second_step_term_operator(run, k, pre=pre), 1, "right")
    return float(s[0]), Vt, signal_part(run, k, "auto").right

def _term_evidence(run, k: int, signs) -> dict:
    B = run.teacher.directions
    pre = pre_activations(run)
    _, Vt, right = _top_term(run, k, pre)
    memo, j = memorisation(Vt[0], run.X2)
    out = {"term_overlap": float(overlaps(Vt, B)[0, 0]), "term_memorisation": memo,
           "term_input_overlap": float(overlaps(run.X2[j], B)[0, 0]),
           "signal_reuse": float(overlaps(right, B)[0, 0])}
    proj = projected_alignment(run, k, signs=signs, pre=pre)
    out.update({f"projected_{key}": float(np.asarray(v).ravel()[0]) for key, v in proj.items()})
    return out

def _rescaled_second_step(run, update, eta2):
    # W2' = W1 + (eta2'/eta2)(W2 - W1): exactly the draw trained with eta2'.
    return run.W1 + (eta2 / run.eta2) * update

def _check_targets(targets) -> list:
    if isinstance(targets, (str, bytes)) or not isinstance(targets, Sequence) or not targets:
        raise TypeError(f"targets must be a non-empty sequence of targets, got {targets!r}")
    return list(targets)

def _check_sequence(values, name: str) -> list:
    if isinstance(values, (str, bytes, int, float)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of exponents in [0, 1/2), got {values!r}")
    return list(values)

def _learned_subspace(Vt, B, X):
    # Overlaps of the spans of Vt's first K rows, raw and without memorised inputs.
    raw = np.array([subspace_overlap(Vt[:K], B) for K in range(1, len(Vt) + 1)])
    return raw, nested_unmemorised_overlaps(Vt, B, X)
