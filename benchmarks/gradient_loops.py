"""What PyTensor's gradient loops (ScalarLoop) cost in onnxruntime, point by point.

    python -m benchmarks.gradient_loops [--rounds 3] > benchmarks/results/gradient_loops.md

For d/dk gammainc(k, x) and d/da betainc(a, b, x) at one point each (typical
values, the special values that never meet the series' stopping test), prints
the median time of one call in onnxruntime (1 thread, ORT_ENABLE_ALL) and in
PyTensor's C backend. A while loop runs as many trips as its slowest element
needs; the known limits (docs/limits.md) quote this table.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode

import ptonnx
from ptonnx.testing import session_options

GAMMA_POINTS = [(3.0, 2.5), (0.5, 0.1), (1.0, np.nan), (np.nan, 1.0), (-1.0, 1.0), (np.inf, 1.0)]
BETA_POINTS = [(2.0, 3.0, 0.4), (200.0, 300.0, 0.4), (2.0, 2.0, np.nan)]


def _median_seconds(fn, args, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _compare(name, variables, output, points, rounds):
    options = session_options(threads=1, spin=True)
    onnx_fn = ptonnx.compile_function(variables, [output]).with_session_options(options)
    c_fn = pytensor.function(variables, output, mode=Mode(linker="cvm"))
    for point in points:
        args = [np.array([v]) for v in point]
        onnx_s, c_s = _median_seconds(onnx_fn, args, rounds), _median_seconds(c_fn, args, rounds)
        print(f"| {name} | {', '.join(f'{v:g}' for v in point)} | {onnx_s * 1e3:.2f} | {c_s * 1e3:.3f} | {onnx_s / c_s:.0f} |", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"onnxruntime {ort.__version__}, PyTensor {pytensor.__version__}; median of {args.rounds} calls\n")
    print("| gradient | point | onnxruntime ms | PyTensor C ms | ratio |\n|---|---|---|---|---|")
    k, x = pt.dvector("k"), pt.dvector("x")
    _compare("d/dk gammainc(k, x)", [k, x], pt.grad(pt.gammainc(k, x).sum(), k), GAMMA_POINTS, args.rounds)
    a, b, y = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    _compare("d/da betainc(a, b, x)", [a, b, y], pt.grad(pt.betainc(a, b, y).sum(), a), BETA_POINTS, args.rounds)


if __name__ == "__main__":
    main()
