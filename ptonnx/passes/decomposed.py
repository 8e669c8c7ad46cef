"""Recognising a decomposed op: does `value` compute `op(x)` exactly as `decompose` wrote it?

Passes run after decomposition, so a pass that matches a high-level op (the Conv+BatchNorm+SiLU
fusion matches `x * Sigmoid(x)`) sees its decomposition instead. Rather than a hand-written
copy of the formula's shape, which would drift from the formula, the decomposition is built
again for `x`'s type in a scratch graph (the very code `decompose` ran, Casts to and from the
compute dtype included) and compared with the graph node by node: same ops, attributes and
constants (bit for bit), the same wiring, `x` where the scratch graph reads its input.
"""

from __future__ import annotations

import functools

import numpy as np

from ptonnx.ir import Builder, Graph, Node, TensorType, Value
from ptonnx.passes.decompose import decompose


@functools.lru_cache(maxsize=64)
def _scratch(op: str, type: TensorType) -> tuple[Value, Value]:
    """(input, output) of a graph holding `op` of one input of `type`, decomposed (read only)."""
    g = Graph("scratch")
    argument = g.add_input(type)
    g.set_outputs([Builder(g).node(op, [argument]).output])
    decompose(g)
    return argument, g.outputs[0]


def decomposed(op: str, x: Value, value: Value) -> list[Node] | None:
    """The nodes computing `value` as the decomposition of `op(x)` (to be absorbed by the
    rewrite that replaces them), or None when `value` is computed otherwise."""
    argument, pattern = _scratch(op, x.type)
    if pattern is argument or value.producer is None or pattern.producer.op != value.producer.op:
        return None
    pairs: dict[Value, Value] = {argument: x}
    nodes: dict[Node, Node] = {}

    def same(p: Value, v: Value) -> bool:
        if p.const is not None:  # by contents: a pass may have made an equal constant anew
            return (v.const is not None and v.const.dtype == p.const.dtype and v.const.shape == p.const.shape
                    and np.asarray(v.const).tobytes() == np.asarray(p.const).tobytes())
        if p in pairs:
            return pairs[p] is v
        pn, vn = p.producer, v.producer
        ok = (pn is not None and vn is not None and pn.op == vn.op and pn.attrs == vn.attrs
              and len(pn.inputs) == len(vn.inputs) and pn.outputs.index(p) == vn.outputs.index(v)
              and nodes.setdefault(pn, vn) is vn and all(same(a, b) for a, b in zip(pn.inputs, vn.inputs, strict=True)))
        if ok:
            pairs[p] = v
        return ok

    if not same(pattern, value):
        return None
    return list(nodes.values())
