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
    with pytest.raises(MemoryError, match="memory available now|RLIMIT_AS|cgroup"):
        check_memory("spike", [{"N": 10 ** 7}])
    with pytest.raises(MemoryError, match="2 task"):
        check_memory("two_steps", [{"N": 2000}], 2, max_memory=1.5 * estimate_bytes(
            "two_steps", {"N": 2000}))
    with pytest.raises(ValueError, match="dtype must be one of"):
        estimate_bytes("two_steps", {"N": 10, "dtype": "float16"})
    with pytest.raises(ValueError, match="N must be an integer"):
        estimate_bytes("two_steps", {"N": 0})


# --------------------------------------------------------------------------- the chapter's single draws
# (twostep.experiments.spikes; their tables and figures are in tests/pages/test_chapter_two_steps.py)

from twostep import count_outliers, n_spikes, rng_for, second_step_terms  # noqa: E402
from twostep.analysis.spikes import term_diagnostics  # noqa: E402
from twostep.experiments import spikes as ex  # noqa: E402

C, REF = 0.2, (0.4, 0.25)
SETTINGS = [(0.2, 0.2), (0.3, 0.3), (0.4, 0.25), (0.45, 0.3)]
RUN = dict(activation="poly4", target="he1", c1=C, alpha1=REF[0], c2=C, alpha2=REF[1])


def test_decomposition_check_is_exact_and_matches_direct_computation():
    out = ex.decomposition_check(rng_for(0), N=24, **RUN)
    run = run_two_steps(24, 24, 24, get_activation("poly4"), get_link("he1"),
                        ((C, REF[0]), (C, REF[1])), "fresh", rng_for(0))
    D = run.W2 - run.W1
    direct = np.linalg.norm(sum(second_step_terms(run)) - D) / np.linalg.norm(D)
    assert out["sum_error"]["fresh"] == pytest.approx(direct)
    assert max(out["sum_error"].values()) < 1e-10
    assert out["scale_error"] < 1e-10 and out["w2_error"] < 1e-10
    with pytest.raises(ValueError, match="activation"):
        ex.decomposition_check(rng_for(0), N=24, activation="tanh")


def test_one_draw_memorised_pair_matches_direct_computation():
    mem = ex.one_draw(rng_for(0), N=40, batch="reused", settings=SETTINGS[:1], **RUN)
    run = run_two_steps(40, 40, 40, get_activation("poly4"), get_link("he1"),
                        ((C, REF[0]), (C, REF[1])), "reused", rng_for(0), dtype=np.float32)
    diag = term_diagnostics(run, vectors=True)
    assert mem["loc"] == pytest.approx(np.abs(diag["U"][3]).max(), rel=1e-5)
    assert mem["cos"] == pytest.approx(diag["memorisation"][3], rel=1e-5)
    assert 0 <= mem["rank_P"] <= 1 and 0 <= mem["rank_y"] <= 1
    assert mem["dsigma"] == pytest.approx(float(get_activation("poly4").derivative(mem["P"], 1)))
    assert mem["spec"][0]["sv2"].shape == mem["spec"][0]["sv_lin"].shape == (40,)


def test_one_draw_shapes_and_counts():
    spectra = ex.one_draw(rng_for(0), N=40, settings=SETTINGS, **RUN)
    assert len(spectra["spec"]) == len(SETTINGS)
    for s, (a1, a2) in zip(spectra["spec"], SETTINGS):
        assert s["sv2"].shape == (40,) and s["sv1"].shape == (6,) and s["learned"].shape == (8,)
        assert s["sizes"].shape == (4,) and s["strengths"].shape == (4,)
        assert s["lam"] == n_spikes(a1, a2, 4)
        assert s["n2"] == count_outliers(s["sv2"], 2.0)
        assert np.all(np.diff(s["strengths"]) <= 1e-12)
    assert spectra["U"].shape == (4, 40) and spectra["a"].shape == (40,)
    assert 0 <= spectra["second_cos_a2"] <= 1 + 1e-9


def test_power_components_per_activation():
    out = {name: ex.power_components(rng_for(0), N=24, activation=name, powers=6)
           for name in ("poly2", "poly4", "tanh")}
    for a in out.values():
        assert a["measured"].shape == a["predicted"].shape == a["null"].shape == (6,)
        assert np.allclose(a["ratio"], a["measured"] / a["null"])
    assert out["poly2"]["terms"] == [1]
    assert 1 not in out["tanh"]["terms"]          # mu_2 = 0 for an odd activation
    assert out["tanh"]["degree"] is None or out["tanh"]["degree"] == 0
