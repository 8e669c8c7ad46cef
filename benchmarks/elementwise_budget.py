"""The node budget of the accurate elementwise functions: what each costs in ONNX nodes and time.

    python -m benchmarks.elementwise_budget [--rounds 7] [--write]

Each float64 function of one vector is compiled alone (`compile_function([x], [f(x)])`, the
default passes) and counted: its ONNX nodes, the `Where`s among them, and its time per
element in onnxruntime (one thread, `ORT_ENABLE_ALL`) at n = 10,000 and 10^6, against NumPy's
or SciPy's own function at 10^6 (the same values, in the same process, interleaved rounds,
medians). Inputs span the function's domain (a log-spaced sweep of both signs, and zeros), so
every branch of a composition is taken. The last rows are onnxruntime's own float64 kernels, one
node each, whatever their accuracy: the price of building on them. `--write` saves
benchmarks/results/elementwise_budget.md, the table issue 37 holds the compositions to: a change
that adds nodes shows in its diff.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnx
import onnxruntime as ort
import pytensor.tensor as pt
import scipy.special as sp

import ptonnx
from benchmarks._common import ROOT, git_commit
from ptonnx.testing import session_options

X = pt.dvector("x")
#: name -> (the PyTensor function, NumPy/SciPy's, the domain swept: "real" or "positive")
FUNCTIONS = {
    "exp": (pt.exp, np.exp, "real"),
    "log": (pt.log, np.log, "positive"),
    "log1p": (pt.log1p, np.log1p, "real"),
    "expm1": (pt.expm1, np.expm1, "real"),
    "sigmoid": (pt.sigmoid, sp.expit, "real"),
    "softplus": (pt.softplus, lambda v: np.logaddexp(0.0, v), "real"),
    "log_sigmoid": (lambda v: pt.log(pt.sigmoid(v)), sp.log_expit, "real"),
    "log1mexp": (pt.log1mexp, lambda v: np.log(-np.expm1(v)), "negative"),
    "tanh": (pt.tanh, np.tanh, "real"),
    "sin": (pt.sin, np.sin, "real"),
    "cos": (pt.cos, np.cos, "real"),
    "tan": (pt.tan, np.tan, "real"),
    "erf": (pt.erf, sp.erf, "real"),
    "erfc": (pt.erfc, sp.erfc, "real"),
    "gammaln": (pt.gammaln, sp.gammaln, "positive"),
}
SIZES = (10_000, 1_000_000)
#: onnxruntime's own float64 kernels, one node each (what a composition may build on, and its price)
KERNELS = {"Exp": ("real", np.exp), "Log": ("positive", np.log), "Sigmoid": ("real", sp.expit), "Tanh": ("real", np.tanh),
           "Sin": ("real", np.sin), "Cos": ("real", np.cos), "Softplus": ("real", lambda v: np.logaddexp(0.0, v))}


def values(domain: str, n: int) -> np.ndarray:
    """n values over the domain: magnitudes 1e-300 .. 1e3 (log-spaced), both signs where it has
    them, with zeros; shuffled so no branch runs in one block."""
    magnitudes = np.logspace(-300, 3, n // 2 + 1)
    if domain == "positive":
        out = np.concatenate([magnitudes, magnitudes[::-1]])[:n]
    elif domain == "negative":
        out = -np.concatenate([magnitudes, magnitudes[::-1]])[:n]
    else:
        out = np.concatenate([magnitudes, -magnitudes])[:n]
        out[::97] = 0.0
    return np.random.default_rng(0).permutation(out)


def count(graph) -> tuple[int, int]:
    """(nodes, Where nodes), bodies included."""
    nodes = wheres = 0
    for node in graph.node:
        nodes += 1
        wheres += node.op_type == "Where"
        for attribute in node.attribute:
            if attribute.g.node:
                inner = count(attribute.g)
                nodes, wheres = nodes + inner[0], wheres + inner[1]
    return nodes, wheres


def kernel_model(op: str) -> bytes:
    """A one-node float64 model of the ONNX op `op`."""
    from onnx import TensorProto, helper

    io = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, [None]) for n in ("x", "y")]
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op, io[:1], io[1:])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def _median_seconds(call, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(rounds: int) -> list[dict]:
    rows = []
    cases = [(name, ptonnx.compile_function([X], [build(X)]).model, reference, domain)
             for name, (build, reference, domain) in FUNCTIONS.items()]
    cases += [(f"kernel: ONNX {op}", onnx.load_from_string(kernel_model(op)), reference, domain)
              for op, (domain, reference) in KERNELS.items()]
    for name, model, reference, domain in cases:
        session = ort.InferenceSession(model.SerializeToString(), session_options("ORT_ENABLE_ALL", threads=1, quiet=True),
                                       providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        nodes, wheres = count(model.graph)
        row = {"function": name, "nodes": nodes, "where": wheres}
        for n in SIZES:
            x = values(domain, n)
            session.run(None, {feed: x})  # warm up
            with np.errstate(all="ignore"):
                reference(x)
                ours, theirs = [], []
                for _ in range(rounds):  # interleaved: the same load on both
                    ours.append(_median_seconds(lambda: session.run(None, {feed: x}), 1))
                    theirs.append(_median_seconds(lambda: reference(x), 1))
            row[f"ns_{n}"] = statistics.median(ours) / n * 1e9
            row[f"numpy_ns_{n}"] = statistics.median(theirs) / n * 1e9
        rows.append(row)
        print(row, flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| function | ONNX nodes | Where | ns/element at 10,000 | ns/element at 10^6 | NumPy/SciPy ns/element at 10^6 | ratio at 10^6 |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = r["ns_1000000"] / r["numpy_ns_1000000"]
        lines.append(f"| {r['function']} | {r['nodes']} | {r['where']} | {r['ns_10000']:.2f} | {r['ns_1000000']:.2f} | "
                     f"{r['numpy_ns_1000000']:.2f} | {ratio:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/elementwise_budget.md")
    args = parser.parse_args(argv)
    rows = measure(args.rounds)
    text = (f"# Node budget of the accurate elementwise functions (`python -m benchmarks.elementwise_budget`)\n\n"
            f"ptonnx {git_commit()}; onnxruntime {ort.__version__} on 1 thread (`ORT_ENABLE_ALL`), NumPy {np.__version__}; "
            f"float64; median of {args.rounds} interleaved rounds. Each function compiled alone; nodes include bodies.\n\n"
            f"{table(rows)}\n")
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "elementwise_budget.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
