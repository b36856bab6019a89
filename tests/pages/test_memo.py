"""A study shown by two pages runs once per build (twostep.pages.memo)."""

import numpy as np
import pytest

from twostep.pages import memo

CALLS = []


def work(N, seeds=(0, 1), alphas=None):
    CALLS.append(N)
    return {"N": N, "value": np.arange(N) * 2.0}


def test_computed_once_with_the_cache_and_every_time_without(tmp_path, monkeypatch):
    CALLS.clear()
    monkeypatch.delenv(memo.ENV, raising=False)
    memo.study(work, N=3)
    memo.study(work, N=3)
    assert CALLS == [3, 3]
    monkeypatch.setenv(memo.ENV, str(tmp_path))
    a = memo.study(work, N=3)
    b = memo.study(work, N=3, seeds=(0, 1))      # the default spelled out is another call
    c = memo.study(work, N=3)
    assert CALLS == [3, 3, 3, 3]
    np.testing.assert_array_equal(a["value"], c["value"])
    assert b["N"] == 3 and len(list(tmp_path.glob("*.pkl"))) == 2


def test_the_key_holds_the_arguments_and_the_code(monkeypatch):
    k = memo.study_key(work, {"N": 3, "alphas": np.array([0.1, 0.2])})
    assert k != memo.study_key(work, {"N": 3, "alphas": np.array([0.1, 0.3])})
    assert k != memo.study_key(work, {"N": 4, "alphas": np.array([0.1, 0.2])})
    monkeypatch.setattr(memo, "package_fingerprint", lambda: "other code")
    assert k != memo.study_key(work, {"N": 3, "alphas": np.array([0.1, 0.2])})


def test_bad_arguments():
    with pytest.raises(TypeError, match="func must be callable"):
        memo.study(3, N=1)
    with pytest.raises(TypeError, match="study arguments must be"):
        memo.study_key(work, {"N": object()})
