"""Exceptions raised by ptonnx.

Every message names the op, the value (as a printed IR line or PyTensor
variable) and what the user can do about it.
"""

from __future__ import annotations


class PtonnxError(Exception):
    """Base class of every error ptonnx raises on purpose."""


class UnsupportedOpError(PtonnxError, NotImplementedError):
    """A PyTensor op (or scalar op) has no lifting rule."""

    def __init__(self, op, variable, supported, family: str = "ops"):
        self.op = op
        self.variable = variable
        self.supported = sorted(supported)
        listed = ", ".join(self.supported)
        super().__init__(
            f"ptonnx cannot lift {op!s} (producing {variable!s}): no lifting rule for it.\n"
            f"Supported {family}: {listed}.\n"
            "Rewrite the graph to use supported ops, or add a lifting rule "
            "(see ptonnx/lifting/)."
        )


class LiftingError(PtonnxError):
    """A supported op appeared in a form ptonnx cannot translate faithfully."""


class IRError(PtonnxError):
    """An edit would break the IR's invariants (SSA, def-use, order)."""


class TypeRuleError(IRError):
    """An op's type rule rejects its inputs or attributes."""


class VerificationError(IRError):
    """`ir.verify` found a graph that breaks an invariant."""


class DtypeError(PtonnxError):
    """Inputs that must share a dtype cannot be brought to one safely."""


class PassError(PtonnxError):
    """A pass failed or left the graph invalid."""


class LoweringError(PtonnxError):
    """The IR cannot be emitted as a valid ONNX model."""


class RuntimeMismatchError(PtonnxError):
    """Inputs given to a compiled model do not match its signature."""
