"""`layout`: elementwise work on a tall, narrow matrix that broadcasts is done transposed.

A mixture's log-density computes on (N, K) matrices, N observations by K components:
`y[:, None] - mu[None, :]`, then a logsumexp over the components. onnxruntime's CPU
kernels broadcast along the last axis in a call per row, so on an (N, 1) x (1, K) or
(N, K) x (N, 1) operand pair with K = 2 a Sub costs 10-15x what it costs laid out
(K, N), where each call covers a row of N (`benchmarks/layout.py`). Elementwise ops do
not care how their operands are laid out, as long as all are laid out alike; so:

- an elementwise node whose output is (N, K), K static and at most `NARROW`, N unknown or
  at least `TALL` times K, with an operand that broadcasts, is computed on the transposed
  operands (a (1, K) or (K,) operand becomes (K, 1), a 0-d one stays) and its result
  transposed back;
- an elementwise node with such an (N, K) output whose matrix operands all are transposes
  is computed on what they transpose (the transpose moves past it, toward the next one);
- a reduction of a transpose reduces the other axis of what it transposes;
- a transpose of a transpose is what it transposes;
- a transpose of columns concatenated side by side is the transposed columns stacked;
- an elementwise node whose result ends in a size-1 axis reads its operands at its own rank.

So the transposes meet and cancel inside a chain, and what is left are those at its
ends: a transpose of an (N, 1) or (1, K) operand moves no data (onnxruntime copies it
as it is), a full (N, K) one at the edge costs one copy. Every element is computed by the
same op from the same operands, so elementwise results are bit-identical; a sum over N of
the transposed matrix adds in onnxruntime's order for the other axis, so it may differ in
its last bits, as any two summation orders do (`benchmarks/layout.py` checks them to 1e-13).
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.ir import Builder, Graph, Node, Value
from ptonnx.ir.registry import all_schemas
from ptonnx.passes.base import PassResult
from ptonnx.passes.rewrite import apply_rewrites, node_rewriter

#: the largest K of an (N, K) matrix that is worth transposing
NARROW = 16
#: how many times K a known N must be
TALL = 8
SWAP = (1, 0)


def _ops_with(trait: str) -> tuple[str, ...]:
    return tuple(name for name, schema in all_schemas().items() if schema.has(trait))


def _elementwise_ops() -> tuple[str, ...]:
    return tuple(name for name, schema in all_schemas().items() if schema.family == "elementwise")


def _tall_and_narrow(shape) -> bool:
    if len(shape) != 2:
        return False
    n, k = shape
    return isinstance(k, int) and 2 <= k <= NARROW and (not isinstance(n, int) or n >= TALL * k)


def _broadcasts(node: Node) -> bool:
    """Some operand is repeated along an axis of the (N, K) result."""
    n, k = node.outputs[0].shape
    for v in node.inputs:
        if v.type.ndim == 1 and n != 1:
            return True
        if v.type.ndim == 2 and ((v.shape[0] == 1 and n != 1) or (v.shape[1] == 1 and k != 1)):
            return True
    return False


def _swapped(value: Value) -> Value | None:
    """What `value` transposes, if it is a 2-D transpose."""
    node = value.producer
    if node is not None and node.op == "Transpose" and node.attrs["perm"] == SWAP:
        return node.inputs[0]
    return None


def _transposed(b: Builder, value: Value) -> Value:
    """`value` laid out for the transposed computation: a matrix transposed, a row vector a column."""
    if value.type.ndim == 0:
        return value
    if value.const is not None:
        array = value.const.reshape(-1, 1) if value.type.ndim == 1 else value.const.T
        return Value.constant(np.ascontiguousarray(array), value.name)
    if value.type.ndim == 1:
        return b.op("Unsqueeze", value, axes=(1,))
    return _swapped(value) or b.op("Transpose", value, perm=SWAP)


def _elementwise(b: Builder, node: Node):
    out = node.outputs[0]
    if len(node.outputs) != 1 or out.type.ndim != 2 or any(v.type.ndim > 2 for v in node.inputs):
        return None
    matrices = [v for v in node.inputs if v.type.ndim == 2]
    moving = matrices and all(_swapped(v) is not None for v in matrices)
    # only ever toward the (K, N) layout: the transposed node's own output is not tall and
    # narrow, so it is never turned back
    if not (_tall_and_narrow(out.shape) and (moving or _broadcasts(node))):
        return None
    inner = b.node(node.op, [_transposed(b, v) for v in node.inputs], node.attrs).output
    return {out: b.op("Transpose", inner, perm=SWAP)}


def _reduction(b: Builder, node: Node):
    x = node.inputs[0]
    inner = (_swapped(x) or _stacked_rows(b, x)) if x.type.ndim == 2 else None
    if inner is None or not node.attrs["axes"]:
        return None
    axes = tuple(sorted(1 - a for a in node.attrs["axes"]))
    reduced = b.op(node.op, inner, **{**node.attrs, "axes": axes})
    if node.attrs["keepdims"]:
        reduced = b.op("Transpose", reduced, perm=SWAP)  # of a size-1 axis: no data moves
    return {node.outputs[0]: reduced}


def _double(b: Builder, node: Node):
    inner = _swapped(node.inputs[0]) if node.attrs["perm"] == SWAP else None
    return None if inner is None else {node.outputs[0]: inner}


def _free_to_transpose(value: Value) -> bool:
    """A column (N, 1) or a constant: transposed without moving data at run time."""
    return value.shape[1] == 1 or value.const is not None or _swapped(value) is not None


def _stacked_rows(b: Builder, value: Value) -> Value | None:
    """The transpose of `value` if it is columns concatenated side by side (a mixture's (N, K)
    matrix of K log-densities): those columns transposed and stacked, no data moved."""
    cat = value.producer
    if cat is None or cat.op != "Concat" or cat.attrs["axis"] not in (1, -1) or value.type.ndim != 2:
        return None
    if not _tall_and_narrow(value.shape) or not all(_free_to_transpose(v) for v in cat.inputs):
        return None
    return b.node("Concat", [_transposed(b, v) for v in cat.inputs], {"axis": 0}).output


def _stacked_columns(b: Builder, node: Node):
    """So the transposed chain starts at the columns, and onnxruntime's transpose optimiser finds
    no full Transpose there to push back down the chain (it would, and broadcast (N, 1) against
    (N, K) again)."""
    rows = _stacked_rows(b, node.inputs[0]) if node.attrs["perm"] == SWAP else None
    return None if rows is None else {node.outputs[0]: rows}


def _expand(b: Builder, node: Node):
    """A column (N, 1) or row (K,) expanded to a tall, narrow (N, K): expanded as (K, N) (the
    copy along N is one call, not one a row), then transposed for the chain to take up."""
    x, out = node.inputs[0], node.outputs[0]
    if out.type.ndim != 2 or x.type.ndim > 2 or not _tall_and_narrow(out.shape) or x.shape == out.shape:
        return None
    if x.type.ndim == 2 and not _free_to_transpose(x):
        return None
    shape = node.inputs[1]
    if shape.shape != (2,):  # a shape of one size would broadcast against the other axis, transposed
        return None
    swapped = b.op("Gather", shape, Value.constant(np.asarray([1, 0], dtype=np.int64)), axis=0)
    return {out: b.op("Transpose", b.op("Expand", _transposed(b, x), swapped), perm=SWAP)}


def _column_operands(b: Builder, node: Node):
    """An elementwise node whose result ends in a size-1 axis, (N, 1) say, reads its operands of
    lower rank at the result's rank: onnxruntime 1.32 broadcasts a 0-d or (1,) operand against
    (N, 1) in a call per row, some 35 times slower than a (1, 1) one (an Add at N = 10,000: 245 us
    against 7, `benchmarks/results/layout.md`). A constant is reshaped, a value Unsqueezed (no data moves)."""
    out = node.outputs[0]
    rank = out.type.ndim
    if len(node.outputs) != 1 or rank < 2 or out.shape[-1] != 1:
        return None
    if not any(v.type.ndim < rank for v in node.inputs):
        return None
    operands = []
    for v in node.inputs:
        missing = rank - v.type.ndim
        if not missing:
            operands.append(v)
        elif v.const is not None:
            operands.append(Value.constant(np.ascontiguousarray(v.const.reshape((1,) * missing + v.const.shape)), v.name))
        else:
            operands.append(b.op("Unsqueeze", v, axes=tuple(range(missing))))
    return {out: b.node(node.op, operands, node.attrs).output}


@attrs.define
class Layout:
    name: str = "layout"

    def run(self, graph: Graph) -> PassResult:
        rewrites = [
            node_rewriter(*_elementwise_ops(), name="transposed")(_elementwise),
            node_rewriter(*_ops_with("reduces_axes"), name="reduce_transposed")(_reduction),
            node_rewriter("Transpose", name="transpose_of_transpose")(_double),
            node_rewriter("Transpose", name="stacked_columns")(_stacked_columns),
            node_rewriter("Expand", name="expand_transposed")(_expand),
            node_rewriter(*_elementwise_ops(), name="column_operands")(_column_operands),
        ]
        fired = apply_rewrites(graph, rewrites)  # one graph: the manager runs the pass on each body too
        return PassResult(bool(fired), sum(fired.values()), {k: v for k, v in fired.items() if v})

