r"""What a two-step experiment draws (:class:`Problem`) and produces (:class:`TwoStepRun`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .activations import Activation
from .targets import Teacher

@dataclass
class TwoStepRun:
    r"""Everything a two-step experiment produced: ``W0, W1, W2`` ``(N, d)`` (``W2`` None
    where the measurements rebuild it from the exact terms), ``a`` ``(N,)``, ``X1, X2``
    ``(n, d)`` (``X2 is X1`` when reused), ``y1, y2`` ``(n,)``."""

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
    #: ``(P, D)``, :math:`P = W_0X_2^\top`, :math:`D = (W_1 - W_0)X_2^\top`, with ``keep_pre``.
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
    """A drawn problem: the teacher, ``W0`` ``(N, d)``, ``a`` ``(N,)``, ``X1, X2`` ``(n, d)``
    and ``y1, y2`` ``(n,)`` (``X2 is X1``, ``y2 is y1`` for a reused batch)."""

    teacher: Teacher
    W0: np.ndarray
    a: np.ndarray
    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray
