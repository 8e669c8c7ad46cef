"""Where SolveSylvester's two paths cross: one LU of the Kronecker system (mn unknowns) against
B's real Schur form and windows of two columns (`ptonnx/decompositions/linalg/sylvester.py`,
whose SMALL is set from this), and SciPy's solve_sylvester for scale. One model per path with
unknown sizes (the other path switched off by setting SMALL), onnxruntime on 1 thread, medians.
`--large`: Schur and solve_sylvester (the default model, both paths) at larger sizes against
SciPy (docs/limits.md quotes these), fewer rounds.

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.sylvester_paths [--sizes 5 10 20 30 50] [--rounds 7]
    OPENBLAS_NUM_THREADS=1 python -m benchmarks.sylvester_paths --large [--sizes 50 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
import scipy.linalg  # noqa: E402

import ptonnx  # noqa: E402
import ptonnx.decompositions.linalg.sylvester as sylvester  # noqa: E402
from benchmarks._common import median_seconds  # noqa: E402


def median_ms(fn, rounds: int) -> float:
    return median_seconds(fn, rounds) * 1e3


def compiled(small: int):
    """A model of solve_sylvester whose decomposition takes the Kronecker path up to `small` unknowns."""
    saved, sylvester.SMALL = sylvester.SMALL, small
    try:
        a, b, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
        cm = ptonnx.compile_function([a, b, c], [pt.linalg.solve_sylvester(a, b, c)])
    finally:
        sylvester.SMALL = saved
    return _one_thread(cm)


def _one_thread(cm):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return cm.with_session_options(options)


def large(sizes, rounds: int) -> None:
    """Schur and solve_sylvester as users get them, against SciPy, at each size."""
    x, a, b, c = pt.dmatrix("x"), pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    schur = _one_thread(ptonnx.compile_function([x], list(pt.linalg.schur(x))))
    solve = _one_thread(ptonnx.compile_function([a, b, c], [pt.linalg.solve_sylvester(a, b, c)]))
    rng = np.random.default_rng(1)
    print("| n | Schur ms | SciPy schur ms | Sylvester ms | SciPy solve_sylvester ms |")
    print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        g = rng.normal(size=(n, n))
        a_, b_ = g / np.sqrt(n) + 3 * np.eye(n), rng.normal(size=(n, n)) / np.sqrt(n) + 2 * np.eye(n)
        c_ = rng.normal(size=(n, n))
        times = [median_ms(lambda: schur(g), rounds), median_ms(lambda: scipy.linalg.schur(g), rounds),
                 median_ms(lambda: solve(a_, b_, c_), rounds), median_ms(lambda: scipy.linalg.solve_sylvester(a_, b_, c_), rounds)]
        print(f"| {n} | {times[0]:.1f} | {times[1]:.2f} | {times[2]:.1f} | {times[3]:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--large", action="store_true")
    args = parser.parse_args()
    if args.large:
        return large(args.sizes or [50, 200], args.rounds or 3)
    args.sizes, args.rounds = args.sizes or [5, 10, 15, 20, 30, 50], args.rounds or 7
    kronecker, schur = compiled(1 << 62), compiled(0)
    rng = np.random.default_rng(0)
    print(f"SMALL = {sylvester.SMALL} (m n)")
    print("| m = n | Kronecker ms | Schur windows ms | SciPy ms |")
    print("|---:|---:|---:|---:|")
    for n in args.sizes:
        a = rng.normal(size=(n, n)) / np.sqrt(n) + 3 * np.eye(n)
        b = rng.normal(size=(n, n)) / np.sqrt(n) + 2 * np.eye(n)
        c = rng.normal(size=(n, n))
        times = [median_ms(lambda f=f: f(a, b, c), args.rounds) for f in (kronecker, schur)]
        times.append(median_ms(lambda: scipy.linalg.solve_sylvester(a, b, c), args.rounds))
        print(f"| {n} | {times[0]:.2f} | {times[1]:.2f} | {times[2]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
