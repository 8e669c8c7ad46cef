"""The order operand of the Bessel functions (Ive, Jv, Kve): a constant known when the decompose
stage rewrites the node selects a cheaper formula, or is refused with a reason."""

from __future__ import annotations

from ptonnx.errors import LoweringError
from ptonnx.ir.printer import describe_source, format_node


def constant_order(node) -> float | None:
    """The order's value when it is one constant number broadcast over x (else None)."""
    order, x = node.inputs[0], node.inputs[1]
    if order.const is None or order.const.size != 1 or order.type.ndim > x.type.ndim:
        return None
    return float(order.const.reshape(()))


def refuse(node, message: str):
    """A LoweringError naming the node, where the user created it, and why."""
    raise LoweringError(f"{format_node(node)}{describe_source(node)}\n  {message}")
