"""Linear algebra: ptonnx's models on onnxruntime (1 thread) against SciPy's LAPACK (1 thread).

Cholesky, SolveTriangular (a triangular factor, n right-hand sides), Solve (general, n right-hand
sides) and SLogDet at n = 10, 50, 200 and 1,000, and a batch of 1,000 4x4 matrices; one model per op with unknown sizes, called at every
size. Same-run medians; ratio = ptonnx / LAPACK. Writes benchmarks/results/linalg.md with --write.

    OPENBLAS_NUM_THREADS=1 python benchmarks/linalg.py [--rounds 7] [--write]

(the script sets the thread count itself when it starts a fresh process: run it as above).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # LAPACK on 1 thread, as onnxruntime below

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
import scipy.linalg  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ptonnx  # noqa: E402
from benchmarks._common import ROOT, git_commit  # noqa: E402

SIZES = (10, 50, 200, 1000)


def loop_nodes(model) -> list[tuple[int, int]]:
    """(depth, ONNX nodes) of every Loop body: onnxruntime runs each body node every trip, at
    about 1 us a node whatever the sizes here, so these counts are what the small sizes cost."""
    found = []

    def walk(graph, depth):
        for node in graph.node:
            for attr in node.attribute:
                if node.op_type == "Loop" and attr.name == "body":
                    found.append((depth, len(attr.g.node)))
                    walk(attr.g, depth + 1)

    walk(model.graph, 1)
    return found


def _session(cm):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return lambda *arrays: session.run(None, dict(zip(names, arrays, strict=True)))


def _median(fn, rounds: int) -> float:
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cases():
    """(name, ptonnx callable, LAPACK callable, argument lists by size label)."""
    rng = np.random.default_rng(0)
    x3, l3, b3 = pt.dtensor3("x"), pt.dtensor3("l"), pt.dtensor3("b")
    chol_cm = ptonnx.compile_function([x3], [pt.linalg.cholesky(x3)])
    tri_cm = ptonnx.compile_function([l3, b3], [pt.linalg.solve_triangular(l3, b3, lower=True)])
    solve_cm = ptonnx.compile_function([x3, b3], [pt.linalg.solve(x3, b3)])
    slogdet_cm = ptonnx.compile_function([x3], [_slogdet(x3)[1]])
    for name, cm in (("Cholesky", chol_cm), ("SolveTriangular", tri_cm), ("Solve", solve_cm), ("SLogDet", slogdet_cm)):
        print(f"{name}: {len(cm.model.graph.node)} nodes outside loops; Loop bodies (depth, nodes): {loop_nodes(cm.model)}",
              file=sys.stderr)
    chol, tri, solve, slogdet = _session(chol_cm), _session(tri_cm), _session(solve_cm), _session(slogdet_cm)
    args = {}
    for n in SIZES:
        g = rng.normal(size=(1, n, n))
        a = g @ g.transpose(0, 2, 1) / n + np.eye(n)
        args[f"n = {n:,}"] = (a, np.linalg.cholesky(a), rng.normal(size=(1, n, n)))
    g = rng.normal(size=(1000, 4, 4))
    a = g @ g.transpose(0, 2, 1) / 4 + np.eye(4)
    args["1,000 x (4 x 4)"] = (a, np.linalg.cholesky(a), rng.normal(size=(1000, 4, 4)))

    def lapack_chol(a):  # SciPy batches in C (1.15+), so the batch costs no Python loop
        return scipy.linalg.cholesky(a, lower=True, check_finite=False)

    def lapack_tri(low, b):
        return scipy.linalg.solve_triangular(low, b, lower=True, check_finite=False)

    def lapack_solve(a, b):
        return scipy.linalg.solve(a, b, check_finite=False)

    def lapack_slogdet(a):
        return np.linalg.slogdet(a)[1]

    return [("Cholesky", lambda a, low, b: chol(a), lambda a, low, b: lapack_chol(a), args),
            ("SolveTriangular (n right-hand sides)", lambda a, low, b: tri(low, b), lambda a, low, b: lapack_tri(low, b), args),
            ("Solve (general, n right-hand sides)", lambda a, low, b: solve(a, b), lambda a, low, b: lapack_solve(a, b), args),
            ("SLogDet", lambda a, low, b: slogdet(a), lambda a, low, b: lapack_slogdet(a), args)]


def _slogdet(x):
    """PyTensor's SLogDet op (pt.linalg.slogdet builds sign and log|det| from Det, which overflows)."""
    try:
        from pytensor.tensor.linalg import SLogDet
    except ImportError:
        from pytensor.tensor.nlinalg import SLogDet
    from pytensor.tensor.blockwise import Blockwise

    return Blockwise(SLogDet())(x)


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write", action="store_true")
    opts = parser.parse_args(argv)
    lines = [f"Linear algebra, onnxruntime {ort.__version__} on 1 thread against SciPy {scipy.__version__}'s LAPACK on 1 thread "
             f"(ptonnx {git_commit()}; median of {opts.rounds} rounds; `OPENBLAS_NUM_THREADS=1 python benchmarks/linalg.py`).", "",
             "| op | size | onnxruntime ms | LAPACK ms | ratio |", "|---|---|---:|---:|---:|"]
    for name, ours, theirs, args in cases():
        for label, arrays in args.items():
            got, want = ours(*arrays)[0], theirs(*arrays)
            assert np.allclose(got, want, rtol=1e-8, atol=1e-10), (name, label)
            t_ours, t_theirs = _median(lambda a=arrays: ours(*a), opts.rounds), _median(lambda a=arrays: theirs(*a), opts.rounds)
            lines.append(f"| {name} | {label} | {t_ours * 1e3:.3f} | {t_theirs * 1e3:.3f} | {t_ours / t_theirs:.1f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if opts.write:
        (ROOT / "benchmarks" / "results" / "linalg.md").write_text(text)
    return text


if __name__ == "__main__":
    print(main())
