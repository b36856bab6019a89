r"""Writing and reading the results of a sweep, with its parameters and the package version.

A results file is JSON: ``{"format": "twostep-results", "version": <twostep version>,
"experiment": <name>, "params": {...}, "grid": {...}, "seeds": [...], "backend": ...,
"created": <UTC time>, "elapsed": <seconds>, "records": [...]}``. Each record is one
task of :func:`twostep.sweep` (its parameters, ``seed`` and results). Numpy arrays are
stored as ``{"__ndarray__": nested list, "dtype": str}`` and come back as arrays of the
same dtype and shape; float64 values round-trip exactly (JSON keeps 17 significant
digits). A chapter reads a file written by ``python -m twostep`` with :func:`read_results`.
"""

from __future__ import annotations

import json
import math
import os
from datetime import datetime, timezone

import numpy as np

FORMAT = "twostep-results"


def _encode(value):
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"cannot store an array of dtype {value.dtype} in a results file")
        return {"__ndarray__": _encode(value.tolist()), "dtype": value.dtype.name,
                "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return _encode(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in a results file")


def _decode(value):
    if isinstance(value, dict):
        if "__ndarray__" in value:
            data = _decode(value["__ndarray__"])
            return np.asarray(data, dtype=value["dtype"]).reshape(value["shape"])
        if "__float__" in value:
            return float(value["__float__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def environment(device: str | None = None) -> dict:
    """Where a run ran: Python, numpy, scipy and (if loaded) CuPy / PyTorch versions, the machine,
    and ``device`` (e.g. the GPU's name) when given."""
    import platform
    import sys

    import scipy

    env = {"python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "machine": platform.machine(),
           "processor": platform.processor() or platform.machine()}
    for name in ("cupy", "torch"):
        if name in sys.modules:
            env[name] = getattr(sys.modules[name], "__version__", "?")
    if device:
        env["device"] = device
    return env


def write_results(path, experiment: str, records: list[dict], params: dict | None = None,
                  grid: dict | None = None, seeds=(), **meta) -> str:
    """Write ``records`` of ``experiment`` with their parameters and the package version.

    Parameters
    ----------
    path : str or path-like
        Destination, conventionally ``*.json``; its directory is created if needed. The file
        also records :func:`environment` (versions, machine, ``device`` if given in ``meta``).
    experiment : str
    records : list of dict
        As returned by :func:`twostep.sweep`.
    params, grid : dict, optional
        Fixed parameters and the swept grid (dict of lists).
    seeds : sequence of int
    **meta
        Further JSON-serialisable entries (e.g. ``backend``, ``elapsed``).

    Returns
    -------
    str
        The path written.
    """
    from .._version import __version__

    if not isinstance(experiment, str) or not experiment:
        raise ValueError(f"experiment must be a non-empty string, got {experiment!r}")
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TypeError("records must be a list of dicts (the output of twostep.sweep)")
    meta = dict(meta)
    env = environment(meta.pop("device", None))
    doc = {"format": FORMAT, "version": __version__, "experiment": experiment,
           "params": params or {}, "grid": grid or {}, "seeds": list(seeds),
           "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "environment": env, **meta, "records": records}
    path = os.fspath(path)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    text = json.dumps(_encode(doc), indent=1, allow_nan=False)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def read_results(path) -> dict:
    """Read a file written by :func:`write_results` (or ``python -m twostep``).

    Returns
    -------
    dict
        The stored document: ``experiment``, ``version``, ``params``, ``grid``, ``seeds``,
        ``records`` (list of dicts, arrays restored as numpy arrays), and any metadata.
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as fh:
        try:
            doc = json.load(fh)
        except json.JSONDecodeError as err:
            raise ValueError(f"path {path!r} is not a twostep results file: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"path {path!r} is not a twostep results file (format != {FORMAT!r})")
    return _decode(doc)
