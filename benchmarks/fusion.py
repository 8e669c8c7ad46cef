#!/usr/bin/env python
"""Fusion benchmark: ptonnx with and without `fuse_conv_bn_silu`, compiled and run in onnxruntime (CPU).

Workloads: single YOLO11n blocks at their real place and size in the network
(the input shapes of `ptonnx.models.block_graph`) for an image of 320 and of
640 pixels (Conv = model.1, C3k2 = model.2, C3k2 with C3k = model.6, SPPF =
model.9, C2PSA = model.10), and the whole YOLO11n at 320 and 640. Weights are
`random_weights`-style (seeded per state_dict name) with the conv gain
`SIGNAL_GAIN`, so that the input matters at the output; the input is uniform
[0, 1) float32 with a fixed seed.

Variants:

* fused   = ``ptonnx.compile(fgraph)`` (``DEFAULT_PASSES``, which include ``fuse_conv_bn_silu``)
* unfused = ``ptonnx.compile(fgraph, ["constant_folding", "unify_dtypes", "dce"])``

For each workload and variant the script records

* the ONNX node count and op histogram of the model ptonnx emits;
* what onnxruntime's own graph optimizer makes of it: the optimized model is
  dumped (``SessionOptions.optimized_model_filepath``) at ORT_ENABLE_BASIC,
  ORT_ENABLE_EXTENDED and ORT_ENABLE_ALL and its nodes are counted;
* ptonnx's compile time split by stage (lift, each pass, lower, onnx checker),
  medians over several compiles (fused and unfused compiles alternate);
* onnxruntime CPU latency for 4 session configs: ``intra_op_num_threads`` 1
  or 2 (``inter_op_num_threads=1``) x ``graph_optimization_level``
  ORT_DISABLE_ALL or ORT_ENABLE_ALL. Both sessions of a config are warmed up,
  then run *interleaved*: rounds of a short batch of fused runs and a short
  batch of unfused runs (the order alternates every round), each run timed on
  its own, rotating through several sessions per variant (``--sessions``);
  before each batch one untimed run and, with 2 threads, a 50 ms
  pause, because an idle session's spinning thread pool slows the other one.
  Latency = median over the runs (p10/p90 shown); ratio = median over rounds
  of the per-round ratio median(fused) / median(unfused), with a 95% bootstrap
  interval over rounds; a measurement disturbed by other load (p90/p10 > 1.5)
  is repeated once.
  The number of runs follows a time budget per config (``--budget``).
  As a control, the unfused model is also measured against a second session
  of itself (A/A, half the budget); its interval, made symmetric around 1, is
  the noise band, and a fused/unfused difference counts only when its interval
  lies outside that band;
* with the ORT profiler (unfused, ORT_DISABLE_ALL, 1 thread): the share of
  kernel time spent in BatchNormalization, Conv and Sigmoid/Mul;
* correctness, once per workload: the output of every session (both variants,
  all 4 configs) against PyTensor's own evaluation (py linker, no rewrites),
  and fused against unfused.

Usage::

    .venv/bin/python benchmarks/fusion.py                   # everything (~5-8 minutes)
    .venv/bin/python benchmarks/fusion.py --quick           # smoke test: fewer runs, 1 session each, no A/A
                                                            # control, no YOLO11n at 640 (~1.5 minutes)
    .venv/bin/python benchmarks/fusion.py --workloads conv,yolo11n@320 --budget 2

Writes ``benchmarks/results/fusion.md``, ``fusion.json`` and ``fusion.png``.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import pytensor  # noqa: E402
from pytensor.compile.mode import Mode  # noqa: E402

import ptonnx  # noqa: E402
from _common import git_commit  # noqa: E402
from ptonnx.api import function_graph  # noqa: E402
from ptonnx.models import SIGNAL_GAIN, block_graph, random_weights, yolo11n  # noqa: E402
from ptonnx.passes import DEFAULT_PASSES  # noqa: E402

RESULTS = HERE / "results"
SEED = 0
INPUT_SEED = 1
UNFUSED_PASSES = ("constant_folding", "unify_dtypes", "dce")
FUSED_PASSES = tuple(DEFAULT_PASSES)
VARIANTS = ("unfused", "fused")
PASSES_OF = {"unfused": list(UNFUSED_PASSES), "fused": None}  # None = ptonnx.DEFAULT_PASSES

#: workload kind -> (label, what)
KINDS = {
    "conv": ("Conv", "model.1: Conv 3x3 s2 + BN + SiLU"),
    "c3k2": ("C3k2", "model.2: C3k2 (Bottleneck), e=0.25"),
    "c3k2_c3k": ("C3k2 (C3k)", "model.6: C3k2 with a C3k inside"),
    "sppf": ("SPPF", "model.9: SPPF"),
    "c2psa": ("C2PSA", "model.10: C2PSA (attention)"),
    "yolo11n": ("YOLO11n", "the whole network, Detect head included"),
}
SIZES = (320, 640)

#: tolerances of the correctness check (float32). YOLO11n boxes are in input pixels (0..imgsz).
TOLERANCE = {"block": {"rtol": 1e-3, "atol": 1e-4}, "yolo11n": {"rtol": 1e-3, "atol": 2e-2}}

LEVELS = {
    "DISABLE_ALL": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "ENABLE_BASIC": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "ENABLE_EXTENDED": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "ENABLE_ALL": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
#: the latency configs: (graph optimisation level, intra-op threads)
CONFIGS = (("DISABLE_ALL", 1), ("DISABLE_ALL", 2), ("ENABLE_ALL", 1), ("ENABLE_ALL", 2))
DUMP_LEVELS = ("ENABLE_BASIC", "ENABLE_EXTENDED", "ENABLE_ALL")
#: ops shown in the op-histogram columns (ONNX domain "" unless prefixed)
SHOWN_OPS = ("Conv", "BatchNormalization", "Sigmoid", "Mul")


def config_name(level: str, threads: int) -> str:
    return f"{'no ORT opt' if level == 'DISABLE_ALL' else 'ORT opt ALL'}, {threads} thr"


# --------------------------------------------------------------------------
# workloads
# --------------------------------------------------------------------------
def parse_workload(key: str) -> tuple[str, int]:
    kind, _, size = key.partition("@")
    return kind, int(size)


def build(key: str):
    kind, size = parse_workload(key)
    if kind == "yolo11n":
        return yolo11n(random_weights(SEED, SIGNAL_GAIN), size)
    return block_graph(kind, size, SEED, gain=SIGNAL_GAIN)


def workload_label(key: str) -> str:
    kind, size = parse_workload(key)
    return f"{KINDS[kind][0]} @{size}"


# --------------------------------------------------------------------------
# compile time
# --------------------------------------------------------------------------
def compile_once(fgraph, variant: str) -> tuple[ptonnx.CompiledModel, dict]:
    cm = ptonnx.compile(fgraph, PASSES_OF[variant])
    r = cm.report
    stages = {"lift": r.stages["lift"]}
    stages.update({rec.name: rec.seconds for rec in r.records})
    stages["lower"] = r.stages["lower"]
    stages["check"] = r.stages["check"]
    # total = what `compile` spent in its stages (the "passes" stage includes the pass manager's own overhead)
    stages["total"] = r.stages["lift"] + r.stages["passes"] + r.stages["lower"] + r.stages["check"]
    return cm, stages


def measure_compile(fgraph, repeats: int) -> tuple[dict, dict]:
    """Median stage times per variant over `repeats` compiles (after one warm-up each), variants alternating."""
    models, runs = {}, {v: [] for v in VARIANTS}
    for v in VARIANTS:
        models[v], _ = compile_once(fgraph, v)  # warm-up, not counted
    for i in range(repeats):
        order = VARIANTS if i % 2 == 0 else VARIANTS[::-1]
        for v in order:
            gc.collect()
            _, stages = compile_once(fgraph, v)
            runs[v].append(stages)
    med = {v: {k: statistics.median(s[k] for s in runs[v]) for k in runs[v][0]} for v in VARIANTS}
    for v in VARIANTS:
        med[v]["repeats"] = repeats
        r = models[v].report
        med[v]["pass_records"] = {
            rec.name: {"nodes_before": rec.nodes_before, "nodes_after": rec.nodes_after,
                       "rewrites": rec.rewrites, "details": dict(rec.details)} for rec in r.records
        }
    return models, med


# --------------------------------------------------------------------------
# graph statistics
# --------------------------------------------------------------------------
def op_key(node) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}:{node.op_type}"


def histogram(model: onnx.ModelProto) -> dict[str, int]:
    return dict(collections.Counter(op_key(n) for n in model.graph.node).most_common())


def model_stats(cm: ptonnx.CompiledModel) -> dict:
    m = cm.model
    return {
        "onnx_nodes": len(m.graph.node),
        "ir_nodes": len(cm.ir),
        "histogram": histogram(m),
        "initializers": len(m.graph.initializer),
        "model_bytes": m.ByteSize(),
    }


def session_options(level: str, threads: int, **extra) -> ort.SessionOptions:
    so = ort.SessionOptions()
    so.graph_optimization_level = LEVELS[level]
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3  # no warning about NCHWc ops when dumping at ENABLE_ALL
    for k, v in extra.items():
        setattr(so, k, v)
    return so


def ort_optimized_graphs(model_bytes: bytes, tmp: Path, tag: str) -> dict:
    """Node count and op histogram of the graph onnxruntime actually runs, per optimisation level."""
    out = {}
    for level in DUMP_LEVELS:
        path = tmp / f"{tag}_{level}.onnx"
        so = session_options(level, 1, optimized_model_filepath=str(path))
        ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
        m = onnx.load(str(path), load_external_data=False)
        out[level] = {"nodes": len(m.graph.node), "histogram": histogram(m)}
        path.unlink()
    return out


def ort_profile(model_bytes: bytes, feed: dict, tmp: Path, min_runs: int, seconds: float = 1.0) -> dict:
    """Kernel time per run and op type (ORT profiler; ORT_DISABLE_ALL, 1 thread), the 2 warm-up runs dropped."""
    so = session_options("DISABLE_ALL", 1, enable_profiling=True, profile_file_prefix=str(tmp / "profile"))
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    warmup = 2
    t = min(timed_run(sess, feed) for _ in range(warmup))
    runs = int(min(max(seconds / t, min_runs), 500))
    for _ in range(runs):
        sess.run(None, feed)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.unlink(path)
    kernels = sorted((e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")),
                     key=lambda e: e["ts"])
    per_run = len(kernels) // (runs + warmup)
    per_op = collections.Counter()
    for e in kernels[warmup * per_run:]:
        per_op[e.get("args", {}).get("op_name", "?")] += e.get("dur", 0) / 1e3 / runs  # µs -> ms per run
    return {"runs": runs, "kernel_ms": dict(per_op.most_common()), "total_kernel_ms": sum(per_op.values())}


# --------------------------------------------------------------------------
# latency
# --------------------------------------------------------------------------
def make_sessions(model_bytes: bytes, level: str, threads: int, count: int):
    """`count` sessions of one model and the median time of their construction."""
    sessions, times = [], []
    for _ in range(count):
        start = time.perf_counter()
        sessions.append(ort.InferenceSession(model_bytes, session_options(level, threads), providers=["CPUExecutionProvider"]))
        times.append(time.perf_counter() - start)
    return sessions, statistics.median(times)


def timed_run(sess, feed) -> float:
    start = time.perf_counter()
    sess.run(None, feed)
    return time.perf_counter() - start


#: pause before each batch when intra-op threads > 1: an idle session's thread pool keeps spinning
#: for tens of milliseconds after its last run and would steal the other session's cores
SETTLE_S = 0.05
#: timed wall time per batch (at least 3 runs), after one untimed run
BATCH_S = 0.05
MIN_ROUNDS = 10
#: a measurement whose p90/p10 exceeds this (for either variant) was disturbed; it is repeated once
NOISY_SPREAD = 1.5


def measure_pair(sessions: dict, feeds: dict, threads: int, budget: float, min_runs: int, max_runs: int) -> dict:
    """Interleaved latency of the fused and unfused sessions of one config (seconds per run).

    `sessions[v]` is a list of sessions of variant v: one session of a model can
    be a few percent faster or slower than another session of the same model for
    its whole life (where its buffers landed), so the rounds rotate through
    several. Rounds of [pause, 1 untimed run, a batch of timed runs] per variant,
    the variant order flipped every round, until `budget` seconds of wall time
    (pauses included) have passed, with at least `MIN_ROUNDS` rounds and
    `min_runs` timed runs per variant, at most `max_runs`.
    """
    settle = SETTLE_S if threads > 1 else 0.0
    est = []
    for v in VARIANTS:  # warm-up: at least 3 runs and 0.1 s per session
        for sess in sessions[v]:
            times, start = [], time.perf_counter()
            while len(times) < 3 or (time.perf_counter() - start < 0.1 and len(times) < 200):
                times.append(timed_run(sess, feeds[v]))
            est.append(statistics.median(times))
    t = max(est)
    batch = int(min(max(math.ceil(BATCH_S / t), 3), 100))
    times = {v: [] for v in VARIANTS}
    start = time.perf_counter()
    r = 0
    while True:
        for v in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
            sess, feed = sessions[v][(r // 2) % len(sessions[v])], feeds[v]
            if settle:
                time.sleep(settle)
            sess.run(None, feed)  # untimed: wakes this session (and its thread pool) up
            times[v].append([timed_run(sess, feed) for _ in range(batch)])
        r += 1
        n = r * batch
        if n + batch > max_runs or (r >= MIN_ROUNDS and n >= min_runs and time.perf_counter() - start >= budget):
            break
    out = summarize_pair({v: np.array(times[v]) for v in VARIANTS})
    out["settle_ms"] = settle * 1e3
    out["sessions_each"] = len(sessions["fused"])
    return out


def measure_pair_retry(*args) -> dict:
    """`measure_pair`, repeated once when the first attempt was disturbed (p90/p10 > NOISY_SPREAD)."""
    first = measure_pair(*args)
    if not first["noisy"]:
        return first
    second = measure_pair(*args)
    best = min((first, second), key=lambda m: m["p90_over_p10"])
    best["attempts"] = 2
    best["discarded_attempt"] = {k: first[k] if best is second else second[k]
                                 for k in ("ratio", "ci95", "p90_over_p10", "runs_each")}
    return best


def judge_against_control(lat: dict, aa: dict) -> None:
    """Re-judge `lat` against the A/A control of the same workload and config.

    Two sessions of one model differ by a few percent on their own (allocation,
    placement, the other process on the core), so "the interval excludes 1" is
    not enough. The A/A interval, made symmetric around 1 (the sign of such an
    offset is arbitrary), is the noise band; a difference counts only when the
    fused/unfused interval lies entirely outside it.
    """
    lo, hi = aa["ci95"]
    band = (min(lo, 1 / hi), max(hi, 1 / lo))
    lat["noise_band"] = list(band)
    lat["verdict_ci_only"] = lat["verdict"]
    lat["verdict"] = ("fused faster" if lat["ci95"][1] < band[0] else
                      "fused slower" if lat["ci95"][0] > band[1] else "no clear difference")


def summarize_pair(times: dict) -> dict:
    """Medians per variant and the paired ratio: the median over rounds of (median fused / median unfused) in each round.

    Within a round the two variants run a fraction of a second apart, so a burst
    of load from another process on this shared machine hits both; the median
    over rounds then drops the rounds a burst cut in half. The 95% interval is a
    bootstrap over rounds of that median.
    """
    f, u = times["fused"], times["unfused"]
    stats = {}
    for v in VARIANTS:
        flat = times[v].ravel()
        stats[v] = {"median_ms": float(np.median(flat)) * 1e3, "p10_ms": float(np.percentile(flat, 10)) * 1e3,
                    "p90_ms": float(np.percentile(flat, 90)) * 1e3, "min_ms": float(flat.min()) * 1e3}
    per_round = np.median(f, axis=1) / np.median(u, axis=1)
    ratio = float(np.median(per_round))
    rng = np.random.default_rng(12345)
    boot = np.median(per_round[rng.integers(0, per_round.size, size=(2000, per_round.size))], axis=1)
    lo, hi = (float(q) for q in np.percentile(boot, [2.5, 97.5]))
    verdict = "fused faster" if hi < 1 else "fused slower" if lo > 1 else "no clear difference"
    spread = max(stats[v]["p90_ms"] / stats[v]["p10_ms"] for v in VARIANTS)
    return {
        **stats, "runs_each": int(f.size), "rounds": int(per_round.size), "batch": int(f.shape[1]),
        "ratio": ratio, "ci95": [lo, hi], "verdict": verdict,
        "ratio_of_medians": float(np.median(f) / np.median(u)),
        "per_round_ratio_p10_p90": [float(np.percentile(per_round, 10)), float(np.percentile(per_round, 90))],
        "p90_over_p10": spread, "noisy": bool(spread > NOISY_SPREAD),
    }


# --------------------------------------------------------------------------
# one workload
# --------------------------------------------------------------------------
def run_workload(key: str, args, tmp: Path) -> dict:
    kind, size = parse_workload(key)
    t_start = time.perf_counter()
    x, y = build(key)
    fgraph = function_graph([x], [y])
    shape = tuple(int(d) for d in x.type.shape)
    feed_array = np.random.default_rng(INPUT_SEED).uniform(0.0, 1.0, size=shape).astype(np.float32)

    models, compile_med = measure_compile(fgraph, args.compiles if kind != "yolo11n" else max(3, args.compiles - 2))
    res = {"key": key, "label": workload_label(key), "what": KINDS[kind][1], "input_shape": list(shape),
           "compile": compile_med, "graph": {}, "ort_optimized": {}, "latency": {}, "aa_control": {},
           "session_create_ms": {}}
    model_bytes = {v: models[v].model.SerializeToString() for v in VARIANTS}
    feeds = {v: {models[v].input_names[0]: feed_array} for v in VARIANTS}
    for v in VARIANTS:
        res["graph"][v] = model_stats(models[v])
        res["ort_optimized"][v] = ort_optimized_graphs(model_bytes[v], tmp, f"{kind}{size}_{v}")
    res["profile"] = {v: ort_profile(model_bytes[v], feeds[v], tmp, args.profile_runs) for v in VARIANTS}

    # reference: PyTensor's own evaluation, python linker, no rewrites
    ref = pytensor.function([x], y, mode=Mode(linker="py", optimizer=None))(feed_array)
    ref = np.asarray(ref)
    tol = TOLERANCE["yolo11n" if kind == "yolo11n" else "block"]
    checks = {"tolerance": tol, "sessions": {}, "ok": True}
    outputs = {}

    budget = args.budget * (args.yolo_budget_factor if kind == "yolo11n" else 1.0)
    for level, threads in CONFIGS:
        cfg = config_name(level, threads)
        sessions = {}
        for v in VARIANTS:
            sessions[v], created = make_sessions(model_bytes[v], level, threads, args.sessions)
            res["session_create_ms"].setdefault(cfg, {})[v] = created * 1e3
            out = sessions[v][0].run(None, feeds[v])[0]
            outputs[(v, cfg)] = out
            err = np.abs(out.astype(np.float64) - ref)
            ok = bool(out.shape == ref.shape and out.dtype == ref.dtype and np.allclose(out, ref, **tol))
            # allclose passes when every |diff| <= atol + rtol * |ref|: "tol_used" is the worst such fraction
            tol_used = float((err / (tol["atol"] + tol["rtol"] * np.abs(ref))).max())
            checks["sessions"][f"{v}, {cfg}"] = {"max_abs": float(err.max()), "tol_used": tol_used, "ok": ok}
            checks["ok"] &= ok
        res["latency"][cfg] = measure_pair_retry(sessions, feeds, threads, budget, args.min_runs, args.max_runs)
        lat = res["latency"][cfg]
        print(f"  [{key}] {cfg}: unfused {lat['unfused']['median_ms']:.3f} ms, fused {lat['fused']['median_ms']:.3f} ms, "
              f"ratio {lat['ratio']:.3f} [{lat['ci95'][0]:.3f}, {lat['ci95'][1]:.3f}] ({lat['runs_each']} runs each)",
              flush=True)
        if args.aa_control:
            # A/A control: the unfused model against a second session of the same unfused model
            twin, _ = make_sessions(model_bytes["unfused"], level, threads, args.sessions)
            aa = measure_pair_retry({"unfused": sessions["unfused"], "fused": twin},
                              {"unfused": feeds["unfused"], "fused": feeds["unfused"]}, threads, budget / 2,
                              args.min_runs // 2, args.max_runs)
            res["aa_control"][cfg] = aa
            judge_against_control(lat, aa)
            print(f"  [{key}] {cfg}: A/A control (unfused vs unfused) ratio {aa['ratio']:.3f} "
                  f"[{aa['ci95'][0]:.3f}, {aa['ci95'][1]:.3f}]", flush=True)
            del twin
        del sessions
    base = config_name("DISABLE_ALL", 1)
    diff = np.abs(outputs[("fused", base)].astype(np.float64) - outputs[("unfused", base)])
    checks["fused_vs_unfused_max_abs"] = float(diff.max())
    checks["fused_vs_unfused_ok"] = bool(np.allclose(outputs[("fused", base)], outputs[("unfused", base)], **tol))
    checks["ok"] &= checks["fused_vs_unfused_ok"]
    checks["ref_max_abs"] = float(np.abs(ref).max())
    res["checks"] = checks
    res["sessions"] = args.sessions
    res["seconds"] = time.perf_counter() - t_start
    worst = max(c["max_abs"] for c in checks["sessions"].values())
    print(f"  [{key}] check vs PyTensor: {'ok' if checks['ok'] else 'FAILED'} (max |diff| {worst:.2e}, "
          f"fused vs unfused {checks['fused_vs_unfused_max_abs']:.2e}; {tol}); {res['seconds']:.1f} s", flush=True)
    return res


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------
def _ms(ms: float) -> str:
    return f"{ms:.1f}" if ms >= 100 else f"{ms:.2f}" if ms >= 1 else f"{ms:.3f}"


def _runs(lat: dict) -> str:
    text = f"{lat['runs_each']} ({lat['rounds']}×{lat['batch']})"
    if lat.get("attempts", 1) > 1:
        text += ", 2nd try"
    return text + (" ⚠ noisy" if lat["noisy"] else "")


def _band(lat: dict) -> str:
    band = lat.get("noise_band")
    return f"[{band[0]:.3f}, {band[1]:.3f}]" if band else "–"


def _ratio_cell(lat: dict, bold: bool = True) -> str:
    lo, hi = lat["ci95"]
    text = f"{lat['ratio']:.3f} [{lo:.3f}, {hi:.3f}]"
    return f"**{text}**" if bold and lat["verdict"] != "no clear difference" else text


def _kernel_ms(res: dict, v: str) -> dict:
    """Profiled kernel ms per run, grouped: Conv, BatchNormalization, Sigmoid+Mul, other, total."""
    k = res["profile"][v]["kernel_ms"]
    out = {"Conv": k.get("Conv", 0.0), "BatchNormalization": k.get("BatchNormalization", 0.0),
           "Sigmoid+Mul": k.get("Sigmoid", 0.0) + k.get("Mul", 0.0)}
    out["other"] = res["profile"][v]["total_kernel_ms"] - sum(out.values())
    out["total"] = res["profile"][v]["total_kernel_ms"]
    return out


def _bn_share(res: dict) -> float:
    k = _kernel_ms(res, "unfused")
    return k["BatchNormalization"] / k["total"]


def _hist(res: dict, v: str, op: str) -> int:
    return res["graph"][v]["histogram"].get(op, 0)


def _opt(res: dict, v: str, level: str) -> dict:
    return res["ort_optimized"][v][level]


def _same_ops(res: dict, level: str) -> bool:
    return _opt(res, "fused", level)["histogram"] == _opt(res, "unfused", level)["histogram"]


def reading(results: list[dict]) -> list[str]:
    """The "Reading the numbers" paragraphs, written from the measured data."""
    noopt = [config_name("DISABLE_ALL", t) for t in (1, 2)]
    allopt = [config_name("ENABLE_ALL", t) for t in (1, 2)]
    one = config_name("DISABLE_ALL", 1)

    def cells(names):
        return [(r, c, r["latency"][c]) for r in results for c in names]

    def span(items):
        vals = [lat["ratio"] for _, _, lat in items]
        return min(vals), max(vals), math.exp(statistics.fmean(math.log(v) for v in vals))

    def count(items, verdict):
        return sum(1 for _, _, lat in items if lat["verdict"] == verdict)

    out = []
    # --- the graphs
    big = max(results, key=lambda r: r["graph"]["unfused"]["onnx_nodes"])
    bn_gone = _hist(big, "unfused", "BatchNormalization") - _hist(big, "fused", "BatchNormalization")
    sig_same = all(_hist(r, "fused", op) == _hist(r, "unfused", op) for r in results for op in ("Sigmoid", "Mul"))
    out.append(
        f"**What fusion changes in the ONNX file.** The pass folds every BatchNormalization into its Conv "
        f"({big['label']}: {big['graph']['unfused']['onnx_nodes']} → {big['graph']['fused']['onnx_nodes']} nodes, "
        f"{bn_gone} BatchNormalization nodes gone). "
        + ("The SiLU half of the fusion does not shrink the ONNX graph: opset 18 has no SiLU operator, so a FusedConv "
           "with activation=silu is lowered back to Conv + Sigmoid + Mul, and the Sigmoid and Mul counts are the same "
           "in both variants. So the only run-time work fusion removes is one per-channel affine pass "
           "(BatchNormalization) over each conv output." if sig_same else
           "The Sigmoid/Mul counts differ between the variants (see the graph table).")
    )

    # --- noise
    aa_all = [(r, c, r["aa_control"][c]) for r in results for c in r["aa_control"]]
    judged = "beyond the A/A noise band" if aa_all else "with a 95% interval excluding 1"
    if aa_all:
        aa_lo, aa_hi, _ = span(aa_all)
        aa_sig = len(aa_all) - count(aa_all, "no clear difference")
        quiet = [(c, lat) for _, c, lat in aa_all if not lat["noisy"]]
        per_thr = {t: max((abs(lat["ratio"] - 1) for c, lat in quiet if c.endswith(f"{t} thr")), default=float("nan"))
                   for t in (1, 2)}
        every = [lat for r in results for d in (r["latency"], r["aa_control"]) for lat in d.values()]
        retried = sum(1 for lat in every if lat.get("attempts", 1) > 1)
        noisy = [f"{r['label']}, {c}{tag}" for r in results for d, tag in ((r["latency"], ""), (r["aa_control"], " (A/A)"))
                 for c, lat in d.items() if lat["noisy"]]
        out.append(
            f"**Noise.** The A/A control (the unfused model against a second set of sessions of itself, measured the "
            f"same interleaved way) gives ratios from {aa_lo:.3f} to {aa_hi:.3f}; {aa_sig} of {len(aa_all)} A/A "
            f"intervals exclude 1 although nothing differs. Leaving out disturbed cells, two sets of sessions of one "
            f"model differ by up to {100 * per_thr[1]:.1f}% at 1 thread and {100 * per_thr[2]:.1f}% at 2 threads. So a "
            f"fused/unfused difference is only counted when its interval lies outside the A/A noise band of the same "
            f"cell. "
            + (f"{retried} of {len(every)} measurements had a wide spread (p90/p10 > {NOISY_SPREAD:g}: other load "
               f"on the shared machine, or sub-millisecond runs on 2 threads) and were repeated; " if retried else
               f"No measurement had a wide spread (p90/p10 > {NOISY_SPREAD:g}, which would mean other load on the "
               f"shared machine), so none was repeated.")
            + ((f"{len(noisy)} still had it ({'; '.join(noisy)}), hatched in the chart and marked ⚠ in the latency "
                f"table; their ratios are unreliable." if noisy else "none still had it.") if retried else "")
        )

    # --- ORT optimizer off
    items = cells(noopt)
    lo, hi, gm = span(items)
    bn_share = [_bn_share(r) for r in results]
    conv_share = [_kernel_ms(r, "unfused")["Conv"] / _kernel_ms(r, "unfused")["total"] for r in results]
    saved = [(r, r["latency"][one]["unfused"]["median_ms"] - r["latency"][one]["fused"]["median_ms"],
              _kernel_ms(r, "unfused")["BatchNormalization"]) for r in results]
    frac = [s_ / bn for _, s_, bn in saved if bn > 0]
    pairs = "; ".join(f"{r['label']} {s_:.3f} of {bn:.3f} ms" for r, s_, bn in saved)
    n_slower = count(items, "fused slower")
    n_none = count(items, "no clear difference")
    out.append(
        f"**With onnxruntime's optimizer off (ORT_DISABLE_ALL)**, i.e. running exactly the graph ptonnx emits, "
        f"fusion pays: fused/unfused ranges from {lo:.3f} to {hi:.3f} (geometric mean {gm:.3f}, a {100 * (1 - gm):.1f}% "
        f"saving; {span(cells([noopt[0]]))[2]:.3f} at 1 thread, {span(cells([noopt[1]]))[2]:.3f} at 2 threads); fused is "
        f"faster {judged} in {count(items, 'fused faster')} of {len(items)} cells"
        + (f", slower in {n_slower}" if n_slower else "")
        + (f", and {n_none} {'shows' if n_none == 1 else 'show'} no clear difference" if n_none else "")
        + (". The saving is bounded by what the BatchNormalization kernels cost" if max(frac) <= 1.05 else
           ". The saving is of the order of what the BatchNormalization kernels cost")
        + ": the ORT profiler (unfused, 1 thread) "
        f"puts BatchNormalization at {100 * min(bn_share):.1f}–{100 * max(bn_share):.1f}% of the kernel time, and the "
        f"measured saving per run (median unfused − median fused, 1 thread) is {100 * min(frac):.0f}–"
        f"{100 * max(frac):.0f}% (median {100 * statistics.median(frac):.0f}%) of the profiled BatchNormalization time "
        f"({pairs}; profile and latency come from separate runs, so single workloads scatter around the BN time). "
        f"The saving is larger at 2 threads "
        f"than at 1 in {sum(1 for r in results if r['latency'][noopt[1]]['ratio'] < r['latency'][noopt[0]]['ratio'])} "
        f"of {len(results)} workloads (not investigated; a plausible, unverified reason: the convolutions speed up "
        f"more with a second thread than memory-bound BatchNormalization does, so its share grows). It stays modest "
        f"because the convolutions "
        f"dominate ({100 * min(conv_share):.0f}–{100 * max(conv_share):.0f}% of the kernel time) and fusion does not "
        f"touch them."
    )

    # --- ORT optimizer on
    items = cells(allopt)
    lo, hi, gm = span(items)
    n_diff = len(items) - count(items, "no clear difference")
    basic_same = all(_same_ops(r, "ENABLE_BASIC") for r in results)
    ext_same = all(_same_ops(r, "ENABLE_EXTENDED") for r in results)
    all_same = all(_same_ops(r, "ENABLE_ALL") for r in results)
    bn_left = sum(_opt(r, "unfused", "ENABLE_BASIC")["histogram"].get("BatchNormalization", 0) for r in results)
    ex = big
    cnt = {lvl: (_opt(ex, "unfused", lvl)["nodes"], _opt(ex, "fused", lvl)["nodes"]) for lvl in DUMP_LEVELS}
    quick = _opt(ex, "fused", "ENABLE_EXTENDED")["histogram"].get("com.microsoft:QuickGelu", 0)
    nchwc = _opt(ex, "fused", "ENABLE_ALL")["histogram"].get("com.microsoft.nchwc:Conv", 0)
    aa = [(r, c, r["aa_control"][c]) for r in results for c in allopt if c in r["aa_control"]]
    sig_cells = [(r, c, lat) for r, c, lat in items if lat["verdict"] != "no clear difference"]
    sig = [f"{r['label']}, {c}: {lat['ratio']:.3f}" for r, c, lat in sig_cells]
    text = (
        f"**With onnxruntime's optimizer on (ORT_ENABLE_ALL)** fusion does not pay: fused/unfused ranges from "
        f"{lo:.3f} to {hi:.3f} (geometric mean {gm:.3f})"
    )
    if aa:
        aa_lo, aa_hi, aa_gm = span(aa)
        inside = lo >= aa_lo - 0.01 and hi <= aa_hi + 0.01
        text += (f", {'within about the range' if inside else 'against the range'} the A/A control gives in these "
                 f"configs ({aa_lo:.3f} to {aa_hi:.3f}, geometric mean {aa_gm:.3f})")
    text += (f"; {n_diff} of {len(items)} cells {'shows' if n_diff == 1 else 'show'} a difference {judged}"
             + (f" ({'; '.join(sig)})" if sig else "") + ".")
    if sig_cells and not aa_all:
        text += (" This run had no A/A control; on this machine two sessions of the same model differ by about as "
                 "much, so these intervals alone do not show a real difference (see a full run).")
    if sig_cells and aa_all:
        aa_max = max(abs(lat["ratio"] - 1) for _, c, lat in aa_all if not lat["noisy"])
        if all(abs(lat["ratio"] - 1) <= aa_max for _, _, lat in sig_cells):
            one_cell = len(sig_cells) == 1
            text += (f" {'It is' if one_cell else 'Each is'} smaller than the largest deviation between two sets of "
                     f"sessions of the same model ({100 * aa_max:.1f}%), and both variants run the same kernels "
                     f"(below), so we read {'it' if one_cell else 'them'} as noise.")
    if basic_same and all_same and bn_left == 0:
        text += (
            f" Fusion cannot pay here because onnxruntime does the same fusion itself when it loads the model: its "
            f"basic level (ConvBNFusion) folds every Conv + BatchNormalization ({bn_left} BatchNormalization nodes left "
            f"in any unfused graph after ORT_ENABLE_BASIC), so the optimized graphs of fused and unfused have identical "
            f"op histograms at every level dumped (basic, extended, all). The extended level also turns each "
            f"x·Sigmoid(x) into one com.microsoft QuickGelu node, in both variants"
            + ("" if ext_same else " (op histograms differ at that level)")
            + f", and ORT_ENABLE_ALL converts the convs to its NCHWc-blocked layout. {ex['label']}, nodes unfused/fused: "
            f"ptonnx {ex['graph']['unfused']['onnx_nodes']}/{ex['graph']['fused']['onnx_nodes']} → ORT basic "
            f"{cnt['ENABLE_BASIC'][0]}/{cnt['ENABLE_BASIC'][1]} → extended {cnt['ENABLE_EXTENDED'][0]}/"
            f"{cnt['ENABLE_EXTENDED'][1]} ({quick} QuickGelu) → all {cnt['ENABLE_ALL'][0]}/{cnt['ENABLE_ALL'][1]} "
            f"({nchwc} NCHWc convs). Both variants run the same kernels; only the folded weights differ in rounding."
        )
    else:
        text += (
            f" onnxruntime's optimized graphs of fused and unfused are {'identical' if basic_same else 'different'} at "
            f"the basic level and {'identical' if all_same else 'different'} at ORT_ENABLE_ALL "
            f"({bn_left} BatchNormalization nodes left after ORT basic); see the graph table."
        )
    out.append(text)

    ort_gain = [statistics.median(r["latency"][config_name("DISABLE_ALL", t)]["unfused"]["median_ms"]
                                  / r["latency"][config_name("ENABLE_ALL", t)]["unfused"]["median_ms"] for r in results)
                for t in (1, 2)]
    fusion_gain = statistics.median(1 / r["latency"][one]["ratio"] for r in results)
    out.append(
        f"**For scale:** onnxruntime's own optimizer (ORT_DISABLE_ALL → ORT_ENABLE_ALL, unfused model) speeds the "
        f"workloads up by a median factor of {ort_gain[0]:.2f} at 1 thread and {ort_gain[1]:.2f} at 2 threads; "
        f"ptonnx's fusion with ORT's optimizer off by a median factor of {fusion_gain:.3f} (1 thread). "
        f"Part of ORT's gain comes from onnxruntime-specific contrib ops (QuickGelu, NCHWc-blocked convs) that a "
        f"standard opset-18 model cannot contain."
    )
    allc = config_name("ENABLE_ALL", 1)
    sc = big["session_create_ms"][allc]
    sc_fast = sum(1 for r in results if r["session_create_ms"][allc]["fused"] < r["session_create_ms"][allc]["unfused"])
    head = ("Where fusion does pay with ORT's optimizer on: loading the model." if 2 * sc_fast > len(results)
            else "Session creation.")
    out.append(
        f"**{head}** With the fusion already done, "
        f"onnxruntime has less to fold when it loads the model: {big['label']} takes {sc['fused']:.1f} ms to load fused "
        f"vs {sc['unfused']:.1f} ms unfused (`InferenceSession` construction, ORT_ENABLE_ALL, 1 thread, median of "
        f"{big.get('sessions', '?')}); "
        f"the fused model loads faster in {sc_fast} of {len(results)} workloads. This is a one-off cost per session"
        + (f", smaller than what the fusion pass adds to ptonnx's compile of the same model "
           f"({big['compile']['fused']['total'] * 1e3 - big['compile']['unfused']['total'] * 1e3:.1f} ms, below)."
           if sc["unfused"] - sc["fused"] < (big["compile"]["fused"]["total"] - big["compile"]["unfused"]["total"]) * 1e3
           else ".")
    )

    rows = []
    for r in results:
        cf, cu = r["compile"]["fused"], r["compile"]["unfused"]
        rows.append((r["label"], cf.get("fuse_conv_bn_silu", 0.0) * 1e3, cf["total"] * 1e3, cu["total"] * 1e3,
                     (cf["lower"] + cf["check"]) * 1e3, (cu["lower"] + cu["check"]) * 1e3))
    eg = next((x for x in rows if x[0] == big["label"]), rows[-1])
    slower_compile = sum(1 for x in rows if x[2] > x[3])
    out.append(
        f"**Compile time:** the fusion pass takes {min(x[1] for x in rows):.2f}–{max(x[1] for x in rows):.2f} ms per "
        f"workload. {eg[0]}: fused compile {eg[2]:.1f} ms vs unfused {eg[3]:.1f} ms (fusion pass {eg[1]:.1f} ms; "
        f"lower + checker {eg[4]:.1f} ms fused vs {eg[5]:.1f} ms unfused"
        + (", cheaper with fewer nodes" if eg[4] < eg[5] else "")
        + f"). The fused compile is slower in {slower_compile} of {len(rows)} workloads"
        + (": the pass costs more than the smaller graph saves in lowering and checking." if 2 * slower_compile > len(rows)
           else ".")
    )
    return out


def markdown(results: list[dict], meta: dict) -> str:
    settings = meta.get("settings", {})
    cfgs = [config_name(*c) for c in CONFIGS]
    pass_names = [p for p in FUSED_PASSES]  # in run order
    L = [
        "# ptonnx: fused vs unfused (fuse_conv_bn_silu)",
        "",
        f"Measured {meta['date']} on {meta['machine']} ({meta['cpu']}, {meta['cpus']} CPUs, shared; load average "
        f"{meta['loadavg_start']} at start, {meta['loadavg_end']} at end), Python {meta['python']}, "
        f"pytensor {meta['pytensor']}, onnx {meta['onnx']}, onnxruntime {meta['onnxruntime']}, numpy {meta['numpy']}, "
        f"commit {meta['commit']}. Script runtime {meta['runtime_s']:.0f} s.",
        f"Command: `{meta['command']}`",
        "Settings: " + ", ".join(f"{k}={v}" for k, v in meta.get("settings", {}).items()) + ".",
        "",
        f"fused = `ptonnx.compile(fgraph)` (passes {', '.join(FUSED_PASSES)}); unfused = passes "
        f"{', '.join(UNFUSED_PASSES)}. Weights: `random_weights({SEED}, gain=SIGNAL_GAIN={SIGNAL_GAIN})` "
        f"(blocks: the same weights restricted to the block); input uniform [0, 1) float32, seed {INPUT_SEED}; batch 1. "
        "Blocks have the input shape they have inside YOLO11n for an image of the given size (@320, @640). "
        "Latency: onnxruntime CPU, `inter_op_num_threads=1`, `intra_op_num_threads` 1 or 2 (thr), "
        "`graph_optimization_level` ORT_DISABLE_ALL (no ORT opt) or ORT_ENABLE_ALL (ORT opt ALL). "
        "Each variant gets several sessions (`sessions` in the settings), used in turn round by round, because one session can be "
        "a few % faster or slower than another session of the same model for its whole life. "
        "Fused and unfused sessions run interleaved, so that their ratio is a same-time comparison: rounds of "
        f"one batch per variant (≥ 3 runs, ≥ {settings.get('batch_ms', BATCH_S * 1e3):.0f} ms, each run timed on its "
        "own), order flipped every round; "
        f"before each batch one untimed run and, with 2 threads, a {SETTLE_S * 1e3:.0f} ms pause (an idle onnxruntime "
        "thread pool keeps spinning for tens of ms after a run and would slow the other session down). "
        "Latency = median over the timed runs. "
        "ratio = fused / unfused, paired by round: the median over rounds of (median fused run / median unfused run "
        "in that round), so that a burst of load from another process, which hits both variants of a round, cancels "
        "out; **below 1 means fusion pays**; [brackets] = 95% bootstrap interval over rounds. "
        f"A measurement with p90/p10 > {NOISY_SPREAD:g} in either variant (a wide spread, e.g. from other load) is repeated once "
        "(the attempt with less spread is kept; \"⚠ noisy\" if both were wide). "
        + ("A/A control = the same measurement with two sets of sessions of the *same* (unfused) model, at half the "
           "budget: how far from 1.000 a ratio gets on this machine when nothing differs. Its interval, made symmetric "
           "around 1, is the noise band; **bold** = the fused/unfused interval lies entirely outside the noise band "
           "(verdict \"fused faster\"/\"fused slower\"), otherwise \"no clear difference\"."
           if settings.get("aa_control", True) else
           "No A/A control in this run (--quick or --no-aa-control): **bold** = the 95% interval excludes 1, which "
           "on this machine is NOT enough to call a difference real (sessions of one model differ by ~1–2% on their "
           "own; see a full run)."),
        "",
        "## Summary",
        "",
        "| workload | input | ONNX nodes unfused → fused | BN share of kernel time (unfused, no ORT opt, 1 thr) | "
        + " | ".join(f"ratio: {c}" for c in cfgs) + " | A/A control ratios (same 4 configs) |",
        "|---|---|---:|---:|" + "---:|" * len(cfgs) + "---:|",
    ]
    for r in results:
        aa = " / ".join(f"{r['aa_control'][c]['ratio']:.3f}" for c in cfgs if c in r["aa_control"]) or "–"
        L.append(
            f"| {r['label']} | {'×'.join(map(str, r['input_shape']))} | "
            f"{r['graph']['unfused']['onnx_nodes']} → {r['graph']['fused']['onnx_nodes']} | "
            f"{100 * _bn_share(r):.1f}% | "
            + " | ".join(_ratio_cell(r["latency"][c]) for c in cfgs) + f" | {aa} |"
        )
    L += ["", "## Reading the numbers", ""]
    for para in reading(results):
        L += [para, ""]

    L += [
        "## Latency (ms per run)",
        "",
        "Median (p10–p90) over the runs; runs = timed runs per variant (rounds × batch). "
        "Session create = median time of one `InferenceSession(...)` construction (onnxruntime's graph optimisation "
        "included) over the sessions of the variant.",
        "",
        "| workload | config | unfused ms | fused ms | fused / unfused | verdict | A/A noise band | runs | session create ms unfused / fused |",
        "|---|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in results:
        for c in cfgs:
            lat = r["latency"][c]
            u, f = lat["unfused"], lat["fused"]
            sc = r["session_create_ms"][c]
            L.append(
                f"| {r['label']} | {c} | {_ms(u['median_ms'])} ({_ms(u['p10_ms'])}–{_ms(u['p90_ms'])}) | "
                f"{_ms(f['median_ms'])} ({_ms(f['p10_ms'])}–{_ms(f['p90_ms'])}) | {_ratio_cell(lat, bold=False)} | "
                f"{lat['verdict']} | {_band(lat)} | {_runs(lat)} | "
                f"{sc['unfused']:.1f} / {sc['fused']:.1f} |"
            )
            if c in r["aa_control"]:
                aa = r["aa_control"][c]
                L.append(
                    f"| {r['label']} | {c}, A/A control | {_ms(aa['unfused']['median_ms'])} "
                    f"({_ms(aa['unfused']['p10_ms'])}–{_ms(aa['unfused']['p90_ms'])}) | "
                    f"{_ms(aa['fused']['median_ms'])} ({_ms(aa['fused']['p10_ms'])}–{_ms(aa['fused']['p90_ms'])}) "
                    f"(2nd unfused session) | {_ratio_cell(aa, bold=False)} | (control) | "
                    f"| {_runs(aa)} | |"
                )

    L += [
        "",
        "## Graphs: what ptonnx emits and what onnxruntime runs",
        "",
        "ONNX nodes and op counts of ptonnx's model, then the node count of onnxruntime's optimized graph "
        "(dumped with `SessionOptions.optimized_model_filepath`) at each level. QuickGelu = com.microsoft QuickGelu "
        "(x·Sigmoid(αx), here α=1: SiLU); NCHWc = com.microsoft.nchwc ops. "
        "\"same ops\" = the fused and unfused optimized graphs have identical op histograms.",
        "",
        "| workload | variant | ONNX nodes | " + " | ".join(SHOWN_OPS) + " | other | model MB | "
        "ORT basic: nodes (BN) | ORT extended: nodes (QuickGelu) | ORT all: nodes (NCHWc) | same ops basic/ext/all |",
        "|---|---|---:|" + "---:|" * len(SHOWN_OPS) + "---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        for v in VARIANTS:
            g = r["graph"][v]
            other = g["onnx_nodes"] - sum(_hist(r, v, op) for op in SHOWN_OPS)
            b, e, a = (_opt(r, v, lvl) for lvl in DUMP_LEVELS)
            nchwc = sum(n for op, n in a["histogram"].items() if op.startswith("com.microsoft.nchwc:"))
            same = "/".join("yes" if _same_ops(r, lvl) else "no" for lvl in DUMP_LEVELS) if v == "unfused" else ""
            L.append(
                f"| {r['label'] if v == 'unfused' else ''} | {v} | {g['onnx_nodes']} | "
                + " | ".join(str(_hist(r, v, op)) for op in SHOWN_OPS)
                + f" | {other} | {g['model_bytes'] / 2**20:.2f} | "
                f"{b['nodes']} ({b['histogram'].get('BatchNormalization', 0)}) | "
                f"{e['nodes']} ({e['histogram'].get('com.microsoft:QuickGelu', 0)}) | "
                f"{a['nodes']} ({nchwc}) | {same} |"
            )

    L += [
        "",
        "## Where the time goes (ORT profiler, no ORT opt, 1 thread)",
        "",
        "Summed kernel time per run (ms) by op type, from onnxruntime's profiler (`enable_profiling`), "
        "warm-up runs dropped. The profiler adds overhead per node; compare with the unprofiled median.",
        "",
        "| workload | variant | profiled runs | Conv | BatchNormalization | Sigmoid + Mul | other | kernel sum | unprofiled median |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    one = config_name("DISABLE_ALL", 1)
    for r in results:
        for v in VARIANTS:
            k = _kernel_ms(r, v)
            L.append(f"| {r['label'] if v == 'unfused' else ''} | {v} | {r['profile'][v]['runs']} | "
                     + " | ".join(_ms(k[c]) for c in ("Conv", "BatchNormalization", "Sigmoid+Mul", "other", "total"))
                     + f" | {_ms(r['latency'][one][v]['median_ms'])} |")

    stage_cols = ["lift", *pass_names, "lower", "check", "total"]
    L += [
        "",
        "## ptonnx compile time by stage (ms)",
        "",
        "Medians over the compiles (after one warm-up; fused and unfused alternate). lower includes the IR "
        "`verify` before lowering; check = `onnx.checker.check_model(full_check=True)`, part of `ptonnx.compile`; "
        "total = lift + passes (incl. pass-manager overhead) + lower + check. PyTensor graph building is not timed.",
        "",
        "| workload | variant | compiles | IR nodes after lift | " + " | ".join(stage_cols) + " | fusion rewrites |",
        "|---|---|---:|---:|" + "---:|" * len(stage_cols) + "---|",
    ]
    for r in results:
        for v in VARIANTS:
            c = r["compile"][v]
            recs = c["pass_records"]
            rewrites = ", ".join(f"{k} {n}" for k, n in recs.get("fuse_conv_bn_silu", {}).get("details", {}).items())
            cells = [f"{c[s] * 1e3:.2f}" if s in c else "–" for s in stage_cols]
            L.append(f"| {r['label'] if v == 'unfused' else ''} | {v} | {c['repeats']} | "
                     f"{next(iter(recs.values()))['nodes_before']} | " + " | ".join(cells) + f" | {rewrites} |")

    L += [
        "",
        "## Correctness",
        "",
        "Output of every session (2 variants × 4 configs) against PyTensor's own evaluation "
        "(`Mode(linker=\"py\", optimizer=None)`), `numpy.allclose` with the tolerance shown (float32; YOLO11n boxes "
        "are in input pixels), and fused against unfused (no ORT opt, 1 thread).",
        "",
        "| workload | tolerance | max abs diff vs PyTensor (all sessions) | worst diff / (atol + rtol·\\|ref\\|) | fused vs unfused max abs diff | max abs output | ok |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        ch = r["checks"]
        s = ch["sessions"].values()
        L.append(f"| {r['label']} | rtol={ch['tolerance']['rtol']:g}, atol={ch['tolerance']['atol']:g} | "
                 f"{max(x['max_abs'] for x in s):.2e} | {max(x['tol_used'] for x in s):.3f} | "
                 f"{ch['fused_vs_unfused_max_abs']:.2e} | {ch['ref_max_abs']:.3g} | {'yes' if ch['ok'] else '**NO**'} |")
    L += ["", "Chart: `fusion.png` (same directory).", ""]
    return "\n".join(L)


def chart(results: list[dict], path: Path, meta: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    cfgs = [config_name(*c) for c in CONFIGS]
    labels = [r["label"].replace(" @", "\n@") for r in results]
    colors = ["#9ecae1", "#3182bd", "#fdae6b", "#e6550d"]
    x = np.arange(len(results))
    width = 0.8 / len(cfgs)

    fig = plt.figure(figsize=(15, 11.5), constrained_layout=True)
    gs = fig.add_gridspec(3, 2, height_ratios=[1.15, 1, 1])
    ax = fig.add_subplot(gs[0, :])
    for i, c in enumerate(cfgs):
        ratios = np.array([r["latency"][c]["ratio"] for r in results])
        ci = np.array([r["latency"][c]["ci95"] for r in results])
        # bars grow from 1.0 (no difference): down = fused faster, up = fused slower
        noisy = [r["latency"][c]["noisy"] for r in results]
        ax.bar(x + (i - 1.5) * width, ratios - 1, width, bottom=1, color=colors[i], label=c,
               hatch=["//" if n else "" for n in noisy], edgecolor="white", linewidth=0,
               yerr=[ratios - ci[:, 0], ci[:, 1] - ratios], capsize=2, error_kw={"elinewidth": 0.8})
    for i, c in enumerate(cfgs):
        pts = [(j, r["aa_control"][c]["ratio"]) for j, r in enumerate(results) if c in r["aa_control"]]
        if pts:
            ax.plot([x[j] + (i - 1.5) * width for j, _ in pts], [v for _, v in pts], "kD", ms=4,
                    label="A/A control (same model twice)" if i == 0 else None)
    ax.axhline(1.0, color="black", lw=1)
    # the axis follows the ratios, not the intervals: a disturbed (hatched) cell's interval may run off it
    vals = [d[c]["ratio"] for r in results for d in (r["latency"], r["aa_control"]) for c in cfgs if c in d]
    ax.set_ylim(max(0.5, min(vals) - 0.04), min(1.5, max(vals) + 0.06))
    ax.set_xticks(x, labels, fontsize=9)
    ax.set_ylabel("latency fused / unfused\n(paired median; < 1 = fusion faster)")
    ax.set_title("Fused / unfused latency ratio per workload and onnxruntime config "
                 "(error bars: 95% bootstrap interval; hatched: wide spread, p90/p10 > 1.5)")
    ax.legend(ncols=5, loc="upper left", fontsize=9)
    ax.grid(axis="y", alpha=0.3)

    for i, c in enumerate(cfgs):
        a = fig.add_subplot(gs[1 + i // 2, i % 2])
        u = np.array([r["latency"][c]["unfused"]["median_ms"] for r in results])
        f = np.array([r["latency"][c]["fused"]["median_ms"] for r in results])
        a.bar(x - 0.2, u, 0.4, color="#bdbdbd", label="unfused")
        a.bar(x + 0.2, f, 0.4, color=colors[i], label="fused")
        a.set_yscale("log")
        lo, hi = min(u.min(), f.min()), max(u.max(), f.max())
        if hi / lo < 10:  # keep at least a decade so the log axis gets readable ticks
            mid = math.sqrt(lo * hi)
            a.set_ylim(mid / 4, mid * 4)
        a.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        a.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        a.set_xticks(x, [r["label"] for r in results], rotation=30, ha="right", fontsize=8)
        a.set_ylabel("median latency (ms, log scale)")
        a.set_title(f"onnxruntime CPU: {c}")
        a.legend(fontsize=8, loc="upper left")
        a.grid(axis="y", alpha=0.3, which="both")
    fig.suptitle(f"ptonnx fuse_conv_bn_silu: fused vs unfused (onnxruntime {meta['onnxruntime']}, "
                 f"{meta['cpus']}-CPU shared machine, {meta['date'][:10]})", fontsize=13)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _meta(argv) -> dict:
    commit = git_commit()
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pytensor": pytensor.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
        "commit": commit,
        "command": "python benchmarks/fusion.py " + " ".join(argv),
        "fused_passes": list(FUSED_PASSES),
        "unfused_passes": list(UNFUSED_PASSES),
        "loadavg_start": " ".join(f"{v:.2f}" for v in os.getloadavg()),
    }


def all_workloads() -> list[str]:
    return [f"{kind}@{size}" for kind in KINDS for size in SIZES]


def select_workloads(spec: str | None, quick: bool) -> list[str]:
    keys = all_workloads()
    if spec:
        chosen = []
        for item in (s.strip() for s in spec.split(",") if s.strip()):
            match = [k for k in keys if k == item or k.split("@")[0] == item]
            if not match:
                raise SystemExit(f"unknown workload {item!r}; known: {', '.join(keys)} (or a kind: {', '.join(KINDS)})")
            chosen += [k for k in match if k not in chosen]
        return [k for k in keys if k in chosen]
    if quick:
        keys.remove("yolo11n@640")
    return keys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: short budget, 1 session per variant, no A/A control, fewer compiles and profile runs, "
                         "no YOLO11n@640 (unless --workloads names it)")
    ap.add_argument("--workloads", default=None,
                    help=f"comma-separated subset of {', '.join(all_workloads())}; a bare kind (e.g. conv) means both sizes")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of timed runs per workload and ORT config, both variants together "
                         "(default 2.5, --quick 0.8); YOLO11n gets --yolo-budget-factor times this")
    ap.add_argument("--yolo-budget-factor", type=float, default=4.0,
                    help="YOLO11n gets this many times --budget (default %(default)s): its runs are long")
    ap.add_argument("--min-runs", type=int, default=None, help="runs per variant at least (default 20, --quick 8)")
    ap.add_argument("--max-runs", type=int, default=3000, help="runs per variant at most (default %(default)s)")
    ap.add_argument("--compiles", type=int, default=None, help="timed compiles per variant (default 9, --quick 3; YOLO11n 2 fewer, min 3)")
    ap.add_argument("--profile-runs", type=int, default=None, help="runs under the ORT profiler at least (default 10, --quick 3; up to 1 s of runs)")
    ap.add_argument("--no-aa-control", dest="aa_control", action="store_false", default=None,
                    help="skip the A/A control (a second set of sessions of the unfused model, half the budget; "
                         "verdicts then use the interval alone); --quick skips it unless --aa-control is given")
    ap.add_argument("--aa-control", dest="aa_control", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sessions", type=int, default=None,
                    help="sessions per variant and config, used in turn (default 3, --quick 1); "
                         "their construction time is reported (median)")
    ap.add_argument("--out", default=str(RESULTS), help="directory for fusion.md/.json/.png")
    ap.add_argument("--replot", metavar="JSON", default=None,
                    help="measure nothing: rewrite fusion.md and fusion.png from an earlier fusion.json")
    args = ap.parse_args(argv)
    if args.replot:
        payload = json.loads(Path(args.replot).read_text())
        out = Path(args.out)
        (out / "fusion.md").write_text(markdown(payload["results"], payload["meta"]))
        chart(payload["results"], out / "fusion.png", payload["meta"])
        print(f"rewrote {out / 'fusion.md'} and {out / 'fusion.png'} from {args.replot}")
        return 0
    args.budget = args.budget if args.budget is not None else (0.8 if args.quick else 2.5)
    args.min_runs = args.min_runs if args.min_runs is not None else (8 if args.quick else 20)
    args.compiles = args.compiles if args.compiles is not None else (3 if args.quick else 9)
    args.profile_runs = args.profile_runs if args.profile_runs is not None else (3 if args.quick else 10)
    args.sessions = args.sessions or (1 if args.quick else 3)
    args.aa_control = (not args.quick) if args.aa_control is None else args.aa_control
    global MIN_ROUNDS, BATCH_S
    if args.quick:
        MIN_ROUNDS, BATCH_S = 6, 0.02
    workloads = select_workloads(args.workloads, args.quick)

    t0 = time.perf_counter()
    meta = _meta(argv)
    meta["settings"] = {k: getattr(args, k) for k in ("quick", "budget", "yolo_budget_factor", "min_runs", "max_runs",
                                                      "compiles", "profile_runs", "sessions", "aa_control")}
    meta["settings"].update(min_rounds=MIN_ROUNDS, batch_ms=BATCH_S * 1e3)
    print(f"workloads: {', '.join(workloads)}; budget {args.budget:g} s per config", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="ptonnx-fusion-") as tmp:
        for key in workloads:
            print(f"[{key}]", flush=True)
            results.append(run_workload(key, args, Path(tmp)))
            gc.collect()
    meta["loadavg_end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    meta["runtime_s"] = time.perf_counter() - t0

    text = markdown(results, meta)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chart(results, out / "fusion.png", meta)
    meta["runtime_s"] = time.perf_counter() - t0
    text = markdown(results, meta)
    print()
    print(text)
    (out / "fusion.md").write_text(text)
    payload = {"meta": meta, "configs": [config_name(*c) for c in CONFIGS], "results": results}
    (out / "fusion.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"wrote {out / 'fusion.md'}, {out / 'fusion.json'} and {out / 'fusion.png'} in {meta['runtime_s']:.0f} s")
    return 0 if all(r["checks"]["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
