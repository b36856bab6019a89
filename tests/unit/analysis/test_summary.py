"""The one summary type: groups, means and standard errors over seeds, series, pooled runs."""

from __future__ import annotations

import numpy as np
import pytest

from twostep.analysis.summary import Summary


def _records():
    # Two batches, two widths, three seeds; "x" a number, "v" an array of shape (2,).
    out = []
    for batch in ("fresh", "reused"):
        for N in (1000, 500):
            for seed in range(3):
                x = N / 1000 + seed + (batch == "reused")
                out.append({"batch": batch, "N": N, "seed": seed, "x": x,
                            "v": np.array([x, -x])})
    return out


def test_a_point_holds_the_mean_and_standard_error_over_its_seeds():
    s = Summary(_records(), ["batch", "N"], ["x", "v"])
    seeds = np.array([0.5, 1.5, 2.5])
    assert s.at("x", batch="fresh", N=500) == pytest.approx(seeds.mean())
    assert s.at("x", batch="fresh", N=500, sem=True) == pytest.approx(seeds.std(ddof=1) / np.sqrt(3))
    assert s.at("v", 1, batch="reused", N=1000) == pytest.approx(-3.0)
    assert isinstance(s.at("x", batch="fresh", N=500), float)
    assert s.at("v", batch="fresh", N=500).shape == (2,)
    assert s.count(batch="reused", N=1000) == 3


def test_a_series_runs_along_the_last_parameter_in_ascending_order():
    s = Summary(_records(), ["batch", "N"], ["x", "v"])
    x, mean, sem = s.series("v", 0, batch="reused")
    assert x.tolist() == [500, 1000]
    assert mean.tolist() == pytest.approx([2.5, 3.0])
    assert sem.tolist() == pytest.approx([1 / np.sqrt(3)] * 2)
    assert s.axis(batch="fresh") == [500, 1000]


def test_seed_values_and_pooled_runs_keep_run_order():
    s = Summary(_records(), ["batch", "N"], ["x"])
    assert s.seed_values("x", batch="fresh", N=1000).tolist() == [1.0, 2.0, 3.0]
    N, y = s.pooled("x", batch="fresh")
    assert N.tolist() == [1000] * 3 + [500] * 3
    assert y.tolist() == [1.0, 2.0, 3.0, 0.5, 1.5, 2.5]


def test_a_point_must_be_named_in_full_and_by_its_parameters():
    s = Summary(_records(), ["batch", "N"], ["x"])
    with pytest.raises(KeyError, match="missing"):
        s.at("x", batch="fresh")
    with pytest.raises(KeyError, match="no parameter"):
        s.at("x", batch="fresh", N=500, target="he1")
    with pytest.raises(KeyError, match="no runs"):
        s.at("x", batch="fresh", N=2000)
    with pytest.raises(KeyError, match="missing"):
        s.series("x")
