"""Exceptions raised by ptonnx.

Every message names the op, the value (as a printed IR line or PyTensor
variable) and what the user can do about it.
"""

from __future__ import annotations


class PtonnxError(Exception):
    """Base class of every error ptonnx raises on purpose."""


class UnsupportedOpError(PtonnxError, NotImplementedError):
    """A PyTensor op (or scalar op) has no lifting rule."""

    def __init__(self, op, variable, supported, family: str = "ops", reason: str | None = None):
        self.op = op
        self.variable = variable
        self.supported = sorted(supported)
        self.reason = reason
        listed = ", ".join(self.supported)
        if reason:  # refused by design: say why, not the whole list
            super().__init__(f"ptonnx refuses {op!s} (producing {variable!s}): {reason}")
            return
        super().__init__(
            f"ptonnx cannot lift {op!s} (producing {variable!s}): no lifting rule for it.\n"
            f"Supported {family}: {listed}.\n"
            "Rewrite the graph to use supported ops, or add a lifting rule "
            "(see ptonnx/lifting/)."
        )


class SignatureError(PtonnxError, TypeError):
    """Inputs or outputs that `pytensor.function` would refuse too (a number as an output, ...)."""


class LiftingError(PtonnxError):
    """A supported op appeared in a form ptonnx cannot translate faithfully."""


class RandomVariableError(LiftingError):
    """The graph draws random numbers; a compiled model cannot (see the message for what to do)."""


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


class StageError(PassError):
    """A compilation stage's precondition does not hold: the passes chosen left the graph unfit
    for a later stage (`ptonnx/stages.py` says what each stage requires)."""


class LoweringError(PtonnxError):
    """The IR cannot be emitted as a valid ONNX model."""


class RuntimeMismatchError(PtonnxError, ValueError):
    """Inputs given to a compiled model do not match its signature, or their shapes do not fit together."""


class CheckFailedError(PtonnxError):
    """A run-time check of the graph failed (PyTensor's Assert, CheckAndRaise, SpecifyShape,
    a broadcast PyTensor forbids). The compiled model raises a subclass that is also the
    exception PyTensor raises (AssertionError, ValueError, ...), so `except` clauses written
    for PyTensor still catch it."""


def __getattr__(name: str):
    # DuplicateInputError is also PyTensor's UnusedInputError, as `pytensor.function` raises;
    # it is made on first use so that importing the IR does not import PyTensor.
    if name == "DuplicateInputError":
        from pytensor.compile import UnusedInputError

        cls = type(
            "DuplicateInputError",
            (PtonnxError, UnusedInputError),
            {"__doc__": "The same variable listed twice among the inputs (`pytensor.function` refuses it too).", "__module__": __name__},
        )
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
