"""Emitters: one per IR op, `emit(ctx, node, input names) -> output names` (or one name).

Every emitter is registered through `legalised`, so it sees its node in the
dtype onnxruntime computes it in (float16 as float32, bool arithmetic as uint8).
"""

from __future__ import annotations

from collections.abc import Callable

#: IR op -> emitter(ctx, node, input names) -> list of output names
EMITTERS: dict[str, Callable] = {}


def emits(*ops: str):
    from ptonnx.lowering.legalise import legalised

    def decorate(fn):
        wrapped = legalised(fn)
        for op in ops:
            if op in EMITTERS:
                raise ValueError(f"{op} already has an emitter ({EMITTERS[op].__wrapped__.__qualname__}); one op, one emitter")
            EMITTERS[op] = wrapped
        return fn

    return decorate
