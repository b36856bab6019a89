"""Plain-text alt text for every figure (a Sphinx extension).

A figure's alt text is its caption's first sentence, with inline TeX read as plain text
(:func:`latex_to_plain`): Greek letters and symbols as Unicode, simple scripts as Unicode
scripts, fractions as ``a/b``. The browser tests require it on every image.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

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


def plain_text_of(node) -> str:
    """A node's text with its inline math read as plain text (``latex_to_plain``)."""
    if isinstance(node, nodes.math):
        return latex_to_plain(node.astext())
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(plain_text_of(child) for child in node.children)


class FigureAltText(SphinxPostTransform):
    """Every figure's image gets plain-text alt text.

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
                image["alt"] = plain_alt_text(plain_text_of(captions[0]))


def setup(app):
    app.add_post_transform(FigureAltText)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
