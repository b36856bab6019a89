"""Array backends: dispatch with clear messages, memory estimates, the one gradient in blocks."""

import sys
import types

import numpy as np
import pytest

import twostep as ts
from twostep.model._core import gradient_core
from twostep.scale import backend as B
from twostep.scale.device import run_two_steps_on

ACT, LINK = ts.get_activation("poly4"), ts.get_link("he1")
STEPS = ((0.2, 0.4), (0.3, 0.25))


def test_small_blocks_give_the_same_step():
    ref = ts.run_two_steps(30, 20, 10, ACT, LINK, STEPS, "reused", np.random.default_rng(0))
    G = gradient_core(ref.W0, ref.a, ref.X1, ref.y1, ACT, block_elements=40)
    np.testing.assert_allclose(ref.W0 - ref.eta1 * G, ref.W1, rtol=1e-13, atol=1e-15)


def test_dispatch():
    assert B.get_backend("numpy").xp is np
    with pytest.raises(ValueError, match="backend must be one of"):
        B.get_backend("jax")
    with pytest.raises(TypeError, match="backend must be one of"):
        B.get_backend(None)


def test_absent_backend_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    with pytest.raises(B.BackendUnavailable, match="'cupy' is not installed.*pip install cupy") as err:
        B.get_backend("cupy")
    assert isinstance(err.value, ImportError)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="pip install torch"):
        B.get_backend("torch")
    assert B.get_backend("auto").name == "numpy"


def test_backend_without_gpu(monkeypatch):
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False))
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(B.BackendUnavailable, match="finds no NVIDIA GPU"):
        B.get_backend("torch")
    assert B.get_backend("auto").name == "numpy"

    def broken():
        raise RuntimeError("CUDA driver version is insufficient")
    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=broken)))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    with pytest.raises(B.BackendUnavailable, match="no usable NVIDIA GPU.*insufficient"):
        B.get_backend("cupy")


def test_fake_gpu_backend_is_selected(monkeypatch):
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True))
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setitem(sys.modules, "torch", fake)
    bk = B.get_backend("auto")
    assert (bk.name, bk.device, bk.xp) == ("torch", "cuda", fake)


def test_device_bytes_and_memory_error(monkeypatch):
    # 3 weight matrices + one batch (reused) or two (fresh) + three blocks.
    blocks = 3 * B.block_elements(100, 50)     # whole rows: the 100 x 50 pre-activation
    assert blocks == 3 * 5000
    assert B.device_bytes(100, 50, 40, "reused", np.float32) == 4 * (3 * 4000 + 2000 + blocks)
    assert B.device_bytes(100, 50, 40, "fresh") == 8 * (3 * 4000 + 2 * 2000 + blocks)
    with pytest.raises(ValueError, match="batch must be one of"):
        B.device_bytes(10, 10, 10, "twice")
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        B.device_bytes(10, 10, 10, "reused", np.int8)
    # The measurement adds L terms, two N x d temporaries and two N x n products.
    assert B.device_bytes(100, 50, 40, "reused", np.float32, terms=4) == 4 * (
        3 * 4000 + 2000 + blocks + 6 * 4000 + 2 * 5000)
    bk = B.get_backend("numpy")
    import twostep.scale.device as D
    monkeypatch.setattr(D, "memory_limit", lambda: (10 ** 6, "the memory available now"))
    with pytest.raises(MemoryError, match=r"N=300, n=300, d=300 \(float64, reused batch\) on "
                                          r"numpy/cpu needs about .*, but the memory available "
                                          r"now is 976\.6 KiB"):
        run_two_steps_on(bk, 300, 300, 300, ACT, LINK, STEPS, "reused", seed=0, dtype="float64")
