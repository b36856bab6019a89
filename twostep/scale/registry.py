r"""The book's experiments by name (``func(rng, *, N, ...)`` returning a dict of columns), their
defaults, and their memory: :func:`estimate_bytes` bounds a task's peak by
:math:`b\,(c_W\,N d + c_X\,n d + 2B)` (:math:`b` bytes per float, ``wide`` and ``tall``
arrays, the gradient's block :math:`B`), plus :math:`b\,(n_{\rm train} + n_{\rm test})(d + 2N)`
for the payoff's readout.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._validation import (check_alpha, check_alpha_pairs, check_choice, check_dtype_name,
                           check_fits, check_int, check_pairs, check_real, check_step_growth,
                           hard_memory_limits, memory_limit)
from ..experiments.first_step import first_step_diagnostics
from ..experiments.readout import payoff_experiment
from ..experiments.reuse import reuse_experiment
from ..experiments.spikes import spike_experiment, two_step_spectrum
from ..model.activations import as_activation
from ..model.network import block_elements
from ..model.targets import target_links

@dataclass(frozen=True)
class Experiment:
    """A registered experiment: the routine, its defaults and its memory footprint."""

    name: str
    func: Callable
    defaults: dict = field(default_factory=dict)
    summary: str = ""
    #: N x d and n x d arrays held at the peak.
    wide: float = 6.0
    tall: float = 2.0
    #: Results stored under another name: a record holds parameters and results side by side.
    renames: dict = field(default_factory=dict)
    #: Whether the activation must be a polynomial (the exact terms need its degree).
    polynomial: bool = False

    def __post_init__(self):
        taken = sorted(set(self.renames.values()) & set(self.parameters()))
        if taken:
            raise ValueError(f"experiment {self.name!r}: renamed result(s) {taken} would take "
                             f"a parameter's name")

    def parameters(self) -> dict:
        """Every keyword the experiment accepts, with its default (the registered one first)."""
        out = {name: par.default for name, par in inspect.signature(self.func).parameters.items()
               if par.kind == par.KEYWORD_ONLY}
        return {**out, **self.defaults}

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("two_steps", two_step_spectrum, {"N": 500},
               "two gradient steps; top singular values of W2 (top_values) and their overlaps "
               "with beta*", wide=6, tall=2, renames={"top": "top_values"}),
    Experiment("first_step", first_step_diagnostics,
               {"N": 500, "steps": [[0.2, 0.0], [0.2, 0.25], [0.2, 0.4]]},
               "the first update as a rank-one spike plus a remainder (first_step_diagnostics; "
               "its top singular values as top_values)", wide=6, tall=1,
               renames={"top": "top_values"}),
    Experiment("spike", spike_experiment, {"N": 500},
               "is each exact term T_k its rank-one spike? (spike_experiment, N = n = d)",
               wide=12, tall=2, polynomial=True),
    Experiment("reuse", reuse_experiment, {"N": 500},
               "where the learned directions point, reused vs fresh batch (reuse_experiment, N = n = d)",
               wide=8, tall=2, polynomial=True),
    Experiment("payoff", payoff_experiment, {"N": 500},
               "test error of a ridge readout after 0, 1, 2 steps (payoff_experiment)",
               wide=16, tall=6),
)}

def get_experiment(name: str) -> Experiment:
    """The registered experiment ``name``."""
    if not isinstance(name, str) or name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {name!r}")
    return EXPERIMENTS[name]

def experiment_params(name: str, params: dict | None = None) -> dict:
    """Every parameter of experiment ``name``: its defaults updated with ``params``."""
    accepted = get_experiment(name).parameters()
    unknown = sorted(set(params or {}) - set(accepted))
    if unknown:
        raise ValueError(f"experiment {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                         f"it accepts {', '.join(sorted(accepted))}")
    return {**accepted, **(params or {})}

def run_task(name: str, rng: np.random.Generator, **params) -> dict:
    """``func(rng, **(defaults | params))`` of experiment ``name``, its results renamed
    (:attr:`Experiment.renames`); module-level, so joblib and Dask workers can run it."""
    exp = get_experiment(name)
    full = experiment_params(name, params)
    out = {exp.renames.get(k, k): v for k, v in exp.func(rng, **full).items()}
    clash = sorted(set(out) & (set(full) | {"seed"}))
    if clash:
        raise ValueError(f"experiment {name!r} returned result(s) {clash} named like its "
                         f"parameters; register a rename for them (Experiment.renames)")
    return out

#: How :func:`check_task` checks each parameter it knows: ``check(value, name)``.
_CHECKS = {
    **dict.fromkeys(("c", "c1", "c2"), lambda v, k: check_real(v, k, low=0.0, low_open=True)),
    **dict.fromkeys(("noise", "margin"), lambda v, k: check_real(v, k, low=0.0)),
    **dict.fromkeys(("alpha1", "alpha2"), check_alpha),
    **dict.fromkeys(("settings", "grid"), check_alpha_pairs),
    "alpha2s": lambda v, k: [check_alpha(a, f"{k}[{i}]") for i, a in enumerate(v or ())],
    "steps": lambda v, k: [(check_real(c, f"{k}[{i}][0]", low=0.0), check_alpha(a, f"{k}[{i}][1]"))
                           for i, (c, a) in enumerate(check_pairs(v, k, "a (c, alpha) pair"))],
    "batch": lambda v, k: check_choice(v, k, ("reused", "fresh")),
    "dtype": lambda v, k: check_dtype_name(v),
    "target": lambda v, k: target_links(v),
    "term": lambda v, k: v is None or check_int(v, k, 0),
    **dict.fromkeys(("n_train", "n_test"), lambda v, k: v is None or check_int(v, k, 1)),
}

def check_task(name: str, params: dict, given: dict | None = None) -> None:
    """Check one task's parameters before any task runs (the routines check theirs only once
    their task runs); the message names the parameter, the range and the task (``given``)."""
    where = f" (experiment {name!r}, task {given})" if given else f" (experiment {name!r})"
    p = params
    try:
        N = check_int(p.get("N"), "N", 8 if name == "spike" else 1)
        check_int(N if p.get("n") is None else p["n"], "n")
        d = check_int(N if p.get("d") is None else p["d"], "d")
        for key, value in p.items():
            if key in _CHECKS:
                _CHECKS[key](value, key)
        act = as_activation(p["activation"]) if "activation" in p else None
        L = getattr(act, "degree", None)
        if get_experiment(name).polynomial and not L:
            raise ValueError(f"activation must be a polynomial activation (poly2, poly3, "
                             f"poly4) for experiment {name!r}, got {p['activation']!r}")
        if p.get("term") is not None and L and p["term"] > L - 1:
            raise ValueError(f"term must be in [0, L-1] = [0, {L - 1}] for the degree-{L} "
                             f"activation {p['activation']!r}, got {p['term']}")
        _check_steps(name, p, L)
        if "n_top" in p:
            top = check_int(p["n_top"], "n_top", 1)
            if top >= N - 1:
                raise ValueError(f"n_top must be in [1, N - 2] = [1, {N - 2}], got {top}")
        if "top" in p:
            top = check_int(p["top"], "top", 1)
            if top >= min(N, d):
                raise ValueError(f"top must be in [1, min(N, d) - 1] = [1, {min(N, d) - 1}], "
                                 f"got {top}")
    except (TypeError, ValueError) as err:
        raise type(err)(f"{err}{where}") from None

def _check_steps(name, p, L):
    # The step constants against the dtype's finite numbers (both, and the features', for the
    # payoff).
    dtypes = [p.get("dtype", "float64"), p.get("feature_dtype") or p.get("dtype", "float64")]
    dtype = min(dtypes, key=lambda t: check_dtype_name(t).itemsize)
    if "steps" in p:
        cs = [c for c, _ in p["steps"]]
        check_step_growth(max(cs), 1.0, L, dtype, names=("steps' c", "c2"))
    elif "c" in p:
        check_step_growth(p["c"], p["c"], L, dtype, power=L or 1, names=("c", "c"))
    elif "c1" in p:
        check_step_growth(p["c1"], p["c2"], L, dtype)

def estimate_bytes(name: str, params: dict) -> int:
    r"""Approximate peak bytes of one task (module docstring)."""
    exp = get_experiment(name)
    p = experiment_params(name, params)
    N = check_int(p.get("N"), "N")
    n = check_int(p.get("n") or N, "n")
    d = check_int(p.get("d") or N, "d")
    b = check_dtype_name(p.get("dtype", "float32" if name == "spike" else "float64")).itemsize
    sets = sum(check_int(p.get(k) or m * d, k) for k, m in (("n_train", 1), ("n_test", 2))
               if k in p)     # the payoff's readout sets
    return int(b * (exp.wide * N * d + exp.tall * n * d + 2 * block_elements(N, n)
                    + sets * (d + 2 * N)))

def check_memory(name: str, grid: list[dict], concurrent: int = 1,
                 max_memory: float | None = None, here: bool = True) -> int:
    """Peak bytes of ``name``'s largest task of ``grid`` times ``concurrent``, or a
    ``MemoryError`` beyond ``max_memory`` (default :func:`~twostep._validation.memory_limit`;
    ``here``: also within ``ulimit -v`` and the memory cgroup)."""
    concurrent = check_int(concurrent, "concurrent", 1)
    need = max(estimate_bytes(name, p) for p in (grid or [{}])) * concurrent
    budget = (memory_limit() if max_memory is None else
              min([(check_real(max_memory, "max_memory", low=0.0, low_open=True), "max_memory")]
                  + (hard_memory_limits() if here else [])))
    return check_fits(need, f"experiment {name!r} ({concurrent} task(s) at once)", budget,
                      "reduce N, n or d, use dtype=float32, fewer jobs, or raise --max-memory if "
                      "the estimate is too cautious")
