"""tools/ has no import cycle.

An edge ``a -> b`` is any way module ``a`` of tools/ makes ``b`` run: ``import b`` or
``from b import x`` anywhere in ``a`` (a function's imports too), or ``app.setup_extension("b")``
(Sphinx imports ``b`` when ``a``'s extension is set up). The graph is read from the sources with
``ast`` (``bookcache.tool_graph``, which also tells the build's tools apart for its fingerprint);
nothing is imported.
"""

from __future__ import annotations

from pathlib import Path

import bookcache

ROOT = Path(__file__).resolve().parents[2]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of the graph once, as the modules along it (starting at its smallest name,
    ending where it started)."""
    found = set()

    def walk(path: list[str]) -> None:
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == path[0]:
                found.add(tuple(path + [nxt]))
            elif nxt not in path and nxt > path[0]:
                walk(path + [nxt])

    for start in sorted(graph):
        walk([start])
    return sorted(map(list, found))


def test_tools_has_no_import_cycle():
    graph = bookcache.tool_graph(ROOT / "tools")
    assert "bookcache" in graph and "nbchapters" in graph, sorted(graph)
    found = cycles(graph)
    assert not found, "import cycles in tools/:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_build_sets_up_every_extension_from_one_entry():
    graph = bookcache.tool_graph(ROOT / "tools")
    assert {"bookcache", "code_downloads", "figure_downloads", "upstream_internals", "prf_claim",
            "alt_text", "legibility", "links", "runtime"} <= graph["bookbuild"]
    assert not any("bookbuild" in imported for imported in graph.values())


def test_a_made_up_cycle_is_found(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    # a -> b through a function's import, b -> c at the top, c -> a through setup_extension;
    # d only imports (no cycle through it), e imports itself (not an edge).
    (tools / "a.py").write_text("def f():\n    import b\n    return b\n")
    (tools / "b.py").write_text("from c import setup as _\nimport os\n")
    (tools / "c.py").write_text("def setup(app):\n    app.setup_extension('a')\n")
    (tools / "d.py").write_text("import a\nimport b.sub\n")
    (tools / "e.py").write_text("import e\n")
    graph = bookcache.tool_graph(tools)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "b"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    # Two modules importing each other; and no cycle once the edge back is gone.
    assert cycles({"x": {"y"}, "y": {"x"}}) == [["x", "y", "x"]]
    (tools / "c.py").write_text("def setup(app):\n    app.setup_extension('sphinx_proof')\n")
    assert cycles(bookcache.tool_graph(tools)) == []
