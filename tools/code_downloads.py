"""The code in hand: the package and its pins, offered by the site (a Sphinx extension).

At ``builder-inited`` the build makes the wheel of ``twostep`` and the requirements.txt a
reader needs (the repository's pins of :data:`READER_PACKAGES`) into
``_build/html/_downloads/code/``, with a copy of each results file of the at-scale appendix;
the ``{site-download}`` role links to them from a page (the landing page's instructions,
:data:`HOW_TO_RUN`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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
        raise ValueError(f"requirements.txt pins none of {missing} (code_downloads.READER_PACKAGES)")
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
        "[code_downloads] the package for readers: " + ", ".join(
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


def setup(app):
    app.add_role("site-download", _site_download_role)
    app.connect("builder-inited", _code_downloads)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
