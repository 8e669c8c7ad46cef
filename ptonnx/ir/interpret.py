"""Run an IR graph with the registry's numpy semantics: the reference for passes."""

from __future__ import annotations

import numpy as np

from ptonnx.errors import IRError
from ptonnx.ir.core import Graph
from ptonnx.ir.registry import evaluate


def interpret(graph: Graph, *arrays) -> list[np.ndarray]:
    """Evaluate `graph` on numpy inputs; every value is cast to its IR dtype."""
    if len(arrays) != len(graph.inputs):
        raise IRError(f"graph {graph.name} takes {len(graph.inputs)} inputs, got {len(arrays)}")
    env = {v: np.asarray(a, dtype=v.dtype) for v, a in zip(graph.inputs, arrays, strict=True)}

    def get(v):
        return v.const if v.const is not None else env[v]

    for node in graph:
        results = evaluate(node.op, [get(v) for v in node.inputs], node.attrs)
        for out, r in zip(node.outputs, results, strict=True):
            env[out] = r.astype(out.dtype, copy=False)
    return [get(v) for v in graph.outputs]
