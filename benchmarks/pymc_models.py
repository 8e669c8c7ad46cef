#!/usr/bin/env python
"""PyMC models: one log-density-plus-gradient evaluation in onnxruntime against PyTensor.

Run in the pymc environment (`make bench-pymc`, or `.venv-pymc/bin/python
benchmarks/pymc_models.py`): PyMC 5.28 pins pytensor 2.38, whose default backend
is C. PyTensor 3.0's default backend is Numba, and PyMC cannot be installed beside
pytensor 3.0, so the Numba column is pytensor 2.38's own Numba backend (`mode="NUMBA"`)
on the same graph: the nearest this machine can get to what 3.0 users run.

For each model of `tests/pymc/models.py` at n = 100 and n = 10,000 observations:

- the function: `logp` and its gradient with respect to every continuous value
  variable, as PyMC's samplers need them (`rewrite_pregrad`, then `pytensor.grad`),
  compiled by `pymc.pytensorf.compile` (PyMC's own rewrites: invalid parameters
  give -inf) for PyTensor, and by `ptonnx.pymc.compile_logp` (the same graph) for
  onnxruntime, which runs it on 1 thread (intra- and inter-op), at its default
  optimisation level, called as users call it: `CompiledModel(*arrays)` (inputs
  checked, outputs fresh arrays), with the inputs already float64 arrays. PyTensor's function is called with `trust_input = True` (no
  input conversion: its fastest call).
- call time: the median over rounds of the mean time per call in a round; the
  round-robin over the backends within each round makes machine load (this is
  a shared 2-core box) hit every backend alike, so the ratios are same-run ratios.
- compile time: PyTensor's `compile` (the C backend's module cache is warm after a
  first run: the time is that of a user's second session), ptonnx's compile (lift,
  passes, lower, check) plus creating the onnxruntime session.
- correctness first: before timing, each backend's logp and gradient at the initial
  point are compared with PyTensor's Python evaluation (`linker="py"`: SciPy's
  special functions), and the largest relative error is reported. onnxruntime is
  timed only within 1e-10; PyTensor's backends are timed whatever they give (they
  are what users have) and their error is reported: the C backend's digamma is
  accurate to ~1e-10 only (robust_regression's gradient in nu).

Writes benchmarks/results/pymc_models.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np


from benchmarks._common import ROOT, git_commit, require_committed
from ptonnx.testing import session_options

SIZES = (100, 10_000)
RTOL = 1e-10


def _pytensor_function(model, mode):
    import pytensor
    from pymc.pytensorf import compile as pymc_compile
    from pymc.pytensorf import rewrite_pregrad

    logp = rewrite_pregrad(model.logp())
    grads = pytensor.grad(logp, model.continuous_value_vars, disconnected_inputs="ignore")
    fn = pymc_compile(list(model.value_vars), [logp, *grads], mode=mode, on_unused_input="ignore")
    fn.trust_input = True
    return fn


def _session(cm, profile_prefix: str | None = None):
    """onnxruntime on 1 thread (intra- and inter-op), at its default optimisation level."""
    import onnxruntime as ort

    options = session_options(threads=1, spin=True, execution_mode=ort.ExecutionMode.ORT_SEQUENTIAL)
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    return ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _ort_function(model):
    """The CompiledModel users get, in a 1-thread session (created here: it is compile time)."""
    import onnxruntime as ort

    import ptonnx.pymc

    options = session_options(threads=1, spin=True, execution_mode=ort.ExecutionMode.ORT_SEQUENTIAL)
    cm = ptonnx.pymc.compile_logp(model).with_session_options(options)
    cm.session  # noqa: B018 (opened now, within the compile time)
    return cm


def interleaved_us(calls: dict, rounds: int) -> dict:
    """key -> µs per call: the median over `rounds` of each call's mean time in a round, the calls
    taking turns within each round (so machine load hits them alike: same-run ratios), in the
    reverse order every other round (so no call always runs right after another's), each warmed
    up first and run for about the same time a round (its count from its warm calls' median)."""
    per_round = {key: _calls_per_round(call) for key, call in calls.items()}
    samples = {key: [] for key in calls}
    order = list(calls.items())
    for r in range(rounds):
        for key, call in order if r % 2 == 0 else order[::-1]:
            k = per_round[key]
            start = time.perf_counter()
            for _ in range(k):
                call()
            samples[key].append((time.perf_counter() - start) / k)
    return {key: statistics.median(s) * 1e6 for key, s in samples.items()}


def _timed(build):
    start = time.perf_counter()
    result = build()
    return result, time.perf_counter() - start


def _calls_per_round(call, budget: float = 0.05) -> int:
    """Calls for about `budget` seconds, from the median of warm calls (the first ones run slow:
    onnxruntime plans its memory on the first)."""
    times, spent = [], 0.0
    while len(times) < 5 or (spent < budget and len(times) < 50):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    once = max(statistics.median(times), 1e-7)
    return max(1, min(2000, int(budget / once)))


#: models whose n is not a count of observations: timed up to these sizes (the GP's n is the size of
#: its covariance matrix, 10,000 would be a 10,000 x 10,000 Cholesky; the bivariate Kalman filter's
#: n is its number of sequential scan steps, as the state-space models')
LARGEST = {"gp_marginal": 100, "kalman_bivariate": 100, "level_trend_measurement_error": 100, "sarimax_arma11": 100}


def measure(name: str, n: int, rounds: int, backends: tuple[str, ...]) -> dict:
    from tests.pymc.models import MODELS

    from ptonnx.testing import reference_mode

    model = MODELS[name](n)
    point = model.initial_point()
    row = {"model": name, "n": n, "free": int(sum(np.size(v) for v in point.values()))}
    args = [np.asarray(point[v.name], dtype=v.dtype) for v in model.value_vars]
    # PyTensor's reference evaluation first: PyTensor 2.38's Numba compile rewrites the inner graph
    # of an OpFromGraph under a Blockwise in place (pymc-devs/pytensor#2028: sarimax's discrete
    # Lyapunov solve gets an in-place TRSYL), which its Python linker then refuses to compile
    expected = [np.asarray(a) for a in _pytensor_function(model, reference_mode())(*args)]
    fns, compile_s = {}, {}
    fns["C"], compile_s["C"] = _timed(lambda: _pytensor_function(model, None))
    if "NUMBA" in backends:
        fns["NUMBA"], compile_s["NUMBA"] = _timed(lambda: _pytensor_function(model, "NUMBA"))
    cm, compile_s["ORT"] = _timed(lambda: _ort_function(model))
    calls = {key: (lambda f=f: f(*args)) for key, f in fns.items()}
    calls["ORT"] = lambda: cm(*args)
    if "IREE" in backends:
        import ptonnx.pymc
        from ptonnx.iree_runtime import IreeCompileError

        try:
            iree, compile_s["IREE"] = _timed(lambda: ptonnx.pymc.compile_logp(model, runtime="iree"))
            calls["IREE"] = lambda: iree(*args)
        except IreeCompileError as exc:
            lines = str(exc).strip().splitlines()
            row["iree_refused"] = lines[min(1, len(lines) - 1)].strip()[:200]
    row["onnx_nodes"] = len(cm.model.graph.node)
    row["max_rel_error"] = {key: _max_rel_error([np.asarray(a) for a in call()], expected) for key, call in calls.items()}
    row["mismatch"] = {}
    for key in ("ORT", "IREE"):
        if key in row["max_rel_error"] and not row["max_rel_error"][key] <= RTOL:
            row["mismatch"][key] = f"max relative error {row['max_rel_error'][key]:.2g} against PyTensor's Python evaluation"
    timed = {key: call for key, call in calls.items() if key not in row["mismatch"]}
    row["call_us"] = interleaved_us(timed, rounds)
    row["compile_s"] = compile_s
    return row


def _max_rel_error(got: list[np.ndarray], expected: list[np.ndarray]) -> float:
    if len(got) != len(expected):
        return float("inf")
    worst = 0.0
    for g, e in zip(got, expected, strict=True):
        if g.shape != e.shape or not np.array_equal(np.isfinite(g), np.isfinite(e)):
            return float("inf")
        finite = np.isfinite(e)
        scale = np.maximum(np.abs(e[finite]), np.finfo(np.float64).tiny)
        worst = max(worst, float(np.max(np.abs(g[finite] - e[finite]) / scale, initial=0.0)))
    return worst


#: onnxruntime's profiler records every kernel call of every Loop step, and stops at a fixed number
#: of events: a model with a Loop is profiled at this size (one run at n = 10,000 overflows it)
LOOP_PROFILE_N = 100
#: ... and over this many runs (50 runs of a 100-step Loop fill it as well)
LOOP_PROFILE_RUNS = 5


def profile(name: str, n: int, runs: int = 50) -> tuple[int, dict]:
    """Where onnxruntime's time goes: its own profiler's kernel time per op type, as
    shares of the total, and the kernel calls of each type per run (1 thread). Returns
    the size profiled, which is smaller than n for a model with a Loop."""
    import collections
    import tempfile

    import ptonnx.pymc
    from tests.pymc.models import MODELS

    model = MODELS[name](n)
    cm = ptonnx.pymc.compile_logp(model)
    if any(node.op_type == "Loop" for node in cm.model.graph.node):
        runs = LOOP_PROFILE_RUNS
        if n > LOOP_PROFILE_N:
            n = LOOP_PROFILE_N
            model = MODELS[name](n)
            cm = ptonnx.pymc.compile_logp(model)
    point = model.initial_point()
    feed = {k: np.asarray(point[k]) for k in cm.input_names}
    session = _session(cm, str(Path(tempfile.mkdtemp()) / "ort"))
    for _ in range(runs):
        session.run(None, feed)
    events = json.loads(Path(session.end_profiling()).read_text())
    kernel, count = collections.Counter(), collections.Counter()
    for e in events:
        # a Loop's or If's time holds its body's kernels, which are counted under their own types
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["args"]["op_name"] not in ("Loop", "If"):
            kernel[e["args"]["op_name"]] += e["dur"]
            count[e["args"]["op_name"]] += 1
    total = sum(kernel.values()) or 1
    return n, {op: {"share": t / total, "calls": count[op] // runs} for op, t in kernel.most_common()}


def _ratio(row, key, of="ORT"):
    call = row["call_us"]
    return call[of] / call[key] if of in call and key in call else float("nan")


def _geomean(values) -> float:
    values = [v for v in values if np.isfinite(v)]
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def markdown(rows: list[dict], meta: dict) -> str:
    """One row per model and size: call times, the ratios to PyTensor's C backend, compile times."""
    backends = meta["backends"]
    timed = [b for b in ("C", "NUMBA", "ORT", "IREE") if b in backends]
    label = {"C": "PyTensor C", "NUMBA": "Numba", "ORT": "onnxruntime", "IREE": "IREE"}
    ratios = [("ORT", "C")] + ([("ORT", "NUMBA")] if "NUMBA" in backends else []) + ([("IREE", "C")] if "IREE" in backends else [])
    header = (["model", "n", "free", "ONNX nodes"] + [f"{label[b]} µs" for b in timed] + [f"{a}/{b}" for a, b in ratios]
              + [f"compile {label[b]} s" for b in timed])
    lines = [
        f"PyMC models, logp + gradient per call (ptonnx {meta['commit']}; pymc {meta['pymc']}, pytensor "
        f"{meta['pytensor']}, onnxruntime {meta['onnxruntime']} on 1 thread, IREE {meta.get('iree', '-')} local-sync; "
        f"median of {meta['rounds']} rounds; ratio = ptonnx time / PyTensor time, below 1 is faster; "
        "`ptonnx+ORT`, `IREE` compile times include ptonnx's compile).",
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    for r in rows:
        c, cs = r["call_us"], r["compile_s"]
        cells = [r["model"], f"{r['n']:,}", str(r["free"]), str(r["onnx_nodes"])]
        cells += [f"{c[b]:.1f}" if b in c else "-" for b in timed]
        cells += [f"{_ratio(r, b, a):.2f}" for a, b in ratios]
        cells += [f"{cs[b]:.2f}" if b in cs else "-" for b in timed]
        lines.append("| " + " | ".join(cells) + " |")
    bad = [(r["model"], r["n"], k, v) for r in rows for k, v in r["mismatch"].items()]
    if bad:
        lines += ["", "Not timed (wrong numbers):"] + [f"- {m} n={n} {k}: {v}" for m, n, k, v in bad]
    refused = sorted({(r["model"], r["iree_refused"]) for r in rows if "iree_refused" in r})
    if refused:
        lines += ["", "IREE could not compile:"] + [f"- {m}: {why}" for m, why in refused]
    lines += ["", "Largest relative error of logp and gradient against PyTensor's Python evaluation (SciPy), "
              "over all models and sizes: " + ", ".join(
                  f"{k} {max(r['max_rel_error'][k] for r in rows if k in r['max_rel_error']):.1e}" for k in timed) + "."]
    for n in sorted({r["n"] for r in rows}):
        at_n = [r for r in rows if r["n"] == n]
        text = f"\nn = {n:,}: geometric mean ORT/C {_geomean(_ratio(r, 'C') for r in at_n):.2f} (largest " \
               f"{max(_ratio(r, 'C') for r in at_n):.2f}), onnxruntime faster for {sum(_ratio(r, 'C') <= 1 for r in at_n)} of {len(at_n)} models"
        if "NUMBA" in backends:
            text += f"; ORT/Numba {_geomean(_ratio(r, 'NUMBA') for r in at_n):.2f}"
        if "IREE" in backends:
            text += f"; IREE/C {_geomean(_ratio(r, 'C', 'IREE') for r in at_n):.2f} over the {sum(np.isfinite(_ratio(r, 'C', 'IREE')) for r in at_n)} models it compiles"
            if "NUMBA" in backends:
                text += f" (IREE/Numba {_geomean(_ratio(r, 'NUMBA', 'IREE') for r in at_n):.2f})"
        lines.append(text + ".")
    capped = sorted(name for name, size in LARGEST.items() if any(r["model"] == name for r in rows))
    if capped:
        lines.append("\nTimed at n up to " + ", ".join(f"{LARGEST[m]:,} for {m}" for m in capped)
                     + " only (their n is a matrix size or a number of sequential steps, not observations).")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--no-numba", action="store_true", help="time only PyTensor's C backend")
    parser.add_argument("--no-iree", action="store_true", help="leave out IREE (timed where ptonnx[iree] is installed)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "pymc_models"))
    parser.add_argument("--profile", action="store_true",
                        help="only profile onnxruntime's kernels per op type at each model's largest size (writes <out>_profile.md)")
    parser.add_argument("--render", action="store_true",
                        help="measure nothing: rewrite <out>.md from <out>.json (the commit it names is the measured one)")
    args = parser.parse_args(argv)
    if args.render:
        measured = json.loads(Path(args.out + ".json").read_text())
        Path(args.out + ".md").write_text(markdown(measured["rows"], measured["meta"]))
        return
    require_committed(Path(args.out))
    if args.profile:
        from tests.pymc.models import MODELS

        largest = max(args.sizes)
        lines = [f"Where onnxruntime's kernel time goes at each model's largest timed size (its profiler, 1 thread, "
                 f"{git_commit()}; a model with a Loop at n = {LOOP_PROFILE_N}): op type, share of kernel time, "
                 "kernel calls per run (a Loop's or If's body counted by its nodes' types).", "", "| model | n | top op types |", "|---|---|---|"]
        for name in args.models or MODELS:
            n, shares = profile(name, min(largest, LARGEST.get(name, largest)))
            top = ", ".join(f"{op} {v['share']:.0%} ({v['calls']:,})" for op, v in list(shares.items())[:6])
            lines.append(f"| {name} | {n:,} | {top} |")
            print(lines[-1], flush=True)
        Path(args.out + "_profile.md").write_text("\n".join(lines) + "\n")
        return

    import onnxruntime
    import pymc
    import pytensor

    from tests.pymc.models import MODELS

    from ptonnx import iree_runtime

    backends = ("C",) + (() if args.no_numba else ("NUMBA",)) + ("ORT",) + (("IREE",) if iree_runtime.available() and not args.no_iree else ())
    rows = []
    for n in args.sizes:
        for name in args.models or MODELS:
            if n > LARGEST.get(name, n):
                continue
            row = measure(name, n, args.rounds, backends)
            rows.append(row)
            print(json.dumps(row), flush=True)
    meta = {"commit": git_commit(), "pymc": pymc.__version__, "pytensor": pytensor.__version__,
            "onnxruntime": onnxruntime.__version__, "rounds": args.rounds, "backends": backends}
    if "IREE" in backends:
        from importlib.metadata import version

        meta["iree"] = version("iree-base-runtime")
    Path(args.out + ".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    table = markdown(rows, meta)
    Path(args.out + ".md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
