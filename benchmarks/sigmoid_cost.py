"""What the accurate sigmoid would cost the CNN path: YOLO11n with SiLU/FusedConv's sigmoid as the
IR Sigmoid's decomposition (`decompositions/elementary/exp_log.py`, a few ulp everywhere) against
onnxruntime's Sigmoid (the default).

    python -m benchmarks.sigmoid_cost [--imgsz 320] [--runs 20]

Prints median latencies (1 thread, interleaved runs) at both onnxruntime levels and
their ratio. This is why `SiLU`/`FusedConv` keep onnxruntime's Sigmoid (docs/limits.md, known limits).
"""

from __future__ import annotations

import argparse
import time

import attrs
import numpy as np
import onnxruntime as ort

import ptonnx
from ptonnx.api import function_graph
from ptonnx.ir import Builder, Graph, Node
from ptonnx.ir.rewrite import apply_rewrites, node_rewriter
from ptonnx.models import yolo11n
from ptonnx.passes.base import PassResult
from ptonnx.passes.decompose import decompose
from ptonnx.testing import session_options


@node_rewriter("SiLU", "FusedConv")
def _accurate_silu(b: Builder, node: Node):
    """SiLU(x) -> x * Sigmoid(x); FusedConv(silu) -> y * Sigmoid(y) with y its activation-free FusedConv."""
    if node.op == "SiLU":
        y = node.inputs[0]
    elif node.attrs["activation"] == "silu":
        y = b.op("FusedConv", *node.inputs, **{**node.attrs, "activation": "none"})
    else:
        return None
    return {node.outputs[0]: b.op("Mul", y, b.op("Sigmoid", y))}


@attrs.define
class AccurateSiLU:
    """After the fusion: each SiLU's Sigmoid as the IR Sigmoid's decomposition (what an IR Sigmoid runs)."""

    name: str = "accurate_silu"

    def run(self, graph: Graph) -> PassResult:
        fired = apply_rewrites(graph, [_accurate_silu])["_accurate_silu"]
        decompose(graph)
        return PassResult(bool(fired), fired)


def _compile_with(x, y, accurate: bool):
    """Compile with SiLU/FusedConv's Sigmoid as the accurate decomposition, or onnxruntime's (the default)."""
    passes = list(ptonnx.DEFAULT_PASSES)
    if accurate:
        passes.insert(passes.index("fuse_conv_bn_silu") + 1, AccurateSiLU())
    return ptonnx.compile(function_graph([x], [y]), passes).model


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
