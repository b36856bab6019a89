"""The package's layers: every import inside ``twostep/`` points down (or sideways within a layer).

Order, lowest first: the base modules (``_validation``, ``_version``), ``model``,
``analysis``, ``experiments``, then ``pages`` and ``scale`` side by side, and
the top-level namespace (``__init__``, ``__main__``). A page module may import the model, the
analysis and the experiments, never the scale-out, and the scale-out never imports a page;
the model imports nothing above itself. The test parses every module with
``ast`` (imports inside functions included), so it fails on an upward import before
anything runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "twostep"
LAYERS = {"_validation": 0, "_version": 0, "model": 1, "analysis": 2, "experiments": 3,
          "pages": 4, "scale": 4, "__init__": 5, "__main__": 5}
#: Layers of one level that must not import each other.
SIDE_BY_SIDE = ("pages", "scale")


def _module_name(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts


def _layer(parts: list[str]) -> int:
    if not parts:
        return LAYERS["__init__"]  # `twostep` itself
    if parts[0] not in LAYERS:
        raise AssertionError(f"twostep/{'/'.join(parts)} belongs to no layer; add it to LAYERS")
    return LAYERS[parts[0]]


def _imports(text: str, here: list[str]):
    """(line, target module parts inside twostep) for every import of the package in ``text``,
    the source of a module in the package ``twostep/<here>``."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "twostep":
                target = node.module.split(".")[1:]
            else:
                continue
            if not node.module:  # `from . import x`: x is a module of that package
                for alias in node.names:
                    yield node.lineno, target + [alias.name]
            else:
                yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "twostep":
                    yield node.lineno, alias.name.split(".")[1:]


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    assert not _upward(path.read_text(), path.relative_to(PACKAGE)), \
        f"twostep/{path.relative_to(PACKAGE)} imports upward: " + "; ".join(
            _upward(path.read_text(), path.relative_to(PACKAGE)))


def _upward(text: str, relative: Path) -> list[str]:
    here = _module_name(PACKAGE / relative)
    source = _layer(here)

    def wrong(t):
        sideways = (here and t and here[0] in SIDE_BY_SIDE and t[0] in SIDE_BY_SIDE
                    and t[0] != here[0])
        return _layer(t) > source or sideways

    return [f"line {line}: imports twostep.{'.'.join(t)}"
            for line, t in _imports(text, list(relative.parts[:-1])) if wrong(t)]


def test_every_layer_is_a_folder_and_the_checker_sees_upward_imports():
    for name in ("model", "analysis", "experiments", "pages", "scale"):
        assert (PACKAGE / name / "__init__.py").is_file(), f"twostep/{name}/ is missing"
    model = Path("model/network.py")
    assert _upward("from .hermite import gauss_nodes\nfrom .._validation import check_int\n", model) == []
    assert _upward("from ..analysis.spectra import top_singular\n", model) == [
        "line 1: imports twostep.analysis.spectra"]
    assert _upward("def f():\n    from twostep.scale import cli\n", model) == [
        "line 2: imports twostep.scale"]
    assert _upward("import twostep\n", Path("pages/reuse.py")) == ["line 1: imports twostep."]
    # the pages and the scale-out sit side by side: neither imports the other
    assert _upward("from ..pages.reuse import network_data\n", Path("scale/registry.py")) == [
        "line 1: imports twostep.pages.reuse"]
    assert _upward("from ..scale import results\n", Path("pages/at_scale.py")) == [
        "line 1: imports twostep.scale"]
    assert _upward("from ..experiments.reuse import reuse_experiment\n",
                   Path("scale/registry.py")) == []
    assert _upward("from ..pages import report\n", Path("experiments/reuse.py")) == [
        "line 1: imports twostep.pages"]
