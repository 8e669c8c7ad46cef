"""The legalise stage and its one table (`ptonnx/onnxruntime_dtypes.py`): hand-built IR, checked with
`interpret`, and compiled models whose every Cast is in `cm.ir`."""

from __future__ import annotations

import numpy as np
import onnx
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import ir
from ptonnx.errors import LoweringError
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.registry import all_schemas
from ptonnx.ir.types import ALL_DTYPES
from ptonnx.onnxruntime_dtypes import OWN, rows, rule
from ptonnx.lowering import check_lowerable, lower
from ptonnx.passes.legalise import legalise
from tests.conftest import assert_matches, check_like_pytensor


def test_every_row_names_registered_ops():
    known = set(all_schemas())
    for row in rows():
        assert row.ops is None or row.ops <= known, f"{row.why}: unknown ops {sorted(row.ops - known)}"


def test_every_compute_dtype_is_one_the_op_takes():
    """What legalise rebuilds must type-check: the compute dtype of (op, dtype) is allowed
    wherever `dtype` is (an emitter never sees a dtype its schema refuses)."""
    for name, schema in all_schemas().items():
        for var in (set(schema.input_vars) | set(schema.output_vars)) - ALL_DTYPES:
            allowed = schema.allowed(var)
            for dtype in allowed:
                decided = rule(name, dtype, moves=schema.has("layout"))
                if decided.compute is not None:
                    assert decided.compute in allowed, f"{name} on {dtype}: computed in {decided.compute}, not in {sorted(allowed)}"
                    assert rule(name, decided.compute) is OWN, f"{name}: {dtype} -> {decided.compute} is not the end of its chain"


@pytest.mark.parametrize("op, dtype", [("Neg", "uint8"), ("Neg", "uint16"), ("Pow", "int8"), ("Abs", "uint64")])
def test_wrapping_integer_ops_onnx_lacks_are_computed_wider(op, dtype):
    g = Graph()
    a = g.add_input(TensorType(dtype, (5,)), "a")
    b = Builder(g)
    y = b.op(op, a, name="y") if op in ("Neg", "Abs") else b.op(op, a, Value.constant(np.asarray(3, dtype)), name="y")
    g.set_outputs([y])
    info = np.iinfo(dtype)
    arr = np.array([0, 1, 7, info.max, info.min], dtype=dtype)
    expected = ir.interpret(g, arr)[0]
    done = legalise(g)
    if rule(op, dtype) is OWN:
        assert done == {}
        return
    assert sum(done.values()) == 1
    ir.verify(g)
    check_lowerable(g)  # what the lower stage requires
    assert [n.op for n in g][-1] == "Cast" and g.outputs[0].dtype == dtype and g.outputs[0].name == "y"
    np.testing.assert_array_equal(ir.interpret(g, arr)[0], expected)
    assert legalise(g) == {}  # idempotent


@pytest.mark.parametrize("dtype", ["int16", "uint16", "uint64", "int64"])
@pytest.mark.parametrize("op", ["IntDiv", "Mod"])
def test_integer_division_selects_without_hidden_casts(op, dtype):
    """NumPy's // and % select through Where, which onnxruntime lacks on int16/uint16/uint64:
    the table widens int16/uint16 (Casts in the IR), uint64 selects arithmetically; the model
    has no Cast the IR does not, and gives NumPy's numbers at the integer limits and for 0, -1."""
    info = np.iinfo(dtype)
    edges = [0, 1, 2, 7, info.max, info.min, info.max - 1] + ([-1, -7, info.min + 1] if info.min else [])
    a, b = (np.array(v, dtype=dtype) for v in zip(*[(x, y) for x in edges for y in edges], strict=True))
    g = Graph()
    x, y = g.add_input(TensorType(dtype, (None,)), "x"), g.add_input(TensorType(dtype, (None,)), "y")
    g.set_outputs([Builder(g).op(op, x, y, name="out")])
    cm = ptonnx.api.CompiledModel(_lowered(g), g, ptonnx.passes.Report())
    assert _numeric_casts(cm.model) == sum(n.op == "Cast" for n in g)  # a bool mask made a number is arithmetic
    with np.errstate(all="ignore"):
        expected = np.floor_divide(a, b) if op == "IntDiv" else np.mod(a, b)
    assert_matches(cm, [a, b], [expected])


def _numeric_casts(model) -> int:
    """The model's Casts from a numeric dtype (a change of dtype, not a mask turned into 0/1)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph
    types = {v.name: v.type.tensor_type.elem_type for v in [*inferred.value_info, *inferred.input, *inferred.output]}
    return sum(n.op_type == "Cast" and types[n.input[0]] != onnx.TensorProto.BOOL for n in inferred.node)


def _lowered(g):
    legalise(g)
    return lower(g)


def test_float16_chain_rounds_after_every_op_with_the_casts_in_the_ir():
    """65 * 65 in float16 is 4224 (NumPy rounds each op); onnxruntime alone would give 4225.
    Every Cast of the model is one of `cm.ir`'s: lowering adds none."""
    x = pt.vector("x", dtype="float16")
    y = pt.cast(x * x, "float32") + pt.log(x)
    cm = ptonnx.compile_function([x], [y])
    ir_casts = sum(n.op == "Cast" for n in cm.ir)
    onnx_casts = sum(n.op_type == "Cast" for n in cm.model.graph.node)
    assert ir_casts == onnx_casts > 0
    assert all(n.outputs[0].dtype != "float16" or n.op == "Cast" for n in cm.ir)
    arr = np.array([65, 0, -0.0, 6.1e-5, 6e-8, 65504, np.inf, -np.inf, np.nan, 1.5], np.float16)
    check_like_pytensor([x], [y], [arr])


def test_bool_arithmetic_in_uint8():
    b = pt.vector("b", dtype="bool")
    c = pt.vector("c", dtype="bool")
    # (no ~: PyTensor's own Composite evaluates ~ of a bool as an integer ~ in the rewritten graph)
    outs = [b + c, b * c, pt.maximum(b, c), pt.minimum(b, c)]
    cm = ptonnx.compile_function([b, c], outs)
    assert all(n.inputs[0].dtype != "bool" for n in cm.ir if n.op in ("Add", "Mul", "Max", "Min"))
    check_like_pytensor([b, c], outs, [np.array([True, False, True, False]), np.array([True, True, False, False])])


def test_every_legalised_node_is_reported():
    x = pt.vector("x", dtype="float32")
    cm = ptonnx.compile_function([x], [pt.log1p(x) + pt.log(x)])
    assert cm.report.legalised.get("Log:float32->float64") == 1
    assert "legalised:" in str(cm.report)


def test_lowering_refuses_a_graph_legalise_did_not_see():
    g = Graph()
    h = g.add_input(TensorType("float16", (3,)), "h")
    g.set_outputs([Builder(g).op("Mul", h, h, name="y")])
    with pytest.raises(LoweringError, match=r"(?s)Mul on float16 in float32.*legalise"):
        lower(g)
    legalise(g)
    model = lower(g)
    onnx.checker.check_model(model, full_check=True)
