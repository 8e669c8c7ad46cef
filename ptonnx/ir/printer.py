"""MLIR-like text form of the IR: one line per node, for debugging, errors and golden tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ptonnx.ir.core import Graph, Node, Value


def format_value(v: Value, labels: dict | None = None) -> str:
    """`labels`: the names `print_graph` gives this graph's values (see `_labels`)."""
    if v.const is not None:
        arr = v.const
        # floatmode="unique": the digits that tell the number apart, so the text reads back exactly
        # (ptonnx.ir.parser); no spaces (NumPy's alignment padding), so it is one way to write by hand
        body = ("".join(np.array2string(arr, threshold=6, separator=",", floatmode="unique").split())
                if arr.size <= 6 else f"<{arr.size} elems>")
        return f"const({body}: {v.type})"
    if labels is not None and v in labels:
        return f"%{labels[v]}"
    return f"%{v.name}" if v.name else f"%{v.uid}"


def _labels(graph: Graph) -> dict:
    """A name for each of `graph`'s values, unique in the graph: its own where no earlier value
    took it, else the name with the first free `_k`. The IR does not require unique names (two
    PyTensor variables may share one, and a hoisted node's outer copy keeps its body name), but
    text is SSA (`ptonnx.ir.parser` refuses a name defined twice in a graph)."""
    values = [*graph.inputs, *(o for node in graph for o in node.outputs)]
    wanted = [v.name or str(v.uid) for v in values]
    taken, labels = set(), {}
    for v, name in zip(values, wanted, strict=True):
        label, k = name, 0
        while label in taken:
            k += 1
            label = f"{name}_{k}"
        taken.add(label)
        labels[v] = label
    return labels


def _format_attr(value) -> str:
    if _is_graph(value):  # a body graph: printed after its node
        return f"<graph {value.name}>"
    return repr(value) if isinstance(value, str) else str(value)


def format_node(node: Node, labels: dict | None = None) -> str:
    outs = ", ".join(f"{format_value(o, labels)}: {o.type}" for o in node.outputs)
    ins = ", ".join(format_value(v, labels) for v in node.inputs)
    line = f"{outs} = {node.op}({ins})"
    if node.attrs:
        line += " {" + ", ".join(f"{k}={_format_attr(v)}" for k, v in sorted(node.attrs.items())) + "}"
    return line


def describe_source(node: Node) -> str:
    """Where the node came from, for error messages: the user's PyTensor variable and,
    when PyTensor recorded it, the line that created it ("" for nodes made by hand)."""
    source = getattr(node, "source", None)
    if source is None:
        return ""
    text = f"\n  from PyTensor variable {source.variable}"
    if source.type is not None:
        text += f" ({source.type})"
    if source.created_at:
        text += f", created at {source.created_at}"
    return text


def _is_graph(value) -> bool:
    """A body graph (what has inputs and outputs): `ptonnx.ir.core` imports this module."""
    return hasattr(value, "inputs") and hasattr(value, "outputs")


def _bodies(node: Node) -> list[Graph]:
    return [v for v in node.attrs.values() if _is_graph(v)]


def print_graph(graph: Graph) -> str:
    labels = _labels(graph)
    sig = ", ".join(f"{format_value(v, labels)}: {v.type}" for v in graph.inputs)
    lines = [f"graph {graph.name}({sig}) {{"]
    for n in graph:
        lines.append(f"  {format_node(n, labels)}")
        lines += ["    " + line for body in _bodies(n) for line in print_graph(body).splitlines()]
    lines.append("  return " + ", ".join(format_value(v, labels) for v in graph.outputs))
    lines.append("}")
    return "\n".join(lines)
