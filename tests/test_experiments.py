"""The experiment registry and the memory check."""

import numpy as np
import pytest

from twostep.scale.registry import (EXPERIMENTS, check_memory, estimate_bytes, get_experiment,
                                 run_task)
from twostep.experiments.first_step import first_step_diagnostics
from twostep import get_activation, get_link, run_two_steps, top_singular


def test_unknown_name_lists_the_accepted_ones():
    with pytest.raises(ValueError, match="two_steps") as err:
        get_experiment("three_steps")
    assert "three_steps" in str(err.value)
    with pytest.raises(ValueError, match="experiment must be one of"):
        run_task("nope", np.random.default_rng(0))


def test_two_steps_matches_the_package_routine():
    out = run_task("two_steps", np.random.default_rng(3), N=60, n=50, d=40, top=2)
    run = run_two_steps(60, 50, 40, get_activation("poly4"), get_link("he1"),
                        ((0.2, 0.4), (0.2, 0.25)), "reused", np.random.default_rng(3))
    np.testing.assert_array_equal(out["top_values"], top_singular(run.W2, 2)[0])
    assert out["overlap"].shape == (2, 1) and out["eta1"] == run.eta1


def test_first_step_is_first_step_diagnostics():
    out = run_task("first_step", np.random.default_rng(1), N=40, steps=[[0.2, 0.0], [0.2, 0.4]])
    ref = first_step_diagnostics(np.random.default_rng(1), N=40, activation=get_activation("poly4"),
                                 target=get_link("he1"), steps=[(0.2, 0.0), (0.2, 0.4)])
    for key in ("residual", "spike", "v_overlap"):
        assert out[key] == ref[key]
    np.testing.assert_array_equal(out["top_values"], ref["top"])


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_runs_at_a_tiny_size(name):
    params = {"N": 24}
    if name == "payoff":
        params.update(n=24, d=16)
    if name == "reuse":
        params.update(top=2)
    out = run_task(name, np.random.default_rng(0), **params)
    assert isinstance(out, dict) and out


def test_memory_estimate_and_check():
    small = estimate_bytes("two_steps", {"N": 1000})
    assert small == 8 * (6 * 1000 ** 2 + 2 * 1000 ** 2 + 2 * 1000 ** 2)   # the block: all rows
    assert estimate_bytes("two_steps", {"N": 1000, "dtype": "float32"}) == small // 2
    assert estimate_bytes("two_steps", {"N": 1000, "n": 2000}) > small
    assert check_memory("two_steps", [{"N": 100}], 1, max_memory=1e9) == estimate_bytes(
        "two_steps", {"N": 100})
    with pytest.raises(MemoryError, match="needs about .* but max_memory is"):
        check_memory("two_steps", [{"N": 100}, {"N": 10_000}], 1, max_memory=1e8)
    with pytest.raises(MemoryError, match="available memory"):
        check_memory("spike", [{"N": 10 ** 7}])
    with pytest.raises(MemoryError, match="2 task"):
        check_memory("two_steps", [{"N": 2000}], 2, max_memory=1.5 * estimate_bytes(
            "two_steps", {"N": 2000}))
    with pytest.raises(ValueError, match="dtype must be one of"):
        estimate_bytes("two_steps", {"N": 10, "dtype": "float16"})
    with pytest.raises(ValueError, match="N must be an integer"):
        estimate_bytes("two_steps", {"N": 0})
