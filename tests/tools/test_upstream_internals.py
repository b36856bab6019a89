"""Other projects' internals: only ``tools/upstream_internals.py`` reads them, and only
``tools/prf_claim.py`` changes another project's module.

The guard scans every Python file under ``tools/`` and ``tests/`` twice:

* for the internals of jupyter-book, myst-nb, sphinx-book-theme and sphinx-proof (their
  private names, their submodules, and the undocumented names the book once used), allowed
  in ``tools/upstream_internals.py`` only;
* for every module of another project that a file *touches*: an assignment, deletion or
  mutating call on an attribute or item reached from an imported third-party module
  (``proof_type.PROOF_TYPES["claim"] = ...``), or ``setattr`` / ``monkeypatch.setattr`` on
  one. The touches found must be exactly :data:`TOUCHES`, so a new one fails with its
  module named, and so does one that is gone.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The projects whose internals only tools/upstream_internals.py may read.
UPSTREAM = ("jupyter_book", "myst_nb", "sphinx_book_theme", "sphinx_proof")
INTERNALS = re.compile(
    rf"\b({'|'.join(UPSTREAM)})(\.[A-Za-z_]\w*)*\._\w+"
    rf"|from ({'|'.join(UPSTREAM)})\.[\w.]+ import"
    rf"|import ({'|'.join(UPSTREAM)})\.\w+"
    r"|mystnb_config|header_buttons|ipynb_source|get_final_config|NotebookClientCache"
    r"|create_nb_reader|format_plain_text|proof_list|get_exec_data"
)
#: Files that may read those internals, and why.
READS_INTERNALS = {
    "tools/upstream_internals.py": "the one module for the two features with no public way",
    "tests/tools/test_upstream_internals.py": "this guard names what it looks for",
}
#: Every module of another project that a file under tools/ or tests/ changes, with why.
#: Those of tools/prf_claim.py must be found (the guard sees them); the others may go.
TOUCHES = {
    # prf:claim, registered where sphinx-proof keeps its own types, before its
    # config-inited handler numbers them (tools/prf_claim.py).
    ("tools/prf_claim.py", "sphinx_proof.proof_type"): "PROOF_TYPES['claim']",
    ("tools/prf_claim.py", "sphinx_proof.domain"): "ProofDomain.directives['claim']",
    ("tools/prf_claim.py", "sphinx_proof.directive"): "DEFAULT_REALTYP_TO_COUNTERTYP['claim']",
    ("tools/prf_claim.py", "sphinx_proof.nodes"): "NODE_TYPES['claim']",
    # The book style (twostep.pages.figures.use_book_style) sets matplotlib's rcParams; these
    # tests put back the values they found.
    ("tests/pages/test_figure_checks.py", "matplotlib"): "rcParams.update(saved)",
    ("tests/pages/test_plotting.py", "matplotlib"): "rcParams.update(saved)",
}
#: Calls that change the object they are called on.
MUTATORS = {"update", "append", "extend", "insert", "setdefault", "pop", "popitem", "clear",
            "remove", "add", "discard", "__setitem__", "__delitem__"}


def _local_modules() -> set[str]:
    # Modules of this project: the package, the tools (on sys.path in the tests) and the tests.
    names = {"twostep", "tests", "conftest"}
    names |= {p.stem for p in (ROOT / "tools").glob("*.py")}
    names |= {p.stem for p in (ROOT / "tests").rglob("*.py")}
    return names


def _is_foreign(module: str, local: set[str]) -> bool:
    top = module.split(".")[0]
    return bool(top) and top not in local and top not in sys.stdlib_module_names \
        and top != "__future__"


def foreign_names(tree: ast.AST, local: set[str]) -> dict[str, str]:
    """Names bound to a module (or an object) of another project, and that module's name."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_foreign(alias.name, local):
                    bound[alias.asname or alias.name.split(".")[0]] = \
                        alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if _is_foreign(node.module, local):
                for alias in node.names:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _root(node: ast.AST):
    # The name an attribute or item chain starts from: ``a`` of ``a.b["c"].d``.
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def touched_modules(text: str, local: set[str] | None = None) -> list[tuple[int, str]]:
    """(line, module) for every change the source ``text`` makes to a module of another
    project: assignment to or deletion of an attribute or item reached from it, a mutating
    call on one (:data:`MUTATORS`), ``setattr`` or ``monkeypatch.setattr`` of it."""
    local = _local_modules() if local is None else local
    tree = ast.parse(text)
    bound = foreign_names(tree, local)
    found = []

    def check(target, line):
        if isinstance(target, (ast.Attribute, ast.Subscript)) and _root(target) in bound:
            found.append((line, bound[_root(target)]))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                       else [node.target])
            for target in targets:
                for part in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    check(part, node.lineno)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in MUTATORS:
                check(func.value, node.lineno)
            is_setattr = (isinstance(func, ast.Name) and func.id in ("setattr", "delattr")) or \
                (isinstance(func, ast.Attribute) and func.attr in ("setattr", "delattr")
                 and _root(func) not in bound)
            if is_setattr and node.args and _root(node.args[0]) in bound:
                found.append((node.lineno, bound[_root(node.args[0])]))
    return sorted(set(found))


def _python_files() -> list[Path]:
    return sorted(p for d in ("tools", "tests") for p in (ROOT / d).rglob("*.py"))


def test_the_guard_sees_every_python_file_of_tools_and_tests():
    files = {p.relative_to(ROOT).as_posix() for p in _python_files()}
    assert {"tools/prf_claim.py", "tools/upstream_internals.py", "tests/conftest.py",
            "tests/site/test_book.py", "tests/unit/test_layers.py"} <= files
    assert set(READS_INTERNALS) <= files, sorted(set(READS_INTERNALS) - files)
    assert {path for path, _ in TOUCHES if path.startswith("tools/")} <= files


def test_no_internals_outside_the_one_module():
    """No private name, submodule or undocumented name of jupyter-book, myst-nb,
    sphinx-book-theme or sphinx-proof in tools/ or tests/, except where READS_INTERNALS
    says why."""
    found = []
    for path in _python_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in READS_INTERNALS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
            if INTERNALS.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "internals outside tools/upstream_internals.py:\n" + "\n".join(found)


def test_every_touched_foreign_module_is_known(book_summary):
    local = _local_modules()
    found = {}
    for path in _python_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, module in touched_modules(path.read_text(encoding="utf8"), local):
            found.setdefault((rel, module), []).append(line)
    new = {key: lines for key, lines in found.items() if key not in TOUCHES}
    gone = sorted(key for key in TOUCHES if key[0] == "tools/prf_claim.py" and key not in found)
    assert not new, "modules of other projects changed outside the known places:\n" + "\n".join(
        f"  {path}:{lines}: {module}" for (path, module), lines in sorted(new.items()))
    assert not gone, f"known changes no longer made (remove them from TOUCHES): {gone}"
    book_summary.append("foreign modules touched: " + ", ".join(
        f"{module} ({path})" for path, module in sorted(found)))


def test_the_guard_catches_a_registry_change_like_prf_claims(tmp_path):
    # A stand-in for tools/prf_claim.py: the same kinds of change, to other registries.
    stand_in = '''
from sphinx_proof import directive, domain, proof_type
from sphinx_proof import nodes as proof_nodes
import myst_nb.core.variables as variables
from docutils import nodes

def setup(app):
    proof_type.PROOF_TYPES["lemma2"] = object
    domain.ProofDomain.directives.update({"lemma2": object})
    directive.DEFAULT_REALTYP_TO_COUNTERTYP.setdefault("lemma2", "lemma2")
    del proof_nodes.NODE_TYPES["lemma"]
    setattr(variables, "format_plain_text", str)
    variables.format_plain_text = str
    local = {}
    local["x"] = nodes      # a local dict: no module touched
'''
    found = touched_modules(stand_in, local=set())
    assert {module for _, module in found} == {
        "sphinx_proof.proof_type", "sphinx_proof.domain", "sphinx_proof.directive",
        "sphinx_proof.nodes", "myst_nb.core.variables"}, found
    assert [line for line, _ in found] == [8, 9, 10, 11, 12, 13]
    # The text scan sees the import of sphinx-proof's submodules in a file that may not.
    assert INTERNALS.search("from sphinx_proof.directive import ElementDirective")
    assert INTERNALS.search("env.proof_list[label]")
    # ... and nothing in a file that changes only its own objects or the standard library.
    assert touched_modules("import os\nos.environ['A'] = '1'\nimport numpy as np\n"
                           "x = np.zeros(3)\nx[0] = 1\n", local=set()) == []


def test_monkeypatching_another_project_is_a_touch():
    text = "import matplotlib\n\ndef test(monkeypatch):\n" \
           "    monkeypatch.setattr(matplotlib, 'use', print)\n" \
           "    monkeypatch.setattr('os.sep', '/')\n"
    assert touched_modules(text, local=set()) == [(4, "matplotlib")]


def test_upstream_internals_match_the_pins():
    """tools/upstream_internals.py is the only user of myst-nb's and
    sphinx-book-theme's internals; it must be revisited when they change."""
    pytest.importorskip("myst_nb")
    pytest.importorskip("sphinx_book_theme")
    import upstream_internals

    problems = upstream_internals.check_pins()
    assert not problems, "\n".join(problems)


def test_pins_agree_with_requirements():
    import upstream_internals

    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        name, sep, pin = line.split("#")[0].strip().partition("==")
        if sep:
            pins[name.lower()] = pin
    for dist, wanted in upstream_internals.PINNED.items():
        assert pins.get(dist) == wanted, (
            f"requirements.txt pins {dist}=={pins.get(dist)}, tools/upstream_internals.py "
            f"was written for {wanted}"
        )


def test_the_remaining_features_name_their_upstream_issues():
    import upstream_internals

    doc = upstream_internals.__doc__
    features = re.findall(r"^\d\. ", doc, re.MULTILINE)
    issues = re.findall(r"https://github\.com/executablebooks/[\w-]+/issues/\d+", doc)
    assert len(features) <= 2, "at most two features may rely on internals"
    assert len(issues) == len(features), (features, issues)
