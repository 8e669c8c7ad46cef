"""Fusion benchmark, one workload end to end: compile both variants, count their graphs, profile,
time every onnxruntime config, and check the outputs against PyTensor (see fusion.py)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytensor
from benchmarks.fusion_models import (INPUT_SEED, KINDS, VARIANTS, build, measure_compile, model_stats, parse_workload,
                           workload_label)
from benchmarks.fusion_timing import (CONFIGS, config_name, judge_against_control, make_sessions, measure_pair_retry,
                           ort_optimized_graphs, ort_profile)
from pytensor.compile.mode import Mode

from ptonnx.api import function_graph

#: tolerances of the correctness check (float32). YOLO11n boxes are in input pixels (0..imgsz).
TOLERANCE = {"block": {"rtol": 1e-3, "atol": 1e-4}, "yolo11n": {"rtol": 1e-3, "atol": 2e-2}}


def run_workload(key: str, args, tmp: Path) -> dict:
    """Everything measured for one workload (`args`: the command line's settings), as one JSON-able dict."""
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
    pacing = {"min_rounds": args.min_rounds, "batch_s": args.batch_s}
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
        res["latency"][cfg] = measure_pair_retry(sessions, feeds, threads, budget, args.min_runs, args.max_runs,
                                                 **pacing)
        lat = res["latency"][cfg]
        print(f"  [{key}] {cfg}: unfused {lat['unfused']['median_ms']:.3f} ms, fused {lat['fused']['median_ms']:.3f} ms, "
              f"ratio {lat['ratio']:.3f} [{lat['ci95'][0]:.3f}, {lat['ci95'][1]:.3f}] ({lat['runs_each']} runs each)",
              flush=True)
        if args.aa_control:
            # A/A control: the unfused model against a second session of the same unfused model
            twin, _ = make_sessions(model_bytes["unfused"], level, threads, args.sessions)
            aa = measure_pair_retry({"unfused": sessions["unfused"], "fused": twin},
                                    {"unfused": feeds["unfused"], "fused": feeds["unfused"]}, threads, budget / 2,
                                    args.min_runs // 2, args.max_runs, **pacing)
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

