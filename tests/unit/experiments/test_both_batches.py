"""batch="both": the two schemes of one draw, the first step (or the first batch) taken once."""

import numpy as np
import pytest

import twostep as ts
from twostep.experiments.reuse import reuse_experiment, signal_overlap_experiment
from twostep.experiments.spikes import spike_experiment

STEP_KW = dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25)

CASES = {
    "spike": (spike_experiment, dict(N=96, settings=[(0.3, 0.2)], grid=[(0.1, 0.1)],
                                     corrected=True, n_top=4)),
    "reuse": (reuse_experiment, dict(N=120, target="odd", top=4, alpha2s=[0.05],
                                     dtype="float32", **STEP_KW)),
    "signal": (signal_overlap_experiment, dict(n=150, d=120, target="odd",
                                               activation=ts.get_activation("poly4"))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_both_batches_are_each_batch_alone_bit_for_bit(case):
    experiment, kw = CASES[case]
    both = experiment(np.random.default_rng(2), batch="both", **kw)
    assert set(both) == {"reused", "fresh"}
    for batch, got in both.items():
        alone = experiment(np.random.default_rng(2), batch=batch, **kw)
        assert set(got) == set(alone)
        for key in alone:
            np.testing.assert_array_equal(got[key], alone[key], err_msg=f"{batch}: {key}")
    with pytest.raises(ValueError, match="batch"):
        experiment(np.random.default_rng(2), batch="neither", **kw)
