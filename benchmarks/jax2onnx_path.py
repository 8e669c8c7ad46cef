#!/usr/bin/env python
"""ptonnx against the other road to ONNX: PyTensor's JAX backend, then jax2onnx.

    make bench-jax      (or: .venv-jax/bin/python -m benchmarks.jax2onnx_path [--rounds 15])

Runs in its own environment (`.venv-jax`: pymc 5.28, jax, jax2onnx; `make bench-jax` builds it):
jax2onnx is not a dependency of ptonnx. For each model of `tests/pymc/models.py` that the JAX
road exports, at n = 100 and 10,000:

- the function: `logp` and its gradient in every continuous value variable, the graph PyMC's
  samplers use (`rewrite_pregrad`, then `pytensor.grad`). ptonnx compiles it with
  `ptonnx.pymc.compile_logp` (parameter checks kept as -inf switches, as PyMC's compiled functions
  keep them); the JAX road is PyMC's own `get_jaxified_graph` (JAX-mode rewrites; its checks are
  pass-throughs, as in PyMC's JAX samplers) exported by `jax2onnx.to_onnx(...,
  enable_double_precision=True)`. A third file is ptonnx with the checks off
  (`model.check_bounds = False`, PyMC's own switch), the like-for-like of the JAX road.
- time: both files in onnxruntime on 1 thread at its default level (`ORT_ENABLE_ALL`), fed the
  same arrays through `InferenceSession.run`, each file in `SESSIONS` fresh sessions (one
  session's speed is partly luck); interleaved paired rounds, medians, so the ratio
  ptonnx / jax2onnx is a same-run ratio (below 1: ptonnx faster); geometric means per size.
- size: ONNX nodes (bodies included) and the `Where`s among them.
- correctness: each file's logp and gradient against PyTensor's Python evaluation (`linker="py"`,
  SciPy's functions) at the initial point and at a point moved away from it; the largest relative
  error. A ptonnx file off by more than 1e-10 is not timed (a bug to fix); jax2onnx's file is timed
  whatever it gives (it is what its users get), its error reported.

Writes benchmarks/results/jax2onnx_path.{json,md}; docs/performance.md quotes the table.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
from pathlib import Path

import numpy as np


from benchmarks._common import ROOT, git_commit, require_committed
from benchmarks.elementwise_budget import count
from benchmarks.pymc_models import LARGEST, RTOL, _geomean, _max_rel_error, _pytensor_function, interleaved_us
from ptonnx.testing import session_options

SIZES = (100, 10_000)
#: fresh onnxruntime sessions per file: one session's speed is partly luck of its memory plan
#: (the results' summary says how far sessions of one file ran apart: up to 35% at 7532b04),
#: so each file's time is the median of its sessions' medians, all interleaved in one run
SESSIONS = 3
#: an export that takes longer is given up, and reported as not exported
EXPORT_SECONDS = 180


class ExportTimeout(Exception):
    pass


def _timed_out(signum, frame):
    raise ExportTimeout(f"no file after {EXPORT_SECONDS} s")
#: (kind, file): the three ONNX files of each model, in the order they are timed
FILES = ("ptonnx", "ptonnx, no checks", "jax2onnx")


def _graph(model):
    import pytensor
    from pymc.pytensorf import rewrite_pregrad

    logp = rewrite_pregrad(model.logp())
    return logp, pytensor.grad(logp, model.continuous_value_vars, disconnected_inputs="ignore")


def jax2onnx_model(model, args):
    """The JAX road's file: PyMC's jaxified logp + gradient, exported by jax2onnx in float64."""
    import jax
    from jax2onnx import to_onnx
    from pymc.sampling.jax import get_jaxified_graph

    jax.config.update("jax_enable_x64", True)
    logp, grads = _graph(model)
    fn = get_jaxified_graph(list(model.value_vars), [logp, *grads])
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    return to_onnx(lambda *a: tuple(fn(*a)), specs, enable_double_precision=True)


def ptonnx_model(model, checks: bool):
    import ptonnx.pymc

    saved = model.check_bounds
    model.check_bounds = checks
    try:
        return ptonnx.pymc.compile_logp(model).model
    finally:
        model.check_bounds = saved


def _session(model_proto):
    import onnxruntime as ort

    options = session_options(threads=1, spin=True, quiet=True, execution_mode=ort.ExecutionMode.ORT_SEQUENTIAL)
    return ort.InferenceSession(model_proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _points(model, rng):
    """The initial point, and one moved off it by a standard normal step (on the unconstrained
    scale: every such point is valid), as float64 arrays in `value_vars` order."""
    start = model.initial_point()
    first = [np.asarray(start[v.name], dtype=v.dtype) for v in model.value_vars]
    moved = [np.asarray(a + rng.standard_normal(a.shape) * 0.5) if a.dtype.kind == "f" else a for a in first]
    return [first, moved]


def measure(name: str, n: int, rounds: int) -> dict:
    from pytensor.compile.mode import Mode

    from tests.pymc.models import MODELS

    model = MODELS[name](n)
    points = _points(model, np.random.default_rng(n))
    row = {"model": name, "n": n, "nodes": {}, "where": {}, "max_rel_error": {}, "refused": {}}
    reference = _pytensor_function(model, Mode(linker="py", optimizer="fast_run"))
    expected = [[np.asarray(a) for a in reference(*p)] for p in points]
    sessions = {}
    for kind in FILES:
        signal.alarm(EXPORT_SECONDS)  # jax2onnx can take many minutes (and GBs) over a scan
        try:
            proto = jax2onnx_model(model, points[0]) if kind == "jax2onnx" else ptonnx_model(model, kind == "ptonnx")
        except Exception as exc:  # noqa: BLE001 - a refusal is a result of the comparison
            row["refused"][kind] = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:160]}"
            continue
        finally:
            signal.alarm(0)
        row["nodes"][kind], row["where"][kind] = count(proto.graph)
        try:
            session = _session(proto)
            names = [i.name for i in session.get_inputs()]
            feeds = [dict(zip(names, p, strict=True)) for p in points]
            errors = [_max_rel_error([np.asarray(a) for a in session.run(None, f)], e) for f, e in zip(feeds, expected, strict=True)]
        except Exception as exc:  # noqa: BLE001 - an exported file onnxruntime refuses is a result too
            row["refused"][kind] = f"onnxruntime: {(str(exc).strip().splitlines() or [''])[0][:200]}"
            continue
        row["max_rel_error"][kind] = max(errors)
        if kind == "jax2onnx" or row["max_rel_error"][kind] <= RTOL:
            sessions[kind] = [session] + [_session(proto) for _ in range(SESSIONS - 1)], feeds[0]
    calls = {(kind, i): (lambda s=s[i], f=f: s.run(None, f)) for i in range(SESSIONS) for kind, (s, f) in sessions.items()}
    timed = interleaved_us(calls, rounds)
    row["call_us_sessions"] = {kind: [timed[kind, i] for i in range(SESSIONS)] for kind in sessions}
    row["call_us"] = {kind: statistics.median(times) for kind, times in row["call_us_sessions"].items()}
    return row


def _ratio(row, kind):
    call = row["call_us"]
    return call[kind] / call["jax2onnx"] if kind in call and "jax2onnx" in call else float("nan")


def markdown(rows: list[dict], meta: dict) -> str:
    header = ["model", "n", "nodes ptonnx / no checks / jax2onnx", "Where", "µs ptonnx", "µs no checks", "µs jax2onnx",
              "ptonnx / jax2onnx", "no checks / jax2onnx", "rel. error ptonnx", "rel. error jax2onnx"]
    lines = [f"ptonnx against PyTensor → JAX → jax2onnx, logp + gradient per call (ptonnx {meta['commit']}; pymc "
             f"{meta['pymc']}, pytensor {meta['pytensor']}, jax {meta['jax']}, jax2onnx {meta['jax2onnx']}, onnxruntime "
             f"{meta['onnxruntime']} on 1 thread, `ORT_ENABLE_ALL`; {meta.get('sessions', 1)} session(s) a file, the median of their medians over {meta['rounds']} interleaved rounds; "
             "`python -m benchmarks.jax2onnx_path` in `.venv-jax`). Errors: largest relative error of logp and gradient "
             "against PyTensor's Python evaluation at two points.", "",
             "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for r in rows:
        nodes = " / ".join(str(r["nodes"].get(k, "-")) for k in FILES)
        where = " / ".join(str(r["where"].get(k, "-")) for k in FILES)
        us = [f"{r['call_us'][k]:.1f}" if k in r["call_us"] else "-" for k in FILES]
        err = [f"{r['max_rel_error'][k]:.1e}" if k in r["max_rel_error"] else "refused" for k in ("ptonnx", "jax2onnx")]
        lines.append("| " + " | ".join([r["model"], f"{r['n']:,}", nodes, where, *us, f"{_ratio(r, 'ptonnx'):.2f}",
                                        f"{_ratio(r, 'ptonnx, no checks'):.2f}", *err]) + " |")
    for n in sorted({r["n"] for r in rows}):
        at_n = [r for r in rows if r["n"] == n and np.isfinite(_ratio(r, "ptonnx"))]
        if at_n:
            worst = max(at_n, key=lambda r: _ratio(r, "ptonnx"))
            lines.append(f"\nn = {n:,}, {len(at_n)} models both roads export and time: geometric mean ptonnx / jax2onnx "
                         f"{_geomean(_ratio(r, 'ptonnx') for r in at_n):.2f} (largest {_ratio(worst, 'ptonnx'):.2f}, "
                         f"{worst['model']}); with the checks off {_geomean(_ratio(r, 'ptonnx, no checks') for r in at_n):.2f}."
                         + _session_spread(at_n))
    refused = sorted({(r["model"], k, why) for r in rows for k, why in r["refused"].items()})
    if refused:
        lines += ["", "Not exported:"] + [f"- {m}, {k}: {why}" for m, k, why in refused]
    wrong = sorted({(r["model"], r["n"], k, e) for r in rows for k, e in r["max_rel_error"].items() if not e <= RTOL})
    if wrong:
        lines += ["", f"Files off by more than {RTOL:g} (a ptonnx file would not be timed; jax2onnx's are, as its users get them):"] + [
            f"- {m} n={n}, {k}: {e:.2g}" for m, n, k, e in wrong]
    return "\n".join(lines) + "\n"


def _session_spread(rows: list[dict]) -> str:
    """How far one file's sessions ran apart: (slowest - fastest) / median, the largest of a size."""
    spreads = [(max(t) - min(t)) / statistics.median(t) for r in rows for t in r.get("call_us_sessions", {}).values()]
    return f" Sessions of one file ran up to {max(spreads):.0%} apart." if spreads else ""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "jax2onnx_path"))
    parser.add_argument("--table-only", action="store_true", help="rewrite <out>.md from <out>.json (no runs)")
    args = parser.parse_args(argv)
    if args.table_only:
        saved = json.loads(Path(args.out + ".json").read_text())
        Path(args.out + ".md").write_text(markdown(saved["rows"], saved["meta"]))
        return
    require_committed(Path(args.out))
    signal.signal(signal.SIGALRM, _timed_out)
    from importlib.metadata import version

    import jax
    import onnxruntime
    import pymc
    import pytensor

    from tests.pymc.models import MODELS

    rows = []
    for n in args.sizes:
        for name in args.models or MODELS:
            if n > LARGEST.get(name, n):
                continue
            row = measure(name, n, args.rounds)
            rows.append(row)
            print(json.dumps(row), flush=True)
    meta = {"commit": git_commit(), "pymc": pymc.__version__, "pytensor": pytensor.__version__, "jax": jax.__version__,
            "jax2onnx": version("jax2onnx"), "onnxruntime": onnxruntime.__version__, "rounds": args.rounds, "sessions": SESSIONS}
    Path(args.out + ".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    table = markdown(rows, meta)
    Path(args.out + ".md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
