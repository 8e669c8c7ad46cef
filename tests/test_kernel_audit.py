"""The recorded onnxruntime quirks (`ptonnx.onnxruntime_kernels.KERNEL_QUIRKS`) against the
installed onnxruntime: every (ONNX op, dtype) ptonnx emits is re-probed with edge values
(`references.kernels`, the engine behind `python -m audit.kernel_audit`), and a quirk that
appears or disappears fails here, naming the pair. Each quirk is either worked around
in lowering or listed in the known limits (`docs/limits.md`)."""

from __future__ import annotations

import re
from pathlib import Path

import onnxruntime as ort
import pytest

from references.kernels import differences, run_audit
from ptonnx.onnxruntime_kernels import KERNEL_QUIRKS, PROBED_ON, RUNTIME_WIDENING

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

ROOT = Path(__file__).resolve().parents[1]
LIMITS = ROOT / "docs" / "limits.md"
KINDS = {
    "no kernel", "invalid-onnx", "nan", "overflow", "underflow", "signed-zero", "inaccurate", "saturates",
    "no-wrap", "wrong", "error", "fused-precision", "fusion",
}


@pytest.fixture(scope="module")
def audit():
    return run_audit()


def test_the_installed_onnxruntime_has_exactly_the_recorded_quirks(audit):
    diffs = differences(audit)
    assert not diffs, (
        f"onnxruntime {ort.__version__} departs from onnxruntime_kernels.KERNEL_QUIRKS (probed on {PROBED_ON}). "
        "Run `python -m audit.kernel_audit --write`, then fix lowering or docs/limits.md and update the record:\n  "
        + "\n  ".join(diffs)
    )


def test_the_probe_covers_what_lowering_emits(audit):
    ops = {p.op for p in audit.pairs}
    assert {"Add", "Cast", "Where", "MatMul", "Transpose", "Softmax", "Exp"} <= ops
    assert not audit.not_enumerated, f"IR ops the audit could not build a graph for: {audit.not_enumerated}"


def test_every_recorded_quirk_is_handled_once():
    keys = [q.key for q in KERNEL_QUIRKS]
    assert len(keys) == len(set(keys)), "a quirk is recorded twice"
    for q in KERNEL_QUIRKS:
        assert q.kind in KINDS, q
        assert q.description.strip(), q
        assert re.match(r"(lowering: \S|decompositions: \S|onnxruntime_dtypes\.py: \S|docs/limits\.md known limits)", q.handled_by), (
            f"{q.op} {q.dtype} {q.kind}: handled_by must be 'lowering: <where>', 'decompositions: <where>', 'onnxruntime_dtypes.py: <row>' "
            "or 'docs/limits.md known limits'"
        )
        assert q.levels and set(q.levels) <= {"ORT_DISABLE_ALL", "ORT_ENABLE_ALL"}, q
        where = re.match(r"lowering: (\w+\.py)", q.handled_by)
        if where:
            assert (ROOT / "ptonnx" / "lowering" / where.group(1)).exists(), f"{q.op} {q.dtype}: {q.handled_by}"
        where = re.match(r"decompositions: ([\w/]+\.py)", q.handled_by)
        if where:
            assert (ROOT / "ptonnx" / "decompositions" / where.group(1)).exists(), f"{q.op} {q.dtype}: {q.handled_by}"


def test_runtime_widening_is_the_no_kernel_quirks_with_a_wider_dtype():
    assert RUNTIME_WIDENING == {(q.op, q.dtype): q.wider for q in KERNEL_QUIRKS if q.kind == "no kernel" and q.wider}
    assert ("Where", "bool") in RUNTIME_WIDENING


def test_every_quirk_left_to_the_known_limits_is_in_docs_limits():
    section = LIMITS.read_text(encoding="utf-8")
    missing = sorted(
        {
            f"{q.op} {q.dtype} ({q.kind}): {q.description}"
            for q in KERNEL_QUIRKS
            if q.handled_by.startswith("docs/limits.md known limits")
            and not re.search(rf"\b{re.escape(_op_name(q.op))}\b", section)
        }
    )
    assert not missing, "docs/limits.md (known limits) does not mention:\n  " + "\n  ".join(missing)


def _op_name(op: str) -> str:
    """The ONNX op a quirk is about: "Mod(fmod=1)" -> "Mod", "Mul→Cast" -> "Mul"."""
    return op.split("→")[0].split("(")[0]
