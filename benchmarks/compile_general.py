#!/usr/bin/env python
"""Compiler-speed benchmark on gradient graphs with indexing and reductions.

The elementwise benchmark (`compile_speed.py`) shows that compile time per IR node
stays flat on big elementwise chains and DAGs. This one asks the same of the
programs PyMC-like users compile: a scalar log-density-like cost over k blocks,
and its gradient with respect to the parameters, all in one graph:
``[cost, *pytensor.grad(cost, [x, w])]``.

Inputs (float64 vectors with no static shape, so slices, gathers and their
gradients keep their shape arithmetic; `idx` an int64 vector of data indices):
``x`` (parameters, 64 long at run time), ``w`` (16 weights), ``y`` (64 observations).
Block ``j`` is one of six kinds (``j % 6``), with its own random slice bounds,
constant index arrays and constants:

0. regression likelihood through a constant gather:
   ``-0.5 * sum(((y[s:e] - (x[g] * w[j] + w[j+1])) / exp(w[j+2]))**2) - n * w[j+2]``
1. mixture: ``logsumexp(x[a:b] + log_weights) + max(x * c)``
2. random walk: ``-0.01 * sum((cumsum(x[a:b]) * w[j] - y[a:b])**2) - mean(x[idx]**2)``
3. forward ``set_subtensor`` and a boolean mask: ``z = set_subtensor(x[a:b], tanh(c * x[a:b]))``;
   ``0.1 * sum(z[y > 0]**2) + min(z) * w[j]``
4. order statistics and a product: ``sum(sort(x[a:b]) * ramp) + prod(1 + 0.1 * tanh(x[a:b] * w[j]))``
5. a reshaped window: ``m = x[a:a+12].reshape((3, 4))``; ``sum(max(m, axis=1)) +
   sum(logsumexp(m * w[j], axis=0)) + 0.05 * sum(inc_subtensor(x[a:b], w[j])[::2]**2)``

The blocks are summed as PyMC sums its terms, ``sum(stack(terms))``. The
gradient brings in ``inc_subtensor``/``AdvancedIncSubtensor1`` for every slice
and gather, the adjoints of max/min/sort/cumsum/logsumexp/prod, and the shape
arithmetic of all of them. k is calibrated so that N (IR nodes right after
lifting) is about each requested size.

What is timed and how is `compile_speed.py`'s own code (`measure_once`, and
`_common.summarize`): `ptonnx.compile(fgraph, check=False)` per repeat, split into lift,
each pass of `ptonnx.DEFAULT_PASSES` and lower from its report, the ONNX checker
apart, Python's GC left on (its share measured), medians over the repeats.
Building the PyTensor graph and its gradient is not timed. All graphs are built
first and the repeats go round-robin over the sizes, so a change in the
machine's load (a shared 2-CPU box) hits every size alike instead of skewing
the ratio.

Once per size, before the timing (it doubles as the warm-up), the compiled
model is run in onnxruntime and compared with PyTensor (python linker, no
rewrites) at a random point, cost and gradient, rtol 1e-9: the benchmark never
times a wrong compile.

Besides the target (µs/node at the largest size within 2x of the smallest), the
script reports each stage's own ratio and the log-log slope of time against N
(1.0 = linear) over all sizes, so a superlinear stage shows even when the total
hides it.

Usage::

    .venv/bin/python -m benchmarks.compile_general            # N ~ 1k, 5k, 20k, 50k; ~2-4 minutes
    .venv/bin/python -m benchmarks.compile_general --quick    # smoke run (~30 s), writes nothing
    .venv/bin/python -m benchmarks.compile_general --profile  # + cProfile of one compile at the largest size

Writes ``benchmarks/results/compile_general.md`` and ``compile_general.json``
(not with ``--quick`` unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import sys
import time
from pathlib import Path

import numpy as np
import pytensor
import pytensor.tensor as pt

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
from benchmarks.compile_speed import function_graph, measure_once
from ptonnx.lifting import lift
from ptonnx.passes import DEFAULT_PASSES

DEFAULT_SIZES = (1_000, 5_000, 20_000, 50_000)
QUICK_SIZES = (1_000, 5_000, 10_000)
RTOL, ATOL = 1e-9, 1e-12
X_LEN, W_LEN, Y_LEN, IDX_LEN = 64, 16, 64, 10
KINDS = 6


# --------------------------------------------------------------------------
# graphs (PyTensor): k blocks of a scalar cost, and its gradient
# --------------------------------------------------------------------------
def _block(j: int, x, w, y, idx, rng: np.random.Generator):
    kind = j % KINDS
    n = 4 + j % 5
    a = int(rng.integers(0, X_LEN - 16))
    b = a + 6 + j % 9  # b <= X_LEN - 2
    c = float(rng.uniform(0.5, 1.5))
    wj = w[j % W_LEN]
    if kind == 0:  # regression likelihood through a constant gather
        g = rng.integers(0, X_LEN, size=n)
        s = int(rng.integers(0, Y_LEN - n))
        mu = x[g] * wj + w[(j + 1) % W_LEN]
        log_sigma = w[(j + 2) % W_LEN]
        return -0.5 * pt.sum(((y[s:s + n] - mu) / pt.exp(log_sigma)) ** 2) - n * log_sigma
    if kind == 1:  # mixture weights, a max
        log_weights = np.log(rng.dirichlet(np.ones(b - a)))
        return pt.logsumexp(x[a:b] + log_weights) + pt.max(x * c)
    if kind == 2:  # random walk; a gather through data indices
        return -0.01 * pt.sum((pt.cumsum(x[a:b]) * wj - y[a:b]) ** 2) - pt.mean(x[idx] ** 2)
    if kind == 3:  # set_subtensor in the forward graph, a boolean mask, a min
        z = pt.set_subtensor(x[a:b], pt.tanh(x[a:b] * c))
        return 0.1 * pt.sum(z[y > 0] ** 2) + pt.min(z) * wj
    if kind == 4:  # order statistics, a product
        ramp = np.linspace(-1.0, 1.0, b - a)
        return pt.sum(pt.sort(x[a:b]) * ramp) + pt.prod(1 + 0.1 * pt.tanh(x[a:b] * wj))
    m = x[a:a + 12].reshape((3, 4))  # a 2-D window: reductions along an axis, a strided slice
    return (pt.sum(pt.max(m, axis=1)) + pt.sum(pt.logsumexp(m * wj, axis=0))
            + 0.05 * pt.sum(pt.inc_subtensor(x[a:b], wj)[::2] ** 2))


def build(k: int, seed: int = 0):
    """Inputs [x, w, y, idx] and outputs [cost, dcost/dx, dcost/dw] for k blocks."""
    if k < KINDS:
        raise ValueError(f"k={k}: at least {KINDS} blocks, so that every input is used")
    rng = np.random.default_rng(seed)
    x = pt.vector("x", dtype="float64")
    w = pt.vector("w", dtype="float64")
    y = pt.vector("y", dtype="float64")
    idx = pt.vector("idx", dtype="int64")
    cost = pt.sum(pt.stack([_block(j, x, w, y, idx, rng) for j in range(k)]))
    cost.name = "cost"
    gx, gw = pytensor.grad(cost, [x, w])
    gx.name, gw.name = "dcost_dx", "dcost_dw"
    return [x, w, y, idx], [cost, gx, gw]


def sample_point(seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=X_LEN), 0.3 * rng.normal(size=W_LEN), rng.normal(size=Y_LEN),
            rng.integers(0, X_LEN, size=IDX_LEN).astype("int64")]


def ir_size(k: int) -> int:
    inputs, outputs = build(k)
    return len(lift(function_graph(inputs, outputs)))


def calibrate(a: int = 2 * KINDS, b: int = 6 * KINDS) -> tuple[float, float]:
    """IR nodes = base + per_block * k, fitted on two small k (whole cycles of the six kinds)."""
    na, nb = ir_size(a), ir_size(b)
    per_block = (nb - na) / (b - a)
    return na - per_block * a, per_block


def blocks_for(target: int, fit: tuple[float, float]) -> int:
    base, per_block = fit
    return max(KINDS, round((target - base) / per_block))


# --------------------------------------------------------------------------
# correctness: onnxruntime vs PyTensor at one point
# --------------------------------------------------------------------------
def verify_against_pytensor(inputs, outputs, fgraph, point) -> dict:
    """Compile (with the ONNX checker), run in onnxruntime, compare with PyTensor's py linker."""
    from pytensor.compile.mode import Mode

    start = time.perf_counter()
    cm = ptonnx.compile(fgraph)
    got = cm(*point)
    fn = pytensor.function(inputs, outputs, mode=Mode(linker="py", optimizer=None))
    want = fn(*point)
    assert len(got) == len(want) == 3, (len(got), len(want))
    worst = 0.0
    for name, g, wv in zip(("cost", "dcost/dx", "dcost/dw"), got, want, strict=True):
        wv = np.asarray(wv)
        assert g.dtype == wv.dtype and g.shape == wv.shape, (name, g.dtype, g.shape, wv.dtype, wv.shape)
        np.testing.assert_allclose(g, wv, rtol=RTOL, atol=ATOL, err_msg=f"{name} differs from PyTensor")
        worst = max(worst, float(np.max(np.abs(g - wv) / np.maximum(np.abs(wv), 1e-300))))
    return {
        "ok": True,
        "max_rel_err": worst,
        "cost": float(want[0]),
        "onnx_nodes": len(cm.model.graph.node),
        "seconds": time.perf_counter() - start,
        "ops_after_passes": dict(sorted(cm.ir.op_counts().items(), key=lambda kv: -kv[1])),
    }


# --------------------------------------------------------------------------
# linearity
# --------------------------------------------------------------------------
def stage_seconds(s: dict, pass_names) -> dict[str, float]:
    return {"lift": s["lift"], **{p: s["passes"][p] for p in pass_names}, "lower": s["lower"],
            "total": s["total"], "check": s["check"]}


def loglog_slope(ns, ts) -> float:
    """Least-squares slope of log(time) on log(N): 1.0 is linear, 2.0 quadratic."""
    if len(ns) < 2 or min(ts) <= 0:
        return float("nan")
    lx, ly = np.log(np.asarray(ns, float)), np.log(np.asarray(ts, float))
    return float(np.polyfit(lx, ly, 1)[0])


def linearity(rows: list[dict], pass_names) -> dict:
    small, large = rows[0], rows[-1]
    ss, sl = stage_seconds(small, pass_names), stage_seconds(large, pass_names)
    ns = [r["n"] for r in rows]
    stages = {}
    for stage in ss:
        us_small, us_large = ss[stage] / small["n"] * 1e6, sl[stage] / large["n"] * 1e6
        stages[stage] = {
            "us_small": us_small, "us_large": us_large,
            "ratio": us_large / us_small if us_small > 0 else float("nan"),
            "slope": loglog_slope(ns, [stage_seconds(r, pass_names)[stage] for r in rows]),
        }
    best_small, best_large = small["total_min"] / small["n"] * 1e6, large["total_min"] / large["n"] * 1e6
    return {
        "us_small_best": best_small, "us_large_best": best_large, "ratio_best": best_large / best_small,
        **per_node_ratio(rows),
        "stages": stages,
    }


def profile_compile(fgraph, top: int = 30) -> str:
    """cProfile of one `ptonnx.compile(check=False)`; the top functions by cumulative time."""
    gc.collect()
    prof = cProfile.Profile()
    prof.enable()
    ptonnx.compile(fgraph, check=False)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------
def default_repeats(n: int) -> int:
    if n <= 2_000:
        return 9
    if n <= 25_000:
        return 5
    return 3


def markdown(rows, pass_names, lin, meta, checks, profile: str | None) -> str:
    lines = report_head("ptonnx compile speed: gradient graphs with indexing and reductions", meta) + [
        "Graph: `[cost, *pytensor.grad(cost, [x, w])]`, cost = `sum(stack(terms))` over k blocks of six "
        "kinds (constant gathers, slices, a data-index gather, logsumexp, max/min, cumsum, set_subtensor, "
        "a boolean mask, sort, prod, a reshaped 2-D window with axis reductions, inc_subtensor, a strided "
        "slice; see the script's docstring); float64 vectors of unknown length.",
        "",
        cells_legend(meta, "(whole-heap collections in parentheses). "
                           "Building the PyTensor graph and its gradient is not timed."),
        "",
        *stage_table(rows, pass_names, "k blocks", [s["k"] for s in rows], first_align="---:"),
        "",
        ratio_line("gradient graphs", lin) + "; "
        f"fastest repeat of each size (load on a shared machine only adds time): "
        f"{lin['us_large_best']:.2f} / {lin['us_small_best']:.2f} = {lin['ratio_best']:.2f}x",
        "",
        f"Per stage: µs/node at N={lin['n_small']:,} and N={lin['n_large']:,}, their ratio, and the "
        "log-log slope of the stage's time against N over all sizes (1.0 = linear, 2.0 = quadratic). "
        "Stages under ~1 µs/node are at timer-noise level.",
        "",
        "| stage | µs/node small | µs/node large | ratio | slope |",
        "|---|---:|---:|---:|---:|",
    ]
    for stage, st in lin["stages"].items():
        lines.append(f"| {stage} | {st['us_small']:.2f} | {st['us_large']:.2f} | {st['ratio']:.2f}x | {st['slope']:.2f} |")
    lines += ["", f"Correctness (every size, onnxruntime vs PyTensor py linker at one random point, "
                  f"cost and both gradients, rtol={RTOL:g}, atol={ATOL:g}):"]
    for n, c in checks.items():
        lines.append(f"- N={n:,}: ok, {c['onnx_nodes']:,} ONNX nodes, cost {c['cost']:.6g}, "
                     f"max rel. err {c['max_rel_err']:.1e}")
    if checks:
        n_last, c_last = list(checks.items())[-1]
        mix = ", ".join(f"{op} {cnt:,}" for op, cnt in list(c_last["ops_after_passes"].items())[:20])
        lines += ["", f"IR op mix after passes at N={n_last:,} (top 20): {mix}."]
    if profile:
        lines += ["", f"cProfile of one compile at N={lin['n_large']:,} (top functions by cumulative time; "
                      "profiling inflates the times):", "", "```", profile.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=None,
                    help=f"comma-separated target IR node counts (default: {','.join(map(str, DEFAULT_SIZES))})")
    ap.add_argument("--repeats", type=int, default=None,
                    help="repeats per size (default: 9 up to 2k nodes, 5 up to 25k, 3 above)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: sizes {','.join(map(str, QUICK_SIZES))}, 3 repeats, no results file unless --out")
    ap.add_argument("--no-gc", action="store_true",
                    help="disable Python's cyclic GC during the timed stages (default: enabled, as users run)")
    ap.add_argument("--profile", action="store_true", help="also cProfile one compile at the largest size")
    ap.add_argument("--out", default=None, help=f"directory for compile_general.md/.json (default: {RESULTS})")
    args = ap.parse_args(argv)

    sizes = (sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()) if args.sizes
             else list(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    repeats_for = (lambda n: args.repeats) if args.repeats else (lambda n: 3) if args.quick else default_repeats
    out = Path(args.out) if args.out else (None if args.quick else RESULTS)
    if out is not None:
        require_committed(out)
    pass_names = list(DEFAULT_PASSES)
    meta = compile_meta("compile_general", argv)
    meta["gc"] = "disabled (--no-gc)" if args.no_gc else GC_DEFAULT

    wall = time.perf_counter()
    fit = calibrate()
    print(f"calibration: N ≈ {fit[0]:.0f} + {fit[1]:.1f} * k", flush=True)
    point = sample_point()
    graphs: list[tuple] = []  # (size, k, build seconds, fgraph, check)
    checks: dict[int, dict] = {}
    for size in sizes:  # build and verify every size first (the verifying compile is the warm-up)
        k = blocks_for(size, fit)
        start = time.perf_counter()
        inputs, outputs = build(k)
        fgraph = function_graph(inputs, outputs)
        built = time.perf_counter() - start
        check = verify_against_pytensor(inputs, outputs, fgraph, point)
        print(f"k={k}: graph built in {built:.1f} s; verified in {check['seconds']:.1f} s "
              f"({check['onnx_nodes']:,} ONNX nodes, max rel. err {check['max_rel_err']:.1e})", flush=True)
        graphs.append((size, k, built, fgraph, check))
        del inputs, outputs

    # Repeats round-robin over the sizes: a change in the machine's load hits every size alike.
    runs: dict[int, list[dict]] = {size: [] for size in sizes}
    for r in range(max(repeats_for(size) for size in sizes)):
        for size, _, _, fgraph, _ in graphs:
            if r < repeats_for(size):
                runs[size].append(measure_once(fgraph, pass_names, gc_enabled=not args.no_gc))

    rows: list[dict] = []
    for size, k, built, fgraph, check in graphs:
        s = summarize(runs[size], pass_names)
        s.update(target=size, k=k, build_seconds=built, runs=runs[size])
        rows.append(s)
        checks[s["n"]] = check
        print(f"k={k} N={s['n']:,}: total {ms(s['total'])} ms ({s['us_per_node']:.2f} µs/node; "
              + ", ".join(f"{st} {v / s['n'] * 1e6:.1f}" for st, v in stage_seconds(s, pass_names).items()
                          if st != "total")
              + f" µs/node), GC {ms(s['gc'])} ms, {s['repeats']} repeats", flush=True)
    profile = profile_compile(graphs[-1][3]) if args.profile else None
    del graphs
    gc.collect()

    lin = linearity(rows, pass_names)
    text = markdown(rows, pass_names, lin, meta, checks, profile)
    print()
    print(text)
    print(f"wall time {time.perf_counter() - wall:.0f} s")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "compile_general.md").write_text(text)
        payload = {"meta": meta, "target_ratio": TARGET_RATIO, "calibration": fit, "results": rows,
                   "linearity": lin, "checks": {str(n): c for n, c in checks.items()}}
        (out / "compile_general.json").write_text(json.dumps(payload, indent=2, default=jsonable) + "\n")
        print(f"wrote {out / 'compile_general.md'} and {out / 'compile_general.json'}")
    return 1 if lin["verdict"] == "FAIL" else 0


if __name__ == "__main__":
    sys.exit(main())
