"""Emitters: one per IR op, `emit(ctx, node, input names) -> output names` (or one name).

An emitter sees its node in a dtype onnxruntime runs: the `legalise` pass
(`ptonnx/onnxruntime_dtypes.py`) has already widened what needs widening, with Casts in the IR,
and `check_lowerable` has refused what cannot run.
"""

from __future__ import annotations

from collections.abc import Callable

#: IR op -> emitter(ctx, node, input names) -> list of output names (or one name)
EMITTERS: dict[str, Callable] = {}


def emits(*ops: str):
    def decorate(fn):
        for op in ops:
            if op in EMITTERS:
                raise ValueError(f"{op} already has an emitter ({EMITTERS[op].__qualname__}); one op, one emitter")
            EMITTERS[op] = fn
        return fn

    return decorate
