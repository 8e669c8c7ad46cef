"""Per-step cost of scans in onnxruntime (through ptonnx) against PyTensor's C and
Numba backends: `x + 1` (what one loop trip costs at least), an AR(1) recursion (a scalar state), an RNN cell (a 32-wide state, a
32x32 matrix product per step) and a Kalman-filter step (a 4-vector mean and a 4x4
covariance, five 4x4 matrix products per step), each returning every step's values.

Run: `python -m benchmarks.scan` (writes benchmarks/results/scan.md and scan.json).
Each backend is timed in rounds, interleaved, a round being as many calls as fit in
50 ms; the table gives the median over rounds of the time per call divided by the
number of steps, and ratios of medians of the same run. The state's sizes are static (as
in a model whose state dimension is fixed), but for the last scan, the same Kalman step
with the sizes unknown until run time; the number of steps is an input. onnxruntime runs on one thread
(intra- and inter-op), at its default optimisation level; the model is compiled from
the ONNX mode's rewritten graph, as `pytensor.function(..., mode="ONNX")` does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks._common import RESULTS, git_commit, require_committed
from ptonnx.testing import session_options

warnings.filterwarnings("ignore")


def counter():
    """The floor: one addition per step, the running value returned at every step."""
    import pytensor
    import pytensor.tensor as pt

    steps, x0 = pt.lscalar("steps"), pt.dscalar("x0")
    xs = pytensor.scan(lambda x: x + 1.0, outputs_info=[x0], n_steps=steps, return_updates=False)

    def data(n, rng):
        return [np.int64(n), np.float64(0.0)]

    return [steps, x0], [xs], data


def ar1():
    import pytensor
    import pytensor.tensor as pt

    eps, rho, x0 = pt.dvector("eps"), pt.dscalar("rho"), pt.dscalar("x0")
    xs = pytensor.scan(lambda e, x, r: r * x + e, sequences=[eps], outputs_info=[x0], non_sequences=[rho], return_updates=False)

    def data(n, rng):
        return [rng.normal(size=n), np.float64(0.7), np.float64(0.0)]

    return [eps, rho, x0], [xs], data


def ar1_gradient():
    """The gradient of AR(1)'s sum of squares by the noise and rho: PyTensor's grad builds a
    mit-mot scan, which ptonnx carries as a whole buffer (O(steps) a trip)."""
    import pytensor

    inputs, (xs,), data = ar1()
    eps, rho, _ = inputs
    cost = (xs**2).sum()
    return inputs, pytensor.grad(cost, [eps, rho]), data


def rnn(width: int = 32):
    import pytensor
    import pytensor.tensor as pt

    X = pt.tensor("X", dtype="float64", shape=(None, 8))
    W, U = pt.tensor("W", dtype="float64", shape=(width, width)), pt.tensor("U", dtype="float64", shape=(width, 8))
    b, h0 = pt.tensor("b", dtype="float64", shape=(width,)), pt.tensor("h0", dtype="float64", shape=(width,))
    hs = pytensor.scan(lambda x, h, w, u, b_: pt.tanh(pt.dot(w, h) + pt.dot(u, x) + b_), sequences=[X], outputs_info=[h0],
                       non_sequences=[W, U, b], return_updates=False)

    def data(n, rng):
        return [rng.normal(size=(n, 8)), rng.normal(size=(width, width)) / np.sqrt(width), rng.normal(size=(width, 8)),
                rng.normal(size=width), np.zeros(width)]

    return [X, W, U, b, h0], [hs], data


def kalman(k: int = 4, static: bool = True):
    import pytensor
    import pytensor.tensor as pt

    size = k if static else None

    def matrix(name):
        return pt.tensor(name, dtype="float64", shape=(size, size))

    Y, m0 = pt.tensor("Y", dtype="float64", shape=(None, size)), pt.tensor("m0", dtype="float64", shape=(size,))
    T, Z, Q, H, P0 = (matrix(name) for name in ("T", "Z", "Q", "H", "P0"))

    def step(y, m, P, T_, Z_, Q_, H_):
        m_pred = pt.dot(T_, m)
        P_pred = pt.dot(pt.dot(T_, P), T_.T) + Q_
        S = pt.dot(pt.dot(Z_, P_pred), Z_.T) + H_
        K = pt.dot(pt.dot(P_pred, Z_.T), pt.diag(1.0 / pt.diag(S)))
        v = y - pt.dot(Z_, m_pred)
        ll = -0.5 * (pt.log(pt.diag(S)).sum() + (v * v / pt.diag(S)).sum())
        return m_pred + pt.dot(K, v), P_pred - pt.dot(pt.dot(K, Z_), P_pred), ll

    (ms, _, lls) = pytensor.scan(step, sequences=[Y], outputs_info=[m0, P0, None], non_sequences=[T, Z, Q, H], return_updates=False)

    def data(n, rng):
        T_ = np.eye(k) * 0.9 + np.diag(np.ones(k - 1), 1) * 0.1  # a stable transition: finite likelihoods
        return [rng.normal(size=(n, k)), T_, np.eye(k), np.eye(k) * 0.1, np.eye(k) * 0.5, np.zeros(k), np.eye(k)]

    return [Y, T, Z, Q, H, m0, P0], [ms, lls], data


SCANS = {"x + 1 (the floor)": counter, "AR(1)": ar1, "RNN cell, 32-wide": rnn, "Kalman step, 4x4": kalman,
         "Kalman step, sizes unknown": lambda: kalman(static=False), "AR(1) gradient (mit-mot)": ar1_gradient}


def _session(cm):
    import onnxruntime as ort

    options = session_options(threads=1, spin=True)
    return ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _calls_per_round(call, budget: float = 0.05) -> int:
    start = time.perf_counter()
    call()
    return max(1, min(1000, int(budget / max(time.perf_counter() - start, 1e-7))))


def _max_rel_error(got: np.ndarray, expected: np.ndarray) -> float:
    """Largest relative difference; NaN where one is NaN and the other is not."""
    both_nan = np.isnan(got) & np.isnan(expected)
    with np.errstate(all="ignore"):
        rel = np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)
    rel = np.where(both_nan | (got == expected), 0.0, rel)
    return float(np.max(rel, initial=0.0))


def measure(name: str, n: int, rounds: int) -> dict:
    import pytensor

    import ptonnx
    from ptonnx.mode import onnx_mode

    inputs, outputs, data = SCANS[name]()
    args = [np.asarray(a) for a in data(n, np.random.default_rng(0))]
    fns, failed = {}, {}
    for key, mode in (("C", "CVM"), ("NUMBA", "NUMBA")):
        try:
            fn = pytensor.function(inputs, outputs, mode=mode)
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - a backend that cannot run the scan is reported, not timed
            failed[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            continue
        fn.trust_input = True
        fns[key] = fn
    cm = ptonnx.compile(pytensor.function(inputs, outputs, mode=onnx_mode()).maker.fgraph)
    session = _session(cm)
    feed = dict(zip(cm.input_names, args, strict=True))
    calls = {key: (lambda f=f: f(*args)) for key, f in fns.items()}
    calls["ORT"] = lambda: session.run(None, feed)
    expected = fns["C"](*args)
    got = calls["ORT"]()
    error = max(_max_rel_error(g, e) for g, e in zip(got, expected, strict=True))
    per_round = {key: _calls_per_round(call) for key, call in calls.items()}
    samples = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            start = time.perf_counter()
            for _ in range(per_round[key]):
                call()
            samples[key].append((time.perf_counter() - start) / per_round[key])
    loops = [node for node in cm.model.graph.node if node.op_type == "Loop"]
    return {
        "scan": name, "steps": n, "max_rel_error_vs_C": error,
        "step_us": {key: statistics.median(s) / max(n, 1) * 1e6 for key, s in samples.items()},
        "call_us": {key: statistics.median(s) * 1e6 for key, s in samples.items()},
        "body_nodes": sum(len(loop.attribute[0].g.node) for loop in loops), "onnx_nodes": len(cm.model.graph.node), "failed": failed,
    }


def profile(name: str, n: int = 1000, runs: int = 20) -> dict:
    """onnxruntime's profiler on one scan: the Loop's kernel time per step and the share
    of it spent in the body's own node kernels (the rest is the Loop's per-trip work)."""
    import json
    import tempfile

    import onnxruntime as ort
    import pytensor

    import ptonnx
    from ptonnx.mode import onnx_mode

    inputs, outputs, data = SCANS[name]()
    cm = ptonnx.compile(pytensor.function(inputs, outputs, mode=onnx_mode()).maker.fgraph)
    options = session_options(threads=1, spin=True, enable_profiling=True, profile_file_prefix=str(Path(tempfile.mkdtemp()) / "scan"))
    session = ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = dict(zip(cm.input_names, [np.asarray(a) for a in data(n, np.random.default_rng(0))], strict=True))
    for _ in range(runs):
        session.run(None, feed)
    events = json.loads(Path(session.end_profiling()).read_text())
    kernel = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            kernel[e["args"]["op_name"]] = kernel.get(e["args"]["op_name"], 0.0) + e["dur"]
    loop = kernel.pop("Loop", 0.0)
    body = sum(kernel.values())  # the outer graph's few nodes are counted here too: an upper bound
    return {"scan": name, "steps": n, "loop_us_per_step": loop / runs / n, "body_kernel_share": body / loop if loop else float("nan")}


def markdown(rows: list[dict], meta: dict) -> str:
    lines = [
        "# Scan: per-step cost, onnxruntime against PyTensor's C and Numba backends",
        "",
        f"`python -m benchmarks.scan` at {meta['commit']}; pytensor {meta['pytensor']}, onnxruntime {meta['onnxruntime']}, "
        f"{meta['rounds']} rounds. Times are medians over rounds, in µs per step (the call's time / steps); ratio = "
        "onnxruntime / C, from medians of the same run. onnxruntime on one thread, default optimisation level.",
        "",
        "| scan | steps | C µs/step | Numba µs/step | ORT µs/step | ORT / C | ORT / Numba | Loop body nodes (all Loops) | max rel. error vs C |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    failures = {}
    for r in rows:
        s = r["step_us"]
        numba = f"{s['NUMBA']:.2f}" if "NUMBA" in s else "fails¹"
        by_numba = f"{s['ORT'] / s['NUMBA']:.2f}" if "NUMBA" in s else "–"
        failures.update(r["failed"])
        lines.append(
            f"| {r['scan']} | {r['steps']:,} | {s['C']:.2f} | {numba} | {s['ORT']:.2f} | {s['ORT'] / s['C']:.2f} | "
            f"{by_numba} | {r['body_nodes']} | {r['max_rel_error_vs_C']:.1e} |"
        )
    if failures:
        lines += ["", "¹ PyTensor's Numba backend could not compile the scan: " + "; ".join(sorted(set(failures.values())))]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    import onnxruntime
    import pytensor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 1000, 10000])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", nargs="+", choices=list(SCANS), help="time these scans only (results not written)")
    parser.add_argument("--profile", action="store_true", help="print the share of each Loop's time its body's kernels take")
    args = parser.parse_args(argv)
    if not args.only and not args.profile:  # a full run writes its results
        require_committed(RESULTS)
    if args.profile:
        for name in SCANS:
            p = profile(name)
            print(f"{name:20s} Loop {p['loop_us_per_step']:.2f} µs/step under the profiler; body kernels {p['body_kernel_share']:.0%} of it")
        return
    rows = []
    for name in args.only or SCANS:
        for n in args.steps:
            row = measure(name, n, args.rounds)
            print(f"{name:20s} {n:>6} " + "  ".join(f"{k} {v:8.2f} µs/step" for k, v in row["step_us"].items()), flush=True)
            rows.append(row)
    meta = {"commit": git_commit(), "pytensor": pytensor.__version__, "onnxruntime": onnxruntime.__version__, "rounds": args.rounds}
    if args.only:
        print(markdown(rows, meta))
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scan.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (RESULTS / "scan.md").write_text(markdown(rows, meta))
    print(markdown(rows, meta))


if __name__ == "__main__":
    main()
