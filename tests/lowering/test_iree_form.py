"""The form `lower(target="iree")` writes is ONNX that onnxruntime runs to the default form's
numbers: Loops without per-trip outputs (per-trip values in carried buffers), checks as flag
outputs after the user's, products as Mul trees, empty static values as constants. These tests
need no IREE: they hold the IREE form to onnxruntime's own evaluation (at both levels), so a
wrong form is caught here and IREE's own bugs in `tests/test_iree.py`."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.iree_call import Signature
from ptonnx.iree_runtime import IreeCompileError, iree_form
from ptonnx.lowering.check import FLAGS_KEY
from ptonnx.testing import ORT_LEVELS, assert_same, session_options


def _iree_form(cm):
    """The model `runtime="iree"` compiles (`iree_runtime.iree_form`); these programs have no
    dtype it carries (`tests/passes/test_carry_dtypes.py` has those)."""
    model, boundary = iree_form(cm.ir, cm.model.graph.name, cm.output_names)
    assert not boundary.inputs and not boundary.outputs
    onnx.checker.check_model(model, full_check=True)
    return model


def _run(model, arrays, level):
    """The IREE form's outputs in onnxruntime, its inputs and outputs packed and unpacked as
    IREE's caller does (`iree_call.Signature`)."""
    session = ort.InferenceSession(model.SerializeToString(), session_options(level, quiet=True), providers=["CPUExecutionProvider"])
    signature = Signature(model)
    packed = signature.pack([np.asarray(a) for a in arrays])
    return signature.unpack(session.run(None, dict(zip([i.name for i in model.graph.input], packed, strict=True))))


def _flags(model) -> list[str]:
    return next((json.loads(p.value) for p in model.metadata_props if p.key == FLAGS_KEY), [])


def _loops(graph):
    for node in graph.node:
        if node.op_type == "Loop":
            yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _loops(attribute.g)


def _scan_programs():
    e, y0 = pt.tensor("e", shape=(None, 3), dtype="float64"), pt.tensor("y0", shape=(3,), dtype="float64")
    ys = pytensor.scan(lambda et, y: 0.5 * y + et, sequences=[e], outputs_info=[y0], return_updates=False)
    total = pytensor.scan(lambda et, s: (s + et.sum(), pt.stack([s, et.max()]), et > 0), sequences=[e],
                          outputs_info=[pt.constant(0.0, dtype="float64"), None, None], return_updates=False)
    noise = np.random.default_rng(2).normal(size=(6, 3))
    noise[1] = [np.inf, -0.0, np.nan]
    noise[4] = [5e-324, -1e300, 1e-300]
    start = np.array([1.0, -2.0, 5e-300])
    return [([e, y0], [ys, ys.sum()], [noise, start]), ([e, y0], [ys], [noise[:0], start]),
            ([e], list(total), [noise]), ([e], list(total), [noise[:0]])]


@pytest.mark.parametrize("level", ORT_LEVELS)
@pytest.mark.parametrize("case", range(4))
def test_scans_in_the_iree_form_give_onnxruntimes_numbers(case, level):
    inputs, outputs, arrays = _scan_programs()[case]
    cm = ptonnx.compile_function(inputs, outputs)
    model = _iree_form(cm)
    for loop in _loops(model.graph):
        assert len(loop.output) == len(loop.input) - 2, "a Loop of the IREE form has no per-trip outputs"
    got = _run(model, arrays, level)
    for k, expected in enumerate(cm(*arrays)):
        assert_same(got[k], expected, f"output {k}")


@pytest.mark.parametrize("level", ORT_LEVELS)
def test_a_check_inside_a_loop_is_a_flag_output(level):
    x, i = pt.tensor("x", shape=(4,), dtype="float64"), pt.lscalar("i")
    indexed = pytensor.scan(lambda k, v: v[k] * 2.0, sequences=[pt.arange(3) + i], non_sequences=[x], return_updates=False)
    cm = ptonnx.compile_function([x, i], [indexed])
    model = _iree_form(cm)
    assert len(_flags(model)) >= 1 and len(model.graph.output) == 1 + len(_flags(model))
    values = np.array([1.0, -0.0, np.inf, 3.0])
    for start, fails in ((0, False), (1, False), (-4, False), (2, True), (-5, True), (np.iinfo(np.int64).max - 1, True)):
        got = _run(model, [values, np.asarray(start)], level)
        assert any(f > 0 for f in got[1:]) == fails, f"start {start}"
        if not fails:
            assert_same(got[0], cm(values, np.asarray(start))[0], f"start {start}")


@pytest.mark.parametrize("level", ORT_LEVELS)
def test_products_and_empty_values_in_the_iree_form(level):
    m = pt.tensor("m", shape=(None, 3), dtype="float64")
    a = pt.tensor("a", shape=(4, 0), dtype="float64")
    outputs = [pt.prod(m, axis=1), pt.prod(m[:, :2], axis=1), a @ a.T, (a * 2).sum(axis=1)]
    cm = ptonnx.compile_function([m, a], outputs)
    model = _iree_form(cm)
    ops = {n.op_type for n in model.graph.node}
    assert "ReduceProd" not in ops and "MatMul" not in ops
    arrays = [np.array([[2.0, -0.0, 3.0], [np.inf, 1e300, 1e10], [np.nan, 1.0, 2.0], [0.5, 0.25, -8.0]]), np.zeros((4, 0))]
    got = _run(model, arrays, level)
    for k, expected in enumerate(cm(*arrays)):
        assert_same(got[k], expected, f"output {k}")


def _signature_program():
    """Inputs of every kind the packing sorts: static float64 scalars and a matrix (packed),
    a float64 vector of unknown size and an empty one (whole), int64 scalars (packed), a bool
    (whole); outputs alike, one of them an input as it is, and a check's flag."""
    a, b = pt.dscalar("a"), pt.dscalar("b")
    m = pt.tensor("m", shape=(2, 3), dtype="float64")
    v = pt.tensor("v", shape=(None,), dtype="float64")
    empty = pt.tensor("empty", shape=(0,), dtype="float64")
    i, j = pt.lscalar("i"), pt.lscalar("j")
    flag = pt.tensor("flag", shape=(), dtype="bool")
    outputs = [a * m, pt.switch(flag, a, b), v * b, m[0, i] + j, i * j, a, empty * 2.0, m.sum() > a, m.T]
    arrays = [np.asarray(-0.0), np.asarray(5e-324), np.array([[1.0, np.nan, -np.inf], [1e308, 2.0, -3.0]]),
              np.array([np.inf, -1e-310, 4.0]), np.zeros(0), np.asarray(2), np.asarray(np.iinfo(np.int64).max // 2),
              np.asarray(True)]
    return [a, b, m, v, empty, i, j, flag], outputs, arrays


@pytest.mark.parametrize("level", ORT_LEVELS)
def test_static_inputs_and_outputs_of_one_dtype_are_one_buffer(level):
    inputs, outputs, arrays = _signature_program()
    cm = ptonnx.compile_function(inputs, outputs)
    model = _iree_form(cm)
    kinds = [(onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type).name, len(i.type.tensor_type.shape.dim))
             for i in model.graph.input]
    # a, b, m packed; v and empty whole; i, j packed; flag whole
    assert sorted(kinds) == sorted([("float64", 1), ("float64", 1), ("float64", 1), ("int64", 1), ("bool", 0)]), kinds
    assert len(model.graph.output) < len(outputs), "the static float64 outputs are one buffer"
    got = _run(model, arrays, level)
    for k, expected in enumerate(cm(*arrays)):
        assert_same(got[k], expected, f"output {k}")
    bad = list(arrays)
    bad[2] = np.zeros(5)
    with pytest.raises(ptonnx.errors.RuntimeMismatchError, match="elements where the model takes 6"):
        Signature(model).pack(bad)


def _ops(model) -> set[str]:
    return {n.op_type for n in model.graph.node}


@pytest.mark.parametrize("level", ORT_LEVELS)
def test_nan_keeping_max_min_sign_and_constant_scatters_in_the_iree_form(level):
    """`lowering/iree_forms.py`: float Max, Min and Sign select NaN where an operand is NaN (IREE's
    kernels drop it); a scatter of constants into static data is a Where over constants (IREE
    folds the scatter wrongly); the numbers are the default form's."""
    x, y = pt.tensor("x", shape=(6,), dtype="float64"), pt.tensor("y", shape=(6,), dtype="float64")
    outputs = [pt.maximum(x, y), pt.minimum(x, y), pt.sign(x), pt.set_subtensor(x[2], 5.0), pt.inc_subtensor(x[-1], 1.5),
               pt.set_subtensor(x[[0, 4]], np.array([7.0, np.nan])), pt.inc_subtensor(x[1:3], np.array([-0.0, 2.0]))]
    cm = ptonnx.compile_function([x, y], outputs)
    model = _iree_form(cm)
    assert "ScatterElements" not in _ops(model) and "IsNaN" in _ops(model)
    assert "ScatterElements" in _ops(cm.model) and "IsNaN" not in _ops(cm.model), "the default form is unchanged"
    arrays = [np.array([np.nan, 1.0, -np.inf, 2.0, -0.0, 0.0]), np.array([-np.inf, np.nan, np.nan, 1.0, 0.0, -0.0])]
    got = _run(model, arrays, level)
    for k, expected in enumerate(cm(*arrays)):
        assert_same(got[k], expected, f"output {k}")


@pytest.mark.parametrize("level", ORT_LEVELS)
def test_checked_values_of_every_dtype_pass_through_the_iree_form(level):
    """A check's value passes where the check holds (`lowering/check.py`): a bool one by And (no
    Where kernel takes bool), a float one keeping -0.0, a uint16 one without a Where kernel."""
    a, b = pt.dvector("a"), pt.dvector("b")
    u, w = pt.vector("u", dtype="uint16"), pt.vector("w", dtype="uint16")
    cm = ptonnx.compile_function([a, b, u, w], [pt.where(a > b, a, b), a * b, u + w, pt.lt(u, w)])
    arrays = [np.array([-0.0, 0.0, np.nan, -np.inf, 5e-324, 1e308]), np.array([-0.0, -0.0, 1.0, np.inf, -5e-324, -1e308]),
              np.array([0, 1, 65535, 7, 0, 65535], np.uint16), np.array([65535, 1, 65535, 0, 0, 1], np.uint16)]
    got = _run(_iree_form(cm), arrays, level)
    for k, expected in enumerate(cm(*arrays)):
        assert_same(got[k], expected, f"output {k}")


def test_a_float_sort_of_run_time_size_has_no_iree_form():
    v = pt.dvector("v")
    cm = ptonnx.compile_function([v], [pt.sort(v)])
    with pytest.raises(IreeCompileError, match="sorts floats at sizes known only at run time"):
        _iree_form(cm)
    m = pt.tensor("m", shape=(3, 4), dtype="float64")
    assert "TopK" in _ops(_iree_form(ptonnx.compile_function([m], [pt.sort(m, axis=1)])))
