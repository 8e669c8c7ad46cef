"""What onnxruntime's Loop costs before any arithmetic: the floor under column-by-column algorithms.

Cholesky, LU (SLogDet, Det, Solve) and every other factorisation with pivoting or square roots
take n steps in sequence, one per column, whatever the blocking (the panel's columns are still
factored one after another). In onnxruntime a step is a Loop trip: a fixed cost per trip and a
cost per body node, paid however small the tensors are. This script times hand-made Loops (ONNX
built with onnx.helper, no ptonnx) of n trips whose body is k chained `Add`s on a vector of n
float64 (almost no arithmetic), fits time = n (trip + k node), and sets it against LAPACK's
Cholesky and LU on one thread in the same run: the most nodes a column step could have for a
model to be within a given factor of LAPACK, if its arithmetic cost nothing.

It also times the floor under one-sided Jacobi in blocks (`svd_block.py`, Eigh and SVD): a sweep
is some k' + 8 rounds of disjoint rotations in sequence (k' = n rounded up to 16), and a round
cannot do less than turn the accumulated rotations V and the Gram matrices G of the n / 16 block
pairs, (n / 16, 16, 16) each: three batched MatMuls (V <- R V, G <- R G R^T). A Loop of one
sweep's rounds whose body is those three MatMuls alone, against LAPACK's SVD (gesdd) and
symmetric eigensolver (syevd) times the Eigh and SVD goal factor, gives the most sweeps such a
Jacobi could run if nothing else cost anything (SVD at n = 200 takes 9, Eigh 11 + 2:
`benchmarks/jacobi_sweeps.py`).

Last, single nodes on a QR panel (200 x 32 float64) in a Loop body, each against a Sub of the
same size: what a column step should avoid (docs/ir.md, "Keep per-trip work minimal").

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.loop_floor [--n 200] [--factor 5] [--jacobi-factor 20] [--write]
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import scipy.linalg  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from benchmarks._common import RESULTS, ROOT, git_commit, require_committed, median_seconds  # noqa: E402

NODES = (1, 2, 4, 8, 12, 16)


def loop_model(nodes: int, n: int) -> bytes:
    """A Loop of n trips carrying an (n,) float64 vector through `nodes` chained Adds."""
    body_nodes, last = [], "x_in"
    for i in range(nodes):
        body_nodes.append(helper.make_node("Add", [last, "one"], [f"y{i}"]))
        last = f"y{i}"
    body_nodes += [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                   helper.make_node("Identity", [last], ["x_out"])]
    vector = lambda name: helper.make_tensor_value_info(name, TensorProto.DOUBLE, [n])  # noqa: E731
    body = helper.make_graph(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), vector("x_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), vector("x_out")],
        [helper.make_tensor("one", TensorProto.DOUBLE, [], [1.0])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "go", "x"], ["out"], body=body)], "floor", [vector("x")], [vector("out")],
        [helper.make_tensor("trips", TensorProto.INT64, [], [n]), helper.make_tensor("go", TensorProto.BOOL, [], [True])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def jacobi_model(rounds: int, pairs: int, width: int = 16) -> bytes:
    """A Loop of `rounds` trips turning V and G (pairs, width, width) float64 by a fixed R: the three
    batched MatMuls a block round of one-sided Jacobi cannot skip."""
    cube = lambda name: helper.make_tensor_value_info(name, TensorProto.DOUBLE, [pairs, width, width])  # noqa: E731
    body = helper.make_graph(
        [helper.make_node("MatMul", ["r", "v_in"], ["v_out"]), helper.make_node("MatMul", ["r", "g_in"], ["rg"]),
         helper.make_node("MatMul", ["rg", "r_t"], ["g_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         cube("v_in"), cube("g_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), cube("v_out"), cube("g_out")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "go", "v", "g"], ["v_end", "g_end"], body=body)], "jacobi_floor",
        [cube("v"), cube("g"), cube("r"), cube("r_t")], [cube("v_end"), cube("g_end")],
        [helper.make_tensor("trips", TensorProto.INT64, [], [rounds]), helper.make_tensor("go", TensorProto.BOOL, [], [True])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def jacobi_floor(n: int, rounds: int) -> tuple[float, int, int]:
    """(seconds for one sweep's rounds of the three MatMuls, rounds a sweep, block pairs) at n."""
    blocks = -(-n // 16) * 2  # an even count of blocks of 8 rows
    sweep_rounds = 7 + 8 * (blocks - 1)
    pairs = blocks // 2
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(16, 16)))
    r = np.broadcast_to(q, (pairs, 16, 16)).copy()
    eye = np.broadcast_to(np.eye(16), (pairs, 16, 16)).copy()
    s = session(jacobi_model(sweep_rounds, pairs), ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    feed = {"v": eye, "g": eye, "r": r, "r_t": np.ascontiguousarray(np.swapaxes(r, 1, 2))}
    return median_seconds(lambda: s.run(None, feed), rounds), sweep_rounds, pairs


#: single nodes on a panel x (1, 200, 32): (label, op, inputs besides x, attributes)
PANEL_NODES = (
    ("Sub of two panels", "Sub", ["x"], {}),
    ("Mul by a column mask (200, 1)", "Mul", ["mask"], {}),
    ("Where, a row mask (32,) broadcast", "Where", ["row_mask", "zero"], {}),
    ("Gather of the 200 rows (axis 1)", "Gather", ["rows"], {"axis": 1}),
    ("Gather of the 32 columns (last axis)", "Gather", ["columns"], {"axis": 2}),
)


def panel_model(op: str, extra: list[str], attrs: dict, trips: int) -> bytes:
    """A Loop of `trips` trips whose body runs one `op` on the carried panel (the result
    discarded: the panel itself is carried on)."""
    inputs = {"Where": ["row_mask", "zero", "x_in"]}.get(op, ["x_in", *extra])
    panel = lambda name: helper.make_tensor_value_info(name, TensorProto.DOUBLE, [1, 200, 32])  # noqa: E731
    body = helper.make_graph(
        [helper.make_node(op, inputs, ["y"], **attrs), helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["x_in"], ["x_out"]), helper.make_node("ReduceMax", ["y"], ["m"], keepdims=0)],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         panel("x_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), panel("x_out"),
         helper.make_tensor_value_info("m", TensorProto.DOUBLE, [])])
    rng = np.random.default_rng(0)
    constants = [helper.make_tensor("mask", TensorProto.DOUBLE, [200, 1], (np.arange(200) > 50).astype(float)),
                 helper.make_tensor("row_mask", TensorProto.BOOL, [32], np.arange(32) == 5),
                 helper.make_tensor("zero", TensorProto.DOUBLE, [], [0.0]),
                 helper.make_tensor("rows", TensorProto.INT64, [200], rng.permutation(200)),
                 helper.make_tensor("columns", TensorProto.INT64, [32], rng.permutation(32)),
                 helper.make_tensor("trips", TensorProto.INT64, [], [trips]), helper.make_tensor("go", TensorProto.BOOL, [], [True])]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "go", "x"], ["x_end", "ms"], body=body)], "panel", [panel("x")],
        [panel("x_end"), helper.make_tensor_value_info("ms", TensorProto.DOUBLE, None)], constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def panel_nodes(rounds: int, trips: int = 200) -> dict[str, float]:
    """{label: seconds a node, the body's ReduceMax and the trip excluded (an Identity's body
    measured the same way is subtracted)}."""
    x = np.random.default_rng(1).normal(size=(1, 200, 32))
    base = session(panel_model("Identity", [], {}, trips), ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    floor = median_seconds(lambda: base.run(None, {"x": x}), rounds)
    found = {}
    for label, op, extra, attrs in PANEL_NODES:
        s = session(panel_model(op, extra, attrs, trips), ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        found[label] = (median_seconds(lambda s=s: s.run(None, {"x": x}), rounds) - floor) / trips
    return found


def session(model: bytes, level) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = level
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def measure(n: int, rounds: int) -> tuple[dict[int, float], float, float]:
    """({body nodes: seconds for n trips}, fixed seconds a trip, seconds a node) at ORT_ENABLE_ALL."""
    x = np.zeros(n)
    times = {}
    for k in NODES:
        s = session(loop_model(k, n), ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        times[k] = median_seconds(lambda s=s: s.run(None, {"x": x}), rounds)
    slope, intercept = np.polyfit(list(times), [t / n for t in times.values()], 1)
    return times, float(intercept), float(slope)


def lapack(n: int, rounds: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, n))
    spd = a @ a.T + n * np.eye(n)
    return {
        "Cholesky (potrf)": median_seconds(lambda: scipy.linalg.cholesky(spd, lower=True, check_finite=False), rounds),
        "LU (getrf)": median_seconds(lambda: scipy.linalg.lu_factor(spd, check_finite=False), rounds),
        "SLogDet": median_seconds(lambda: np.linalg.slogdet(spd), rounds),
        "SVD (gesdd)": median_seconds(lambda: np.linalg.svd(a, full_matrices=False), rounds),
        "Eigh (syevd)": median_seconds(lambda: np.linalg.eigh(spd), rounds),
    }


def report(n: int, factor: float, rounds: int, jacobi_factor: float = 20.0) -> str:
    times, trip, node = measure(n, rounds)
    refs = lapack(n, rounds)
    lines = [f"onnxruntime {ort.__version__}, 1 thread, ORT_ENABLE_ALL; n = {n} trips; medians of {rounds} calls; "
             f"commit {git_commit()} (`OPENBLAS_NUM_THREADS=1 python -m benchmarks.loop_floor --n {n} --factor {factor:g} "
             f"--jacobi-factor {jacobi_factor:g}`).",
             "", "| body nodes (chained Add) | ms for the Loop |", "|---:|---:|"]
    lines += [f"| {k} | {t * 1e3:.3f} |" for k, t in times.items()]
    lines += ["", f"Fit: {trip * 1e6:.2f} us a trip (the condition's and the carried value's Identity included) "
              f"+ {node * 1e6:.2f} us a body node.", "",
              f"| LAPACK, n = {n} | ms | {factor:g}x | most nodes a column step may have at zero arithmetic cost |",
              "|---|---:|---:|---:|"]
    for name in ("Cholesky (potrf)", "LU (getrf)", "SLogDet"):
        t = refs[name]
        allowed = (factor * t / n - trip) / node
        lines.append(f"| {name} | {t * 1e3:.3f} | {factor * t * 1e3:.3f} | {max(allowed, 0):.1f} |")
    sweep, sweep_rounds, pairs = jacobi_floor(n, max(rounds // 4, 5))
    lines += ["", f"Block one-sided Jacobi at n = {n}: a sweep is {sweep_rounds} rounds; their three batched MatMuls on "
              f"({pairs}, 16, 16) alone take {sweep * 1e3:.2f} ms ({sweep / sweep_rounds * 1e6:.1f} us a round).", "",
              f"| LAPACK, n = {n} | ms | {jacobi_factor:g}x | most sweeps at that floor |", "|---|---:|---:|---:|"]
    for name in ("SVD (gesdd)", "Eigh (syevd)"):
        t = refs[name]
        lines.append(f"| {name} | {t * 1e3:.3f} | {jacobi_factor * t * 1e3:.1f} | {jacobi_factor * t / sweep:.1f} |")
    nodes = panel_nodes(max(rounds // 4, 5))
    sub = nodes["Sub of two panels"]
    lines += ["", "One node on a 200 x 32 float64 panel in a Loop body (less an Identity's body):", "",
              "| node | us | against the Sub |", "|---|---:|---:|"]
    lines += [f"| {label} | {t * 1e6:.1f} | {t / sub:.1f} |" for label, t in nodes.items()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--factor", type=float, default=5.0)
    parser.add_argument("--jacobi-factor", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=101)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.write:
        require_committed(RESULTS)
    text = report(args.n, args.factor, args.rounds, args.jacobi_factor)
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "loop_floor.md").write_text(
            "What onnxruntime's Loop costs before any arithmetic (benchmarks/loop_floor.py).\n\n" + text)
    return text


if __name__ == "__main__":
    main()
