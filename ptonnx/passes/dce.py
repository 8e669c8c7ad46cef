"""Dead code elimination: drop nodes none of whose outputs is used."""

from __future__ import annotations

import attrs

from ptonnx.ir import Graph
from ptonnx.passes.base import PassResult


@attrs.define
class DeadCodeElimination:
    name: str = "dce"

    def run(self, graph: Graph) -> PassResult:
        removed = 0
        # Walking backwards, a dead chain becomes dead node by node in one sweep.
        for node in graph.reversed():
            if all(out.num_uses == 0 for out in node.outputs):
                graph.remove(node)
                removed += 1
        return PassResult(removed > 0, removed, {"removed": removed})
