"""Linear algebra: ptonnx's models on onnxruntime (1 thread) against SciPy's LAPACK (1 thread).

Cholesky, SolveTriangular (a triangular factor, n right-hand sides), Solve (general, n right-hand
sides), SLogDet, Eigh and SVD at n = 10, 50, 200 and 1,000, and a batch of 1,000 4x4 matrices; one
model per op with unknown sizes, called at every size. Same-run medians (fewer rounds, at least 3,
for a case slower than --budget; past it, the first call alone, not profiled); ratio = ptonnx / LAPACK. Writes benchmarks/results/linalg.md with
--write (rows of the ops run replace theirs); --profile adds where each case's time goes.

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.linalg [--rounds 7] [--ops Eigh SVD] [--write]

(the script sets the thread count itself when it starts a fresh process: run it as above).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # LAPACK on 1 thread, as onnxruntime below

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
import scipy.linalg  # noqa: E402

import ptonnx  # noqa: E402
from benchmarks._common import RESULTS, ROOT, git_commit, median_seconds, require_committed  # noqa: E402

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


def _session(cm, profile: bool = False):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.enable_profiling = profile
    session = ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    run = lambda *arrays: session.run(None, dict(zip(names, arrays, strict=True)))  # noqa: E731
    run.session = session
    return run


def profile(cm, arrays, seconds: float) -> str:
    """Where a call's time goes, from onnxruntime's profiler (Loop and If bodies included): how many
    kernels run, the call's time (`seconds`, measured without the profiler, which slows each
    kernel down) per kernel run (about 1-2 us means the fixed cost per node dominates), and the
    op types' shares of the profiled kernel time."""
    import collections
    import json

    run = _session(cm, profile=True)
    for _ in range(3):  # the last run, warm (the first allocates)
        run(*arrays)
    path = run.session.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    last = [e for e in events if e.get("name") == "model_run"][-1]
    events = [e for e in events if last["ts"] <= e.get("ts", -1) <= last["ts"] + last["dur"]]
    total = seconds * 1e6
    kernels, counts = collections.Counter(), collections.Counter()
    for e in events:
        op = e.get("args", {}).get("op_name")
        # Loop and If: containers, whose time is their bodies' kernels, listed one by one
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and op not in ("Loop", "If"):
            kernels[op] += e["dur"]
            counts[op] += 1
    runs, busy = sum(counts.values()), sum(kernels.values())
    top = ", ".join(f"{op} {t / busy:.0%} ({counts[op]:,})" for op, t in kernels.most_common(4))
    return f"{runs:,} | {total / max(runs, 1):.1f} | {top}"


def _spd(rng, batch: int, n: int) -> np.ndarray:
    g = rng.normal(size=(batch, n, n))
    return g @ g.transpose(0, 2, 1) / n + np.eye(n)


#: name -> (PyTensor graph of x (a batch of matrices) and b, LAPACK's function of (x, b), which
#: argument the LAPACK result is compared with, how the input x is made). Eigh and SVD results
#: are compared by their (unique) values: eigenvectors and singular vectors are not unique.
OPS = {
    "Cholesky": (lambda x, b: pt.linalg.cholesky(x), lambda x, b: scipy.linalg.cholesky(x, lower=True, check_finite=False), "spd"),
    "SolveTriangular (n right-hand sides)": (lambda x, b: pt.linalg.solve_triangular(x, b, lower=True),
                                             lambda x, b: scipy.linalg.solve_triangular(x, b, lower=True, check_finite=False), "tri"),
    "Solve (general, n right-hand sides)": (lambda x, b: pt.linalg.solve(x, b),
                                            lambda x, b: scipy.linalg.solve(x, b, check_finite=False), "spd"),
    # symmetric positive definite: ptonnx takes Cholesky (determinant.py); LAPACK's slogdet LU
    "SLogDet": (lambda x, b: _slogdet(x)[1], lambda x, b: np.linalg.slogdet(x)[1], "spd"),
    "SLogDet (not symmetric)": (lambda x, b: _slogdet(x)[1], lambda x, b: np.linalg.slogdet(x)[1], "general"),
    "Eigh (values and vectors)": (lambda x, b: pt.linalg.eigh(x)[0], lambda x, b: np.linalg.eigh(x)[0], "spd"),
    "SVD (economic, with U and V)": (lambda x, b: pt.linalg.svd(x, full_matrices=False)[1],
                                     lambda x, b: np.linalg.svd(x, full_matrices=False)[1], "general"),
}


def cases(names):
    """(name, ptonnx callable, LAPACK callable, argument lists by size label): one model per op,
    unknown sizes. SciPy and NumPy batch in C, so a batch costs LAPACK no Python loop."""
    rng = np.random.default_rng(0)
    x3, b3 = pt.dtensor3("x"), pt.dtensor3("b")
    found = []
    for name in names:
        graph, lapack, kind = OPS[name]
        out = [graph(x3, b3)]
        if name.startswith("Eigh"):  # the vectors too (compared: the values, the model's first output)
            out.append(pt.linalg.eigh(x3)[1])
        elif name.startswith("SVD"):
            u, _, vt = pt.linalg.svd(x3, full_matrices=False)
            out += [u, vt]
        inputs = [x3, b3] if "right-hand" in name else [x3]
        cm = ptonnx.compile_function(inputs, out)
        print(f"{name}: {len(cm.model.graph.node)} nodes outside loops; Loop bodies (depth, nodes): {loop_nodes(cm.model)}",
              file=sys.stderr)
        session = _session(cm)
        args = {}
        for label, batch, n in [*((f"n = {n:,}", 1, n) for n in SIZES), ("1,000 x (4 x 4)", 1000, 4)]:
            x = _spd(rng, batch, n)
            if kind == "tri":
                x = np.linalg.cholesky(x)
            elif kind == "general":
                x = rng.normal(size=(batch, n, n))
            args[label] = (x, rng.normal(size=(batch, n, n)))
        run = (lambda s: lambda x, b: s(x, b))(session) if len(inputs) == 2 else (lambda s: lambda x, b: s(x))(session)
        found.append((name, run, lapack, args, cm))
    return found


def _slogdet(x):
    """PyTensor's SLogDet op (pt.linalg.slogdet builds sign and log|det| from Det, which overflows)."""
    try:
        from pytensor.tensor.linalg import SLogDet
    except ImportError:
        from pytensor.tensor.nlinalg import SLogDet
    from pytensor.tensor.blockwise import Blockwise

    return Blockwise(SLogDet())(x)


def _merge(path, new_rows: list[str], columns: int, second: bool = False) -> list[str]:
    """The rows of the file's first (or second) table with `new_rows` in place of those with the
    same op and size, in OPS order; rows of other shapes (an older format) are dropped."""
    def key(row):
        return tuple(cell.strip() for cell in row.strip("|").split("|")[:2])

    tables, current = [], None
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("| op |"):
            current = []
            tables.append(current)
        elif current is not None and line.startswith("| ") and line.count("|") == columns + 1:
            current.append(line)
    old = tables[1 if second else 0] if len(tables) > (1 if second else 0) else []
    merged = {key(r): r for r in old} | {key(r): r for r in new_rows}
    order = {name: k for k, name in enumerate(OPS)}
    return sorted(merged.values(), key=lambda r: order.get(key(r)[0], len(OPS)))


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", nargs="*", default=list(OPS), help=f"which of {list(OPS)} (prefixes)")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds a case may take: fewer rounds (at least 3) past it")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--profile", action="store_true", help="also profile each case once (onnxruntime's profiler)")
    opts = parser.parse_args(argv)
    if opts.write:
        require_committed(RESULTS)
    commit = git_commit()
    header = [f"Linear algebra, onnxruntime {ort.__version__} on 1 thread against SciPy {scipy.__version__}'s LAPACK on 1 "
              "thread; median of up to --rounds rounds (`OPENBLAS_NUM_THREADS=1 python -m benchmarks.linalg --profile "
              "--write`; `--ops` reruns some ops and replaces their rows: `run` is the commit each row was measured at).", "",
              "| op | size | onnxruntime ms | LAPACK ms | ratio | run |", "|---|---|---:|---:|---:|---|"]
    profile_header = ["", "Profiles (`--profile`, onnxruntime's profiler, Loop bodies included): kernel runs in one call, the "
                      "call's time (the median above) per kernel run (1-2 us: the fixed cost per node dominates), and the op "
                      "types' shares of the profiled kernel time (with their runs).", "",
                      "| op | size | kernel runs | us per run | largest kernels | run |", "|---|---|---:|---:|---|---|"]
    names = [n for n in OPS if any(n.startswith(p) for p in opts.ops)]
    rows, profiles = [], []
    for name, ours, theirs, args, cm in cases(names):
        for label, arrays in args.items():
            start = time.perf_counter()
            got, want = ours(*arrays)[0], theirs(*arrays)
            first = time.perf_counter() - start
            assert np.allclose(got, want, rtol=1e-8, atol=1e-10 * max(1.0, float(np.abs(want).max(initial=0)))), (name, label)
            if first > opts.budget:  # one call is all it gets (the first: onnxruntime's allocations included)
                t_ours, t_theirs = first, median_seconds(lambda a=arrays: theirs(*a), opts.rounds)
            else:
                rounds = max(3, min(opts.rounds, int(opts.budget / max(first, 1e-9))))
                t_ours, t_theirs = median_seconds(lambda a=arrays: ours(*a), rounds), median_seconds(lambda a=arrays: theirs(*a), rounds)
            rows.append(f"| {name} | {label} | {t_ours * 1e3:.3f} | {t_theirs * 1e3:.3f} | {t_ours / t_theirs:.1f} | {commit} |")
            print(rows[-1], flush=True)
            if opts.profile and first <= opts.budget:
                profiles.append(f"| {name} | {label} | {profile(cm, arrays[: len(cm.model.graph.input)], t_ours)} | {commit} |")
                print(profiles[-1], flush=True)
    path = ROOT / "benchmarks" / "results" / "linalg.md"
    if opts.write:  # this run's rows replace the same (op, size) rows of earlier runs; the others stay
        rows, profiles = (_merge(path, rows, 6), _merge(path, profiles, 6, second=True))
    text = "\n".join(header + rows + (profile_header + profiles if profiles else [])) + "\n"
    if opts.write:
        path.write_text(text)
    return text


if __name__ == "__main__":
    print(main())
