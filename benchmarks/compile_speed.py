#!/usr/bin/env python
"""Compiler-speed benchmark: lift, each pass and lowering on big elementwise graphs.

Three graph shapes, built programmatically with `pytensor.tensor` (float32 vectors):

* ``chain``: ``y = x`` then ``y = op(y, ...)`` over and over, cycling through
  ``+ 1`` (an int8 literal), ``* x``, ``tanh``, ``- 0.5`` (a float literal),
  ``maximum(y, x)``, ``* 2`` (int8 literal), ``tanh``. Every literal is a PyTensor
  ``ExpandDims`` of a scalar constant, so the lifted IR has ``Unsqueeze`` nodes
  for constant folding and weak int8 constants for ``unify_dtypes``. One
  dependency chain: the deepest graph possible for its size.
* ``dag``: four inputs, many independent branches (each a short elementwise
  expression over two of the inputs plus a literal; the inputs fan out to every
  branch), summed by a balanced binary tree of ``Add`` (fan-in 2 at each level).
* ``fanout``: ``y = x`` then ``y = (y + x) * -1`` over and over (``-1`` an int8
  literal, one constant once CSE merges its copies): an input and a constant with
  thousands of users, as a data vector read by every term of a log-density.
  Removing a node next to such a value must not walk all its users.

The size of a graph is the number of IR nodes right after lifting (what the
passes and lowering see), counted per graph, not the requested size.

For each (shape, size) the script runs ``ptonnx.compile(fgraph, check=False)``
repeatedly and reads the time of lifting, decompose (with the CSE before it),
every pass in ``ptonnx.DEFAULT_PASSES``, legalise and lowering from its report; apart from our own total it times
``onnx.checker.check_model(model, full_check=True)`` (onnx's cost).
PyTensor graph construction is not timed. Each cell is the median over the
repeats; "total" is the median of the per-repeat sums of all these stages.

The target (issue): the time per node at the largest size stays within 2x (issue 34:
1.5x) of the time per node at the smallest size.

Once per shape, at the smallest size, the compiled model is run in onnxruntime
and compared with PyTensor's own (python linker, no rewrites) evaluation.

Python's cyclic GC stays enabled (that is what users run with); the time spent
inside the collector during our stages is measured and shown in its own column
(`--no-gc` disables it during the timed stages instead). The FunctionGraph is
built with ``clone=False`` (no copy of a 50,000-node graph); no recursion-limit
bump is needed: PyTensor 3.0.7 builds, clones and toposorts a 60,000-deep chain
with its default limit, and ptonnx walks graphs iteratively.

Usage::

    .venv/bin/python -m benchmarks.compile_speed                      # 1000,10000,50000
    .venv/bin/python -m benchmarks.compile_speed --sizes 1000,10000 --repeats 3

Writes ``benchmarks/results/compile_speed.md`` and ``compile_speed.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
from pytensor.graph.fg import FunctionGraph

import ptonnx
from benchmarks._common import (
    GC_DEFAULT,
    RESULTS,
    TARGET_RATIO,
    cells_legend,
    compile_meta,
    jsonable,
    ms,
    per_node_ratio,
    ratio_line,
    report_head,
    require_committed,
    stage_table,
    summarize,
)
from ptonnx.lifting import lift
from ptonnx.passes import DEFAULT_PASSES

DEFAULT_SIZES = (1_000, 10_000, 50_000)


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


def build_fanout(units: int):
    x = pt.vector("x", dtype="float32")
    y = x
    for _ in range(units):  # every Add reads x: x has `units` users
        y = (y + x) * -1  # int8 literal: work for unify_dtypes; y stays x or -2x
    return [x], [y]


SHAPES = {"chain": build_chain, "dag": build_dag, "fanout": build_fanout}


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


#: stages of `compile` around the passes, timed in their own columns when named in `passes`
AROUND = ("decompose", "legalise")


def stage_names() -> list[str]:
    """Every stage between lifting and lowering, in the order `compile` runs them."""
    return ["decompose", *DEFAULT_PASSES, "legalise"]


def measure_once(fgraph, passes, *, gc_enabled: bool = True, n: int | None = None) -> dict:
    """One full lift -> passes -> lower -> checker run; seconds per stage. `n`: the graph's
    size (default: the IR nodes the first pass saw)."""
    gc.collect()
    if not gc_enabled:
        gc.disable()
    try:
        with GCTimer() as gct:
            ours = _our_stages(fgraph, passes)
            if n is not None:
                ours["n"] = n
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

    `compile` is what users call. "lower" includes the structural `verify` that guards lowering; the stages of `AROUND`
    count (and the CSE run before decompose) where `passes` names them.
    """
    cm = ptonnx.compile(fgraph, [p for p in passes if p not in AROUND], check=False)
    report = cm.report
    pass_seconds = {r.name: r.seconds for r in report.records}
    pass_seconds.update({s: report.stages[s] for s in AROUND if s in passes})
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
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.asarray(w).dtype, (g.dtype, np.asarray(w).dtype)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
        worst = max(worst, float(np.max(np.abs(g - w) / np.maximum(np.abs(w), 1e-6))))
    return f"ok: {len(cm.model.graph.node)} ONNX nodes, outputs match PyTensor (max rel. err {worst:.1e})"


# --------------------------------------------------------------------------
# output (the shared parts in _common.py)
# --------------------------------------------------------------------------
def markdown(results: dict, pass_names, ratios: dict, meta: dict, checks: dict) -> str:
    lines = report_head("ptonnx compile speed", meta) + [
        cells_legend(meta, "(and, in parentheses, how many whole-heap generation-2 collections ran), measured "
                           "with `gc.callbacks`. The passes include the stages around them, `decompose` "
                           "(with the CSE that runs before it) and `legalise`."),
        "",
        *stage_table([s for rows in results.values() for s in rows], pass_names, "shape",
                     [shape for shape, rows in results.items() for _ in rows]),
        "",
        *(ratio_line(shape, r) for shape, r in ratios.items()),
        "",
        "Correctness (smallest size, onnxruntime vs PyTensor py linker, rtol=1e-4):",
        *(f"- {shape}: {msg}" for shape, msg in checks.items()),
    ]
    return "\n".join(lines) + "\n"


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
    require_committed(Path(args.out))

    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    for s in shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r}; known: {', '.join(SHAPES)}")
    pass_names = stage_names()
    meta = compile_meta("compile_speed", argv)
    meta["gc"] = "disabled (--no-gc)" if args.no_gc else GC_DEFAULT

    results: dict[str, list[dict]] = {}
    checks: dict[str, str] = {}
    for shape in shapes:
        results[shape] = []
        for size in sizes:
            inputs, outputs, fgraph = build_for_size(shape, size)
            n = len(lift(fgraph))  # the lifted size: the CSE before decompose merges repeats
            if size == sizes[0] and not args.no_verify:
                checks[shape] = verify_against_pytensor(shape, inputs, outputs, fgraph)
                print(f"[{shape}] {checks[shape]}", flush=True)
            repeats = args.repeats or default_repeats(size)
            measure_once(fgraph, pass_names, gc_enabled=not args.no_gc)  # warm-up, not counted
            runs = []
            for _ in range(repeats):
                runs.append(measure_once(fgraph, pass_names, gc_enabled=not args.no_gc, n=n))
            s = summarize(runs, pass_names)
            s["target"] = size
            s["runs"] = runs
            results[shape].append(s)
            print(f"[{shape}] N={s['n']:,}: total {ms(s['total'])} ms ({s['us_per_node']:.2f} µs/node), "
                  f"GC {ms(s['gc'])} ms, checker {ms(s['check'])} ms, {repeats} repeats", flush=True)
            del inputs, outputs, fgraph
            gc.collect()

    ratios = {shape: per_node_ratio(rows) for shape, rows in results.items()}

    text = markdown(results, pass_names, ratios, meta, checks)
    print()
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_speed.md").write_text(text)
    payload = {"meta": meta, "target_ratio": TARGET_RATIO, "results": results, "ratios": ratios, "checks": checks}
    (out / "compile_speed.json").write_text(json.dumps(payload, indent=2, default=jsonable) + "\n")
    print(f"wrote {out / 'compile_speed.md'} and {out / 'compile_speed.json'}")
    failed = [s for s, r in ratios.items() if r["verdict"] == "FAIL"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
