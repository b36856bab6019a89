r"""Array backends: which library and device the simulations run on, and moving arrays there.

:func:`get_backend` returns a :class:`Backend`, a thin wrapper of an array namespace
(``numpy``, ``cupy`` or ``torch``): moving arrays to and from the device, a QR and a small
SVD, synchronisation for timing, and the device's free memory. ``"auto"`` takes CuPy, then
PyTorch, when an NVIDIA GPU is usable and numpy otherwise; asking for a backend that is not
installed, or has no GPU, raises :class:`BackendUnavailable` (an ``ImportError``) saying how
to install it. :func:`device_bytes` sizes a run before it allocates; on the host,
:func:`keep_freed_memory` lets a long run reuse the memory of its freed arrays.

The simulations themselves are not here: the gradient and the steps
(:mod:`twostep.model.network`, :mod:`twostep.model.steps`) and the exact terms
(:mod:`twostep.analysis.decomposition`) are written once against the array API standard, and
:mod:`twostep.scale.device` draws a problem on the device and runs them there.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_dtype, check_int, memory_limit
from ..analysis.sweep import keep_freed_memory  # noqa: F401  (re-exported: the at-scale runs')
from ..model.network import block_elements

BACKENDS = ("numpy", "cupy", "torch", "auto")

INSTALL = {
    "cupy": "pip install cupy-cuda12x (CUDA 12; see https://docs.cupy.dev/en/stable/install.html)",
    "torch": "pip install torch (a CUDA build; see https://pytorch.org/get-started/locally/)",
}


class BackendUnavailable(ImportError):
    """A requested array backend is not installed or has no usable GPU."""


@dataclass
class Backend:
    """An array namespace ``xp`` (the module ``numpy``, ``cupy`` or ``torch``, by ``name``)
    and its device, ``"cpu"`` or ``"cuda"``."""

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

    def device_name(self) -> str:
        """The GPU's name (e.g. ``"NVIDIA H200"``), or ``"cpu"``."""
        if self.name == "cupy":
            props = self.xp.cuda.runtime.getDeviceProperties(self.xp.cuda.Device().id)
            name = props["name"]
            return name.decode() if isinstance(name, bytes) else str(name)
        if self.name == "torch" and self.device != "cpu":
            return str(self.xp.cuda.get_device_name())
        return "cpu"

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

        On the host (numpy, or torch on the CPU) this is the most it may plan for now
        (:func:`twostep._validation.memory_limit`: the memory available, ``ulimit -v``, the
        memory cgroup's limit).
        """
        if self.name == "cupy":
            pool = self.xp.get_default_memory_pool()
            return int(self.xp.cuda.runtime.memGetInfo()[0] + pool.free_bytes())
        if self.name == "torch" and self.device != "cpu":
            cuda = self.xp.cuda
            return int(cuda.mem_get_info()[0] + cuda.memory_reserved() - cuda.memory_allocated())
        return memory_limit()[0]


def _gpu_backend(name) -> Backend:
    try:
        xp = importlib.import_module(name)
    except ImportError as err:
        raise BackendUnavailable(
            f"backend {name!r} is not installed ({err}); install it with: {INSTALL[name]}, "
            f"or use backend='numpy'") from None
    try:
        ok = xp.cuda.runtime.getDeviceCount() > 0 if name == "cupy" else xp.cuda.is_available()
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
    if name != "auto":
        return Backend("numpy", np, "cpu") if name == "numpy" else _gpu_backend(name)
    for candidate in ("cupy", "torch"):
        with contextlib.suppress(BackendUnavailable):
            return _gpu_backend(candidate)
    return Backend("numpy", np, "cpu")


def device_bytes(N: int, n: int, d: int, batch: str, dtype=np.float64, terms: int = 0) -> int:
    r"""Bytes two steps (and, with ``terms = L``, their measurement) hold on the device at the peak.

    :math:`b\,(3Nd + m\,nd + 3B)` for the steps: the weights :math:`W_0, W_1, W_2`,
    :math:`m = 1` batch (reused) or :math:`m = 2` (fresh), and per block
    of neurons the pre-activations, :math:`\sigma'` of them and the block's gradient, each
    of :math:`B` entries (:func:`twostep.model.network.block_elements`); :math:`b` is 4
    (float32) or 8 (float64).
    The measurement (:func:`twostep.scale.device.measure_on`) adds the ``terms`` exact terms
    :math:`T_k` (each :math:`N\times d`), the two :math:`N\times n` matrices :math:`W_0X_2^\top`
    and :math:`(W_1-W_0)X_2^\top`, and two :math:`N\times d` temporaries.
    """
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_choice(batch, "batch", ("reused", "fresh"))
    dt, terms = check_dtype(dtype), check_int(terms, "terms", 0)
    m = 1 if batch == "reused" else 2
    extra = (terms + 2) * N * d + 2 * N * n if terms else 0
    return int(dt.itemsize * (3 * N * d + m * n * d + 3 * block_elements(N, n) + extra))
