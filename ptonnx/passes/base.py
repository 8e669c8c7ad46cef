"""What a pass is: a name and `run(graph) -> PassResult`, editing the graph in place."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

from ptonnx.ir import Graph


@attrs.define
class PassResult:
    modified: bool
    #: how many rewrites the pass made (nodes folded, casts inserted, ...)
    rewrites: int = 0
    #: per-rewrite or per-kind counts, for the report
    details: dict[str, int] = attrs.field(factory=dict)


@runtime_checkable
class Pass(Protocol):
    name: str

    def run(self, graph: Graph) -> PassResult: ...
