"""`to_networkx(graph)`: a networkx view built on demand, for analysis and drawing."""

from __future__ import annotations

import networkx as nx

from ptonnx.ir.core import Graph


def to_networkx(graph: Graph, *, include_values: bool = False) -> nx.MultiDiGraph:
    """A MultiDiGraph of nodes (edge = a value flowing from producer to user).

    Node keys are the IR `Node` objects; each carries `op` and `label`. An edge
    per use, keyed by the input index, carries the value under `value` (so
    `Mul(x, x)` has two). With `include_values`, graph inputs and constants
    become vertices too. Changing the view does not change the IR.
    """
    from ptonnx.ir.printer import format_node, format_value

    g = nx.MultiDiGraph(name=graph.name)
    for node in graph:
        g.add_node(node, op=node.op, label=format_node(node))
        for index, v in enumerate(node.inputs):
            src = v.producer
            if src is None:
                if not include_values:
                    continue
                src = v
                g.add_node(v, op="Constant" if v.const is not None else "Input", label=format_value(v))
            g.add_edge(src, node, key=index, value=v)
    return g
