"""A ``prf:claim`` directive for sphinx-proof, numbered and referenced like its own types.

The chapters state the paper's results as claims: they are the paper's theorems,
checked in this book by simulation, not proved. sphinx-proof 0.4 has no such
type; this module registers one the way sphinx-proof registers its own, before
sphinx-proof's ``config-inited`` handler gives every type its number format.
Claims are drawn like theorems.

Set up by ``tools/bookbuild.py``; it sets up sphinx-proof first.
The node class lives at module level so that Sphinx can pickle doctrees. sphinx-proof has no
public way to add a type, so this changes four of its registries (``PROOF_TYPES``,
``ProofDomain.directives``, ``DEFAULT_REALTYP_TO_COUNTERTYP``, ``NODE_TYPES``), as its own
``setup`` fills them; ``tests/tools/test_upstream_internals.py`` knows each of them and
fails, naming the module, on any other change to another project's module.
"""

from __future__ import annotations

from docutils import nodes
from sphinx_proof import directive, domain, proof_type
from sphinx_proof import nodes as proof_nodes


class claim_node(nodes.Admonition, nodes.Element):
    pass


class ClaimDirective(directive.ElementDirective):
    name = "claim"

    def run(self):
        result = super().run()
        result[0]["classes"].append("theorem")  # sphinx-proof's theorem colours
        return result


def setup(app):
    app.setup_extension("sphinx_proof")
    if "claim" not in proof_type.PROOF_TYPES:  # a later sphinx-proof may have its own
        proof_nodes.NODE_TYPES["claim"] = claim_node
        directive.DEFAULT_REALTYP_TO_COUNTERTYP["claim"] = "claim"
        proof_type.PROOF_TYPES["claim"] = ClaimDirective
        domain.ProofDomain.directives["claim"] = ClaimDirective
        visit = (proof_nodes.visit_enumerable_node, proof_nodes.depart_enumerable_node)
        app.add_enumerable_node(claim_node, "claim", None, html=visit, latex=visit)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
