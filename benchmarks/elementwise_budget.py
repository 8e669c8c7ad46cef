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
from benchmarks._common import RESULTS, ROOT, git_commit, require_committed
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


#: what the compositions are built of besides the functions: arithmetic, rounding, and selection
#: (what a `Where` or an fmod costs against a `Mul` decides the forms; nodes as in `CANDIDATES`)
SELECTION_KERNELS = {
    "Mul": ([("Mul", ["x", "x"], "y")], lambda v: v * v),
    "Floor": ([("Floor", ["x"], "y")], np.floor),
    "Mod (fmod)": ([("Mod", ["x", "one"], "y", {"fmod": 1})], lambda v: np.fmod(v, 1.0)),
    "Where (and its Less)": ([("Less", ["x", "zero"], "c"), ("Where", ["c", "x", "zero"], "y")], lambda v: np.where(v < 0, v, 0.0)),
}


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
    cases += [(f"kernel: ONNX {name}", onnx.load_from_string(candidate_model(nodes)), reference, "real")
              for name, (nodes, reference) in SELECTION_KERNELS.items()]
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


#: the four compositions issue 37 asks to fit in 4 ONNX nodes: (the PyTensor function, SciPy's
#: float64 function (the reference at ±inf and NaN), its value in mpmath)
FOUR_NODE_TARGETS = {
    "sigmoid": (pt.sigmoid, sp.expit, lambda m, x: 1 / (1 + m.exp(-x))),
    "log1p": (pt.log1p, np.log1p, lambda m, x: m.log1p(x)),
    "softplus": (pt.softplus, lambda v: np.logaddexp(0.0, v), lambda m, x: m.log1p(m.exp(x))),
    "log_sigmoid": (lambda v: pt.log(pt.sigmoid(v)), sp.log_expit, lambda m, x: -m.log1p(m.exp(-x))),
}
#: every form of 4 ONNX nodes or fewer built from onnxruntime's float64 kernels: (function, form,
#: nodes as (op, inputs, output); "x" is the input, "one"/"zero" constants, the last output the result)
CANDIDATES = [
    ("sigmoid", "Sigmoid(x)", [("Sigmoid", ["x"], "y")]),
    ("sigmoid", "1 / (1 + Exp(-x))", [("Neg", ["x"], "n"), ("Exp", ["n"], "e"), ("Add", ["e", "one"], "d"), ("Reciprocal", ["d"], "y")]),
    ("sigmoid", "Exp(x) / (1 + Exp(x))", [("Exp", ["x"], "e"), ("Add", ["e", "one"], "d"), ("Div", ["e", "d"], "y")]),
    ("log1p", "Log(1 + x)", [("Add", ["x", "one"], "u"), ("Log", ["u"], "y")]),
    ("log1p", "Log(u) * x / (u - 1), u = 1 + x, unguarded (5 nodes)",
     [("Add", ["x", "one"], "u"), ("Sub", ["u", "one"], "m"), ("Log", ["u"], "l"), ("Div", ["x", "m"], "q"), ("Mul", ["l", "q"], "y")]),
    ("softplus", "Softplus(x)", [("Softplus", ["x"], "y")]),
    ("softplus", "Log(1 + Exp(x))", [("Exp", ["x"], "e"), ("Add", ["e", "one"], "u"), ("Log", ["u"], "y")]),
    ("softplus", "Max(x, 0) + Softplus(-|x|)",
     [("Abs", ["x"], "a"), ("Neg", ["a"], "n"), ("Softplus", ["n"], "s"), ("Max", ["x", "zero"], "m"), ("Add", ["m", "s"], "y")]),
    ("log_sigmoid", "Log(Sigmoid(x))", [("Sigmoid", ["x"], "s"), ("Log", ["s"], "y")]),
    ("log_sigmoid", "-Softplus(-x)", [("Neg", ["x"], "n"), ("Softplus", ["n"], "s"), ("Neg", ["s"], "y")]),
    ("log_sigmoid", "x - Softplus(x)", [("Softplus", ["x"], "s"), ("Sub", ["x", "s"], "y")]),
]


def edge_values() -> np.ndarray:
    """The sweep of `values` (both signs, 1e-300 .. 1e3) and the ends of the range: ±0,
    subnormals, ±inf, NaN, and where float64 exp over- and underflows."""
    special = [0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310, 1e-17, -1e-17, 2.0**-53, -(2.0**-53), -1 + 2.0**-53,
               -1.0, -0.5, 36.5, -36.5, 36.8, -36.8, 40.0, -40.0, 709.7, -709.7, 709.8, -709.8, 710.0, -710.0,
               745.1, -745.1, 746.0, -746.0, 1e300, -1e300, np.inf, -np.inf, np.nan]
    sweep = np.concatenate([np.logspace(-300, 3, 4001), -np.logspace(-300, 3, 4001), np.linspace(-50, 50, 2001)])
    return np.concatenate([sweep, special])


def ulp_errors(got: np.ndarray, x: np.ndarray, reference, exact) -> np.ndarray:
    """|got - f(x)| in units in the last place of f(x) (mpmath at 40 digits; SciPy's value where x
    is not finite); inf where one of the two is NaN or infinite and the other is not that."""
    import mpmath

    with np.errstate(all="ignore"):
        want = np.asarray(reference(x), dtype=np.float64)
    with mpmath.workdps(40):
        for i in np.flatnonzero(np.isfinite(x)):
            value = exact(mpmath, mpmath.mpf(float(x[i])))
            want[i] = float(value) if isinstance(value, mpmath.mpf) else np.nan  # log1p(x < -1): complex
    err = np.zeros(x.shape)
    same_special = (np.isnan(got) & np.isnan(want)) | (np.isinf(want) & (got == want))
    finite = np.isfinite(want) & np.isfinite(got)
    err[finite] = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
    err[~finite & ~same_special] = np.inf
    return err


def candidate_model(nodes) -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    io = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, [None]) for n in ("x", nodes[-1][2])]
    consts = [numpy_helper.from_array(np.array(v), name) for name, v in (("one", 1.0), ("zero", 0.0))]
    made = [helper.make_node(op, ins, [out], **(rest[0] if rest else {})) for op, ins, out, *rest in nodes]
    graph = helper.make_graph(made, "candidate", io[:1], io[1:], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def _worst(err: np.ndarray, x: np.ndarray) -> str:
    i = int(np.argmax(err))
    return f"{err[i]:.3g} ulp at x = {x[i]:.6g}" if np.isfinite(err[i]) else f"wrong special value at x = {x[i]:.6g}"


def four_node_table() -> str:
    """The issue-37 question for each function: does a form of at most 4 ONNX nodes stay within
    ptonnx's accuracy? ptonnx's composition and every candidate measured on one grid."""
    x = edge_values()
    lines = ["| function | form | ONNX nodes | worst error on the grid |", "|---|---|---:|---|"]
    for name, (build, reference, exact) in FOUR_NODE_TARGETS.items():
        ours = ptonnx.compile_function([X], [build(X)])
        (got,) = ours(x)
        lines.append(f"| {name} | ptonnx's composition | {count(ours.model.graph)[0]} | {_worst(ulp_errors(got, x, reference, exact), x)} |")
        for function, form, nodes in CANDIDATES:
            if function == name:
                session = ort.InferenceSession(candidate_model(nodes), session_options("ORT_ENABLE_ALL", threads=1, quiet=True),
                                               providers=["CPUExecutionProvider"])
                (got,) = session.run(None, {"x": x})
                lines.append(f"| {name} | `{form}` | {len(nodes)} | {_worst(ulp_errors(got, x, reference, exact), x)} |")
    return "\n".join(lines)


def _horner(var: str, coefficients: int, monic: bool, tag: str) -> list:
    """Horner's rule in `var` over `coefficients` constants (timing only: the constants are 1):
    a Mul and an Add a coefficient, one Mul fewer for a leading coefficient of 1."""
    nodes, acc = [], "one" if monic else var
    for i in range(coefficients):
        if i or not monic:
            nodes.append(("Mul", [acc, var], f"{tag}m{i}"))
            acc = f"{tag}m{i}"
        nodes.append(("Add", [acc, "one"], f"{tag}a{i}"))
        acc = f"{tag}a{i}"
    return nodes


def _reduced_by_half_pi() -> list:
    """Cody and Waite: k = Round(x 2/pi), r = x - k p1 - k p2 - k p3 (the products exact)."""
    nodes = [("Mul", ["x", "one"], "t"), ("Round", ["t"], "k")]
    last = "x"
    for i in range(3):
        nodes += [("Mul", ["k", "one"], f"kp{i}"), ("Sub", [last, f"kp{i}"], f"r{i}")]
        last = f"r{i}"
    return nodes


#: The least any accurate float64 composition of these functions must run, as onnxruntime runs
#: it (a kernel a node, no fusion): (function, what the skeleton is, its nodes, NumPy/SciPy's
#: function). Each skeleton is a part of every such composition, so it is a floor on its time.
FLOORS = {
    "sin": ("Cody-Waite reduction by pi/2 (8 nodes) and sin's degree-13 odd polynomial on "
            "[-pi/4, pi/4] (14); no choice of sin or cos by quadrant, no |x| >= 2**20",
            _reduced_by_half_pi() + [("Mul", ["r2", "r2"], "z")] + _horner("z", 5, False, "s")
            + [("Mul", ["r2", "z"], "rz"), ("Mul", ["rz", "sa4"], "q"), ("Add", ["r2", "q"], "y")], np.sin),
    "cos": ("the same reduction (8) and cos's degree-14 even polynomial (14); no quadrant",
            _reduced_by_half_pi() + [("Mul", ["r2", "r2"], "z")] + _horner("z", 6, False, "c")
            + [("Mul", ["z", "ca5"], "q"), ("Sub", ["one", "q"], "y")], np.cos),
    "erfc": ("exp(-x**2) (3 nodes, one Exp) times Cephes' erfc rational P8(x) / Q8(x) for x >= 1 "
             "(31); no small-x range, no x**2 split, no selection",
             [("Mul", ["x", "x"], "xx"), ("Neg", ["xx"], "nx"), ("Exp", ["nx"], "e")] + _horner("x", 9, False, "p")
             + _horner("x", 8, True, "q") + [("Div", ["pa8", "qa7"], "ratio"), ("Mul", ["e", "ratio"], "y")], sp.erfc),
}
#: erf's floor is erfc's skeleton too (erf = 1 - erfc beyond 0.5: one node more), against SciPy's erf
FLOORS["erf"] = (FLOORS["erfc"][0] + "; erf = 1 - erfc one node more, not counted", FLOORS["erfc"][1], sp.erf)
#: what the floors are held to: issue 37's "within 1.5x NumPy/SciPy's time", at 10^6 elements
WITHIN = 1.5


def floor_rows(rounds: int) -> list[dict]:
    """Each floor's skeleton, and onnxruntime's own Sin/Cos kernel where there is one, timed at
    10^6 elements against NumPy/SciPy's function on the same values (interleaved rounds)."""
    n, rows = SIZES[-1], []
    x = values("real", n)
    for name, (what, nodes, reference) in FLOORS.items():
        row = {"function": name, "skeleton": what, "nodes": len(nodes)}
        timed = {"skeleton": candidate_model(nodes)}
        if name in ("sin", "cos"):
            timed["kernel"] = kernel_model(name.capitalize())
        sessions = {k: ort.InferenceSession(m, session_options("ORT_ENABLE_ALL", threads=1, quiet=True),
                                            providers=["CPUExecutionProvider"]) for k, m in timed.items()}
        samples = {k: [] for k in [*sessions, "numpy"]}
        with np.errstate(all="ignore"):
            for _ in range(rounds + 1):  # the first round warms up
                for k, session in sessions.items():
                    samples[k].append(_median_seconds(lambda s=session: s.run(None, {"x": x}), 1))
                samples["numpy"].append(_median_seconds(lambda: reference(x), 1))
        for k, times in samples.items():
            row[f"{k}_ns"] = statistics.median(times[1:]) / n * 1e9
        rows.append(row)
        print(row, flush=True)
    return rows


def floor_table(rows: list[dict]) -> str:
    lines = ["| function | NumPy/SciPy ns/element | 1.5x that | onnxruntime's own kernel alone | arithmetic skeleton: nodes, ns/element, x NumPy/SciPy | the skeleton |",
             "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        kernel = f"{r['kernel_ns']:.2f} ({r['kernel_ns'] / r['numpy_ns']:.2f}x)" if "kernel_ns" in r else "none in float64"
        lines.append(f"| {r['function']} | {r['numpy_ns']:.2f} | {WITHIN * r['numpy_ns']:.2f} | {kernel} | "
                     f"{r['nodes']}, {r['skeleton_ns']:.2f}, {r['skeleton_ns'] / r['numpy_ns']:.2f}x | {r['skeleton'].replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


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
    if args.write:
        require_committed(RESULTS)
    rows = measure(args.rounds)
    floors = floor_table(floor_rows(args.rounds))
    candidates = four_node_table()
    text = (f"# Node budget of the accurate elementwise functions (`python -m benchmarks.elementwise_budget`)\n\n"
            f"ptonnx {git_commit()}; onnxruntime {ort.__version__} on 1 thread (`ORT_ENABLE_ALL`), NumPy {np.__version__}; "
            f"float64; median of {args.rounds} interleaved rounds. Each function compiled alone; nodes include bodies.\n\n"
            f"{table(rows)}\n\n"
            "## Forms of at most 4 ONNX nodes\n\n"
            f"Issue 37 asks for sigmoid, log1p, softplus and log_sigmoid in 4 ONNX nodes or fewer. Every such form "
            f"of onnxruntime's float64 kernels, and ptonnx's composition, on one grid ({edge_values().size:,} points: "
            "a log-spaced sweep of both signs from 1e-300 to 1e3, a linear one over [-50, 50], ±0, subnormals, ±inf, "
            "NaN, and where exp over- and underflows), against mpmath at 40 digits (SciPy at ±inf and NaN); the error "
            "in units in the last place of the true value, the worst point named. ptonnx's stated bound for each is a "
            "few ulp (`docs/limits.md`); a form off by more at some point is the measurement that forbids it.\n\n"
            f"{candidates}\n\n"
            "## Floors: can sin, cos, erf and erfc come within 1.5x NumPy/SciPy?\n\n"
            "Issue 37 asks for these four within 1.5x NumPy/SciPy's time at 10^6 float64 elements. onnxruntime "
            "runs a graph a kernel a node, each node a pass over memory, with no fusion of elementwise nodes. So "
            "a composition costs at least the sum of its nodes, and every accurate composition holds the skeleton "
            "below (timed as onnxruntime runs it, its constants 1: the time does not depend on them). Where the "
            "skeleton alone, or onnxruntime's own kernel alone, takes more than 1.5x, no composition of "
            "onnxruntime's kernels meets the target.\n\n"
            f"{floors}\n")
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "elementwise_budget.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
