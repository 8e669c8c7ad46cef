"""`decompose`: rewrite every op onnxruntime lacks into IR ops it runs (`ptonnx.decompositions`).

Not a pass: the decompose stage (`ptonnx.stages`) runs it, after lifting and before the
chosen passes; then constant folding, hoisting and dead-code elimination see inside the
special functions, and a folded constant is the number the model computes at run time.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ptonnx.decompositions import DECOMPOSITIONS
from ptonnx.decompositions.expr import Ex, Scope
from ptonnx.ir import Builder, Graph, Node, Value, evaluate, get_schema
from ptonnx.ir.core import bodies, nested_graphs
from ptonnx.ir.ops.random import BY_DECOMPOSITION
from ptonnx.ir.rewrite import Replacement, Rewrite, apply_rewrites
from ptonnx.passes.dce import DeadCodeElimination
from ptonnx.onnxruntime_dtypes import decomposed_in


def _in_dtype(scope: Scope, value: Value, dtype: str) -> Ex:
    if value.dtype == dtype:
        return Ex(scope, value)
    if value.const is not None:  # converted now, not by a Cast at run time
        return Ex(scope, Value.constant(value.const.astype(dtype), value.name))
    return Ex(scope, value).cast(dtype)


#: an input computed from constants is evaluated for its decomposition up to this many elements
MAX_FOLDED = 1 << 16


def _constant_of(value: Value, known: dict) -> np.ndarray | None:
    """`value`'s contents when constants determine them (a lifted `Unsqueeze` of a constant
    order): decompositions choose formulas by known operands, and decomposing runs before
    constant folding. Evaluated here, not folded into the graph; `known` remembers each
    value's answer for the run (a DAG of constants is walked once, not once per path)."""
    if value.const is not None:
        return value.const
    if value not in known:
        known[value] = _evaluated(value, known)
    return known[value]


def _evaluated(value: Value, known: dict) -> np.ndarray | None:
    node = value.producer
    if (node is None or not node.inputs or len(node.outputs) != 1 or bodies(node) or node.op in DECOMPOSITIONS
            or get_schema(node.op).has("no_fold") or not _small(value)):
        return None
    arrays = [_constant_of(v, known) for v in node.inputs]
    if any(a is None for a in arrays):
        return None
    try:
        (result,) = evaluate(node.op, arrays, node.attrs)
    except Exception:  # noqa: BLE001 - what does not evaluate stays a run-time value
        return None
    return np.asarray(result).astype(value.dtype, copy=False)


def _small(value: Value) -> bool:
    shape = value.shape
    return all(isinstance(d, int) for d in shape) and int(np.prod(shape, dtype=np.int64)) <= MAX_FOLDED


def _decompose(builder: Builder, node: Node, constants: dict):
    found = DECOMPOSITIONS[node.op]
    compute = decomposed_in(found, node.outputs[0].dtype)
    if compute is None:
        return None
    known = [_constant_of(v, constants) for v in node.inputs]
    target, cleans = node, ()
    if any(v.const is None and k is not None for v, k in zip(node.inputs, known, strict=True)):
        # the decomposition sees the known operands as constants (a node it reads, then drops)
        inputs = [v if k is None or v.const is not None else Value.constant(k) for v, k in zip(node.inputs, known, strict=True)]
        target = builder.node(node.op, inputs, node.attrs)
        cleans = (target,)
    scope = Scope(builder)
    given = [Ex(scope, v) if found.as_given else _in_dtype(scope, v, compute) for v in target.inputs]
    result = found.fn(target, given)
    if result is None:
        return None
    results = [result] if isinstance(result, Ex) else list(result)
    values = {old: _with_shape(builder, new.cast(old.dtype).value, old, node) for old, new in zip(node.outputs, results, strict=True)}
    return Replacement(values, cleans=cleans)


def _with_shape(builder: Builder, new: Value, old: Value, node: Node) -> Value:
    """`new`, given the sizes `old`'s type knows (a Reshape to them, free at run time) where the
    decomposition's own type rules lost some (a Loop's results have unknown sizes): the nodes that
    read `old` were typed with them. A symbolic size is read from an input that has it."""
    if new.type == old.type:
        return new
    named = {d: (v, axis) for v in node.inputs for axis, d in enumerate(v.type.shape) if isinstance(d, str)}
    parts = []
    for axis, d in enumerate(old.type.shape):
        if isinstance(d, int):
            parts.append(Value.constant(np.asarray([d], dtype=np.int64)))
        else:
            source, at = named.get(d, (new, axis))
            parts.append(builder.node("Shape", [source], {"start": at, "end": at + 1}).output)
    shape = parts[0] if len(parts) == 1 else builder.node("Concat", parts, {"axis": 0}).output
    return builder.node("Reshape", [new, shape]).output


def decompose(graph: Graph) -> Counter:
    """Decompose every node of `graph` and of its bodies that has a decomposition; returns
    how many of each op."""
    done: Counter = Counter()
    constants: dict = {}  # Value -> its contents when constants determine them (or None)

    def rewrite(builder: Builder, node: Node):
        result = _decompose(builder, node, constants)
        if result is not None:
            done[node.op] += 1
        return result

    seen: set[int] = set()
    while pending := [g for g in [graph, *nested_graphs(graph)] if id(g) not in seen]:
        for g in pending:  # a decomposition's own loop bodies (and what they use) come round next
            seen.add(id(g))
            DeadCodeElimination().run(g)  # what lifting's idioms left unused is not worth decomposing
            apply_rewrites(g, [Rewrite("decompose", tuple(DECOMPOSITIONS), rewrite)])
    return done


def evaluate_decomposed(op: str, arrays, attributes) -> tuple[np.ndarray, ...]:
    """`op` on `arrays`, by interpreting its decomposition: the NumPy semantics of an op that
    its decomposition defines (the random draws), so evaluating and running agree bit for bit."""
    from ptonnx.ir import TensorType, interpret

    graph = Graph(op)
    inputs = [graph.add_input(TensorType(np.asarray(a).dtype.name, np.shape(a)), f"x{i}") for i, a in enumerate(arrays)]
    graph.set_outputs(Builder(graph).node(op, inputs, attributes).outputs)
    decompose(graph)
    return tuple(interpret(graph, *arrays))


BY_DECOMPOSITION.append(evaluate_decomposed)
