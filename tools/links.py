"""Where the pages link to, and what they load (a Sphinx extension).

* launch buttons only when ``_config.yml`` names the repository (Jupyter Book's defaults
  point them at its own);
* no sphinx-thebe script or style while thebe is off (its script only carries the address
  of a CDN copy of thebe);
* citations without docutils' back-links (a reference cited twice would read "[2](1,2)").
"""

from __future__ import annotations


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


def _no_citation_backlinks(app) -> None:
    # The bibliography lists references; the citing sentences link to them.
    app.env.settings["footnote_backlinks"] = False


def setup(app):
    app.connect("config-inited", _launch_buttons_need_a_repository)
    app.connect("builder-inited", _no_citation_backlinks)
    app.connect("html-page-context", _drop_unused_thebe, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
