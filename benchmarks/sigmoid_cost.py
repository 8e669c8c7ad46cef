"""What the accurate sigmoid would cost the CNN path: YOLO11n with SiLU/FusedConv lowered
through `exp_log.sigmoid` (a few ulp everywhere) against onnxruntime's Sigmoid (the default).

    python benchmarks/sigmoid_cost.py [--imgsz 320] [--runs 20]

Prints median latencies (1 thread, interleaved runs) at both onnxruntime levels and
their ratio. This is why `SiLU`/`FusedConv` keep onnxruntime's Sigmoid (docs/limits.md, known limits).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnxruntime as ort

import ptonnx
import ptonnx.lowering.fused as fused_lowering
import ptonnx.lowering.nn as nn_lowering
from ptonnx.api import function_graph
from ptonnx.lowering.exp_log import sigmoid
from ptonnx.models import yolo11n
from ptonnx.testing import session_options


def _compile_with(x, y, accurate: bool):
    """Compile with SiLU/FusedConv's Sigmoid swapped for the accurate composition, or not."""
    if accurate:
        nn_emit, fused_emit = nn_lowering.emit_silu, fused_lowering.emit_fused_conv

        class _Ctx:
            """Forwards to the lowering context, emitting Sigmoid as the accurate composition."""

            def __init__(self, ctx, dtype):
                self._ctx, self._dtype = ctx, dtype

            def __getattr__(self, name):
                return getattr(self._ctx, name)

            def emit1(self, op_type, inputs, *args, **kwargs):
                if op_type == "Sigmoid":
                    return sigmoid(self._ctx, inputs[0], self._dtype)
                return self._ctx.emit1(op_type, inputs, *args, **kwargs)

        from ptonnx.lowering.registry import EMITTERS

        saved = {op: EMITTERS[op] for op in ("SiLU", "FusedConv")}
        EMITTERS["SiLU"] = lambda ctx, node, i: nn_emit(_Ctx(ctx, node.outputs[0].dtype), node, i)
        EMITTERS["FusedConv"] = lambda ctx, node, i: fused_emit(_Ctx(ctx, node.outputs[0].dtype), node, i)
        try:
            return ptonnx.compile(function_graph([x], [y])).model
        finally:
            EMITTERS.update(saved)
    return ptonnx.compile(function_graph([x], [y])).model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--imgsz", type=int, default=320)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    x, y = yolo11n(None, imgsz=args.imgsz)
    models = {"onnxruntime Sigmoid": _compile_with(x, y, False), "accurate sigmoid": _compile_with(x, y, True)}
    image = np.random.default_rng(0).uniform(0, 1, (1, 3, args.imgsz, args.imgsz)).astype(np.float32)
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
        sessions = {}
        for name, model in models.items():
            options = session_options(level, threads=1, spin=True)
            sessions[name] = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        times = {name: [] for name in sessions}
        for _ in range(args.runs):
            for name, session in sessions.items():
                start = time.perf_counter()
                session.run(None, {"images": image})
                times[name].append(time.perf_counter() - start)
        medians = {name: 1000 * float(np.median(t)) for name, t in times.items()}
        nodes = {name: len(m.graph.node) for name, m in models.items()}
        line = ", ".join(f"{name} {ms:.2f} ms ({nodes[name]} nodes)" for name, ms in medians.items())
        ratio = medians["accurate sigmoid"] / medians["onnxruntime Sigmoid"]
        print(f"YOLO11n @{args.imgsz}, {level}, 1 thread, median of {args.runs}: {line}; ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
