"""The lifting dispatch: one rule per PyTensor Op class, found along the MRO."""

from __future__ import annotations

from collections.abc import Callable

from ptonnx.errors import UnsupportedOpError

#: Op class -> rule(ctx, node) -> list of IR values, one per PyTensor output
LIFTERS: dict[type, Callable] = {}


def lifts(*op_classes: type):
    """Register the decorated function as the lifting rule of these Op classes."""

    def decorate(fn: Callable) -> Callable:
        for cls in op_classes:
            if cls in LIFTERS and LIFTERS[cls] is not fn:
                raise ValueError(f"{cls.__name__} already lifts with {LIFTERS[cls].__module__}.{LIFTERS[cls].__name__}")
            LIFTERS[cls] = fn
        return fn

    return decorate


#: Blockwise core op class -> its rule, for core ops whose IR op is batched itself (leading axes
#: broadcast): their Blockwise lifts as the op does, one node, not a Loop over the batch
BATCHED: dict[type, Callable] = {}


def lifts_batched(*op_classes: type):
    """`lifts`, and the same rule for a Blockwise of these Op classes (their IR op is batched)."""

    def decorate(fn: Callable) -> Callable:
        lifts(*op_classes)(fn)
        for cls in op_classes:
            BATCHED[cls] = fn
        return fn

    return decorate


def lifter_for(op, variable) -> Callable:
    for cls in type(op).__mro__:
        rule = LIFTERS.get(cls)
        if rule is not None:
            return rule
    raise UnsupportedOpError(op, variable, (c.__name__ for c in LIFTERS), family="PyTensor ops")
