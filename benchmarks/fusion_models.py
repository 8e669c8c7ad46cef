"""Fusion benchmark, the workloads: YOLO11n blocks and the whole network as PyTensor graphs,
compiled fused and unfused, and what ptonnx emits for each (see fusion.py)."""

from __future__ import annotations

import collections
import gc
import statistics

import onnx

import ptonnx
from ptonnx.models import SIGNAL_GAIN, block_graph, random_weights, yolo11n
from ptonnx.passes import DEFAULT_PASSES

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
