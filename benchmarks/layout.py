#!/usr/bin/env python
"""The `layout` pass, measured: onnxruntime's broadcasting kernels in both layouts, and PyMC
models compiled with and without the pass.

    python -m benchmarks.layout [--write]                  # the kernels (default environment)
    .venv-pymc/bin/python -m benchmarks.layout --models    # + the PyMC models (pymc environment)

Kernels: one binary op over (N, 1) x (1, K) and (N, K) x (N, 1) operands (N = 10,000, K = 2) and
the same work transposed, (1, N) x (K, 1) and (K, N) x (1, N); and a column (N, 1) against a 0-d,
a (1,) and a (1, 1) operand (onnxruntime's per-row broadcast for the lower ranks); µs per node (a chain of 20 nodes
per session run, median of 100 runs). Models: logp + gradient of the models with (N, K) work
at n = 10,000, `ptonnx.DEFAULT_PASSES` against the same without `layout`, through
`CompiledModel` on 1 thread at onnxruntime's default level, interleaved rounds, medians;
the two models' outputs are checked to agree first (to 1e-13: a sum over N may add in another order). `--write` saves
benchmarks/results/layout.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


from benchmarks._common import RESULTS, ROOT, git_commit, require_committed
from ptonnx.testing import session_options

N, K = 10_000, 2
PAIRS = [((N, 1), (1, K)), ((1, N), (K, 1)), ((N, K), (N, 1)), ((K, N), (1, N))]
#: a column (N, 1) against an operand of lower rank, and of its own rank (`layout`'s column_operands)
COLUMN_PAIRS = [((N, 1), ()), ((N, 1), (1,)), ((N, 1), (1, 1)), ((N,), ())]
MODELS = ("mixture", "zero_inflated", "ordered_logistic")


def kernel_us(op: str, a_shape, b_shape, chain: int = 20) -> float:
    import onnxruntime as ort
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info("a", TensorProto.DOUBLE, a_shape), helper.make_tensor_value_info("b", TensorProto.DOUBLE, b_shape)]
    nodes = [helper.make_node(op, ["a", "b"], [f"o{j}"]) for j in range(chain)]
    outputs = [helper.make_tensor_value_info(f"o{j}", TensorProto.DOUBLE, None) for j in range(chain)]
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", 18)])
    session = ort.InferenceSession(model.SerializeToString(), session_options(threads=1, spin=True), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {"a": np.asarray(rng.random(a_shape) + 1), "b": np.asarray(rng.random(b_shape) + 1)}  # a 0-d shape gives a float
    for _ in range(10):
        session.run(None, feed)
    times = []
    for _ in range(100):
        start = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - start)
    return statistics.median(times) / chain * 1e6


def model_us(name: str, rounds: int = 7) -> dict:
    import ptonnx
    import ptonnx.pymc
    from tests.pymc.models import MODELS as BUILD

    model = BUILD[name](N)
    without = [p for p in ptonnx.DEFAULT_PASSES if p != "layout"]
    cms = {"without layout": ptonnx.pymc.compile_logp(model, passes=without), "with layout": ptonnx.pymc.compile_logp(model)}
    cms = {k: cm.with_session_options(session_options(threads=1, spin=True)) for k, cm in cms.items()}
    args = ptonnx.pymc.inputs_for(cms["with layout"], model)
    results = [cm(*args) for cm in cms.values()]
    # sums over N add in another order: their last bits may differ
    assert all(np.allclose(a, b, rtol=1e-13, atol=0, equal_nan=True) for a, b in zip(*results, strict=True)), f"{name}: the layout changed a number"
    samples = {k: [] for k in cms}
    for _ in range(rounds):
        for key, cm in cms.items():
            start = time.perf_counter()
            for _ in range(20):
                cm(*args)
            samples[key].append((time.perf_counter() - start) / 20 * 1e6)
    row = {k: statistics.median(v) for k, v in samples.items()}
    row["transposed"] = cms["with layout"].report["layout"].details.get("transposed", 0)
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", action="store_true", help="also the PyMC models (needs pymc)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.write:
        require_committed(RESULTS)
    lines = [f"# The layout pass (ptonnx {git_commit()})", "", "Command: `.venv-pymc/bin/python -m benchmarks.layout --models --write`; "
             "onnxruntime on 1 thread, default level.", "", "## Kernels: µs per node, N = 10,000, K = 2", "",
             "| op | " + " | ".join(f"{a} x {b}" for a, b in PAIRS) + " |", "|---|" + "---:|" * len(PAIRS)]
    for op in ("Sub", "Mul", "Div"):
        lines.append(f"| {op} | " + " | ".join(f"{kernel_us(op, a, b):.1f}" for a, b in PAIRS) + " |")
        print(lines[-1], flush=True)
    lines += ["", "## A column against a lower-rank operand: µs per node, N = 10,000", "",
              "| op | " + " | ".join(f"{a} x {b}" for a, b in COLUMN_PAIRS) + " |", "|---|" + "---:|" * len(COLUMN_PAIRS)]
    for op in ("Add", "Mul"):
        lines.append(f"| {op} | " + " | ".join(f"{kernel_us(op, a, b):.1f}" for a, b in COLUMN_PAIRS) + " |")
        print(lines[-1], flush=True)
    if args.models:
        lines += ["", "## PyMC models, logp + gradient, n = 10,000: µs per call", "",
                  "| model | elementwise nodes transposed | without layout | with layout | speed-up |", "|---|---:|---:|---:|---:|"]
        for name in MODELS:
            r = model_us(name)
            lines.append(f"| {name} | {r['transposed']} | {r['without layout']:.0f} | {r['with layout']:.0f} | "
                         f"{r['without layout'] / r['with layout']:.2f}x |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "layout.md").write_text(text)


if __name__ == "__main__":
    main()
