r"""Array backends: the two steps and the top of the spectrum on numpy, CuPy or PyTorch.

:func:`get_backend` returns a :class:`Backend`, a thin wrapper of an array namespace
(``numpy``, ``cupy`` or ``torch``) with the few operations the two steps need: moving
arrays to and from the device, matrix products, elementwise arithmetic, ``qr`` and a
small ``svd``. ``"auto"`` takes CuPy, then PyTorch, when an NVIDIA GPU is usable and
numpy otherwise; asking for a backend that is not installed, or has no GPU, raises
:class:`BackendUnavailable` (an ``ImportError``) saying how to install it.

:func:`run_two_steps_on` mirrors :func:`twostep.run_two_steps` for polynomial
activations. The random draws are made on the host by the same
``numpy.random.Generator`` in the same order, so a run on any backend starts from the
same :math:`W_0, a, X_1, y_1` (and :math:`X_2, y_2`); the steps

.. math::
    W_{t} = W_{t-1} + \frac{\eta_t}{n}\operatorname{diag}(a)\big[\sigma'(W_{t-1}X_t^\top)
    \odot \mathbf 1 y_t^\top\big] X_t

run on the device through the package's one gradient (:func:`twostep.model.steps.one_step`,
written against the array API standard), by blocks of neurons, with :math:`\sigma'`
evaluated by Horner's rule on the device. This module only selects the device and moves
arrays; on the numpy backend it reproduces ``run_two_steps`` exactly.

:func:`top_singular_values_on` computes the top-``k`` singular values by block subspace
iteration on the device (matrix products and QR only):

.. math:: Q \leftarrow \operatorname{qr}\big(M^\top\operatorname{qr}(MQ)\big),\qquad
          s = \operatorname{svd}(MQ)\ \text{(of an } N\times(k+p)\text{ matrix)}.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_dtype, check_int, check_steps
from ..model.activations import PolynomialActivation
from ..model.network import BLOCK_ELEMENTS
from ..model.steps import draw_problem, one_step, step_size
from ..model.targets import Teacher
from .memory import available_memory, format_bytes

BACKENDS = ("numpy", "cupy", "torch", "auto")

INSTALL = {
    "cupy": "pip install cupy-cuda12x (CUDA 12; see https://docs.cupy.dev/en/stable/install.html)",
    "torch": "pip install torch (a CUDA build; see https://pytorch.org/get-started/locally/)",
}


class BackendUnavailable(ImportError):
    """A requested array backend is not installed or has no usable GPU."""


@dataclass
class Backend:
    """An array namespace and how to reach its device.

    Attributes
    ----------
    name : {"numpy", "cupy", "torch"}
    xp : module
        The namespace: ``numpy``, ``cupy`` or ``torch``.
    device : str
        ``"cpu"`` or ``"cuda"``.
    """

    name: str
    xp: object
    device: str = "cpu"

    def asarray(self, x):
        """A host array on the device (same dtype)."""
        if self.name == "torch":
            return self.xp.as_tensor(np.ascontiguousarray(x), device=self.device)
        return self.xp.asarray(x)

    def to_numpy(self, x) -> np.ndarray:
        """A device array back on the host."""
        if self.name == "torch":
            return x.detach().cpu().numpy()
        if self.name == "cupy":
            return self.xp.asnumpy(x)
        return np.asarray(x)

    def qr(self, x):
        """Reduced QR factor ``Q`` of a tall matrix."""
        return self.xp.linalg.qr(x)[0]

    def svdvals(self, x):
        """Singular values of a small matrix, descending."""
        if self.name == "torch":
            return self.xp.linalg.svdvals(x)
        return self.xp.linalg.svd(x, compute_uv=False)

    def synchronize(self):
        """Wait for queued device work (for timing)."""
        if self.name == "cupy":
            self.xp.cuda.Device().synchronize()
        elif self.name == "torch" and self.device != "cpu":
            self.xp.cuda.synchronize()

    def memory_used(self) -> int:
        """Bytes held by the device's memory pool (0 on the host)."""
        if self.name == "cupy":
            return int(self.xp.get_default_memory_pool().used_bytes())
        if self.name == "torch" and self.device != "cpu":
            return int(self.xp.cuda.max_memory_allocated())
        return 0

    def memory_free(self) -> int:
        """Bytes the device can still hand out: free device memory plus what its pool caches.

        On the host (numpy, or torch on the CPU) this is the memory available now
        (:func:`twostep.experiments.available_memory`).
        """
        if self.name == "cupy":
            pool = self.xp.get_default_memory_pool()
            return int(self.xp.cuda.runtime.memGetInfo()[0] + pool.free_bytes())
        if self.name == "torch" and self.device != "cpu":
            cuda = self.xp.cuda
            return int(cuda.mem_get_info()[0] + cuda.memory_reserved() - cuda.memory_allocated())
        return available_memory()


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise BackendUnavailable(
            f"backend {name!r} is not installed ({err}); install it with: {INSTALL[name]}, "
            f"or use backend='numpy'") from None


def _gpu_backend(name) -> Backend:
    xp = _import(name)
    try:
        if name == "cupy":
            ok = xp.cuda.runtime.getDeviceCount() > 0
        else:
            ok = bool(xp.cuda.is_available())
    except Exception as err:  # a CUDA runtime error means: no usable device
        raise BackendUnavailable(f"backend {name!r} is installed but finds no usable NVIDIA GPU "
                                 f"({err}); use backend='numpy' or 'auto'") from None
    if not ok:
        raise BackendUnavailable(f"backend {name!r} is installed but finds no NVIDIA GPU; "
                                 f"use backend='numpy' or 'auto'")
    return Backend(name, xp, "cuda")


def get_backend(name: str = "auto") -> Backend:
    """The array backend ``name``: ``"numpy"``, ``"cupy"``, ``"torch"`` or ``"auto"``.

    ``"auto"`` returns the first of CuPy and PyTorch that is installed and sees an NVIDIA
    GPU, else numpy. ``"cupy"`` and ``"torch"`` run on the GPU and raise
    :class:`BackendUnavailable` (an ``ImportError``) when the package or the GPU is absent.
    """
    check_choice(name, "backend", BACKENDS)
    if name == "numpy":
        return Backend("numpy", np, "cpu")
    if name == "auto":
        for candidate in ("cupy", "torch"):
            try:
                return _gpu_backend(candidate)
            except BackendUnavailable:
                continue
        return Backend("numpy", np, "cpu")
    return _gpu_backend(name)


def device_bytes(N: int, n: int, d: int, batch: str, dtype=np.float64) -> int:
    r"""Bytes :func:`run_two_steps_on` holds on the device at its peak.

    :math:`b\,(3Nd + m\,nd + 3B)`: the weights :math:`W_0, W_1, W_2` (kept in the
    :class:`DeviceRun`), :math:`m = 1` batch (reused) or :math:`m = 2` (fresh), and per block
    of neurons the pre-activations, :math:`\sigma'` of them and the block's gradient, each
    at most :math:`B` = ``BLOCK_ELEMENTS`` entries; :math:`b` is 4 (float32) or 8 (float64).
    """
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_choice(batch, "batch", ("reused", "fresh"))
    b = check_dtype(dtype).itemsize
    m = 1 if batch == "reused" else 2
    return int(b * (3 * N * d + m * n * d + 3 * BLOCK_ELEMENTS))


@dataclass
class DeviceRun:
    """The arrays of :func:`run_two_steps_on`, on the backend's device.

    Shapes: ``W0, W1, W2`` ``(N, d)``; ``a`` ``(N,)``; ``X1, X2`` ``(n, d)``; ``y1, y2`` ``(n,)``.
    """

    backend: Backend
    W0: object
    a: object
    W1: object
    W2: object
    X1: object
    y1: object
    X2: object
    y2: object
    eta1: float
    eta2: float
    teacher: Teacher


def run_two_steps_on(backend, N: int, n: int, d: int, activation: PolynomialActivation, target,
                     steps, batch: str, rng: np.random.Generator, noise: float = 0.0,
                     dtype=np.float64) -> DeviceRun:
    r"""Two gradient steps on ``backend`` (a :class:`Backend` or a name for :func:`get_backend`).

    Same arguments and the same random draws as :func:`twostep.run_two_steps`; the
    activation must be polynomial (its derivative is evaluated by Horner's rule on the
    device). With the numpy backend the weights equal those of ``run_two_steps``.

    Returns
    -------
    DeviceRun

    Raises
    ------
    MemoryError
        Before allocating, if :func:`device_bytes` exceeds the device's free memory.
    """
    bk = backend if isinstance(backend, Backend) else get_backend(backend)
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    if not isinstance(activation, PolynomialActivation):
        raise TypeError("activation must be a PolynomialActivation (e.g. get_activation('poly4')) "
                        f"on a device backend, got {type(activation).__name__}")
    (c1, al1), (c2, al2) = check_steps(steps)
    dt = check_dtype(dtype)
    need, free = device_bytes(N, n, d, batch, dt), bk.memory_free()
    if free and need > free:
        # Checked before any draw or allocation, so a size that cannot fit fails at once.
        raise MemoryError(f"two steps at N={N}, n={n}, d={d} ({np.dtype(dt).name}, {batch} batch) "
                          f"need about {format_bytes(need)} on {bk.name}/{bk.device}, which has "
                          f"{format_bytes(free)} free; reduce N, n or d"
                          + (" or use dtype=float32" if dt == np.float64 else ""))
    p = draw_problem(N, n, d, target, batch, rng, noise, dt)
    teacher, W0, a, X1, y1, X2, y2 = p.teacher, p.W0, p.a, p.X1, p.y1, p.X2, p.y2
    eta1, eta2 = step_size(c1, al1, N), step_size(c2, al2, N)
    W0d, ad, X1d, y1d = (bk.asarray(x) for x in (W0, a, X1, y1))
    del W0, X1
    X2d, y2d = (X1d, y1d) if batch == "reused" else (bk.asarray(X2), bk.asarray(y2))
    W1d = one_step(W0d, ad, X1d, y1d, activation, eta1)
    W2d = one_step(W1d, ad, X2d, y2d, activation, eta2)
    return DeviceRun(bk, W0d, ad, W1d, W2d, X1d, y1d, X2d, y2d, eta1, eta2, teacher)


def top_singular_values_on(backend, M, k: int = 1, iterations: int = 30, oversample: int = 10,
                           seed: int = 0) -> np.ndarray:
    r"""Top-``k`` singular values of a device matrix ``M`` (``(N, d)``) by subspace iteration.

    ``iterations`` rounds of :math:`Q \leftarrow \operatorname{qr}(M^\top\operatorname{qr}(MQ))`
    on a block of ``k + oversample`` columns started from a Gaussian matrix drawn from
    ``seed``; the values are the singular values of :math:`MQ`. Outliers well separated from
    the bulk converge fast; compare with :func:`twostep.top_singular` on the host.

    Returns
    -------
    numpy.ndarray, shape (k,)
    """
    bk = backend if isinstance(backend, Backend) else get_backend(backend)
    k = check_int(k, "k")
    iterations = check_int(iterations, "iterations", 0)
    oversample = check_int(oversample, "oversample", 0)
    m = min(M.shape)
    if k > m:
        raise ValueError(f"k must be in [1, min(M.shape)] = [1, {m}], got {k}")
    b = min(m, k + oversample)
    G = np.random.default_rng(seed).standard_normal((M.shape[1], b)).astype(bk.to_numpy(M[:1, :1]).dtype)
    Q = bk.qr(bk.asarray(G))
    for _ in range(iterations):
        Q = bk.qr(M.T @ bk.qr(M @ Q))
    s = bk.to_numpy(bk.svdvals(M @ Q))
    return np.sort(s)[::-1][:k].astype(float)
