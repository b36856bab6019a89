"""The exact term seen through a left vector (twostep.analysis.projection)."""

from dataclasses import replace

import numpy as np
import pytest

from twostep.analysis.alignment import overlaps, subspace_overlap
from twostep.analysis._core import term_weights
from twostep.analysis.decomposition import pre_activations, second_step_term
from twostep.analysis.projection import PROJECTED_KEYS, projected_alignment
from twostep.model.activations import as_activation
from twostep.model.steps import draw_problem, two_steps

STEPS = ((0.5, 0.4), (0.5, 0.25))


def run_of(batch, N=80, seed=3, target="odd"):
    problem = draw_problem(N, N, N, target, "fresh", np.random.default_rng(seed))
    if batch == "reused":
        problem = replace(problem, X2=problem.X1, y2=problem.y1)
    return two_steps(problem, as_activation("poly4"), STEPS)


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_weights_give_the_projection_of_the_exact_term(batch, k):
    run = run_of(batch)
    left = np.random.default_rng(1).standard_normal(run.N)
    T = second_step_term(run, k)
    w = term_weights(run, k, left, *pre_activations(run))
    assert w.shape == (run.n,)
    np.testing.assert_allclose(run.X2.T @ w, T.T @ left, rtol=1e-10, atol=1e-12 * np.abs(T).max())


def test_projected_alignment_against_its_definition():
    run = run_of("reused")
    signs = np.random.default_rng(2).choice([-1.0, 1.0], size=run.N)
    out = projected_alignment(run, 2, signs=signs, memorised=5)
    assert set(out) == set(PROJECTED_KEYS)
    T = second_step_term(run, 2)
    B = run.teacher.directions
    r = T.T @ run.a ** 3
    assert out["overlap"][0] == pytest.approx(overlaps(r, B)[0, 0], rel=1e-9)
    r_sign = T.T @ (np.abs(run.a) ** 3 * signs)
    assert out["random_sign"][0] == pytest.approx(overlaps(r_sign, B)[0, 0], rel=1e-9)
    w = term_weights(run, 2, run.a ** 3, *pre_activations(run))
    c = np.abs(w) * np.linalg.norm(run.X2, axis=1)
    J = np.argsort(c)[-5:]
    assert out["memorised_null"][0] == pytest.approx(subspace_overlap(run.X2[J], B)[0])
    rest = r - run.X2[J].T @ w[J]
    assert out["without_memorised"][0] == pytest.approx(overlaps(rest, B)[0, 0], rel=1e-9)
    assert 1 <= out["participation"] <= run.n
    cos = np.abs(run.X2 @ r) / (np.linalg.norm(run.X2, axis=1) * np.linalg.norm(r))
    assert out["memorisation"] == pytest.approx(cos.max())
    # the precomputed pre-activations give the same numbers
    again = projected_alignment(run, 2, signs=signs, memorised=5, pre=pre_activations(run))
    for key in PROJECTED_KEYS:
        np.testing.assert_array_equal(again[key], out[key])


def test_one_input_carrying_everything_has_participation_one():
    # With the labels of all but one input set to zero, w_j = 0 for j != 0: r is x_0 itself,
    # a fully memorised direction, and the memorised-input null is x_0's own overlap.
    run = run_of("fresh")
    y2 = np.zeros_like(run.y2)
    y2[0] = 1.0
    run = replace(run, y2=y2)
    out = projected_alignment(run, 2, signs=np.ones(run.N), memorised=1)
    assert out["participation"] == pytest.approx(1.0)
    assert out["memorisation"] == pytest.approx(1.0)
    assert out["overlap"][0] == pytest.approx(out["memorised_null"][0])


@pytest.mark.parametrize("kw, error, match", [
    (dict(signs=np.full(80, 0.5)), ValueError, "signs must hold only"),
    (dict(signs=np.ones(79)), ValueError, "signs must have shape"),
    (dict(memorised=0), ValueError, "memorised must be"),
    (dict(memorised=81), ValueError, r"memorised must be in \[1, n\] = \[1, 80\]"),
    (dict(k=4), ValueError, r"k must be in \[0, L-1\]"),
    (dict(pre=(1, 2)), ValueError, "pre must be the pair"),
])
def test_bad_input(kw, error, match):
    args = dict(k=2, signs=np.ones(80))
    args.update(kw)
    with pytest.raises(error, match=match):
        projected_alignment(run_of("reused"), **args)
