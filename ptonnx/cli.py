"""The `ptonnx` command: compile a built-in model with and without fusion, show what each
pass did, check the numbers against PyTensor, compare latency, and write the fused model."""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time

import numpy as np

UNFUSED = ("constant_folding", "unify_dtypes", "dce")


def _parser() -> argparse.ArgumentParser:
    from ptonnx.examples import EXAMPLES

    p = argparse.ArgumentParser(prog="ptonnx", description=__doc__)
    p.add_argument("--model", choices=list(EXAMPLES), default=next(iter(EXAMPLES)), help="built-in graph (default: %(default)s)")
    p.add_argument("--imgsz", type=int, default=640, help="YOLO11n input size, a multiple of 32 (default: %(default)s)")
    p.add_argument("--weights", default=None, help="YOLO11n weights: an .npz with Ultralytics state_dict names")
    p.add_argument("--runs", type=int, default=20, help="onnxruntime runs per model for the latency comparison")
    p.add_argument("--output", "-o", default=None, help="where to write the fused .onnx (default: out/<model>.onnx)")
    p.add_argument("--show-ir", action="store_true", help="print the IR after lifting and after the passes")
    return p


def _compile(example, passes):
    import ptonnx
    from ptonnx.api import function_graph

    start = time.perf_counter()
    cm = ptonnx.compile(function_graph(example.inputs, example.outputs), passes, name=example.name)
    return cm, time.perf_counter() - start


def _histogram(cm, top: int = 8) -> str:
    counts = collections.Counter(n.op_type for n in cm.model.graph.node)
    return ", ".join(f"{op} {n}" for op, n in counts.most_common(top))


def _check(example, models: dict) -> bool:
    import pytensor
    from pytensor.compile.mode import Mode

    expected = pytensor.function(example.inputs, example.outputs, mode=Mode(linker="py", optimizer=None))(*example.arrays)
    print(f"\n== onnxruntime vs PyTensor (rtol {example.rtol:g}, atol {example.atol:g}) ==")
    ok = True
    for label, cm in models.items():
        for name, a, e in zip(cm.output_names, cm(*example.arrays), expected, strict=True):
            e = np.asarray(e)
            same = a.dtype == e.dtype and a.shape == e.shape and np.allclose(a, e, rtol=example.rtol, atol=example.atol, equal_nan=True)
            diff = float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)), initial=0.0))
            ok &= bool(same)
            print(f"  {label:<8} {name:<12} {str(e.dtype):<8} {str(e.shape):<16} max |diff| {diff:.3g}  {'ok' if same else 'MISMATCH'}")
    return ok


def _latency(example, compiled: dict, runs: int) -> None:
    """Median latency, fused and unfused run interleaved so their ratio is a same-run ratio,
    with onnxruntime's own graph optimisations on (its default) and off."""
    from ptonnx.testing import session_options

    for level, title in (("ORT_ENABLE_ALL", "on (default)"), ("ORT_DISABLE_ALL", "off")):
        options = session_options(level, spin=True)
        models = {label: cm.with_session_options(options) for label, cm in compiled.items()}
        _time_interleaved(example, models, runs, f"onnxruntime graph optimisations {title}")


def _time_interleaved(example, models: dict, runs: int, title: str) -> None:
    times = {label: [] for label in models}
    for cm in models.values():
        cm(*example.arrays)  # warm-up
    for _ in range(runs):
        for label, cm in models.items():
            start = time.perf_counter()
            cm(*example.arrays)
            times[label].append(time.perf_counter() - start)
    medians = {label: statistics.median(t) for label, t in times.items()}
    print(f"\n== latency, CPU, {title}: median of {runs} interleaved runs ==")
    for label, m in medians.items():
        print(f"  {label:<8} {m * 1e3:8.2f} ms   ({len(models[label].model.graph.node)} ONNX nodes)")
    if {"fused", "unfused"} <= set(medians):
        print(f"  fused / unfused: {medians['fused'] / medians['unfused']:.3f}")


def main(argv: list[str] | None = None) -> int:
    from ptonnx.errors import PtonnxError

    try:
        return _main(argv)
    except PtonnxError as exc:  # a user error (bad weights, unsupported op): say it, no traceback
        print(f"ptonnx: error: {exc}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    import ptonnx
    from ptonnx.api import function_graph
    from ptonnx.examples import EXAMPLES

    example = EXAMPLES[args.model](imgsz=args.imgsz, weights=args.weights)
    print(f"ptonnx {ptonnx.__version__}: {example.description}")
    if args.show_ir:
        print("\n== IR after lifting ==")
        print(ptonnx.lift(function_graph(example.inputs, example.outputs), example.name))

    models = {}
    for label, passes in (("fused", None), ("unfused", list(UNFUSED))):
        cm, seconds = _compile(example, passes)
        models[label] = cm
        print(f"\n== {label}: passes {', '.join(r.name for r in cm.report.records)} ==")
        print(cm.report)
        print(f"compile {seconds * 1e3:.1f} ms (checker included); {len(cm.model.graph.node)} ONNX nodes: {_histogram(cm)}")
    if args.show_ir:
        print("\n== IR after the default passes ==")
        print(models["fused"].ir)

    ok = _check(example, models)
    _latency(example, models, args.runs)

    path = args.output or os.path.join("out", f"{example.name}.onnx")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    models["fused"].save(path)
    print(f"\nwrote {path} ({os.path.getsize(path) / 1e6:.2f} MB, the fused model)")
    if not ok:
        print("ERROR: onnxruntime and PyTensor disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
