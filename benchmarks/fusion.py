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

    .venv/bin/python -m benchmarks.fusion                   # everything (~5-8 minutes)
    .venv/bin/python -m benchmarks.fusion --quick           # smoke test: fewer runs, 1 session each, no A/A
                                                            # control, no YOLO11n at 640 (~1.5 minutes)
    .venv/bin/python -m benchmarks.fusion --workloads conv,yolo11n@320 --budget 2

Writes ``benchmarks/results/fusion.md``, ``fusion.json`` and ``fusion.png``.

This file is the command line; the work is in ``fusion_models.py`` (the workloads, compiling
them, graph statistics), ``fusion_timing.py`` (onnxruntime sessions, profiler, latency and its
statistics), ``fusion_measure.py`` (one workload end to end, with the correctness check),
``fusion_reading.py`` (the "Reading the numbers" paragraphs) and ``fusion_report.py`` (the
markdown tables and the chart).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytensor

from benchmarks._common import RESULTS, git_commit, require_committed
from benchmarks.fusion_measure import run_workload
from benchmarks.fusion_models import FUSED_PASSES, UNFUSED_PASSES, all_workloads, select_workloads
from benchmarks.fusion_report import chart, markdown
from benchmarks.fusion_timing import BATCH_S, CONFIGS, MIN_ROUNDS, config_name


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
        "command": "python -m benchmarks.fusion " + " ".join(argv),
        "fused_passes": list(FUSED_PASSES),
        "unfused_passes": list(UNFUSED_PASSES),
        "loadavg_start": " ".join(f"{v:.2f}" for v in os.getloadavg()),
    }



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
    require_committed(Path(args.out))
    args.budget = args.budget if args.budget is not None else (0.8 if args.quick else 2.5)
    args.min_runs = args.min_runs if args.min_runs is not None else (8 if args.quick else 20)
    args.compiles = args.compiles if args.compiles is not None else (3 if args.quick else 9)
    args.profile_runs = args.profile_runs if args.profile_runs is not None else (3 if args.quick else 10)
    args.sessions = args.sessions or (1 if args.quick else 3)
    args.aa_control = (not args.quick) if args.aa_control is None else args.aa_control
    args.min_rounds, args.batch_s = (6, 0.02) if args.quick else (MIN_ROUNDS, BATCH_S)
    workloads = select_workloads(args.workloads, args.quick)

    t0 = time.perf_counter()
    meta = _meta(argv)
    meta["settings"] = {k: getattr(args, k) for k in ("quick", "budget", "yolo_budget_factor", "min_runs", "max_runs",
                                                      "compiles", "profile_runs", "sessions", "aa_control")}
    meta["settings"].update(min_rounds=args.min_rounds, batch_ms=args.batch_s * 1e3)
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
