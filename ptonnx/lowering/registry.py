"""Emitters: one per IR op, `emit(ctx, node, inputs, outputs)` with ONNX names."""

from __future__ import annotations

from collections.abc import Callable

#: IR op -> emitter(ctx, node, input names, output names)
EMITTERS: dict[str, Callable] = {}


def emits(*ops: str):
    def decorate(fn):
        for op in ops:
            EMITTERS[op] = fn
        return fn

    return decorate
