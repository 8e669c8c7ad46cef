"""PyTensor's compositions of a function ptonnx has as one op, recognised after lifting.

PyTensor 3 builds `iv(v, x)` as `ive(v, x) * exp(abs(x))`: the product is inf from |x| = 709.78
on and 0 where ive underflows, where I_v itself is finite (1e-208 at v = 760, x = 289; 7.7e307
at v = 23, x = 713.5). PyTensor 2 has an `Iv` op, lifted to the IR's `Iv`; recognising the
product gives both PyTensors SciPy's iv, and keeps a model's numbers the same whichever
PyTensor built it. This runs in lifting, not as an optional pass: it decides what function
the graph computes, as lifting PyTensor 2's Iv does.
"""

from __future__ import annotations

from ptonnx.ir import Builder, Graph, Node, Value, get_schema
from ptonnx.ir.rewrite import Replacement, apply_rewrites, node_rewriter


def _producer(value: Value, op: str) -> Node | None:
    node = value.producer
    return node if node is not None and node.op == op else None


def _through_checks(value: Value) -> tuple[Value, list[Node]]:
    """`value` before the runtime-broadcast Checks it passed (they guard shapes, not values)."""
    checks = []
    while (check := _producer(value, "Check")) is not None:
        checks.append(check)
        value = check.inputs[0]
    return value, checks


def _moves(node: Node) -> bool:
    """`node` only moves or repeats the elements of its one data input (the `copies` trait, a
    first input that is not variadic, one output: not Concat nor Split): exp(|x|) may reach the product through such
    ops (a DimShuffle broadcasting it against the orders) when Ive's x went through the same ones."""
    schema = get_schema(node.op)
    return schema.has("copies") and not schema.inputs[0].variadic and len(node.outputs) == 1


def _strip(value: Value, dtype: str) -> tuple[Value, list[Node], list[Node]]:
    """(`value` before layout ops and Casts to `dtype` (an integer x converted as PyTensor does),
    the layout ops outermost first, every node passed)."""
    layout, passed = [], []
    while (node := value.producer) is not None and (_moves(node) or node.op == "Cast" and node.outputs[0].dtype == dtype):
        passed.append(node)
        if node.op != "Cast":
            layout.append(node)
        value = node.inputs[0]
    return value, layout, passed


def _same_layout(one: list[Node], other: list[Node]) -> bool:
    return len(one) == len(other) and all(
        a.op == b.op and a.attrs == b.attrs and list(a.inputs[1:]) == list(b.inputs[1:]) for a, b in zip(one, other, strict=True))


@node_rewriter("Mul")
def ive_times_exp_abs(b: Builder, node: Node):
    """ive(v, x) * exp(|x|) (either order) -> Iv(v, x). A Check between Ive and the product (no
    runtime broadcasting of Ive's result against exp(|x|)) is implied by Ive's own check of v
    against x: Iv keeps that one."""
    dtype = node.outputs[0].dtype
    for scaled, factor in (node.inputs, reversed(node.inputs)):
        inner, checks = _through_checks(scaled)
        ive = _producer(inner, "Ive")
        exp_out, outer, outer_nodes = _strip(factor, dtype)
        exp = _producer(exp_out, "Exp")
        if ive is None or exp is None or inner.type != node.outputs[0].type:
            continue
        abs_out, middle, middle_nodes = _strip(exp.inputs[0], dtype)
        absolute = _producer(abs_out, "Abs")
        if absolute is None:
            continue
        source, inside, inside_nodes = _strip(absolute.inputs[0], dtype)
        x_source, x_layout, _ = _strip(ive.inputs[1], dtype)
        if source is x_source and _same_layout(outer + middle + inside, x_layout):
            parts = (*checks, ive, *outer_nodes, exp, *middle_nodes, absolute, *inside_nodes)
            return Replacement({node.outputs[0]: b.op("Iv", *ive.inputs)}, cleans=parts)
    return None


@node_rewriter("Log")
def log_of_sigmoid(b: Builder, node: Node):
    """log(sigmoid(x)) -> -softplus(-x): x itself far left, -exp(x) far right, never log of a subnormal."""
    sigmoid = _producer(node.inputs[0], "Sigmoid")
    if sigmoid is None:
        return None
    x = sigmoid.inputs[0]
    return Replacement({node.outputs[0]: b.op("Neg", b.op("Softplus", b.op("Neg", x)))}, cleans=(sigmoid,))


def recognise(graph: Graph) -> None:
    """Rewrite the compositions in place (their parts are removed where nothing else reads them)."""
    apply_rewrites(graph, [ive_times_exp_abs, log_of_sigmoid])
