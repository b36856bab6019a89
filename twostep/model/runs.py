r"""What a two-step experiment draws and what it produces: a :class:`Problem` (the teacher, the
initial network and the two batches) and a :class:`TwoStepRun` (the problem, both steps and
their sizes), built by :mod:`twostep.model.steps`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .activations import Activation
from .targets import Teacher


@dataclass
class TwoStepRun:
    r"""Everything a two-step experiment produced.

    Shapes: ``W0, W1, W2`` are ``(N, d)``; ``a`` is ``(N,)``; ``X1, X2`` are
    ``(n, d)``; ``y1, y2`` are ``(n,)``. With ``batch == "reused"``, ``X2 is X1``. ``W2`` is
    None in the package's own runs whose measurements rebuild it from the exact terms
    (:func:`twostep.experiments.spikes.spike_experiment`), which skip the second step's product.
    """

    W0: np.ndarray
    a: np.ndarray
    W1: np.ndarray
    W2: np.ndarray | None
    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray
    eta1: float
    eta2: float
    batch: str
    activation: Activation
    teacher: Teacher
    params: dict = field(default_factory=dict)
    #: ``(P, D)`` with :math:`P = W_0X_2^\top`, :math:`D = (W_1 - W_0)X_2^\top` (``(N, n)``),
    #: kept by :func:`~twostep.model.steps.two_steps` with ``keep_pre=True``; None otherwise.
    pre: tuple | None = None

    @property
    def N(self) -> int:
        return self.W0.shape[0]

    @property
    def d(self) -> int:
        return self.W0.shape[1]

    @property
    def n(self) -> int:
        return self.X1.shape[0]

    @property
    def v(self) -> np.ndarray:
        r"""First-step direction :math:`v = X_1^\top y_1/n`, shape ``(d,)``."""
        return self.X1.T @ self.y1 / self.n


@dataclass
class Problem:
    """A drawn problem: the teacher, the initial network and the two batches.

    Shapes: ``W0`` ``(N, d)``, ``a`` ``(N,)``, ``X1, X2`` ``(n, d)``, ``y1, y2`` ``(n,)``;
    with a reused batch ``X2 is X1`` and ``y2 is y1``.
    """

    teacher: Teacher
    W0: np.ndarray
    a: np.ndarray
    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray
