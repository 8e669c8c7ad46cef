"""Every elementwise, shape and tensor IR op, in every dtype its declaration allows, as a
one-node graph built by hand: decomposed, legalised and lowered as `ptonnx.compile` does,
run at both onnxruntime levels, against the IR's own `interpret` of the same node
(tests/lowering/harness.py).

The one-node graphs are the kernel probe's (`references/emitted.py`); an op of these families
that the probe cannot build fails here (and in tests/test_kernel_audit.py). The other
families have their own modules here (test_indexing.py, test_reduction.py, test_nn.py, ...)."""

from __future__ import annotations

import numpy as np
import pytest

from references.emitted import FAMILIES, _allowed, _cases
from ptonnx import ir
from ptonnx.errors import PtonnxError
from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, interpret, one_node, reordered_sums, values

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

OPS = sorted(name for name, s in ir.all_schemas().items() if s.family in FAMILIES)
COVERS = frozenset(OPS)


def _inputs(dtypes, shapes) -> list:
    """The probe's (dtype, shape) pairs as graph inputs; an array among the shapes is a constant."""
    return [s.astype(d) if isinstance(s, np.ndarray) else T(d, s) for d, s in zip(dtypes, shapes, strict=True)]


@pytest.mark.parametrize("name", OPS)
def test_lowered_matches_interpret_in_every_dtype(name):
    schema = ir.get_schema(name)
    rng = np.random.default_rng(0)
    checked = 0
    for dtypes, shapes, attributes in _cases(schema):
        if not _allowed(schema, dtypes, attributes):
            continue
        try:
            case = compiled(one_node(name, _inputs(dtypes, shapes), attributes))
        except PtonnxError as exc:  # a refusal: only the documented one (no float64 CNN kernel)
            assert "float64" in dtypes and "no float64" in str(exc), f"{name} {dtypes}: {exc}"
            continue
        arrays = [values(v.dtype, v.shape, rng) for v in case.reference.inputs]
        try:
            interpret(case.reference, *arrays)
        except ValueError:  # NumPy refuses these inputs (an integer to a negative power): PyTensor raises too
            arrays = [np.where(a < 0, 2, a).astype(a.dtype) if a.dtype.kind == "i" else a for a in arrays]
        # sums in another order (MatMul, Softmax's): the wider table
        case.check(*arrays, compare=reordered_sums if schema.family == "tensor" else None, context=f"{dtypes} {attributes}")
        checked += 1
    assert checked, f"{name}: no dtype of its declaration was checked"
