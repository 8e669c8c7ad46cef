"""Probe the installed onnxruntime's kernels and write the table.

    python -m audit.kernel_audit            # probe, print the quirks and how they depart from the record
    python -m audit.kernel_audit --write    # also write audit/results/kernels.md and kernels.json
    python -m audit.kernel_audit --check    # exit 1 when the probe departs from KERNEL_QUIRKS

The record itself is `KERNEL_QUIRKS` in ptonnx/onnxruntime_kernels.py; update it by
hand from this output (each quirk needs a description and a `handled_by`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import onnx

from references.kernels import Audit, differences, run_audit
from references.probe import LEVELS, SHORT_LEVEL
from references.reference import ULP_THRESHOLD
from ptonnx import onnxruntime_kernels

RESULTS = Path(__file__).resolve().parent / "results"

HOW = f"""\
Every (ONNX op, dtype) that ptonnx's lowering emits (derived at probe time: each IR op of
the elementwise/shape/tensor families in every dtype, plus the elementwise ops the CNN
lowering emits, lowered after `unify_dtypes` and `legalise`), every pair in `KERNEL_QUIRKS` and
`RUNTIME_WIDENING`, run as a one-node opset-18 model at `ORT_DISABLE_ALL` and
`ORT_ENABLE_ALL` on edge values of its dtype (largest and smallest finite, subnormals,
±0, ±inf, NaN, the overflow thresholds of exp/log/sigmoid/softplus, integers at their
limits and at 2**53; binary ops on an all-pairs grid; float functions also on a sweep of
the whole range and the floats nearest multiples of pi/2) against NumPy/SciPy computed
exactly or wider (float64, long double, Python ints) and rounded to the dtype.
Two-node patterns (float16 op then Cast, Cast round trips, Transpose into MatMul) are
compared with their nodes run one at a time.

Bounds: 0 ulp for correctly rounded ops (+, -, *, /, sqrt, reciprocal, rounding, Cast,
comparisons, selection, layout), {ULP_THRESHOLD} ulp for library functions (exp, log, sin, cos,
tanh, erf, sigmoid, pow, softmax, matmul). Kinds: see `references/probe.py`. Inputs NumPy
leaves undefined (negative integer powers, casts of floats that do not fit an integer
dtype) are not compared; integer division by 0 and INT_MIN / -1 are never sent.
"""


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _levels(levels) -> str:
    return "+".join(SHORT_LEVEL[level] for level in levels) if tuple(levels) != LEVELS else "both"


def to_json(audit: Audit) -> dict:
    recorded = {q.key: q for q in onnxruntime_kernels.KERNEL_QUIRKS}
    return {
        "versions": audit.versions,
        "probed_seconds": round(audit.seconds, 1),
        "ulp_threshold": ULP_THRESHOLD,
        "levels": list(LEVELS),
        "quirks": [
            {
                "op": f.op, "dtype": f.dtype, "kind": f.kind, "levels": list(f.levels), "detail": f.detail,
                "inputs": list(f.inputs), "wider": f.wider,
                "handled_by": recorded[f.key].handled_by if f.key in recorded else None,
                "description": recorded[f.key].description if f.key in recorded else None,
            }
            for f in audit.findings
        ],
        "pairs": [
            {
                "op": p.op, "dtype": p.dtype, "status": sorted({f.kind for f in p.findings}) or ["ok"],
                "values": p.n_values, "max_ulp": p.max_ulp, "origins": list(p.origins),
            }
            for p in audit.pairs
        ],
        "differences_from_record": differences(audit),
        "not_enumerated": [list(x) for x in audit.not_enumerated],
        "refused_by_lowering": [list(x) for x in audit.refused],
    }


def to_markdown(audit: Audit) -> str:
    recorded = {q.key: q for q in onnxruntime_kernels.KERNEL_QUIRKS}
    v = audit.versions
    lines = [
        "# Kernel audit",
        "",
        (
            f"onnxruntime {v['onnxruntime']} (CPU), onnx {v['onnx']}, NumPy {v['numpy']}, SciPy {v['scipy']}; "
            f"{len(audit.pairs)} pairs and patterns probed in {audit.seconds:.1f} s. "
            "Regenerate with `python -m audit.kernel_audit --write`."
        ),
        "",
        HOW,
        f"## Quirks ({len(audit.findings)})",
        "",
        "Levels: `off` = ORT_DISABLE_ALL, `all` = ORT_ENABLE_ALL.",
        "",
        "| op | dtype | kind | levels | what differs | inputs where it bites | handled by |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in audit.findings:
        q = recorded.get(f.key)
        what = q.description if q else f.detail
        if f.detail and q and f.kind != "no kernel":
            what += f" (probe: {f.detail})"
        handled = q.handled_by if q else "**not recorded in onnxruntime_kernels.KERNEL_QUIRKS**"
        lines.append(
            f"| {_cell(f.op)} | {f.dtype} | {f.kind} | {_levels(f.levels)} | {_cell(what)} | "
            f"{_cell('; '.join(f.inputs)) or '–'} | {_cell(handled)} |"
        )
    diffs = differences(audit)
    lines += ["", "## Differences from the record", ""]
    lines += [f"- {_cell(d)}" for d in diffs] or ["None: the probe matches `KERNEL_QUIRKS`."]
    lines += [
        "", "## Every pair probed", "",
        "| op | dtype | status | values | max ulp (off / all) | emitted by |",
        "|---|---|---|---|---|---|",
    ]
    for p in audit.pairs:
        status = ", ".join(sorted({f.kind for f in p.findings})) or "ok"
        ulps = " / ".join(f"{p.max_ulp[level]:.0f}" for level in LEVELS if level in p.max_ulp) or "–"
        lines.append(f"| {_cell(p.op)} | {p.dtype} | {status} | {p.n_values or '–'} | {ulps} | {_cell(', '.join(p.origins))} |")
    lines += ["", "## Not probed", ""]
    lines += [
        f"- IR op {op} in {dtype}: lowering refuses it ({_cell(why)})"
        + ("; the ONNX op of that name is probed above" if onnx.defs.has(op) else "")
        for op, dtype, why in audit.refused
    ]
    lines += [f"- IR op {op}: no one-node graph could be built ({_cell(why)})" for op, why in audit.not_enumerated]
    lines += [
        (
            "- CNN ops (Conv, BatchNormalization, pools, Resize) are not probed; their float64 gaps are "
            "`NO_FLOAT64_KERNEL`. ReduceMax/ArgMax (NaN skipped) are not emitted by ptonnx yet."
        ),
        "",
    ]
    return "\n".join(lines)


def _json_lines(data: dict) -> str:
    """JSON with one list entry per line, so a re-probe diffs line by line."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            items = ",\n  ".join(json.dumps(v, default=str) for v in value)
            parts.append(f"{json.dumps(key)}: [\n  {items}\n ]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, default=str)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m audit.kernel_audit", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write audit/results/kernels.md and kernels.json")
    parser.add_argument("--check", action="store_true", help="exit 1 if the probe departs from KERNEL_QUIRKS")
    args = parser.parse_args(argv)
    audit = run_audit()
    print(f"{len(audit.pairs)} pairs and patterns probed in {audit.seconds:.1f} s "
          f"(onnxruntime {audit.versions['onnxruntime']}); {len(audit.findings)} quirks:")
    for f in audit.findings:
        print(f"  {f.op} {f.dtype}: {f.kind} at {_levels(f.levels)}. {f.detail} {'; '.join(f.inputs[:1])}".rstrip())
    diffs = differences(audit)
    print("differences from onnxruntime_kernels.KERNEL_QUIRKS:" if diffs else "the probe matches onnxruntime_kernels.KERNEL_QUIRKS")
    for d in diffs:
        print(f"  {d}")
    if args.write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "kernels.md").write_text(to_markdown(audit))
        (RESULTS / "kernels.json").write_text(_json_lines(to_json(audit)))
        print(f"wrote {RESULTS / 'kernels.md'} and {RESULTS / 'kernels.json'}")
    return 1 if (args.check and diffs) else 0


if __name__ == "__main__":
    sys.exit(main())
