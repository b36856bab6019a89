"""How the book is built, and how its executed outputs are kept honest.

The jupyter cache (``_build/.jupyter_cache``, myst-nb's ``cache`` execution
mode) keys each chapter on its own code cells only. A chapter that calls into
``twostep`` would keep showing outputs of an older ``twostep`` after the package
changes, so each chapter also has a fingerprint of what its outputs depend on
(:func:`chapter_fingerprints`: the package files its code runs, followed through their
imports, ``requirements.txt``, ``pyproject.toml``, the files under ``results/``, the
``execute:`` settings, the interpreter and the installed versions), and its cache records
are removed when that fingerprint moves. What only changes the rendering (``_toc.yml``, the
rest of ``_config.yml``, the ``tools/`` modules the build imports) re-executes nothing:
Sphinx re-reads every page when :func:`source_hash`, the fingerprint of all inputs, moves.

It also finishes the pages for their readers (see ``setup``): each executed
chapter in its page's download menu, the package itself (a wheel) and the pins a
reader needs, offered by the site, plain-text alt text for every figure, launch
buttons only when the repository's URL is set, no script that would load from a
third-party server, glued numpy scalars formatted as numbers, a ``prf:claim``
directive and a ``{chapter}`` role. What of this needs internals of myst-nb or
sphinx-book-theme (the download menu, Colab's button, glued numpy scalars) is in
``tools/upstream_internals.py``, the one module allowed to use them.

One module, three users, so each rule is written once:

* Sphinx loads it as an extension (``sphinx: local_extensions`` in
  ``_config.yml``), so even a bare ``jupyter-book build`` honours the rule;
* the test run: nbmake's chapter items (``tools/nbchapters.py``) call
  ``ensure_fresh_cache`` before executing chapters into the same cache, and the
  build test (``tests/test_book.py``) calls ``strict_build`` after;
* ``tools/dev.py book`` calls ``strict_build``.

Stdlib only at import time: ``tools/dev.py`` imports it before the venv exists.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE_DIRNAME = ".jupyter_cache"
STAMP_SUFFIX = ".source-hash"
# -n: unresolved references are warnings; -W: warnings fail the build;
# --keep-going: report every warning, not only the first.
BUILD_ARGS = ["build", ".", "-n", "-W", "--keep-going"]
BUILD_LOG = Path("_build") / "build.log"
FAILED_MARKER = Path("_build") / ".last-build-failed"
REPORTS = Path("_build") / "html" / "reports"
# jupyter-book colours its output even when it goes to a pipe.
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


#: Files at the root that the build reads: the book's configuration, its table of contents,
#: the package's metadata (the wheel offered for download, its pins).
ROOT_INPUTS = ("requirements.txt", "_config.yml", "_toc.yml", "pyproject.toml")
#: The tools/ modules the build imports (Sphinx extensions: this one and what it sets up).
BUILD_TOOLS = ("bookbuild.py", "upstream_internals.py", "prf_claim.py", "figure_downloads.py")


def input_files(root: Path) -> list[Path]:
    """Every file outside a chapter that its outputs depend on, in a fixed order: the package
    sources, :data:`ROOT_INPUTS`, the :data:`BUILD_TOOLS` and every file under ``results/``
    (a chapter that reads one, the appendix "At scale", must be executed again when a run
    rewrites it)."""
    root = Path(root)
    results = root / "results"
    return (sorted((root / "twostep").rglob("*.py")) + [root / name for name in ROOT_INPUTS]
            + [root / "tools" / name for name in BUILD_TOOLS]
            + sorted(p for p in results.rglob("*") if p.is_file()
                     and not p.name.endswith(".tmp") and "__pycache__" not in p.parts))


def environment_fingerprint() -> str:
    """The interpreter and every installed distribution with its version (the landing page
    prints them; an upgrade can change any output)."""
    from importlib import metadata

    dists = sorted({f"{(d.metadata['Name'] or '?').lower()}=={d.version}"
                    for d in metadata.distributions()})
    return "\n".join([sys.version, sys.platform] + dists)


def source_hash(root: Path) -> str:
    """Fingerprint of everything outside a chapter that its outputs depend on
    (:func:`input_files` and :func:`environment_fingerprint`)."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in input_files(root):
        if not path.is_file():
            continue
        # The path goes in too, so renaming or moving a module counts as a change.
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    digest.update(environment_fingerprint().encode())
    return digest.hexdigest()


def default_cache_dir(root: Path) -> Path:
    return Path(root) / "_build" / CACHE_DIRNAME


def stamp_path(cache_dir: Path) -> Path:
    # Beside the cache, not inside it: clearing the cache must not lose the stamp.
    cache_dir = Path(cache_dir)
    return cache_dir.with_name(cache_dir.name + STAMP_SUFFIX)


# --- what a chapter's outputs depend on: its own fingerprint -----------------------------

#: Root files that change what a chapter computes. The others of :data:`ROOT_INPUTS`
#: (``_config.yml`` but for its ``execute:`` block, ``_toc.yml``) and the :data:`BUILD_TOOLS`
#: change only how pages are rendered: Sphinx re-reads the pages, nothing is executed again.
RESULT_INPUTS = ("requirements.txt", "pyproject.toml")


def execute_settings(root: Path) -> str:
    """The ``execute:`` block of ``_config.yml`` (myst-nb's execution settings: a timeout or
    ``allow_errors`` changes what a chapter's run gives), as text."""
    lines = (Path(root) / "_config.yml").read_text().splitlines()
    block, inside = [], False
    for line in lines:
        if re.match(r"^\S", line):
            inside = line.startswith("execute:")
        if inside and line.strip() and not line.lstrip().startswith("#"):
            block.append(line.rstrip())
    return "\n".join(block)


def _module_imports(path: Path, name: list[str]) -> set[str]:
    # Dotted names of the twostep modules a module imports (functions' imports included).
    import ast

    package = name if path.name == "__init__.py" else name[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "twostep":
                target = node.module.split(".")
            else:
                continue
            found.add(".".join(target))
            found.update(".".join(target + [alias.name]) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names
                         if alias.name.split(".")[0] == "twostep")
    return found


def package_graph(root: Path) -> dict[str, tuple[Path, set[str]]]:
    """``{"twostep.x.y": (file, imported twostep modules)}`` for every module of the package."""
    package = Path(root) / "twostep"
    graph = {}
    for path in sorted(package.rglob("*.py")):
        parts = ["twostep", *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        graph[".".join(parts)] = (path, _module_imports(path, parts))
    return graph


def code_cells(text: str) -> list[str]:
    """The code of a MyST notebook's ``{code-cell}`` blocks (cell options and magics left out)."""
    cells, current = [], None
    for line in text.splitlines():
        if current is None:
            if re.match(r"^`{3,}\{code-cell\}", line):
                current = []
        elif re.match(r"^`{3,}\s*$", line):
            cells.append("\n".join(current))
            current = None
        elif not re.match(r"^(:\w[\w-]*:|%|!)", line):
            current.append(line)
    return cells


def chapter_files(root: Path, docname: str, graph: dict | None = None) -> list[Path]:
    """The package files a chapter's code runs: every module its cells import, the modules
    those import, and so on, with the packages above each (importing ``twostep.a.b`` runs
    ``twostep/__init__.py`` and ``twostep/a/__init__.py``)."""
    import ast

    graph = package_graph(root) if graph is None else graph
    wanted = set()
    for cell in code_cells((Path(root) / f"{docname}.md").read_text(encoding="utf8")):
        for node in ast.walk(ast.parse(cell)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "twostep":
                wanted.add(node.module)
                wanted.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                wanted.update(a.name for a in node.names if a.name.split(".")[0] == "twostep")
    seen, todo = set(), [w for w in wanted if w in graph]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [m for m in graph[name][1] | set(parents) if m in graph and m not in seen]
    return sorted(graph[name][0] for name in seen)


def toc_chapters(root: Path) -> list[str]:
    """The docnames of ``_toc.yml``: its ``root`` and every ``file``, in order."""
    text = (Path(root) / "_toc.yml").read_text()
    return re.findall(r"^\s*(?:root|-\s*file):\s*(\S+)", text, re.M)


def chapter_fingerprints(root: Path) -> dict[str, str]:
    """``{docname: fingerprint}`` of every chapter: the files its code runs
    (:func:`chapter_files`), :data:`RESULT_INPUTS`, the files under ``results/``, the
    ``execute:`` settings and the installed distributions. A chapter's cached outputs are kept
    while its fingerprint stays; a page's prose, ``_toc.yml`` or the build's tools are not in
    it, and an edit to one page's module moves the fingerprints of the chapters that import it."""
    root = Path(root)
    graph = package_graph(root)
    shared = hashlib.sha256()
    results = root / "results"
    for path in ([root / name for name in RESULT_INPUTS]
                 + sorted(p for p in results.rglob("*") if p.is_file()
                          and not p.name.endswith(".tmp") and "__pycache__" not in p.parts)):
        if path.is_file():
            shared.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    shared.update(execute_settings(root).encode() + b"\0" + environment_fingerprint().encode())
    out = {}
    for docname in toc_chapters(root):
        digest = shared.copy()
        if (root / f"{docname}.md").is_file():
            for path in chapter_files(root, docname, graph):
                digest.update(path.relative_to(root).as_posix().encode() + b"\0"
                              + path.read_bytes() + b"\0")
        out[docname] = digest.hexdigest()
    return out


def docname_of_uri(root: Path, uri: str) -> str:
    """The docname (``book/one_step``) of a cache record's source path."""
    path = Path(uri)
    if not path.is_absolute():
        path = Path(root) / path
    try:
        return path.resolve().relative_to(Path(root).resolve()).with_suffix("").as_posix()
    except ValueError:
        return uri


def _forget(root: Path, cache_dir: Path, docnames) -> int:
    # Remove the cache records of these chapters (jupyter-cache's public API).
    from jupyter_cache import get_cache

    cache, removed = get_cache(str(cache_dir)), 0
    for record in cache.list_cache_records():
        if docname_of_uri(root, record.uri) in docnames:
            cache.remove_cache(record.pk)
            removed += 1
    return removed


def ensure_fresh_cache(root: Path, cache_dir: Path | None = None) -> bool:
    """Keep each chapter's cached outputs only while its fingerprint
    (:func:`chapter_fingerprints`) is the one they were made with.

    The stamp beside the cache holds the fingerprints. Without a readable stamp the whole cache
    is emptied; otherwise the records of the chapters whose fingerprint moved are removed.
    Returns True when anything was removed (or the cache had no stamp yet).
    """
    import json

    root = Path(root)
    cache_dir = Path(cache_dir) if cache_dir else default_cache_dir(root)
    stamp = stamp_path(cache_dir)
    current = chapter_fingerprints(root)
    try:
        previous = json.loads(stamp.read_text())
    except (OSError, ValueError):
        previous = None
    if previous == current:
        return False
    stale = ([] if not isinstance(previous, dict) else
             sorted(d for d in current if previous.get(d) != current[d]))
    if not isinstance(previous, dict):
        shutil.rmtree(cache_dir, ignore_errors=True)
    elif stale and (cache_dir / "global.db").is_file():
        _forget(root, cache_dir, set(stale))
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    return not isinstance(previous, dict) or bool(stale)


def strict_build(root: Path, jupyter_book: str, *, force_all=False, echo=False):
    """Run the strict HTML build; return (exit code, full log text).

    Sphinx re-emits a page's warnings only when it re-reads that page, so after
    a failed build the next one re-reads everything (``--all``); otherwise a
    second run over an unchanged, broken page would pass.
    """
    root = Path(root)
    # myst-nb writes a report per failing chapter but never removes old ones.
    shutil.rmtree(root / REPORTS, ignore_errors=True)
    marker = root / FAILED_MARKER
    args = [jupyter_book, *BUILD_ARGS]
    if force_all or marker.exists():
        args.append("--all")
    proc = subprocess.Popen(
        args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if echo:
            print(line, end="", flush=True)
    code = proc.wait()
    log = ANSI.sub("", "".join(lines))
    (root / BUILD_LOG).parent.mkdir(parents=True, exist_ok=True)
    (root / BUILD_LOG).write_text(" ".join(args) + "\n" + log)
    if code:
        marker.touch()
    else:
        marker.unlink(missing_ok=True)
    return code, log


# --- Sphinx extension -------------------------------------------------------

_ENV_ATTR = "twostep_source_hash"


# --- the code in hand: the package and its pins, downloadable from the site ----------

# Where the built site offers the package (a wheel) and the pins a reader needs.
CODE_DOWNLOADS = Path("_downloads") / "code"
# The results files of the at-scale appendix, offered beside the package.
RESULTS = Path("results") / "at_scale"
# The landing page's section that tells a reader how to install and run them (page, id).
HOW_TO_RUN = ("book/index", "reading-and-re-running-it-yourself")
# What running a downloaded chapter notebook needs, pinned as requirements.txt pins
# them: the numerics, a kernel, myst-nb (the chapters glue their numbers with it; it
# brings Sphinx, pinned too) and JupyterLab with jupytext (its extension opens a
# chapter's .md as a notebook). jupyterlab-myst 2.7.0, the latest, needs
# @jupyter/ydoc 3 and JupyterLab 4.6 has 4, so Lab would not load it (README).
READER_PACKAGES = ("numpy", "scipy", "matplotlib", "joblib", "threadpoolctl", "tqdm",
                   "array-api-compat", "ipykernel", "nbclient", "nbformat", "myst-nb",
                   "myst-parser", "sphinx", "jupyterlab", "jupytext")


def pins(root: Path) -> dict[str, str]:
    """``name == version`` of every pinned line of requirements.txt (names lower-cased)."""
    found = {}
    for line in (Path(root) / "requirements.txt").read_text().splitlines():
        name, sep, pin = line.split("#")[0].strip().partition("==")
        if sep:
            found[name.strip().lower()] = pin.strip()
    return found


def reader_requirements(root: Path) -> str:
    """The requirements.txt a reader gets from the site: the repository's pins of
    ``READER_PACKAGES`` (a package missing from requirements.txt is an error)."""
    have = pins(root)
    missing = [name for name in READER_PACKAGES if name not in have]
    if missing:
        raise ValueError(f"requirements.txt pins none of {missing} (bookbuild.READER_PACKAGES)")
    lines = ["# What running the book's notebooks needs, pinned as the book was built.",
             "# python -m venv .venv && .venv/bin/pip install -r requirements.txt twostep-*.whl",
             "# then: .venv/bin/jupyter lab chapter.ipynb"]
    return "\n".join(lines + [f"{name}=={have[name]}" for name in READER_PACKAGES]) + "\n"


def wheel_name(root: Path) -> str:
    """The file name of the (pure-Python) wheel of the package in ``root``."""
    import tomllib

    project = tomllib.loads((Path(root) / "pyproject.toml").read_text())["project"]
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return f"{name}-{project['version']}-py3-none-any.whl"


def build_code_downloads(root: Path, outdir: Path, python: str = sys.executable) -> list[Path]:
    """Build the wheel of ``twostep`` and the reader's requirements.txt into
    ``outdir/_downloads/code``, with a copy of each results file; return the files.

    Built from a copy of the package (pip builds in the tree it is given, leaving
    ``build/`` and ``*.egg-info`` behind), with the environment's setuptools and no
    network (``--no-build-isolation``).
    """
    root, target = Path(root), Path(outdir) / CODE_DOWNLOADS
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(root / "twostep", src / "twostep",
                        ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, src / name)
        proc = subprocess.run(
            [python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
             "--quiet", "--wheel-dir", str(target), str(src)],
            capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"building the twostep wheel failed:\n{proc.stdout}{proc.stderr}")
    wheel = target / wheel_name(root)
    if not wheel.is_file():
        raise RuntimeError(f"pip built {[p.name for p in target.iterdir()]}, not {wheel.name}")
    requirements = target / "requirements.txt"
    requirements.write_text(reader_requirements(root))
    # The appendix's results files, which its notebook reads from the folder it runs in.
    results = [shutil.copy2(path, target / path.name) for path in results_files(root)]
    return [wheel, requirements, *map(Path, results)]


def results_files(root: Path) -> list[Path]:
    """The committed results files (``results/at_scale/*.json``) that the site offers."""
    return sorted((Path(root) / RESULTS).glob("*.json"))


def _code_downloads(app) -> None:
    if app.builder.format != "html":
        return
    files = build_code_downloads(Path(app.srcdir), Path(app.outdir))
    from sphinx.util import logging

    logging.getLogger(__name__).info(
        "[bookbuild] the package for readers: " + ", ".join(
            f"{CODE_DOWNLOADS.as_posix()}/{f.name}" for f in files))


def _site_download_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{site-download}`wheel``` or ``{site-download}`title <requirements>```: a link to
    the package's wheel, the reader's requirements.txt or a results file (by its name
    without ``.json``: ``{site-download}`spike```), as the site offers them."""
    from docutils import nodes

    env = inliner.document.settings.env
    match = re.fullmatch(r"\s*(.*?)\s*<\s*(\w+)\s*>\s*", text, re.DOTALL)
    title, target = (match.group(1), match.group(2)) if match else (None, text.strip())
    files = {"wheel": wheel_name(Path(env.srcdir)), "requirements": "requirements.txt",
             **{path.stem: path.name for path in results_files(Path(env.srcdir))}}
    if target not in files:
        message = inliner.reporter.warning(
            f"site-download: {target!r} is none of {sorted(files)}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    uri = "../" * env.docname.count("/") + (CODE_DOWNLOADS / files[target]).as_posix()
    label = nodes.literal(files[target], files[target]) if not title else nodes.Text(title)
    node = nodes.reference(rawtext, "", label, refuri=uri, classes=["site-download"])
    return [node], []


def cache_dir_of(app) -> Path:
    # myst-nb's documented setting (Jupyter Book's ``execute: cache:``); empty
    # means Jupyter Book's default, ``_build/.jupyter_cache``.
    configured = app.config["nb_execution_cache_path"]
    if configured:
        return Path(configured).resolve()
    return Path(app.outdir).parent.joinpath(CACHE_DIRNAME).resolve()


def _on_builder_inited(app) -> None:
    from sphinx.util import logging

    root = Path(app.srcdir)
    cache_dir = cache_dir_of(app)
    if ensure_fresh_cache(root, cache_dir):
        logging.getLogger(__name__).info(
            f"[bookbuild] new or changed twostep sources: emptied {cache_dir}"
        )
    app.twostep_source_hash = source_hash(root)
    # A citation cited twice renders as "[2](1,2)" with docutils' back-links: the
    # bibliography lists references, the citing sentences link to them.
    app.env.settings["footnote_backlinks"] = False
    _code_downloads(app)


def _on_env_get_outdated(app, env, added, changed, removed):
    # Emptying the cache is not enough: Sphinx keeps the doctrees of unchanged
    # pages, outputs included, and would not execute them again. Re-read every
    # page when the doctrees were made from other sources.
    if getattr(env, _ENV_ATTR, None) == app.twostep_source_hash:
        return []
    setattr(env, _ENV_ATTR, app.twostep_source_hash)
    return sorted(env.found_docs - added - changed - removed)


# --- plain-text alt text ---------------------------------------------------------

_GREEK = {name: chr(code) for name, code in (
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("epsilon", 0x3B5),
    ("varepsilon", 0x3B5), ("zeta", 0x3B6), ("eta", 0x3B7), ("theta", 0x3B8), ("vartheta", 0x3D1),
    ("iota", 0x3B9), ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC), ("nu", 0x3BD),
    ("xi", 0x3BE), ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4),
    ("upsilon", 0x3C5), ("phi", 0x3C6), ("varphi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8),
    ("omega", 0x3C9), ("Gamma", 0x393), ("Delta", 0x394), ("Theta", 0x398), ("Lambda", 0x39B),
    ("Xi", 0x39E), ("Pi", 0x3A0), ("Sigma", 0x3A3), ("Phi", 0x3A6), ("Psi", 0x3A8),
    ("Omega", 0x3A9))}
_SYMBOLS = {
    "top": "ᵀ", "star": "⋆", "ast": "*", "times": "×", "cdot": "·", "cdots": "…", "ldots": "…",
    "dots": "…", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "approx": "≈", "sim": "~", "asymp": "≍", "propto": "∝", "infty": "∞", "to": "→",
    "rightarrow": "→", "mapsto": "↦", "in": "∈", "pm": "±", "mp": "∓", "circ": "∘", "ell": "ℓ",
    "partial": "∂", "nabla": "∇", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋",
    "lceil": "⌈", "rceil": "⌉", "|": "‖", "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|",
    "rvert": "|", "vert": "|", "mid": "|", "perp": "⊥", "sum": "Σ", "prod": "∏", "int": "∫",
    "ll": "≪", "gg": "≫", "equiv": "≡", "otimes": "⊗", "odot": "⊙", "setminus": "∖",
    "emptyset": "∅", "prime": "′", "angle": "∠", "%": "%", "&": "&", "#": "#", "_": "_", "{": "(", "}": ")",
    ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "quad": " ", "qquad": " ",
}
# Commands that only size or space things: dropped, their argument (if any) kept.
_DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
            "biggl", "biggr", "displaystyle", "textstyle", "limits", "nolimits", "boldsymbol",
            "mathbf", "mathrm", "mathit", "mathsf", "mathtt", "mathcal", "text", "textrm",
            "textit", "textbf", "operatorname", "hat", "widehat", "tilde", "widetilde", "bar",
            "overline", "vec", "mathbb", "bm", "ensuremath", "rm", "it", "bf", "cal", "sf", "tt"}
_BLACKBOARD = {"R": "ℝ", "E": "E", "N": "ℕ", "Z": "ℤ", "P": "P"}
_SUPER = str.maketrans("0123456789+-=()abdeiklmnptT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᵈᵉⁱᵏˡᵐⁿᵖᵗᵀ")
_SUB = str.maketrans("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


def _group(tex: str, i: int) -> tuple[str, int]:
    """The TeX argument at ``tex[i:]`` (a braced group, a command or one character)."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth, j = 0, i
        while j < len(tex):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
            j += 1
        return tex[i + 1:], len(tex)
    if tex[i] == "\\":
        match = _COMMAND.match(tex, i)
        return match.group(0), match.end()
    return tex[i], i + 1


def latex_to_plain(tex: str) -> str:
    r"""A short plain-text reading of inline TeX, for alt text: Greek letters and common
    symbols as Unicode, simple sub- and superscripts as Unicode scripts, fractions as
    ``a/b``, sizing and font commands dropped: ``\mu_1 a v^\top`` gives "μ₁ a vᵀ",
    ``\mathbb E[g(z)\,z]`` "E[g(z) z]", ``\frac{\alpha_2}{1/2-\alpha_1}`` "α₂/(1/2−α₁)".
    The result holds no backslash, dollar sign or brace.
    """
    out, i = [], 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            match = _COMMAND.match(tex, i)
            name, i = match.group(1), match.end()
            if name in _GREEK:
                out.append(_GREEK[name])
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            elif name in ("frac", "dfrac", "tfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                num, den = latex_to_plain(num), latex_to_plain(den)
                wrap = lambda t: t if re.fullmatch(r"[\w.′ᵀ⋆⁰-⁹₀-₉]+", t) else f"({t})"
                out.append(f"{wrap(num)}/{wrap(den)}")
            elif name == "sqrt":
                arg, i = _group(tex, i)
                arg = latex_to_plain(arg)
                out.append("√" + (arg if len(arg) == 1 else f"({arg})"))
            elif name == "mathbb":
                arg, i = _group(tex, i)
                out.append("".join(_BLACKBOARD.get(c, c) for c in latex_to_plain(arg)))
            elif name in _DROPPED:
                continue  # its argument, if any, is read next as ordinary text
            else:
                # \log, \min, \cos, an unknown name: the word itself, apart from what follows.
                following = _COMMAND.match(tex, i) if tex[i:i + 1] == "\\" else None
                spaced = tex[i:i + 1].isalpha() or tex[i:i + 1] == "{" or bool(
                    following and following.group(1).isalpha() and following.group(1) not in _DROPPED)
                out.append(name + (" " if spaced else ""))
        elif ch in "^_":
            arg, i = _group(tex, i + 1)
            arg = latex_to_plain(arg).strip()
            table = _SUPER if ch == "^" else _SUB
            if arg in ("ᵀ", "⋆", "′", "*"):
                out.append(arg)
            elif arg and all(c in "".join(chr(k) for k in table) for c in arg):
                out.append(arg.translate(table))
            else:
                out.append(("^" if ch == "^" else "_") + (arg if len(arg) == 1 else f"({arg})"))
        elif ch in "{}$":
            i += 1
        elif ch == "~":
            out.append(" ")
            i += 1
        elif ch == "-":
            out.append("\u2212")
            i += 1
        else:
            out.append(ch)
            i += 1
    text = "".join(out)
    # Space around relations as a reader would say them; no doubled spaces.
    text = re.sub(r"\s*([=<>≤≥≈≠→])\s*", r" \1 ", text)
    return re.sub(r"\s+", " ", text).strip()


_ABBREVIATIONS = re.compile(r"(?:e\.g|i\.e|cf|vs|Fig|Figs|Eq|Eqs|Sec|al|resp|approx|No)\.$")
ALT_MAX = 250


def plain_alt_text(text: str) -> str:
    """Alt text from a caption already made plain (math converted): its first sentence,
    or the first two when the first is very short, at most ``ALT_MAX`` characters."""
    text = " ".join(text.split())
    sentences, start = [], 0
    for match in re.finditer(r"[.!?](?=\s+[A-Z(\u0391-\u03a9])", text):
        candidate = text[start:match.end()]
        if _ABBREVIATIONS.search(candidate):
            continue
        sentences.append(candidate.strip())
        start = match.end()
        if sum(map(len, sentences)) >= 40:
            break
    else:
        sentences.append(text[start:].strip())
    alt = " ".join(s for s in sentences if s)
    if len(alt) > ALT_MAX:
        alt = alt[:ALT_MAX].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    # Whatever TeX survived (an unknown command, stray markup): never in alt text.
    return re.sub(r"\s+", " ", alt.replace("\\", "").replace("$", "")).strip()


def _plain_text_of(node) -> str:
    """A node's text with its inline math read as plain text (``latex_to_plain``)."""
    from docutils import nodes

    if isinstance(node, nodes.math):
        return latex_to_plain(node.astext())
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_plain_text_of(child) for child in node.children)


def _figure_alt_text():
    """A post-transform giving every figure's image plain-text alt text.

    Chapter figures are cell outputs (``mystnb: figure: caption``) or
    ``{glue:figure}``; neither sets ``alt`` unless the directive gives ``:alt:``.
    An explicit alt is kept (read as plain text if it holds TeX); otherwise the
    alt is the caption's first sentence with its math read as plain text
    (``latex_to_plain``), so a screen reader never reads raw LaTeX. Runs after
    myst-nb has turned outputs into images (priority 4) and filled in glued
    values (priority 5), so the alt text carries the caption's numbers. An image
    outside a captioned figure keeps whatever alt it has; the browser tests flag
    it if it has none.
    """
    from docutils import nodes
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class FigureAltText(SphinxPostTransform):
        default_priority = 300

        def run(self, **kwargs):
            for image in self.document.findall(nodes.image):
                given = image.get("alt", "").strip()
                if given:
                    if "\\" in given or "$" in given:
                        image["alt"] = plain_alt_text(latex_to_plain(given))
                    continue
                figure = image.parent
                while figure is not None and not isinstance(figure, nodes.figure):
                    figure = figure.parent
                if figure is None:
                    continue
                captions = [c for c in figure.children if isinstance(c, nodes.caption)]
                if captions:
                    image["alt"] = plain_alt_text(_plain_text_of(captions[0]))

    return FigureAltText


# --- values in table cells; figures kept legible ---------------------------------------

# A cell short enough to read as one value ("6.6 × 10⁹", "(0.3, 0.3)", "0.25 ± 0.01").
VALUE_CELL_MAX = 32
_INSIDE_VALUE = (
    re.compile(r"(?<=[\d)⁰-⁹]) (?=[×±] )|(?<=[×±]) (?=[\d(−-])"),        # 6.6 × 10⁹, 0.2 ± 0.1
    re.compile(r"[(\[][ \d.,+−eE×⁰-⁹-]{1,40}[)\]]"),                      # (0.3, 0.3), [1, 2]
    re.compile(r"(?<=[(\[])[ ]+|[ ]+(?=[)\]])"),                          # ( 0.4, 0.25 )
)


def _table_values():
    """A post-transform that keeps values in table cells whole: a short body cell with a
    digit gets the class ``value`` (CSS: no wrapping), and in longer body cells the spaces
    inside a value become no-break spaces. Column titles may wrap."""
    from docutils import nodes
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class TableValues(SphinxPostTransform):
        default_priority = 310

        def run(self, **kwargs):
            for entry in self.document.findall(nodes.entry):
                if isinstance(entry.parent.parent, nodes.thead):
                    continue  # a column's title is words: it wraps where the column needs it
                text = " ".join(entry.astext().split())
                if len(text) <= VALUE_CELL_MAX and re.search(r"\d", text):
                    entry["classes"].append("value")
                for node in list(entry.findall(nodes.Text)):
                    if isinstance(node.parent, (nodes.math, nodes.literal)):
                        continue
                    new = str(node)
                    new = _INSIDE_VALUE[2].sub("", new)
                    for pattern in _INSIDE_VALUE[:2]:
                        new = pattern.sub(lambda m: m.group(0).replace(" ", "\u00a0"), new)
                    if new != str(node):
                        node.parent.replace(node, nodes.Text(new))

    return TableValues


MIN_READABLE_PT = 8.0
# Text of an SVG drawn by matplotlib with svg.fonttype "path": one group per run of
# text, scaled by its font size / 100 (in points at the drawn size).
_SVG_TEXT_SCALE = re.compile(rb"scale\(([\d.]+) -\1\)")
_SVG_WIDTH = re.compile(rb'<svg[^>]*?\swidth="([\d.]+)(pt|px)?"')


def image_facts(path: Path) -> tuple[float, float | None] | None:
    """(natural width in CSS px, smallest font in pt at that width or None) of an SVG or
    PNG image; None for anything else."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if path.suffix == ".svg":
        match = _SVG_WIDTH.search(data[:4000])
        if not match:
            return None
        width = float(match.group(1)) * (4 / 3 if match.group(2) in (b"pt", None) else 1)
        sizes = [100 * float(s) for s in _SVG_TEXT_SCALE.findall(data)]
        return width, (min(sizes) if sizes else None)
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return float(int.from_bytes(data[16:20], "big")), None
    return None


def min_shown_width(width: float, smallest_pt: float | None) -> int:
    """The narrowest an image may be shown with its smallest text still 8 pt (PNG, or
    an SVG without text: as if its smallest text were the book style's)."""
    if smallest_pt is None:
        from twostep.pages.figures import SMALLEST_FONT_PT

        smallest_pt = SMALLEST_FONT_PT
    return int(-(-width * min(1.0, MIN_READABLE_PT / smallest_pt) // 1))


_IMG_TAG = re.compile(r"<img\b[^>]*>")


def _legible_figures(app, pagename, templatename, context, doctree):
    """Give every output image of the page a ``min-width`` at which its text is 8 pt."""
    body = context.get("body")
    if not body or app.builder.format != "html":
        return
    sources = {Path(dest).name: src for src, dest in getattr(app.builder, "images", {}).items()}

    def legible(match):
        tag = match.group(0)
        src = re.search(r'\ssrc="([^"]+)"', tag)
        if not src or " style=" in tag:
            return tag
        name = Path(src.group(1)).name
        path = Path(app.srcdir) / sources[name] if name in sources else Path(app.outdir) / "_images" / name
        facts = image_facts(path)
        if not facts:
            return tag
        end = "/>" if tag.endswith("/>") else ">"
        return tag[: -len(end)].rstrip() + f' style="min-width: {min_shown_width(*facts)}px" ' + end

    context["body"] = _IMG_TAG.sub(legible, body)


def _launch_buttons_need_a_repository(app, config):
    # Jupyter Book's defaults point the launch buttons at its own repository
    # unless _config.yml names one; with no URL set, show no launch buttons.
    options = config.html_theme_options
    if str(options.get("repository_url") or "").strip():
        return
    launch = dict(options.get("launch_buttons") or {})
    for key in ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url",
                "jupyterlite_url"):
        launch[key] = ""
    launch["thebe"] = False
    options["launch_buttons"] = launch


_THEBE_ASSETS = ("sphinx-thebe.js", "sphinx-thebe.css")


def _drop_unused_thebe(app, pagename, templatename, context, doctree):
    # sphinx-thebe is always loaded by Jupyter Book; with thebe off its script
    # only carries the address of a CDN copy of thebe. Ship neither.
    if (app.config.html_theme_options.get("launch_buttons") or {}).get("thebe"):
        return

    def is_thebe(asset):
        if str(getattr(asset, "filename", asset) or "").endswith(_THEBE_ASSETS):
            return True
        return "THEBE_JS_URL" in str((getattr(asset, "attributes", None) or {}).get("body", ""))

    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not is_thebe(asset)]


def _chapter_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{chapter}`Title <book/name>```: a link to a chapter of _toc.yml (like ``{doc}``).

    A name that is not a chapter of the table of contents is a warning, so a typo
    fails the strict build.
    """
    from docutils import nodes
    from sphinx.addnodes import pending_xref

    env = inliner.document.settings.env
    match = re.fullmatch(r"\s*(.*?)\s*<\s*([^<>]+?)\s*>\s*", text, re.DOTALL)
    title, target = (match.group(1), match.group(2)) if match else (None, text.strip())
    docname = target.lstrip("/")
    root = Path(env.srcdir)
    # Re-read this page when chapters enter or leave the table of contents.
    env.note_dependency(str(root / "_toc.yml"))
    if docname in env.found_docs:
        node = pending_xref(rawtext, refdomain="std", reftype="doc", reftarget="/" + docname,
                            refexplicit=bool(title), refdoc=env.docname, refwarn=True)
        node += nodes.inline(rawtext, title or "", classes=["xref", "std", "std-doc"])
        return [node], []
    message = inliner.reporter.warning(
        f"chapter {docname!r} is not a chapter of _toc.yml", line=lineno)
    return [inliner.problematic(rawtext, rawtext, message)], [message]


def record_data(root: Path, docname: str, cache_dir: Path | None = None) -> dict:
    """The data of the newest execution-cache record of a chapter (``execution_seconds``,
    and ``executed_by``, ``cpu_count`` when nbmake executed it); ``{}`` when there is none."""
    cache_dir = Path(cache_dir) if cache_dir else default_cache_dir(root)
    if not (cache_dir / "global.db").is_file():
        return {}
    from jupyter_cache import get_cache

    records = [r for r in get_cache(str(cache_dir)).list_cache_records()
               if docname_of_uri(root, r.uri) == docname]
    return dict(max(records, key=lambda r: r.created).data or {}) if records else {}


def _execution_time(app, doctree):
    """Under an executed page's title, how long executing it took when this site was built and
    on how many cores: the newest cache record's ``execution_seconds``, which myst-nb itself
    writes for a run of its own and reads back as the page's runtime on a cache hit (nbmake's
    records carry the same key, and the machine's cores)."""
    from docutils import nodes

    docname = app.env.docname
    data = record_data(Path(app.srcdir), docname, cache_dir_of(app))
    seconds = data.get("execution_seconds")
    section = doctree.next_node(nodes.section)
    if seconds is None or section is None or not isinstance(section[0], nodes.title):
        return
    # nbmake records its machine's cores; a run of myst-nb's own is this build's.
    cores = data.get("cpu_count") or (None if data.get("executed_by") else os.cpu_count())
    took = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    text = (f"Re-executing this page took {took} when this site was built"
            + (f", on {cores} CPU cores." if cores else "."))
    section.insert(1, nodes.paragraph(text, text, classes=["twostep-runtime"]))


def setup(app):
    app.add_config_value("twostep_colab_branch", "", "html", types=[str])
    # What needs internals of myst-nb and sphinx-book-theme, in one module:
    # glued numpy scalars, the executed notebook in the download menu, Colab's
    # button (tools/upstream_internals.py, checked by tests/test_book.py).
    app.setup_extension("upstream_internals")
    # prf:claim, for the paper's results (tools/prf_claim.py).
    app.setup_extension("prf_claim")
    # Every glued figure's data as CSV, linked under it (tools/figure_downloads.py).
    app.setup_extension("figure_downloads")
    app.add_role("chapter", _chapter_role)
    app.add_role("site-download", _site_download_role)
    app.connect("config-inited", _launch_buttons_need_a_repository)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.add_post_transform(_figure_alt_text())
    app.add_post_transform(_table_values())
    app.connect("doctree-read", _execution_time)
    app.connect("html-page-context", _legible_figures)
    app.connect("html-page-context", _drop_unused_thebe, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
