"""The worker processes of a parallel sweep run every task to the end, whatever its size.

The workers keep the memory of freed arrays (``keep_freed_memory``); loky's leak check used
to read that memory as a leak, replace the worker mid-sweep and warn on stderr ("A worker
stopped while some jobs were given to the executor"), which reached the readout chapter's
page. This grows the tasks of a sweep past loky's threshold (300 MB over the worker's first
task, checked at most once a second) and checks that nothing is warned and no worker is
replaced.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
import pytest

import twostep as ts


def _growing(rng, m):
    # m = 7000: a 392 MB array, kept by the worker after it is freed; the pause lets loky's
    # check (at most once a second) run after the task.
    a = np.ones((m, m))
    a[0, 0] += rng.standard_normal()
    time.sleep(1.2)
    return {"pid": os.getpid(), "x": float(a[0, 0])}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc, /proc")
def test_a_sweep_whose_tasks_grow_keeps_its_workers_and_warns_nothing():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = ts.sweep(_growing, {"m": [100, 7000, 7000]}, seeds=[0, 1], n_jobs=2)
    assert not [str(w.message) for w in caught], [str(w.message) for w in caught]
    # Two workers ran the six tasks: none was stopped and replaced.
    assert len({r["pid"] for r in records}) <= 2, {r["pid"] for r in records}
    assert len(records) == 6
