"""Exact step-size rescaling: one draw gives W_1, W_2 and T_k for every step size."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.rescaling import StepFamily

REF = ((0.3, 0.4), (0.2, 0.25))
OTHER = ((0.5, 0.1), (1.5, 0.45))


def run(batch, steps=REF, activation="poly4", seed=3, N=120, n=100, d=90):
    return ts.run_two_steps(N, n, d, ts.get_activation(activation), ts.hermite_link(1), steps,
                            batch, np.random.default_rng(seed))


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("activation", ["poly2", "poly4"])
def test_family_reproduces_training_at_other_step_sizes(batch, activation):
    ref, other = run(batch, REF, activation), run(batch, OTHER, activation)
    fam = StepFamily(ref)
    assert len(fam.terms) == ref.activation.degree and (fam.N, fam.d) == (120, 90)
    e1, e2 = (ts.step_size(c, alpha, 120) for c, alpha in OTHER)
    scale = np.linalg.norm(other.W2)
    np.testing.assert_allclose(fam.W1(e1), other.W1, atol=1e-12 * scale)
    np.testing.assert_allclose(fam.W2(e1, e2), other.W2, atol=1e-11 * scale)
    np.testing.assert_allclose(fam.W2(e1, e2) - fam.W1(e1), other.W2 - other.W1,
                               atol=1e-11 * scale)
    terms = ts.second_step_terms(other)
    for k, T in enumerate(terms):
        np.testing.assert_allclose(fam.term(k, e1, e2), T, atol=1e-11 * np.linalg.norm(T) + 1e-300)


def test_terms_argument_is_used_in_place_and_checked():
    r = run("fresh")
    terms = ts.second_step_terms(r)
    T1 = terms[1].copy()
    fam = StepFamily(r, terms)
    assert fam.terms[1] is terms[1]
    np.testing.assert_allclose(fam.terms[1] * r.eta2 * r.eta1, T1, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="terms"):
        StepFamily(r, terms[:2])
    with pytest.raises(TypeError, match="run"):
        StepFamily("not a run")
    with pytest.raises(ValueError, match="eta1"):
        fam.W2(-1.0, 1.0)
    with pytest.raises(ValueError, match="k must be"):
        fam.term(4, 1.0, 1.0)


def test_one_step_is_two_steps_minus_higher_orders_when_reused():
    r = run("reused")
    fam = StepFamily(r)
    terms = ts.second_step_terms(r)
    np.testing.assert_allclose(fam.linearised(r.eta1, r.eta2), fam.W1(r.eta1 + r.eta2),
                               atol=1e-12 * np.linalg.norm(r.W2))
    np.testing.assert_allclose(fam.W2(r.eta1, r.eta2) - fam.linearised(r.eta1, r.eta2),
                               sum(terms[1:]), atol=1e-12 * np.linalg.norm(r.W2))
    W = fam.W1(r.eta1 + r.eta2)
    direct = r.W0 - (r.eta1 + r.eta2) * ts.gradient(r.W0, r.a, r.X1, r.y1, r.activation)
    np.testing.assert_allclose(W, direct, atol=1e-12 * np.linalg.norm(direct))
    np.testing.assert_allclose(W, r.W2 - sum(terms[1:]), atol=1e-11 * np.linalg.norm(direct))


def test_family_needs_a_polynomial_activation():
    r = run("fresh", activation="tanh", N=20, n=20, d=10)
    with pytest.raises(ValueError, match="PolynomialActivation"):
        StepFamily(r)


def test_linearised_is_the_second_gradient_at_initialisation_for_fresh_batches():
    r = run("fresh")
    fam = StepFamily(r)
    direct = r.W1 - r.eta2 * ts.gradient(r.W0, r.a, r.X2, r.y2, r.activation)
    np.testing.assert_allclose(fam.linearised(r.eta1, r.eta2), direct, atol=1e-12 * np.linalg.norm(direct))
    np.testing.assert_allclose(fam.linearised(r.eta1, r.eta2) + sum(ts.second_step_terms(r)[1:]),
                               r.W2, atol=1e-11 * np.linalg.norm(r.W2))
