"""Array backends (numpy, CuPy, PyTorch): where the array-API simulations run, and their memory."""

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
    """An array namespace ``xp`` (``numpy``, ``cupy`` or ``torch``) and its device."""

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
        """Bytes the device can still hand out (its free memory and its pool's cache; on the
        host :func:`~twostep._validation.memory_limit`)."""
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
    except Exception as err:  # a CUDA runtime error: no usable device
        raise BackendUnavailable(f"backend {name!r} is installed but finds no usable NVIDIA GPU "
                                 f"({err}); use backend='numpy' or 'auto'") from None
    if not ok:
        raise BackendUnavailable(f"backend {name!r} is installed but finds no NVIDIA GPU; "
                                 f"use backend='numpy' or 'auto'")
    return Backend(name, xp, "cuda")

def get_backend(name: str = "auto") -> Backend:
    """The array backend ``name``; ``"auto"``: CuPy, else PyTorch, with a GPU, else numpy. A GPU
    backend without its package or GPU raises :class:`BackendUnavailable`."""
    check_choice(name, "backend", BACKENDS)
    if name != "auto":
        return Backend("numpy", np, "cpu") if name == "numpy" else _gpu_backend(name)
    for candidate in ("cupy", "torch"):
        with contextlib.suppress(BackendUnavailable):
            return _gpu_backend(candidate)
    return Backend("numpy", np, "cpu")

def device_bytes(N: int, n: int, d: int, batch: str, dtype=np.float64, terms: int = 0) -> int:
    r"""Peak bytes of two steps on the device, :math:`b\,(3Nd + m\,nd + 3B)` (:math:`W_0, W_1,
    W_2`, :math:`m` batches, three block temporaries of :math:`B` entries), plus for ``terms``
    exact terms :math:`b\,((\text{terms} + 2)Nd + 2Nn)`."""
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_choice(batch, "batch", ("reused", "fresh"))
    dt, terms = check_dtype(dtype), check_int(terms, "terms", 0)
    m = 1 if batch == "reused" else 2
    extra = (terms + 2) * N * d + 2 * N * n if terms else 0
    return int(dt.itemsize * (3 * N * d + m * n * d + 3 * block_elements(N, n) + extra))
