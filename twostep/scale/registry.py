r"""The book's experiments by name, their defaults, and a memory check before they run.

A registry maps a name to an existing experiment routine of the package, so that
``python -m twostep`` (:mod:`twostep.cli`) and a chapter run the same code:

=============  ==============================================================
``two_steps``  :func:`twostep.run_two_steps`, then the top-``top`` singular values of
               :math:`W_2` and the overlaps of their right vectors with :math:`\beta^*`
``first_step`` :func:`twostep.first_step_diagnostics`
``spike``      :func:`twostep.spike_experiment`
``reuse``      :func:`twostep.reuse_experiment`
``payoff``     :func:`twostep.payoff_experiment`
=============  ==============================================================

Every experiment is called as ``run_experiment(name, rng=..., **params)`` with the
registered defaults filled in; activations and links may be given by name
(``"poly4"``, ``"he1"``, ``"he1+odd"``).

Memory. Before anything is allocated, :func:`estimate_bytes` bounds the peak memory
of one task by

.. math:: \text{bytes} \approx b\,\big(c_W\,N d + c_X\,n d + 2\cdot 2^{22}\big),

where :math:`b` is 8 (float64) or 4 (float32), :math:`c_W, c_X` count the
:math:`N\times d` and :math:`n\times d` arrays the routine holds at once (e.g. 6 and 2
for two steps: :math:`W_0, W_1, W_2`, the gradient, a copy and a singular-vector
workspace; :math:`X_1, X_2`), and :math:`2^{22}` elements is the gradient's block
temporary (:data:`twostep.network.BLOCK_ELEMENTS`). :func:`check_memory` compares
it, times the number of concurrent tasks, with :func:`available_memory`.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._validation import check_int, check_real
from ..chapters.readout import payoff_experiment
from ..chapters.reuse import reuse_experiment
from ..chapters.two_steps import spike_experiment
from ..model.activations import as_activation
from .device import reuse_on, spike_on
from .memory import available_memory, format_bytes

DTYPE_BYTES = {"float64": 8, "float32": 4}


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: the routine, its defaults and its memory footprint."""

    name: str
    func: Callable
    defaults: dict = field(default_factory=dict)
    summary: str = ""
    #: Number of N x d arrays and of n x d arrays held at the peak (see the module docstring).
    wide: float = 6.0
    tall: float = 2.0
    #: The package routine behind an adapter that forwards ``**params`` to it.
    routine: Callable | None = None
    #: Keywords of ``routine`` that the adapter sets itself (not accepted from the caller).
    hidden: tuple = ()
    #: ``device(backend, seed, **params)``: the same experiment with the problem drawn and
    #: measured on a GPU (:mod:`twostep.scale.device`), or ``None`` if there is no device path.
    device: Callable | None = None

    def parameters(self) -> dict:
        """Every keyword the experiment accepts, with its effective default.

        Read from the signatures of the adapter and of the routine it forwards ``**params``
        to, then updated with the registered defaults; a keyword without any default
        maps to :data:`REQUIRED`.
        """
        out = {}
        for func in (self.routine, self.func):
            if func is None:
                continue
            for name, par in list(inspect.signature(func).parameters.items())[1:]:  # not rng
                if par.kind in (par.VAR_KEYWORD, par.VAR_POSITIONAL) or name in self.hidden:
                    continue
                out[name] = REQUIRED if par.default is par.empty else par.default
        return {**out, **self.defaults}


#: Marks a parameter that has no default.
REQUIRED = "<required>"


def _sizes(N, n, d):
    return N, (N if n is None else n), (N if d is None else d)


def _two_steps(rng, N, n=None, d=None, activation="poly4", target="he1", c1=0.2, alpha1=0.4,
               c2=0.2, alpha2=0.25, batch="reused", top=4, dtype="float64"):
    from ..analysis.alignment import overlaps
    from ..analysis.spectra import top_singular
    from ..model.steps import run_two_steps
    N, n, d = _sizes(N, n, d)
    run = run_two_steps(N, n, d, as_activation(activation), target,
                        ((c1, alpha1), (c2, alpha2)), batch, rng, dtype=np.dtype(dtype))
    s, _, Vt = top_singular(run.W2, top)
    B = run.teacher.directions
    return {"top": s.astype(float), "overlap": overlaps(Vt.astype(float), B),
            "eta1": run.eta1, "eta2": run.eta2}


def _first_step(rng, N, n=None, d=None, activation="poly4", target="he1", c=0.2,
                alphas=(0.0, 0.25, 0.4), top=1, dtype="float64"):
    from ..chapters.one_step import first_step_diagnostics
    N, n, d = _sizes(N, n, d)
    steps = [(c, alpha) for alpha in alphas]
    out = first_step_diagnostics(N, n, d, as_activation(activation), target, rng,
                                 steps=steps, top=top, dtype=np.dtype(dtype))
    out["alphas"] = np.asarray(alphas, dtype=float)
    return out


def _spike(rng, **params):
    return spike_experiment(rng, **params)


def _reuse(rng, c1=0.2, alpha1=0.4, c2=0.2, alpha2=0.25, **params):
    return reuse_experiment(rng, steps=((c1, alpha1), (c2, alpha2)), **params)


def _spike_device(backend, seed, settings=(), corrected=False, **params):
    if settings or corrected:
        raise ValueError("settings (the per-setting spectra) and corrected run on the host only; "
                         "on a device use grid, whose outlier counts measure_on computes")
    return spike_on(backend, seed=seed, **params)


def _reuse_device(backend, seed, alpha2s=(), **params):
    if alpha2s:
        raise ValueError("alpha2s (rescaled subspaces) run on the host only; leave it empty "
                         "on a device")
    return reuse_on(backend, seed=seed, **params)


def _payoff(rng, N, n=None, d=None, **params):
    N, n, d = _sizes(N, n, d)
    return payoff_experiment(rng, N=N, n=n, d=d, **params)


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("two_steps", _two_steps, {"N": 500},
               "two gradient steps; top singular values of W2 and their overlaps with beta*",
               wide=6, tall=2),
    Experiment("first_step", _first_step, {"N": 500},
               "the first update as a rank-one spike plus a remainder (first_step_diagnostics)",
               wide=6, tall=1),
    Experiment("spike", _spike, {"N": 500, "batch": "reused"},
               "is each exact term T_k its rank-one spike? (spike_experiment, N = n = d)",
               wide=12, tall=2, routine=spike_experiment, device=_spike_device),
    Experiment("reuse", _reuse, {"N": 500, "target": "he1", "batch": "reused"},
               "where the learned directions point, reused vs fresh batch (reuse_experiment, N = n = d)",
               wide=8, tall=2, routine=reuse_experiment, hidden=("steps",),
               device=_reuse_device),
    Experiment("payoff", _payoff, {"N": 500, "target": "he1"},
               "test error of a ridge readout after 0, 1, 2 steps (payoff_experiment)",
               wide=16, tall=6, routine=payoff_experiment),
)}


def get_experiment(name: str) -> Experiment:
    """The registered experiment ``name``; an unknown name lists the accepted ones."""
    if not isinstance(name, str) or name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {name!r}")
    return EXPERIMENTS[name]


def experiment_params(name: str, params: dict | None = None) -> dict:
    """Every effective parameter of experiment ``name``: its defaults updated with ``params``.

    An unknown key raises a ``ValueError`` that lists the accepted ones; a parameter
    without a default that ``params`` does not give raises one too.
    """
    exp = get_experiment(name)
    accepted = exp.parameters()
    unknown = sorted(set(params or {}) - set(accepted))
    if unknown:
        raise ValueError(f"experiment {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                         f"it accepts {', '.join(sorted(accepted))}")
    out = {**accepted, **(params or {})}
    missing = sorted(k for k, v in out.items() if isinstance(v, str) and v == REQUIRED)
    if missing:
        raise ValueError(f"experiment {name!r} needs a value for {', '.join(missing)} (-p KEY=VALUE)")
    return out


def run_experiment(name: str, rng: np.random.Generator, **params) -> dict:
    """Run experiment ``name`` once: ``func(rng, **(defaults | params))``; returns its dict.

    A module-level function, so ``functools.partial(run_experiment, name)`` can be sent to
    joblib's worker processes or to Dask workers.
    """
    exp = get_experiment(name)
    return exp.func(rng, **experiment_params(name, params))


def _dtype_bytes(params: dict, default: str) -> int:
    dt = params.get("dtype", default)
    name = np.dtype(dt).name
    if name not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {list(DTYPE_BYTES)}, got {dt!r}")
    return DTYPE_BYTES[name]


def estimate_bytes(name: str, params: dict) -> int:
    r"""Approximate peak bytes of one task: :math:`b(c_W Nd + c_X nd + 2^{23})` (module docstring)."""
    from ..model.network import BLOCK_ELEMENTS
    exp = get_experiment(name)
    p = experiment_params(name, params)
    N = check_int(p.get("N"), "N")
    n = check_int(p.get("n") or N, "n")
    d = check_int(p.get("d") or N, "d")
    default = "float32" if name == "spike" else "float64"
    b = _dtype_bytes(p, default)
    return int(b * (exp.wide * N * d + exp.tall * n * d + 2 * BLOCK_ELEMENTS))


def check_memory(name: str, grid: list[dict], concurrent: int = 1,
                 max_memory: float | None = None) -> int:
    """Raise ``MemoryError`` if the largest task of ``grid``, ``concurrent`` at a time, cannot fit.

    Parameters
    ----------
    name : str
        A registered experiment.
    grid : list of dict
        The parameter sets of the sweep (each completed with the defaults).
    concurrent : int
        Tasks running at once (worker processes on this machine).
    max_memory : float, optional
        Budget in bytes; defaults to :func:`available_memory`.

    Returns
    -------
    int
        The estimated peak bytes (largest task times ``concurrent``).
    """
    concurrent = check_int(concurrent, "concurrent", 1)
    need = max(estimate_bytes(name, p) for p in (grid or [{}])) * concurrent
    if max_memory is None:
        budget, source = available_memory(), "available memory"
    else:
        budget, source = check_real(max_memory, "max_memory", low=0.0, low_open=True), "max_memory"
    if budget and need > budget:
        raise MemoryError(
            f"experiment {name!r} needs about {format_bytes(need)} ({concurrent} task(s) at once) "
            f"but {source} is {format_bytes(budget)}; reduce N, n or d, use dtype=float32, "
            f"fewer jobs, or raise --max-memory if the estimate is too cautious")
    return need
