"""Every elementwise, shape and tensor IR op, in every dtype its declaration allows, as a
one-node graph built by hand: decomposed, legalised and lowered as `ptonnx.compile` does,
run at both onnxruntime levels, against the IR's own `interpret` of the same node.

The one-node graphs are the kernel probe's (`checks/emitted.py`); an op of these families
that the probe cannot build fails here (and in tests/test_kernel_audit.py). The CNN ops
have their own hand-built cases (tests/nn/test_ir_ops.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from checks.emitted import FAMILIES, _allowed, _cases
from ptonnx import ir
from ptonnx.errors import PtonnxError
from ptonnx.lowering import lower
from ptonnx.passes import UnifyDtypes
from ptonnx.passes.decompose import decompose
from ptonnx.passes.legalise import legalise
from ptonnx.testing import REORDERED_SUMS, assert_same, run_at_every_level

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

OPS = sorted(name for name, s in ir.all_schemas().items() if s.family in FAMILIES)
#: float values with the ends of the range (NaN, ±inf, ±0, a subnormal, huge and tiny magnitudes)
FLOATS = np.array([1.5, -2.25, 0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e300, -1e-300, 0.5, 3.0])


def _values(dtype: str, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        data = np.arange(size) % 3 == 1
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([0, 1, 2, 3, info.max, info.min, info.max // 2 + 1], dtype=dtype)
        if info.min < 0:
            pool = np.concatenate([pool, np.array([-1, -3], dtype=dtype)])
        data = rng.choice(pool, size)
    else:
        with np.errstate(over="ignore"):
            data = rng.choice(FLOATS, size).astype(dtype)
    return np.asarray(data, dtype=dtype).reshape(shape)


def _graph(name: str, dtypes, shapes, attributes):
    g = ir.Graph(f"{name}_case")
    inputs = [
        ir.Value.constant(s.astype(d)) if isinstance(s, np.ndarray) else g.add_input(ir.TensorType(d, s), f"x{i}")
        for i, (d, s) in enumerate(zip(dtypes, shapes, strict=True))
    ]
    node = ir.Builder(g).node(name, inputs, attributes)
    g.set_outputs(node.outputs)
    return g


def _compiled(graph: ir.Graph):
    UnifyDtypes().run(graph)
    decompose(graph)
    legalise(graph)
    return lower(graph)


@pytest.mark.parametrize("name", OPS)
def test_lowered_matches_interpret_in_every_dtype(name):
    schema = ir.get_schema(name)
    rng = np.random.default_rng(0)
    checked = 0
    for dtypes, shapes, attributes in _cases(schema):
        if not _allowed(schema, dtypes, attributes):
            continue
        try:
            model = _compiled(_graph(name, dtypes, shapes, attributes))
        except PtonnxError as exc:  # a refusal: only the documented one (no float64 CNN kernel)
            assert "float64" in dtypes and "no float64" in str(exc), f"{name} {dtypes}: {exc}"
            continue
        onnx.checker.check_model(model, full_check=True)
        reference = _graph(name, dtypes, shapes, attributes)
        arrays = [_values(v.dtype, v.shape, rng) for v in reference.inputs]
        try:
            with np.errstate(all="ignore"):
                expected = ir.interpret(reference, *arrays)
        except ValueError:  # NumPy refuses these inputs (an integer to a negative power): PyTensor raises too
            arrays = [np.where(a < 0, 2, a).astype(a.dtype) if a.dtype.kind == "i" else a for a in arrays]
            expected = ir.interpret(reference, *arrays)
        for level, actual in run_at_every_level(_Model(model), *arrays).items():
            for a, e in zip(actual, expected, strict=True):
                context = f"{name} on {dtypes} {attributes} at {level}, inputs {arrays}"
                if schema.family == "tensor" and e.dtype.kind == "f":
                    # sums in another order (Conv, pools, MatMul): the wider table, NaN and inf as they come
                    finite = np.isfinite(e) & np.isfinite(a)
                    np.testing.assert_allclose(a[finite], e[finite], err_msg=context, **REORDERED_SUMS.get(e.dtype.name, {"rtol": 1e-2, "atol": 1e-2}))
                else:
                    assert_same(a, e, context)
        checked += 1
    assert checked, f"{name}: no dtype of its declaration was checked"


class _Model:
    """What `run_at_every_level` calls: a ModelProto run by a session with given options."""

    def __init__(self, model, options=None):
        self.model, self.options = model, options

    def with_session_options(self, options):
        return _Model(self.model, options)

    def __call__(self, *arrays):
        import onnxruntime as ort

        session = ort.InferenceSession(self.model.SerializeToString(), self.options, providers=["CPUExecutionProvider"])
        return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), arrays, strict=True)})
