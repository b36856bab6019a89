"""Child processes of the CLI tests (test_cli, test_crash_safety): their environment, and
finding them again after a run was killed."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: Carried by every process of one test's run, workers included.
TAG_ENV = "TWOSTEP_TEST_TAG"


def child_env(tag: str | None = None, **overrides) -> dict:
    """The environment of a CLI run under test; ``overrides`` set variables (``None``
    removes one)."""
    # One BLAS thread: the same summation order in every process (records compare exactly),
    # and a light load on the shared machine. The tag finds this run's processes afterwards.
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    if tag:
        overrides[TAG_ENV] = tag
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def tagged(tag: str) -> list[int]:
    """Processes whose environment carries ``tag``: the run and every worker it started."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if f"{TAG_ENV}={tag}".encode() in fh.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found
