"""`legalise`: every node in a dtype the runtime computes as NumPy does (`ptonnx/onnxruntime_dtypes.py`).

Not a pass: the legalise stage (`ptonnx.stages`) runs it, after the chosen passes and
before lowering: a node the table widens is rebuilt in its compute dtype, with a Cast on
each operand that changes (a constant converted now) and a Cast back on each result, so
every Cast is in `cm.ir` and emitters see only dtypes onnxruntime runs. A row that refuses
is left alone for `check_lowerable` to refuse, unless the user opted in to its narrowing
(`float64_via_float32=True`: Conv and the pools in float32).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ptonnx.errors import PassError
from ptonnx.ir import Builder, Graph, Node, Value, format_node, get_schema
from ptonnx.ir.core import nested_graphs
from ptonnx.ir.rewrite import Replacement, Rewrite, apply_rewrites
from ptonnx.onnxruntime_dtypes import node_rules
from ptonnx.passes.cse import CommonSubexpressionElimination


def _targets(node: Node, narrow: bool) -> dict[str, str]:
    """type variable -> the dtype it is computed in, where that is not its own."""
    targets = {}
    for var, rule in node_rules(node).items():
        if rule.compute is not None:
            targets[var] = rule.compute
        elif narrow and rule.narrow is not None:
            targets[var] = rule.narrow
    return targets


def _converted(builder: Builder, value: Value, dtype: str) -> Value:
    if value.dtype == dtype:
        return value
    if value.const is not None:  # converted now, not by a Cast at run time
        with np.errstate(all="ignore"):
            return Value.constant(value.const.astype(dtype), value.name)
    return builder.op("Cast", value, to=dtype)


def _legalise(builder: Builder, node: Node, narrow: bool, counts: Counter) -> Replacement | None:
    targets = _targets(node, narrow)
    if not targets:
        return None
    schema = get_schema(node.op)
    in_vars = schema.vars_of_inputs(len(node.inputs))
    inputs = [_converted(builder, v, targets.get(var, v.dtype)) for var, v in zip(in_vars, node.inputs, strict=True)]
    wide = builder.node(node.op, inputs, node.attrs)
    values = {}
    for var, old, new in zip(schema.vars_of_outputs(len(node.outputs)), node.outputs, wide.outputs, strict=True):
        if new.dtype != targets.get(var, old.dtype):
            raise PassError(f"legalise: {format_node(node)} rebuilt in {targets} gave {new.dtype}, not {targets.get(var)} (a ptonnx bug)")
        values[old] = builder.op("Cast", new, to=old.dtype) if new.dtype != old.dtype else new
    counts[f"{node.op}:{node.outputs[0].dtype}->{'/'.join(sorted(set(targets.values())))}"] += 1
    return Replacement(values)


def legalise(graph: Graph, *, float64_via_float32: bool = False) -> Counter:
    """Rebuild every node (bodies too) the table computes in another dtype; returns what was
    rebuilt, as "op:dtype->compute dtype" to count."""
    counts: Counter = Counter()

    def rewrite(builder: Builder, node: Node):
        return _legalise(builder, node, float64_via_float32, counts)

    for g in [graph, *nested_graphs(graph)]:
        apply_rewrites(g, [Rewrite("legalise", None, rewrite)])
        CommonSubexpressionElimination(only=frozenset({"Cast"})).run(g)  # one Cast per value and dtype
    return counts
