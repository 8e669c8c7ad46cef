#!/usr/bin/env python
"""Compiler-speed benchmark: lift, each pass and lowering on big elementwise graphs.

Two graph shapes, built programmatically with `pytensor.tensor` (float32 vectors):

* ``chain``: ``y = x`` then ``y = op(y, ...)`` over and over, cycling through
  ``+ 1`` (an int8 literal), ``* x``, ``tanh``, ``- 0.5`` (a float literal),
  ``maximum(y, x)``, ``* 2`` (int8 literal), ``tanh``. Every literal is a PyTensor
  ``ExpandDims`` of a scalar constant, so the lifted IR has ``Unsqueeze`` nodes
  for constant folding and weak int8 constants for ``unify_dtypes``. One
  dependency chain: the deepest graph possible for its size.
* ``dag``: four inputs, many independent branches (each a short elementwise
  expression over two of the inputs plus a literal; the inputs fan out to every
  branch), summed by a balanced binary tree of ``Add`` (fan-in 2 at each level).

The size of a graph is the number of IR nodes right after lifting (what the
passes and lowering see), counted per graph, not the requested size.

For each (shape, size) the script runs ``ptonnx.compile(fgraph, check=False)``
repeatedly and reads the time of lifting, every pass in ``ptonnx.DEFAULT_PASSES``
and lowering from its report; apart from our own total it times
``onnx.checker.check_model(model, full_check=True)`` (onnx's cost).
PyTensor graph construction is not timed. Each cell is the median over the
repeats; "total" is the median of the per-repeat sums lift + passes + lower.

The target (issue): the time per node at the largest size stays within 2x of
the time per node at the smallest size.

Once per shape, at the smallest size, the compiled model is run in onnxruntime
and compared with PyTensor's own (python linker, no rewrites) evaluation.

Python's cyclic GC stays enabled (that is what users run with); the time spent
inside the collector during our stages is measured and shown in its own column
(`--no-gc` disables it during the timed stages instead). The FunctionGraph is
built with ``clone=False`` (no copy of a 50,000-node graph); no recursion-limit
bump is needed: PyTensor 3.0.7 builds, clones and toposorts a 60,000-deep chain
with its default limit, and ptonnx walks graphs iteratively.

Usage::

    .venv/bin/python benchmarks/compile_speed.py                      # 1000,10000,50000
    .venv/bin/python benchmarks/compile_speed.py --sizes 1000,10000 --repeats 3

Writes ``benchmarks/results/compile_speed.md`` and ``compile_speed.json``.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.graph.fg import FunctionGraph  # noqa: E402

import ptonnx  # noqa: E402
from _common import git_commit  # noqa: E402
from ptonnx.lifting import lift  # noqa: E402
from ptonnx.passes import DEFAULT_PASSES  # noqa: E402

TARGET_RATIO = 2.0
DEFAULT_SIZES = (1_000, 10_000, 50_000)
RESULTS = HERE / "results"


# --------------------------------------------------------------------------
# graphs (PyTensor); `units` = chain steps or DAG branches
# --------------------------------------------------------------------------
CHAIN_STEPS = (
    lambda y, x: y + 1,  # int8 literal: Unsqueeze + Add, weak constant
    lambda y, x: y * x,
    lambda y, x: pt.tanh(y),
    lambda y, x: y - 0.5,  # float literal
    lambda y, x: pt.maximum(y, x),
    lambda y, x: y * 2,  # int8 literal
    lambda y, x: pt.tanh(y),  # keeps |y| <= 1 so the chain never overflows
)


def build_chain(units: int):
    x = pt.vector("x", dtype="float32")
    y = x
    for i in range(units):
        y = CHAIN_STEPS[i % len(CHAIN_STEPS)](y, x)
    return [x], [y]


def _branch(i: int, a, b):
    kind = i % 4
    if kind == 0:
        return pt.tanh(a * b + 1)  # int8 literal
    if kind == 1:
        return pt.maximum(a, b) - 0.25  # float literal
    if kind == 2:
        return pt.sigmoid(a - b) * 3  # int8 literal
    return pt.exp(a * 0.5) + b


def build_dag(units: int):
    xs = [pt.vector(f"x{i}", dtype="float32") for i in range(4)]
    # branch i reads xs[i % 4] and one other input (offset 1, 2 or 3): every input fans out
    level = [_branch(i, xs[i % 4], xs[(i + 1 + (i // 4) % 3) % 4]) for i in range(units)]
    while len(level) > 1:  # balanced reduction tree of binary Adds
        nxt = [level[j] + level[j + 1] for j in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return xs, level


SHAPES = {"chain": build_chain, "dag": build_dag}


def function_graph(inputs, outputs) -> FunctionGraph:
    # clone=False: no copy of a 50,000-node graph; we own these variables anyway.
    return FunctionGraph(inputs, outputs, clone=False)


def ir_size(shape: str, units: int) -> int:
    inputs, outputs = SHAPES[shape](units)
    return len(lift(function_graph(inputs, outputs)))


def build_for_size(shape: str, target: int):
    """A graph of `shape` whose lifted IR has about `target` nodes (calibrated, linear)."""
    a, b = 64, 128
    na, nb = ir_size(shape, a), ir_size(shape, b)
    per_unit = (nb - na) / (b - a)
    units = max(1, round(a + (target - na) / per_unit))
    inputs, outputs = SHAPES[shape](units)
    return inputs, outputs, function_graph(inputs, outputs)


# --------------------------------------------------------------------------
# measurement
# --------------------------------------------------------------------------
class GCTimer:
    """Wall time spent inside CPython's cyclic garbage collector (via `gc.callbacks`)."""

    def __init__(self):
        self.seconds = 0.0
        self.full = 0  # generation-2 (whole-heap) collections
        self._start = 0.0

    def __call__(self, phase, info):
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start
            self.full += info["generation"] == 2

    def __enter__(self):
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc):
        gc.callbacks.remove(self)


def measure_once(fgraph, passes, *, gc_enabled: bool = True) -> dict:
    """One full lift -> passes -> lower -> checker run; seconds per stage."""
    gc.collect()
    if not gc_enabled:
        gc.disable()
    try:
        with GCTimer() as gct:
            ours = _our_stages(fgraph, passes)
    finally:
        gc.enable()
    ours["gc"] = gct.seconds
    ours["gc_full"] = gct.full

    gc.collect()
    start = time.perf_counter()
    onnx.checker.check_model(ours.pop("model"), full_check=True)
    ours["check"] = time.perf_counter() - start
    return ours


def _our_stages(fgraph, passes) -> dict:
    """One `ptonnx.compile` (without the checker), split by the stages its report records.

    `compile` is what users call; it also pauses the cyclic garbage collector
    while it runs (a full collection would walk the user's whole graph).
    "lower" includes the structural `verify` that guards lowering.
    """
    cm = ptonnx.compile(fgraph, passes, check=False)
    report = cm.report
    pass_seconds = {r.name: r.seconds for r in report.records}
    t_lift, t_lower = report.stages["lift"], report.stages["lower"]
    return {
        "n": report.records[0].nodes_before,
        "lift": t_lift,
        "passes": pass_seconds,
        "pass_nodes": {r.name: (r.nodes_before, r.nodes_after, r.rewrites) for r in report.records},
        "lower": t_lower,
        "total": t_lift + sum(pass_seconds.values()) + t_lower,
        "model": cm.model,
        "ir_after": len(cm.ir),
        "onnx_nodes": len(cm.model.graph.node),
        "initializers": len(cm.model.graph.initializer),
    }


def default_repeats(n: int) -> int:
    if n <= 2_000:
        return 15
    if n <= 20_000:
        return 7
    return 5


def verify_against_pytensor(shape: str, inputs, outputs, fgraph) -> str:
    """Run the compiled model in onnxruntime and PyTensor (py linker, no rewrites); compare."""
    from pytensor.compile.mode import Mode

    cm = ptonnx.compile(fgraph)
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-0.9, 0.9, size=37).astype("float32") for _ in inputs]
    got = cm(*arrays)
    fn = pytensor.function(inputs, outputs, mode=Mode(linker="py", optimizer=None))
    want = fn(*arrays)
    assert len(got) == len(want)
    worst = 0.0
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype, (g.dtype, np.asarray(w).dtype)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
        worst = max(worst, float(np.max(np.abs(g - w) / np.maximum(np.abs(w), 1e-6))))
    return f"ok: {len(cm.model.graph.node)} ONNX nodes, outputs match PyTensor (max rel. err {worst:.1e})"


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------
def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def summarize(runs: list[dict], pass_names) -> dict:
    med = statistics.median
    return {
        "n": runs[0]["n"],
        "repeats": len(runs),
        "lift": med(r["lift"] for r in runs),
        "passes": {p: med(r["passes"][p] for r in runs) for p in pass_names},
        "lower": med(r["lower"] for r in runs),
        "total": med(r["total"] for r in runs),
        "total_min": min(r["total"] for r in runs),
        "total_max": max(r["total"] for r in runs),
        "check": med(r["check"] for r in runs),
        "gc": med(r["gc"] for r in runs),
        "gc_full": med(r["gc_full"] for r in runs),
        "us_per_node": med(r["total"] for r in runs) / runs[0]["n"] * 1e6,
        "us_per_node_excl_gc": med(r["total"] - r["gc"] for r in runs) / runs[0]["n"] * 1e6,
        "check_us_per_node": med(r["check"] for r in runs) / runs[0]["n"] * 1e6,
        "pass_nodes": runs[0]["pass_nodes"],
        "ir_after": runs[0]["ir_after"],
        "onnx_nodes": runs[0]["onnx_nodes"],
        "initializers": runs[0]["initializers"],
    }


def markdown(results: dict, pass_names, ratios: dict, meta: dict, checks: dict) -> str:
    head = ["shape", "N (IR nodes)", "repeats", "lift ms", *[f"{p} ms" for p in pass_names],
            "lower ms", "total ms (ours)", "checker ms", "µs/node",
            "of total: GC ms (full GCs)", "µs/node excl. GC", "IR after passes", "ONNX nodes"]
    lines = [
        "# ptonnx compile speed",
        "",
        f"Measured {meta['date']} on {meta['machine']} ({meta['cpus']} CPUs), Python {meta['python']}, "
        f"pytensor {meta['pytensor']}, onnx {meta['onnx']}, commit {meta['commit']}.",
        f"Command: `{meta['command']}`",
        "",
        "Cells are medians over the repeats, in milliseconds. N = IR nodes right after lifting. "
        "total = lift + passes + lower (median of the per-repeat totals); µs/node = total / N. "
        "The ONNX checker (`check_model(full_check=True)`) is onnx's cost, shown apart and not in the total. "
        f"Python's cyclic GC was {meta['gc']} during the timed stages; the GC column is the part of "
        "the total spent inside the collector (and, in parentheses, how many whole-heap generation-2 "
        "collections ran), measured with `gc.callbacks`.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|",
    ]
    for shape, rows in results.items():
        for s in rows:
            cells = [shape, f"{s['n']:,}", str(s["repeats"]), _ms(s["lift"]),
                     *[_ms(s["passes"][p]) for p in pass_names], _ms(s["lower"]), _ms(s["total"]),
                     _ms(s["check"]), f"{s['us_per_node']:.2f}", f"{_ms(s['gc'])} ({s['gc_full']:g})",
                     f"{s['us_per_node_excl_gc']:.2f}", f"{s['ir_after']:,}", f"{s['onnx_nodes']:,}"]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for shape, r in ratios.items():
        lines.append(
            f"- **{shape}**: µs/node at N={r['n_large']:,} / at N={r['n_small']:,} = "
            f"{r['us_large']:.2f} / {r['us_small']:.2f} = **{r['ratio']:.2f}x** "
            f"(target ≤ {TARGET_RATIO:g}x): **{r['verdict']}**; excluding GC time: "
            f"{r['us_large_excl_gc']:.2f} / {r['us_small_excl_gc']:.2f} = {r['ratio_excl_gc']:.2f}x"
        )
    lines.append("")
    lines.append("Correctness (smallest size, onnxruntime vs PyTensor py linker, rtol=1e-4):")
    for shape, msg in checks.items():
        lines.append(f"- {shape}: {msg}")
    return "\n".join(lines) + "\n"


def _meta(argv) -> dict:
    commit = git_commit()
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pytensor": pytensor.__version__,
        "onnx": onnx.__version__,
        "commit": commit,
        "command": "python benchmarks/compile_speed.py " + " ".join(argv),
        "passes": list(DEFAULT_PASSES),
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                    help="comma-separated target IR node counts (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="repeats per size (default: 15 up to 2k nodes, 7 up to 20k, 5 above)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of: %(default)s")
    ap.add_argument("--no-gc", action="store_true",
                    help="disable Python's cyclic GC during the timed stages (default: enabled, as users run)")
    ap.add_argument("--no-verify", action="store_true", help="skip the onnxruntime-vs-PyTensor check")
    ap.add_argument("--out", default=str(RESULTS), help="directory for compile_speed.md/.json")
    args = ap.parse_args(argv)

    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    for s in shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r}; known: {', '.join(SHAPES)}")
    pass_names = list(DEFAULT_PASSES)
    meta = _meta(argv)
    meta["gc"] = "disabled (--no-gc)" if args.no_gc else "left as CPython's defaults by the benchmark (`ptonnx.compile` pauses it itself)"

    results: dict[str, list[dict]] = {}
    checks: dict[str, str] = {}
    for shape in shapes:
        results[shape] = []
        for size in sizes:
            inputs, outputs, fgraph = build_for_size(shape, size)
            if size == sizes[0] and not args.no_verify:
                checks[shape] = verify_against_pytensor(shape, inputs, outputs, fgraph)
                print(f"[{shape}] {checks[shape]}", flush=True)
            repeats = args.repeats or default_repeats(size)
            measure_once(fgraph, pass_names, gc_enabled=not args.no_gc)  # warm-up, not counted
            runs = []
            for _ in range(repeats):
                runs.append(measure_once(fgraph, pass_names, gc_enabled=not args.no_gc))
            s = summarize(runs, pass_names)
            s["target"] = size
            s["runs"] = runs
            results[shape].append(s)
            print(f"[{shape}] N={s['n']:,}: total {_ms(s['total'])} ms ({s['us_per_node']:.2f} µs/node), "
                  f"GC {_ms(s['gc'])} ms, checker {_ms(s['check'])} ms, {repeats} repeats", flush=True)
            del inputs, outputs, fgraph
            gc.collect()

    ratios = {}
    for shape, rows in results.items():
        small, large = rows[0], rows[-1]
        ratio = large["us_per_node"] / small["us_per_node"]
        ratios[shape] = {
            "n_small": small["n"], "n_large": large["n"],
            "us_small": small["us_per_node"], "us_large": large["us_per_node"],
            "ratio": ratio,
            "us_small_excl_gc": small["us_per_node_excl_gc"], "us_large_excl_gc": large["us_per_node_excl_gc"],
            "ratio_excl_gc": large["us_per_node_excl_gc"] / small["us_per_node_excl_gc"],
            "verdict": ("PASS" if ratio <= TARGET_RATIO else "FAIL") if len(rows) > 1 else "n/a (one size)",
        }

    text = markdown(results, pass_names, ratios, meta, checks)
    print()
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_speed.md").write_text(text)
    payload = {"meta": meta, "target_ratio": TARGET_RATIO, "results": results, "ratios": ratios, "checks": checks}
    (out / "compile_speed.json").write_text(json.dumps(payload, indent=2, default=_jsonable) + "\n")
    print(f"wrote {out / 'compile_speed.md'} and {out / 'compile_speed.json'}")
    failed = [s for s, r in ratios.items() if r["verdict"] == "FAIL"]
    return 1 if failed else 0


def _jsonable(obj):
    if isinstance(obj, tuple):
        return list(obj)
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return str(obj)


if __name__ == "__main__":
    sys.exit(main())
