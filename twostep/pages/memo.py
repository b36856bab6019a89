"""A study that a story chapter and its appendix both show runs once per build."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

#: The environment variable naming the folder of kept results.
ENV = "TWOSTEP_STUDY_CACHE"

@lru_cache(maxsize=1)
def package_fingerprint() -> str:
    """SHA-256 of every module of the installed package, with numpy's and scipy's versions."""
    import scipy

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"numpy {np.__version__} scipy {scipy.__version__}".encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()

def _canonical(value):
    # A stable text of an argument: arrays and sequences by their values, dicts by sorted keys.
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, value.tolist())
    if isinstance(value, (list, tuple, range)):
        return (type(value).__name__, [_canonical(v) for v in value])
    if isinstance(value, dict):
        return ("dict", sorted((str(k), _canonical(v)) for k, v in value.items()))
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"study arguments must be numbers, strings, arrays, sequences or dicts "
                    f"of them, got {type(value).__name__}")

def study_key(func, kwargs: dict) -> str:
    """The key of ``func(**kwargs)`` (module and name, arguments, package fingerprint)."""
    text = repr((func.__module__, func.__qualname__, _canonical(kwargs), package_fingerprint()))
    return hashlib.sha256(text.encode()).hexdigest()[:24]

def study(func, /, **kwargs):
    """``func(**kwargs)``, computed once per build (module docstring): read from the folder
    ``$TWOSTEP_STUDY_CACHE`` when an identical call of identical code left it there, else
    computed (and left there when the variable is set)."""
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    folder = os.environ.get(ENV)
    if not folder:
        return func(**kwargs)
    path = Path(folder) / f"{func.__qualname__}-{study_key(func, kwargs)}.pkl"
    if path.is_file():
        with open(path, "rb") as fh:
            return pickle.load(fh)
    result = func(**kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole or not at all: a page killed mid-write leaves no half file to read.
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as fh:
        pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(fh.name, path)
    return result
