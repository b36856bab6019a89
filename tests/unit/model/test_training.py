"""One and two steps: definitions, batch schemes, determinism."""

import numpy as np
import pytest

import twostep as ts
from twostep.model.steps import draw_problem

STEPS = ((0.3, 0.2), (0.5, 0.25))


def run(batch, seed=0, N=40, n=30, d=20, target=None):
    return ts.run_two_steps(N, n, d, ts.get_activation("poly3"), target or ts.hermite_link(1),
                            STEPS, batch, np.random.default_rng(seed))


def test_step_size():
    assert ts.step_size(0.5, 0.25, 16) == pytest.approx(1.0)
    assert ts.step_size(2.0, 0.0, 1000) == 2.0


@pytest.mark.parametrize("batch", ["reused", "fresh"])
def test_two_steps_follow_the_definition(batch):
    r = run(batch)
    act = r.activation
    assert r.eta1 == pytest.approx(0.3 * 40 ** 0.2) and r.eta2 == pytest.approx(0.5 * 40 ** 0.25)
    W1 = r.W0 - r.eta1 * ts.gradient(r.W0, r.a, r.X1, r.y1, act)
    W2 = W1 - r.eta2 * ts.gradient(W1, r.a, r.X2, r.y2, act)
    np.testing.assert_allclose(r.W1, W1, rtol=1e-13)
    np.testing.assert_allclose(r.W2, W2, rtol=1e-13)
    np.testing.assert_allclose(r.y1, r.teacher.labels(r.X1, np.random.default_rng(0)))
    np.testing.assert_allclose(r.v, r.X1.T @ r.y1 / r.n)


def test_reused_and_fresh_batches():
    reused, fresh = run("reused"), run("fresh")
    assert reused.X2 is reused.X1 and reused.y2 is reused.y1
    assert not np.allclose(fresh.X2, fresh.X1)
    # Same seed: everything drawn before the second batch is identical.
    np.testing.assert_array_equal(reused.W0, fresh.W0)
    np.testing.assert_array_equal(reused.X1, fresh.X1)
    np.testing.assert_array_equal(reused.W1, fresh.W1)


def test_same_seed_same_arrays_and_different_seed_differs():
    r1, r2, r3 = run("fresh", seed=5), run("fresh", seed=5), run("fresh", seed=6)
    for name in ("W0", "a", "W1", "W2", "X1", "X2", "y1", "y2"):
        np.testing.assert_array_equal(getattr(r1, name), getattr(r2, name))
    assert not np.allclose(r1.W2, r3.W2)


def test_one_step_is_w_minus_eta_gradient():
    r = run("fresh")
    W = ts.one_step(r.W0, r.a, r.X1, r.y1, r.activation, 0.0)
    np.testing.assert_array_equal(W, r.W0)


def test_given_teacher_is_used():
    teacher = ts.Teacher(ts.hermite_link(2), 20, np.random.default_rng(9))
    r = run("fresh", target=teacher)
    assert r.teacher is teacher


def test_draw_problem_is_what_run_two_steps_trains_on():
    for batch in ("reused", "fresh"):
        p = draw_problem(40, 30, 20, ts.hermite_link(1), batch, np.random.default_rng(4))
        r = run(batch, seed=4)
        for name in ("W0", "a", "X1", "y1", "X2", "y2"):
            np.testing.assert_array_equal(getattr(p, name), getattr(r, name))
        assert (p.X2 is p.X1) == (batch == "reused")


def test_teacher_sample_draws_inputs_then_labels():
    teacher = ts.Teacher(ts.hermite_link(2), 6, np.random.default_rng(0), noise=0.1)
    X, y = teacher.sample(5, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    X_ = ts.gaussian_inputs(5, 6, rng)
    np.testing.assert_array_equal(X, X_)
    np.testing.assert_array_equal(y, teacher.labels(X_, rng))


def test_steps_along_one_gradient_are_the_steps_one_by_one():
    # One gradient for several step sizes: each step equal bit for bit to one_step's.
    from twostep.model.steps import one_step, steps_along
    rng = np.random.default_rng(7)
    W, a = ts.initialise(30, 20, rng)
    X, y = ts.make_teacher("he1", 20, rng).sample(25, rng)
    act = ts.get_activation("poly4")
    etas = [0.0, 0.3, 2.5]
    G, steps = steps_along(W, a, X, y, act, etas)
    assert np.array_equal(G, ts.gradient(W, a, X, y, act))
    for eta, W_eta in zip(etas, steps):
        assert np.array_equal(W_eta, one_step(W, a, X, y, act, eta))
    with pytest.raises(ValueError, match="etas"):
        steps_along(W, a, X, y, act, [-1.0])


def test_both_batches_are_the_runs_alone_with_one_first_step():
    # The pair shares W1 (one object, read-only so that measuring the reused run cannot change
    # the fresh run's start), and each run equals, bit for bit, its batch trained alone.
    from twostep.model._core import take_both_batches
    poly3 = ts.get_activation("poly3")
    p = draw_problem(40, 30, 20, ts.hermite_link(1), "fresh", np.random.default_rng(4))
    runs = list(take_both_batches(p, poly3, STEPS, keep_pre=True))
    assert [r.batch for r in runs] == ["reused", "fresh"]
    assert runs[0].W1 is runs[1].W1 and not runs[0].W1.flags.writeable
    for r in runs:
        alone = ts.run_two_steps(40, 30, 20, poly3, ts.hermite_link(1), STEPS, r.batch,
                                 np.random.default_rng(4), keep_pre=True)
        for name in ("W0", "W1", "W2", "X1", "X2", "y2"):
            np.testing.assert_array_equal(getattr(r, name), getattr(alone, name))
        for got, want in zip(r.pre, alone.pre):
            np.testing.assert_array_equal(got, want)
