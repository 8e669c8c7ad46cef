"""Evaluate nodes whose inputs are all constants with the registry's numpy semantics."""

from __future__ import annotations

import attrs

from ptonnx.errors import PassError
from ptonnx.ir import Graph, Node, TensorType, Value, evaluate, get_schema
from ptonnx.ir.printer import format_node
from ptonnx.passes.base import PassResult
from ptonnx.passes.rewrite import apply_rewrites, node_rewriter, only_used_by

#: one fold may add at most this many bytes to the model
DEFAULT_MAX_GROWTH_BYTES = 1 << 20


@attrs.define
class ConstantFolding:
    """Fold pure ops of constants. A fold that would grow the model by more than
    `max_growth_bytes` (an `Expand` into a 100 MB initializer) is skipped.

    Growth is the bytes the fold adds to the model: its results, less the input
    constants that the fold leaves unused. An input constant still used elsewhere
    (another node, a graph output) stays in the model and frees nothing.
    """

    max_growth_bytes: int = DEFAULT_MAX_GROWTH_BYTES
    name: str = "constant_folding"

    def run(self, graph: Graph) -> PassResult:
        skipped = {"too_large": 0, "failed": 0}

        @node_rewriter(name="fold")
        def fold(b, node: Node):
            if not node.inputs or any(v.const is None for v in node.inputs):
                return None
            schema = get_schema(node.op)
            if schema.has("no_fold"):
                return None
            if _growth(node) > self.max_growth_bytes:
                skipped["too_large"] += 1
                return None
            try:
                results = evaluate(node.op, [v.const for v in node.inputs], node.attrs)
            except Exception:  # noqa: BLE001 - e.g. int ** negative: leave it to run time
                skipped["failed"] += 1
                return None
            replaced = {}
            for out, array in zip(node.outputs, results, strict=True):
                array = array.astype(out.dtype, copy=False)
                if not out.type.admits(TensorType.of(array)):
                    raise PassError(
                        f"constant_folding: {format_node(node)} evaluated to {TensorType.of(array)}, "
                        f"not its declared type {out.type}; the op's semantics and type rule disagree"
                    )
                replaced[out] = Value.constant(array, out.name)
            return replaced

        fired = apply_rewrites(graph, [fold])
        details = {"folded": fired["fold"], **{f"skipped_{k}": v for k, v in skipped.items() if v}}
        return PassResult(bool(fired), fired["fold"], details)


def _growth(node: Node) -> int:
    """Bytes folding `node` adds to the model: its results less the inputs only it uses."""
    added = sum(_nbytes(o.type) for o in node.outputs)
    # only_used_by stops at the first other user: a constant read by thousands stays O(1)
    freed = sum(v.const.nbytes for v in set(node.inputs) if only_used_by(v, (node,)))
    return added - freed


def _nbytes(t: TensorType) -> int:
    import numpy as np

    n = 1
    for d in t.shape:
        n *= d if isinstance(d, int) else 1
    return n * np.dtype(t.dtype).itemsize
