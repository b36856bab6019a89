"""The registered confirmatory run (twostep.analysis.confirmatory): the registry holds what the
package computes, on seeds no earlier run used, and a results file of the run must name it."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from twostep.analysis import confirmatory as cf
from twostep.analysis import verdicts
from twostep.scale.results import read_results

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = ROOT / cf.REGISTRY_PATH
RESULTS = ROOT / cf.RESULTS_PATH


@pytest.fixture(scope="module")
def registry():
    return cf.read_registry(REGISTRY)


def test_registry_nstar_is_what_the_package_computes(registry):
    # N* is recomputed from the exploratory file: no number in the registry is typed.
    source = ROOT / cf.EXPLORATORY_PATH
    assert registry["nstar"]["source_sha256"] == cf.file_sha256(source)
    again = cf.exploratory_nstar(read_results(source)["records"])
    for batch in cf.BATCHES:
        stored = cf.nstar_array(registry, batch)
        np.testing.assert_allclose(np.nan_to_num(stored, nan=-1.0, posinf=-2.0),
                                   np.nan_to_num(again[batch], nan=-1.0, posinf=-2.0),
                                   rtol=1e-12)


def test_registry_holds_the_rule_and_the_plan(registry):
    rule = registry["rule"]
    assert (rule["confidence"], rule["margin"], rule["min_draws"], rule["no_spread"]) == (
        verdicts.CONFIDENCE, verdicts.MARGIN, verdicts.MIN_DRAWS, verdicts.NO_SPREAD)
    assert registry["measurement"]["params"] == cf.PARAMS
    assert {int(N): s for N, s in registry["draws"].items()} == cf.plan_seeds()
    assert registry["rows"] == {k: list(v) for k, v in cf.ROWS.items()}
    assert set(registry["tests"]) == set(cf.TESTS)


def test_registry_seeds_are_new_and_independent(registry):
    seeds = [s for N in registry["draws"].values() for s in N]
    assert len(seeds) == len(set(seeds)), "a seed drawn at two widths would share draws"
    used = set()
    for path in (ROOT / "results" / "at_scale").glob("*.json"):
        if path.resolve() != RESULTS.resolve():
            used |= {int(r["seed"]) for r in read_results(path)["records"]}
    assert used and not used & set(seeds)
    assert min(seeds) >= cf.SEED_BASE > 10 ** 5 > max(used)


def _git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_check_registered_refuses_another_registry(tmp_path, registry):
    other = tmp_path / "registry.json"
    other.write_text(json.dumps({**registry, "created": "tampered"}))
    doc = {"registry_sha256": cf.file_sha256(REGISTRY)}
    cf.check_registered(doc, REGISTRY)
    with pytest.raises(ValueError, match="not this registered run"):
        cf.check_registered(doc, other)
    with pytest.raises(ValueError, match="not this registered run"):
        cf.check_registered({}, REGISTRY)


@pytest.mark.skipif(not RESULTS.exists(), reason="the confirmatory run has not been committed")
def test_confirmatory_file_follows_the_registry(registry):
    doc = read_results(RESULTS)
    cf.check_registered(doc, REGISTRY)
    assert doc["dirty"] is False
    # The registry was committed before the run: the commit that added it is an ancestor of the
    # commit the run ran at (the tool refuses an uncommitted registry or a dirty checkout), and
    # the registry is unchanged since (its hash above).
    added = _git("log", "--diff-filter=A", "--format=%H", "--", cf.REGISTRY_PATH).splitlines()[-1]
    subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", added, doc["commit"]],
                   check=True)
    assert not _git("log", "--format=%H", f"{added}..HEAD", "--", cf.REGISTRY_PATH)
    plan = {int(N): set(s) for N, s in registry["draws"].items()}
    for r in doc["records"]:
        assert r["seed"] in plan[r["N"]]
