"""Array backends: the numpy path reproduces run_two_steps; dispatch gives clear messages."""

import sys
import types

import numpy as np
import pytest

import twostep as ts
from twostep import backend as B

ACT, LINK = ts.get_activation("poly4"), ts.get_link("he1")
STEPS = ((0.2, 0.4), (0.3, 0.25))


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_backend_is_run_two_steps(batch, dtype):
    ref = ts.run_two_steps(70, 50, 40, ACT, LINK, STEPS, batch, np.random.default_rng(5), dtype=dtype)
    run = B.run_two_steps_on("numpy", 70, 50, 40, ACT, LINK, STEPS, batch,
                             np.random.default_rng(5), dtype=dtype)
    for name in ("W0", "a", "W1", "W2", "X2", "y2"):
        np.testing.assert_array_equal(getattr(run, name), getattr(ref, name))
    assert (run.eta1, run.eta2) == (ref.eta1, ref.eta2)
    assert run.W2.dtype == np.dtype(dtype)


def test_small_blocks_give_the_same_step():
    ref = ts.run_two_steps(30, 20, 10, ACT, LINK, STEPS, "reused", np.random.default_rng(0))
    bk = B.get_backend("numpy")
    coef = ACT._power_coefficients(1)
    W1 = B._step_on(bk, ref.W0, ref.a, ref.X1, ref.y1, coef, ref.eta1, block_elements=40)
    np.testing.assert_allclose(W1, ref.W1, rtol=1e-13, atol=1e-15)


def test_top_singular_values_on_agrees_with_top_singular():
    run = ts.run_two_steps(300, 300, 300, ACT, LINK, STEPS, "reused", np.random.default_rng(2))
    s = B.top_singular_values_on("numpy", run.W2, 3)
    ref = ts.top_singular(run.W2, 3)[0]
    assert s[0] == pytest.approx(ref[0], rel=1e-10)
    np.testing.assert_allclose(s, ref, rtol=1e-3)
    with pytest.raises(ValueError, match="k must be in"):
        B.top_singular_values_on("numpy", run.W2, 301)


def test_torch_on_cpu_agrees_with_numpy():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    bk = B.Backend("torch", torch, "cpu")
    ref = ts.run_two_steps(60, 50, 40, ACT, LINK, STEPS, "fresh", np.random.default_rng(1))
    run = B.run_two_steps_on(bk, 60, 50, 40, ACT, LINK, STEPS, "fresh", np.random.default_rng(1))
    np.testing.assert_allclose(bk.to_numpy(run.W2), ref.W2, rtol=1e-12, atol=1e-14)
    assert B.top_singular_values_on(bk, run.W2, 1)[0] == pytest.approx(
        ts.top_singular(ref.W2, 1)[0][0], rel=1e-10)


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


def test_bad_input():
    with pytest.raises(TypeError, match="PolynomialActivation"):
        B.run_two_steps_on("numpy", 10, 10, 10, ts.get_activation("tanh"), LINK, STEPS, "reused",
                           np.random.default_rng(0))
    with pytest.raises(ValueError, match="batch must be one of"):
        B.run_two_steps_on("numpy", 10, 10, 10, ACT, LINK, STEPS, "twice", np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        B.run_two_steps_on("numpy", 10, 10, 10, ACT, LINK, STEPS, "reused", 0)
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        B.run_two_steps_on("numpy", 10, 10, 10, ACT, LINK, STEPS, "reused",
                           np.random.default_rng(0), dtype=np.float16)


def test_device_check_exits_cleanly_without_gpu(root):
    import subprocess
    res = subprocess.run([sys.executable, str(root / "benchmarks" / "device_check.py"),
                          "--sizes", "300"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0
    if "no NVIDIA GPU" not in res.stdout and "no GPU backend" not in res.stdout:
        assert "agreement" in res.stdout  # a GPU is present: the check ran
