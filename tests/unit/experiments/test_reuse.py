"""Reused versus fresh batches: signal directions, their population limit, memorisation."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.alignment import overlap, subspace_overlap
from twostep.analysis.decomposition import signal_directions
from twostep.analysis.population import population_signal
from twostep.analysis.alignment import unmemorised_overlap
from twostep.experiments.reuse import reuse_experiment, signal_overlap_experiment
from twostep.model.targets import target_links

STEPS = ((0.5, 0.4), (0.5, 0.25))
STEP_KW = dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25)  # STEPS as keywords


def data(n=300, d=200, seed=0, target="odd"):
    rng = np.random.default_rng(seed)
    links, _ = target_links(target)
    teacher = ts.Teacher(links, d, rng)
    X1 = rng.standard_normal((n, d))
    X2 = rng.standard_normal((n, d))
    return teacher, X1, teacher.labels(X1, rng), X2, teacher.labels(X2, rng)


def test_signal_directions_formula():
    _, X1, y1, X2, y2 = data()
    v = X1.T @ y1 / len(y1)
    U = signal_directions(X1, y1, [0, 2], X2, y2)
    np.testing.assert_allclose(U[0], X2.T @ y2 / len(y2))
    np.testing.assert_allclose(U[1], X2.T @ (y2 * (X2 @ v) ** 2) / len(y2))
    np.testing.assert_allclose(signal_directions(X1, y1, [3]),
                               signal_directions(X1, y1, [3], X1, y1))


def test_signal_directions_match_the_decomposition():
    for batch in ("reused", "fresh"):
        run = ts.run_two_steps(120, 100, 80, ts.get_activation("poly4"), ts.get_link("odd"), STEPS,
                               batch, np.random.default_rng(1))
        second = (None, None) if batch == "reused" else (run.X2, run.y2)
        U = signal_directions(run.X1, run.y1, range(4), *second)
        s = run.X2 @ run.v       # u_k = X2^T (y2 s^k) / n, s = X2 v, of the run's own batches
        for k in range(4):
            np.testing.assert_allclose(U[k], run.X2.T @ (run.y2 * s ** k) / run.n, rtol=1e-12)


def test_reuse_aware_directions_match_the_decomposition():
    for batch in ("reused", "fresh"):
        run = ts.run_two_steps(120, 100, 80, ts.get_activation("poly4"), ts.get_link("he3"), STEPS,
                               batch, np.random.default_rng(2))
        second = (None, None) if batch == "reused" else (run.X2, run.y2)
        U = signal_directions(run.X1, run.y1, range(4), *second, activation="poly4")
        for k in range(4):
            right = ts.signal_part(run, k, "reuse").right
            np.testing.assert_allclose(U[k] / np.linalg.norm(U[k]), right, atol=1e-10)
    with pytest.raises(ValueError, match="k must be"):
        signal_directions(run.X1, run.y1, [4], activation="poly4")
    with pytest.raises(TypeError, match="activation"):
        signal_directions(run.X1, run.y1, [1], activation=3)


def test_signal_directions_validation():
    _, X1, y1, X2, y2 = data(20, 10)
    with pytest.raises(ValueError, match="X2 and y2"):
        signal_directions(X1, y1, [0], X2=X2)
    with pytest.raises(TypeError, match="ks"):
        signal_directions(X1, y1, 2)
    with pytest.raises(ValueError, match="k must be"):
        signal_directions(X1, y1, [-1])
    with pytest.raises(ValueError, match="y1"):
        signal_directions(X1, y1[:-1], [0])


def test_target_links():
    links, noise = target_links("he1+odd")
    assert [g.name for g in links] == ["He_1", ts.odd_bounded_link().name] and noise == 0
    teacher = ts.Teacher([ts.hermite_link(3)], 5, np.random.default_rng(0), noise=0.3)
    assert target_links(teacher)[1] == 0.3
    with pytest.raises(TypeError, match="target"):
        target_links(3)
    with pytest.raises(ValueError, match="name"):
        target_links("he1+nope")


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("target,noise", [("he1", 0.0), ("he1+he3", 0.0), ("he1", 0.5)])
def test_order_zero_is_the_one_step_overlap(batch, target, noise):
    links, _ = target_links(target)
    teacher = ts.Teacher(links, 10, np.random.default_rng(0), noise=noise)
    for psi in (0.5, 1.0, 3.0):
        p = population_signal(teacher, psi, 0, batch)
        expected = ts.one_step_overlap(1.0, teacher.second_moment, psi)
        assert p.overlaps[0] == pytest.approx(expected, rel=1e-9)
        assert p.norm == pytest.approx(np.sqrt(1 + teacher.second_moment / psi), rel=1e-9)


def test_parity_selection():
    # Odd target without linear part: only k = 2 under reuse; nothing with fresh batches.
    for link in ("odd", "he3"):
        reused = [population_signal(link, 1.0, k, "reused").overlaps[0] for k in range(4)]
        fresh = [population_signal(link, 1.0, k, "fresh").overlaps[0] for k in range(4)]
        np.testing.assert_allclose([reused[0], reused[1], reused[3]], 0, atol=1e-10)
        assert reused[2] > 0.05   # quadrature, no draws: 0.176 (odd), 0.094 (He_3)
        np.testing.assert_allclose(fresh, 0, atol=1e-10)
    # Even target: reached by neither.
    for batch in ("reused", "fresh"):
        np.testing.assert_allclose(
            [population_signal("he2", 1.0, k, batch).overlaps[0] for k in range(4)], 0, atol=1e-10)
    # k = 2, reuse: A_2 = E[g^3 z] / psi^2 exactly for an odd g with c_1 = 0.
    g = ts.get_link("odd")
    for psi in (0.5, 2.0):
        A = population_signal(g, psi, 2, "reused").along[0]
        assert A == pytest.approx(g.moment(lambda z, gz: gz ** 3 * z) / psi ** 2, rel=1e-8)


@pytest.mark.parametrize("psi,n,d", [(1.0, 800, 800), (2.0, 1200, 600)])
def test_population_signal_against_monte_carlo(psi, n, d):
    # Direct simulation of u_k over seeds vs the quadrature limit: norms and mean overlaps.
    # Measured on seeds 0-35 (3 blocks of 12) for both settings and batches: the per-seed
    # norm varies by 3% (k = 0), 6-8% (k = 1), 10-16% (k = 2), 16-25% (k = 3, heavy tails);
    # the 12-seed mean norm / limit - 1 reached -0.086 at k = 2 and -0.133 at k = 3 (reused,
    # psi = 1), hence rel 0.1, 0.1, 0.15, 0.25. Overlaps: (mean - pred) / sem lay in
    # [-2.75, 1.63] over the 48 block-order-batch cases, |mean - pred| at most 4 sem - 0.009.
    seeds = 12
    for batch in ("reused", "fresh"):
        res = [signal_overlap_experiment(np.random.default_rng(s), n, d, "odd", batch)
               for s in range(seeds)]
        ov = np.array([r["overlaps"][:, 0] for r in res])
        norms = np.array([r["norms"] for r in res]).mean(axis=0)
        for k in range(4):
            p = population_signal("odd", psi, k, batch)
            assert norms[k] == pytest.approx(p.norm, rel=(0.1, 0.1, 0.15, 0.25)[k])
            pred = p.expected_overlaps(n)[0]
            sem = ov[:, k].std(ddof=1) / np.sqrt(seeds)
            assert abs(ov[:, k].mean() - pred) < 4 * sem + 0.01


def test_reuse_aware_direction_against_the_decomposition():
    # tilde u_2 (signal_part kind="reuse") of actual runs vs its population limit.
    # Per seed the overlap deviates from the prediction 0.309 by sd 0.068 (seeds 0-17), so
    # the mean of 12 seeds has sd 0.020: abs=0.06 is 3 sd, and the plain u_2's 0.176 is
    # 0.13 away. (Seeds 0-5, 6-11, 12-17: -0.006, 0.013, 0.004.)
    vals = []
    for seed in range(12):
        run = ts.run_two_steps(500, 500, 500, ts.get_activation("poly4"), ts.get_link("odd"), STEPS,
                               "reused", np.random.default_rng(seed))
        vals.append(overlap(ts.signal_part(run, 2, "reuse").right, run.teacher.directions[0]))
    p = population_signal("odd", 1.0, 2, "reused", kind="reuse", activation="poly4")
    assert np.mean(vals) == pytest.approx(p.expected_overlaps(500)[0], abs=0.06)
    # Fresh: the reuse-aware weight reduces to mu_{k+1} (mu_1 s)^k, i.e. the plain u_k.
    pf = population_signal("he1", 1.0, 2, "fresh", kind="reuse", activation="poly4")
    np.testing.assert_allclose(pf.overlaps, population_signal("he1", 1.0, 2, "fresh").overlaps)


def test_expected_overlaps():
    p = population_signal("odd", 1.0, 2, "reused")
    assert p.expected_overlaps(10 ** 12)[0] == pytest.approx(p.overlaps[0], rel=1e-6)
    assert p.expected_overlaps(100)[0] > p.overlaps[0]
    f = population_signal("odd", 1.0, 2, "fresh")
    ratio = f.expected_overlaps(400)[0] / f.expected_overlaps(1600)[0]
    assert ratio == pytest.approx(2.0, rel=1e-9)


def test_population_signal_validation():
    with pytest.raises(ValueError, match="psi"):
        population_signal("odd", 0.0, 2)
    with pytest.raises(ValueError, match="batch"):
        population_signal("odd", 1.0, 2, "twice")
    with pytest.raises(ValueError, match="kind"):
        population_signal("odd", 1.0, 2, kind="other")
    with pytest.raises(TypeError, match="activation"):
        population_signal("odd", 1.0, 2, kind="reuse")
    with pytest.raises(ValueError, match="k must be"):
        population_signal("odd", 1.0, 4, kind="reuse", activation="poly4")
    with pytest.raises(ValueError, match="grid"):
        population_signal("he1+he2+he3+odd", 1.0, 1)


def test_unmemorised_overlap():
    rng = np.random.default_rng(0)
    d, n = 50, 30
    X = rng.standard_normal((n, d))
    beta = X[3] / np.linalg.norm(X[3]) + 0.5 * rng.standard_normal(d) / np.sqrt(d)
    # A vector that is one input: its whole overlap with beta goes away.
    V = X[3][None, :]
    # over seeds 0-199 of this draw: overlap mean 0.894, sd 0.023, min 0.821 (seed 0: 0.926)
    assert subspace_overlap(V, beta)[0] > 0.8
    assert unmemorised_overlap(V, beta, X)[0] == pytest.approx(0.0, abs=1e-12)
    # beta itself (after removing the input) is still found when it is in the span.
    b = rng.standard_normal(d)
    V2 = np.vstack([X[5], b])
    # over seeds 0-199: mean 0.945, sd 0.025, min 0.863 (seed 0: 0.956); was > 0.95
    assert unmemorised_overlap(V2, b, X)[0] > 0.85
    with pytest.raises(ValueError, match="X"):
        unmemorised_overlap(V, beta, X[:, :10])


def test_experiments_shapes():
    out = signal_overlap_experiment(np.random.default_rng(0), 60, 40, "he1+odd", "fresh")
    assert out["overlaps"].shape == (4, 2) and out["norms"].shape == (4,)
    out = signal_overlap_experiment(np.random.default_rng(0), 60, 40, "odd", "reused",
                                      ks=(0, 2), activation="poly4")
    assert out["overlaps_reuse"].shape == (2, 1)
    # k = 0: the reuse-aware weight is mu_1 y, so the direction is v itself.
    assert out["overlaps_reuse"][0, 0] == pytest.approx(out["overlaps"][0, 0])
    res = reuse_experiment(np.random.default_rng(0), N=60, target="odd", batch="reused", **STEP_KW, top=3)
    assert res["signal"].shape == (4, 1)
    assert res["top_overlap"].shape == (3, 1) and res["top_memorisation"].shape == (3,)
    assert res["subspace"].shape == (3, 1) and res["subspace_unmemorised"].shape == (3, 1)
    assert 0 <= res["term_overlap"][0] <= 1 and 0 <= res["term_memorisation"] <= 1
    res = reuse_experiment(np.random.default_rng(0), N=60, target="odd", batch="fresh", **STEP_KW, term=None, top=2)
    assert "term_overlap" not in res
    with pytest.raises(TypeError, match="rng"):
        reuse_experiment(0, N=60, target="odd", batch="fresh", **STEP_KW)


def test_rescaled_alpha2_is_the_run_at_that_alpha2():
    # Same seed, alpha1 fixed: measuring W_2' = W_1 + (eta2'/eta2)(W_2 - W_1) equals training at alpha2'.
    steps = ((0.5, 0.4), (0.5, 0.25))
    res = reuse_experiment(np.random.default_rng(3), N=150, target="odd", batch="reused", **STEP_KW,
                           term=None, top=3, alpha2s=[0.05, 0.35])
    for i, a2 in enumerate([0.05, 0.35]):
        direct = reuse_experiment(np.random.default_rng(3), N=150, target="odd", batch="reused",
                                  **{**STEP_KW, "alpha2": a2}, term=None, top=3)
        np.testing.assert_allclose(res["rescaled_subspace"][i], direct["subspace"], atol=1e-8)
        np.testing.assert_allclose(res["rescaled_subspace_unmemorised"][i],
                                   direct["subspace_unmemorised"], atol=1e-8)
    with pytest.raises(ValueError, match="alpha2s"):
        reuse_experiment(np.random.default_rng(3), N=60, target="odd", batch="reused", **STEP_KW,
                         term=None, alpha2s=[0.6])
    with pytest.raises(TypeError, match="alpha2s"):
        reuse_experiment(np.random.default_rng(3), N=60, target="odd", batch="reused", **STEP_KW,
                         term=None, alpha2s=0.1)


def test_signal_overlap_cases_are_each_target_alone_bit_for_bit():
    # Targets of one rank relabel one draw of the data (the chapter's signal_data): every
    # result is signal_overlap_experiment's for that target from the same generator state.
    from twostep.experiments.reuse import signal_overlap_cases, signal_overlap_experiment
    act = ts.get_activation("poly4")
    for batch in ("both", "reused", "fresh"):
        targets = ["odd", "he3", ts.hermite_link(2)]
        got = signal_overlap_cases(np.random.default_rng(7), 90, 70, targets, batch,
                                   activation=act)["results"]
        for target, result in zip(targets, got):
            alone = signal_overlap_experiment(np.random.default_rng(7), 90, 70, target, batch,
                                              activation=act)
            flat = (lambda r: {f"{b}/{k}": v for b, sub in r.items() for k, v in sub.items()}) \
                if batch == "both" else (lambda r: r)
            assert set(flat(result)) == set(flat(alone))
            for key, value in flat(alone).items():
                np.testing.assert_array_equal(flat(result)[key], value, err_msg=key)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="same number of directions"):
        signal_overlap_cases(rng, 40, 30, ["he1", "he1+odd"], "both")
    with pytest.raises(ValueError, match="only the first target may be a Teacher"):
        signal_overlap_cases(rng, 40, 30, ["he1", ts.make_teacher("he1", 30, rng)], "both")
    with pytest.raises(TypeError, match="targets must be a non-empty sequence"):
        signal_overlap_cases(rng, 40, 30, "he1", "both")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reuse_cases_are_each_target_alone_bit_for_bit(dtype):
    # Targets of one rank on one draw (the chapter's network runs): the draw and, with both
    # batches, W0 X1^T and W0 X2^T made once; every result reuse_experiment's for that target
    # from the same generator state, exactly, with each target's own alpha2s.
    from twostep.experiments.reuse import reuse_cases, reuse_experiment
    kw = dict(N=60, c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25, top=4, dtype=dtype)
    targets, a2s = ["odd", "he3", ts.hermite_link(2)], [[0.05, 0.35], [], [0.15]]
    for batch in ("both", "reused", "fresh"):
        got = reuse_cases(np.random.default_rng(8), targets=targets, batch=batch, alpha2s=a2s,
                          **kw)["results"]
        for target, alpha2s, result in zip(targets, a2s, got):
            alone = reuse_experiment(np.random.default_rng(8), target=target, batch=batch,
                                     alpha2s=alpha2s, **kw)
            pairs = ([(result[b], alone[b]) for b in ("reused", "fresh")] if batch == "both"
                     else [(result, alone)])
            for r, a in pairs:
                assert set(r) == set(a)
                for key in a:
                    np.testing.assert_array_equal(r[key], a[key], err_msg=f"{batch} {key}")


def test_reuse_cases_rejects_bad_input():
    from twostep.experiments.reuse import reuse_cases
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="targets must be a non-empty sequence"):
        reuse_cases(rng, N=40, targets="odd")
    with pytest.raises(ValueError, match="one sequence of exponents per target"):
        reuse_cases(rng, N=40, targets=["odd", "he3"], alpha2s=[[0.1]])
    with pytest.raises(ValueError, match="same number of directions"):
        reuse_cases(rng, N=40, targets=["odd", "he1+odd"])
