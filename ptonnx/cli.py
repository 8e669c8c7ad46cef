"""The `ptonnx` command: compile a built-in example, show what each stage did, check it, save it."""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _parser() -> argparse.ArgumentParser:
    from ptonnx.examples import EXAMPLES
    from ptonnx.passes import DEFAULT_PASSES

    p = argparse.ArgumentParser(prog="ptonnx", description=__doc__)
    p.add_argument("--example", choices=list(EXAMPLES), default=next(iter(EXAMPLES)), help="built-in graph to compile")
    p.add_argument("--passes", default=",".join(DEFAULT_PASSES), help="comma-separated pass list (default: %(default)s)")
    p.add_argument("--output", "-o", default=None, help="where to write the .onnx file (default: out/<example>.onnx)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the IR")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import pytensor
    from pytensor.compile.mode import Mode

    import ptonnx
    from ptonnx.api import function_graph
    from ptonnx.examples import EXAMPLES

    inputs, outputs, arrays = EXAMPLES[args.example]()
    passes = [p for p in args.passes.split(",") if p]
    print(f"ptonnx {ptonnx.__version__}: compiling example {args.example!r} with passes {passes}")

    if not args.quiet:
        print("\n== IR after lifting ==")
        print(ptonnx.lift(function_graph(inputs, outputs), args.example))

    start = time.perf_counter()
    cm = ptonnx.compile(function_graph(inputs, outputs), passes, name=args.example, verify_each=True)
    total = time.perf_counter() - start
    if not args.quiet:
        print("\n== IR after the passes ==")
        print(cm.ir)
    print("\n== pass report ==")
    print(cm.report)
    print(f"compile total: {total * 1e3:.1f} ms; ONNX nodes: {len(cm.model.graph.node)}; checker: passed")

    expected = pytensor.function(inputs, outputs, mode=Mode(linker="py", optimizer=None))(*arrays)
    actual = cm(*arrays)
    print("\n== onnxruntime vs PyTensor ==")
    worst_ok = True
    for out, a, e in zip(cm.output_names, actual, expected, strict=True):
        e = np.asarray(e)
        same_type = a.dtype == e.dtype and a.shape == e.shape
        diff = float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)), initial=0.0))
        tol = 1e-5 * max(1.0, float(np.max(np.abs(e.astype(np.float64)), initial=0.0))) if e.dtype.kind == "f" else 0.0
        ok = same_type and diff <= tol
        worst_ok &= ok
        print(f"  {out:<12} {str(e.dtype):<8} {str(e.shape):<10} max |diff| = {diff:.3g}  {'ok' if ok else 'MISMATCH'}")

    path = args.output or os.path.join("out", f"{args.example}.onnx")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    cm.save(path)
    print(f"\nwrote {path} ({os.path.getsize(path)} bytes)")
    if not worst_ok:
        print("ERROR: onnxruntime and PyTensor disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
