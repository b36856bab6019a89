"""The API reference: every name of ``twostep.__all__`` has a numpydoc docstring with its
parameters, what it returns, and an example, and every example runs (doctest).

The book's page "API reference" (``book/api.md``) shows these docstrings (Sphinx autodoc
and napoleon); the examples run here, in the unit tests.
"""

from __future__ import annotations

import doctest
import inspect
import sys

import numpy as np
import pytest

import twostep

NAMES = list(twostep.__all__)
#: Constants of the namespace, and the module whose docstring gives their example.
CONSTANTS = {"BATCHES": "twostep.model.steps"}


def _documented(name: str):
    # The object whose docstring documents ``name``.
    obj = getattr(twostep, name)
    if callable(obj):
        return obj
    assert name in CONSTANTS, f"{name}: a constant of the namespace missing from CONSTANTS"
    return sys.modules[CONSTANTS[name]]


def test_the_namespace_holds_names_not_subpackages():
    assert not [n for n in NAMES if inspect.ismodule(getattr(twostep, n))]
    assert {"run_two_steps", "Teacher", "BATCHES", "spike_experiment"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_docstring_has_parameters_returns_and_an_example(name):
    obj = getattr(twostep, name)
    doc = inspect.getdoc(_documented(name)) or ""
    assert ">>>" in doc, f"{name}: no example"
    if not callable(obj):
        return
    if inspect.signature(obj).parameters:
        assert "Parameters\n----------" in doc, f"{name}: no Parameters section"
    if not inspect.isclass(obj):
        assert "Returns\n-------" in doc, f"{name}: no Returns section"


@pytest.mark.parametrize("name", NAMES)
def test_examples_run(name):
    tests = doctest.DocTestFinder(recurse=False).find(_documented(name), name, globs={})
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with np.printoptions(legacy=False):
        results = [runner.run(t, out=lambda text: None) for t in tests]
    attempted = sum(r.attempted for r in results)
    failed = sum(r.failed for r in results)
    assert attempted, f"{name}: no example ran"
    assert not failed, f"{name}: {failed} of {attempted} examples failed (run python -m " \
                       f"doctest -v on its module to see them)"


def test_a_wrong_example_fails():
    def stand_in():
        """
        >>> 1 + 1
        3
        """
    (test,) = doctest.DocTestFinder().find(stand_in, "stand_in", globs={})
    assert doctest.DocTestRunner().run(test, out=lambda text: None).failed == 1


def test_the_api_page_documents_every_name():
    import re
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "book" / "api.md").read_text(encoding="utf8")
    listed = re.findall(r"\.\. auto(?:function|class|data):: (?:twostep\.model\.steps\.)?(\w+)",
                        page)
    assert sorted(listed) == sorted(NAMES), (sorted(set(NAMES) - set(listed)),
                                            sorted(set(listed) - set(NAMES)))
