r"""The book's experiments by name, their defaults, and a memory check before they run.

:data:`EXPERIMENTS` maps a name (``two_steps``, ``first_step``, ``spike``, ``reuse``,
``payoff``) to an existing experiment routine of the package, with a one-line summary, so
that ``python -m twostep`` (:mod:`twostep.scale.cli`) and a chapter run the same code.

Every experiment has one signature, ``func(rng, *, N, ..., activation, target, batch,
c1, alpha1, c2, alpha2, ...)``: a generator, then keywords only, with activations and links
given by name (``"poly4"``, ``"he1"``, ``"he1+odd"``) or as objects. It returns one run as a
dict of named columns (scalars and arrays), so a sweep is a table with one row per run.
``run_task(name, rng, **params)`` calls it with the registered defaults filled in.

Memory. Before anything is allocated, :func:`estimate_bytes` bounds the peak memory
of one task by

.. math:: \text{bytes} \approx b\,\big(c_W\,N d + c_X\,n d + 2B\big),

where :math:`b` is 8 (float64) or 4 (float32), :math:`c_W, c_X` count the
:math:`N\times d` and :math:`n\times d` arrays the routine holds at once (e.g. 6 and 2
for two steps: :math:`W_0, W_1, W_2`, the gradient, a copy and a singular-vector
workspace; :math:`X_1, X_2`), and :math:`B` elements is the gradient's block
temporary (:func:`twostep.model.network.block_elements`: whole rows of the :math:`N\times n`
pre-activation, about :data:`~twostep.model.network.BLOCK_ELEMENTS` at most).
:math:`c_W, c_X` are per experiment; the payoff's readout adds its fresh sets,
:math:`b\,(n_{\rm train} + n_{\rm test})(d + 2N)` (inputs and the features of a layer).
:func:`check_memory` compares it, times the number of concurrent tasks, with
:func:`twostep._validation.memory_limit` (the memory available, ``ulimit -v`` and the memory
cgroup's limit) or a given budget.
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
from ..model.targets import target_links


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: the routine (of the one experiment signature, called as it
    is), its defaults and its memory footprint."""

    name: str
    func: Callable
    defaults: dict = field(default_factory=dict)
    summary: str = ""
    #: Number of N x d arrays and of n x d arrays held at the peak (see the module docstring).
    wide: float = 6.0
    tall: float = 2.0
    #: Result keys stored under another name, because the routine returns a column named
    #: like one of its parameters (``top``: the count asked for, and the values found). A
    #: record holds a task's parameters and results side by side, so no result may take a
    #: parameter's name (checked here at registration and on every run).
    renames: dict = field(default_factory=dict)
    #: Whether the activation must be a polynomial (the exact terms T_k need its degree).
    polynomial: bool = False

    def __post_init__(self):
        taken = sorted(set(self.renames.values()) & set(self.parameters()))
        if taken:
            raise ValueError(f"experiment {self.name!r}: renamed result(s) {taken} would take "
                             f"a parameter's name")

    def parameters(self) -> dict:
        """Every keyword the experiment accepts, with its effective default: the routine's,
        updated with the registered ones (which give the width ``N``, the one without)."""
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
    """The registered experiment ``name``; an unknown name lists the accepted ones."""
    if not isinstance(name, str) or name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {name!r}")
    return EXPERIMENTS[name]


def experiment_params(name: str, params: dict | None = None) -> dict:
    """Every effective parameter of experiment ``name``: its defaults updated with ``params``;
    an unknown key raises a ``ValueError`` that lists the accepted ones."""
    accepted = get_experiment(name).parameters()
    unknown = sorted(set(params or {}) - set(accepted))
    if unknown:
        raise ValueError(f"experiment {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                         f"it accepts {', '.join(sorted(accepted))}")
    return {**accepted, **(params or {})}


def run_task(name: str, rng: np.random.Generator, **params) -> dict:
    """Run experiment ``name`` once, ``func(rng, **(defaults | params))``, and return its
    result with the keys a record stores beside the parameters: those named like a parameter
    are renamed (:attr:`Experiment.renames`, e.g. two_steps' ``top`` values as
    ``top_values``), so a record's parameters are never overwritten. ``python -m twostep``
    runs this; a module-level function, so ``functools.partial(run_task, name)`` can be sent
    to joblib's worker processes or to Dask workers."""
    exp = get_experiment(name)
    full = experiment_params(name, params)
    out = {exp.renames.get(k, k): v for k, v in exp.func(rng, **full).items()}
    clash = sorted(set(out) & (set(full) | {"seed"}))
    if clash:
        raise ValueError(f"experiment {name!r} returned result(s) {clash} named like its "
                         f"parameters; register a rename for them (Experiment.renames)")
    return out


#: How :func:`check_task` checks each parameter it knows: ``check(value, name)``, raising a
#: ``ValueError`` or ``TypeError`` that names it.
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
    """Check one task's effective parameters before any task runs.

    The routines check their arguments where they enter, but only once their task runs; here
    every task's values are checked against their accepted ranges first, so a bad grid value
    stops the sweep before the first task. The message names the parameter, the range and
    the task (``given``: the parameters the command set).
    """
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
    # The step constants against the dtype's finite numbers (check_step_growth): the first
    # step's alone for first_step, both (and the features' degree) for the payoff.
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
    r"""Approximate peak bytes of one task: :math:`b(c_W Nd + c_X nd + 2B)` (module docstring)."""
    from ..model.network import block_elements
    exp = get_experiment(name)
    p = experiment_params(name, params)
    N = check_int(p.get("N"), "N")
    n = check_int(p.get("n") or N, "n")
    d = check_int(p.get("d") or N, "d")
    b = check_dtype_name(p.get("dtype", "float32" if name == "spike" else "float64")).itemsize
    sets = sum(check_int(p.get(k) or m * d, k) for k, m in (("n_train", 1), ("n_test", 2))
               if k in p)     # the payoff's readout sets (default d and 2d)
    return int(b * (exp.wide * N * d + exp.tall * n * d + 2 * block_elements(N, n)
                    + sets * (d + 2 * N)))


def check_memory(name: str, grid: list[dict], concurrent: int = 1,
                 max_memory: float | None = None, here: bool = True) -> int:
    """The estimated peak bytes of experiment ``name``'s largest task of ``grid`` (parameter
    sets) times ``concurrent`` (tasks at once), or a ``MemoryError`` if that exceeds
    ``max_memory`` bytes (default: :func:`twostep._validation.memory_limit`); with ``here``
    (the tasks run on this machine) no budget exceeds ``ulimit -v`` or the memory cgroup."""
    concurrent = check_int(concurrent, "concurrent", 1)
    need = max(estimate_bytes(name, p) for p in (grid or [{}])) * concurrent
    budget = (memory_limit() if max_memory is None else
              min([(check_real(max_memory, "max_memory", low=0.0, low_open=True), "max_memory")]
                  + (hard_memory_limits() if here else [])))
    return check_fits(need, f"experiment {name!r} ({concurrent} task(s) at once)", budget,
                      "reduce N, n or d, use dtype=float32, fewer jobs, or raise --max-memory if "
                      "the estimate is too cautious")
