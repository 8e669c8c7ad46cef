"""End-to-end cases from the foundation issue: onnxruntime against PyTensor."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.conftest import REWRITTEN_MODE, assert_matches, assert_same, check_onnx_matches_pytensor

DTYPES = ["float32", "float64", "int32", "int64"]


def _values(dtype, n=7):
    if dtype.startswith("float"):
        return np.array([-3.5, -1.0, -0.0, 0.5, 1.0, 2.5, 1e3][:n], dtype=dtype)
    return np.array([-9, -4, -1, 0, 1, 5, 100][:n], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_affine_chain_with_literals(dtype):
    """((x * 2) + 3) / 4: the int8-constant bug of the first attempt."""
    x = pt.vector("x", dtype=dtype)
    y = ((x * 2) + 3) / 4
    cm = check_onnx_matches_pytensor([x], [y], [_values(dtype)])
    assert cm.report["unify_dtypes"].rewrites > 0 or dtype == "float64"


@pytest.mark.parametrize("dtype", DTYPES)
def test_literals_on_either_side(dtype):
    x = pt.vector("x", dtype=dtype)
    outs = [2 - x, x - 2, 3 * x, x * 3, 1.5 + x, x + 1.5, 2 ** (x * 0 + 1), 7 > x, x >= 1]
    check_onnx_matches_pytensor([x], outs, [_values(dtype)])


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_floor_division_and_modulo_with_negative_operands(dtype):
    """PyTensor floors (Python semantics); ONNX Div on integers truncates."""
    a = pt.vector("a", dtype=dtype)
    b = pt.vector("b", dtype=dtype)
    av = np.array([7, -7, 7, -7, 0, 5, -5, 3], dtype=dtype)
    bv = np.array([2, 2, -2, -2, 3, 0, 0, 3], dtype=dtype)  # includes division by zero
    with np.errstate(all="ignore"):
        check_onnx_matches_pytensor([a, b], [a // b, a % b, a // 3, a % -3, -7 // b], [av, bv])


def test_broadcast_row_against_column():
    row = pt.tensor("row", dtype="float32", shape=(1, None))
    col = pt.tensor("col", dtype="float32", shape=(None, 1))
    rv = np.arange(4, dtype="float32")[None, :]
    cv = np.arange(3, dtype="float32")[:, None] * 10
    cm = check_onnx_matches_pytensor([row, col], [row + col, row * col - 1], [rv, cv])
    assert cm([rv, cv][0], cv)[0].shape == (3, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_d_scalars(dtype):
    s = pt.scalar("s", dtype=dtype)
    t = pt.scalar("t", dtype=dtype)
    check_onnx_matches_pytensor([s, t], [s * t + 1, pt.maximum(s, t), s - 2], [np.asarray(3, dtype), np.asarray(-2, dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_bool_outputs_of_comparisons(dtype):
    x = pt.vector("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    outs = [x < y, x > y, x <= y, x >= y, pt.eq(x, y), pt.neq(x, y), (x > 0) & (y > 0), ~(x > y), (x > 0) ^ (y < 0)]
    cm = check_onnx_matches_pytensor([x, y], outs, [_values(dtype), _values(dtype)[::-1].copy()])
    assert all(o.dtype == np.bool_ for o in cm(_values(dtype), _values(dtype)))


def test_switch_and_mixed_dtype_inputs():
    x = pt.vector("x", dtype="float32")
    i = pt.vector("i", dtype="int32")
    outs = [pt.switch(x > 0, i, 2), x + i, pt.exp(i) * x, i / 2, pt.maximum(x, i)]
    check_onnx_matches_pytensor([x, i], outs, [_values("float32"), _values("int32")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_switch_keeps_the_sign_of_a_selected_zero(dtype):
    """Each branch arrangement emit_where handles: one branch a constant without -0.0
    (the other moved second, under a Xor), a condition from Not, both branches free;
    -0.0 selected from either branch, at both onnxruntime levels (the optimiser swaps
    the branches of Where(Not(c), a, b))."""
    x = pt.tensor("x", dtype=dtype, shape=(8,))  # static: no broadcast check between Not and Where
    y = pt.tensor("y", dtype=dtype, shape=(8,))
    c = pt.tensor("c", dtype="bool", shape=(8,))
    neg_inf = np.asarray(-np.inf, dtype=dtype)
    outs = [
        pt.switch(c, x, neg_inf),  # PyMC's check: the logp first, a constant second
        pt.switch(c, neg_inf, x),
        pt.switch(~c, x, neg_inf),
        pt.switch(~c, neg_inf, x),
        pt.switch(c, x, y),
        pt.switch(~c, x, y),
        pt.switch(x > 0, x, np.asarray(-0.0, dtype=dtype)),  # a constant -0.0 second
        pt.switch(pt.gt(x, 0), x * 0, np.asarray(0.0, dtype=dtype)),
        # branches that cannot be -0.0 (lowering's NEVER_NEGATIVE_ZERO): their zeros are +0.0
        pt.switch(c, pt.exp(x), pt.sigmoid(y)),
        pt.switch(~c, pt.softplus(x), pt.erfc(y)),
        pt.switch(c, pt.abs(x), x * x),
        pt.switch(c, y * y, pt.cast(c, dtype)),
    ]
    xs = np.array([-0.0, -0.0, 0.0, -np.inf, -1.0, np.nan, -np.inf, 3.0], dtype=dtype)
    ys = np.array([-0.0, -np.inf, -0.0, np.inf, -0.0, -0.0, np.inf, -0.0], dtype=dtype)
    cs = np.array([True, False, True, False, True, False, False, True])
    check_onnx_matches_pytensor([x, y, c], outs, [xs, ys, cs])


def test_plain_user_graph_holds_expanddims_of_int8_literals():
    x = pt.vector("x", dtype="float32")
    y = x * 2
    fg = ptonnx.api.function_graph([x], [y])
    kinds = {type(n.op).__name__ for n in fg.apply_nodes}
    assert "DimShuffle" in kinds
    lifted = ptonnx.lift(fg)
    assert any(v.dtype == "int8" for n in lifted for v in n.inputs if v.const is not None)


def test_rewritten_graph_of_a_compiled_function_with_composite():
    x = pt.vector("x", dtype="float32")
    i = pt.vector("i", dtype="int64")
    outs = [((x * 2) + 3) / 4, pt.tanh(x) * pt.sigmoid(x) + i // 3, pt.switch(x > 1, x % 2, -x)]
    f = pytensor.function([x, i], outs, mode=REWRITTEN_MODE)
    kinds = {type(getattr(n.op, "scalar_op", n.op)).__name__ for n in f.maker.fgraph.apply_nodes}
    assert "Composite" in kinds, kinds
    xv, iv = _values("float32"), _values("int64")
    expected = f(xv, iv)
    cm = ptonnx.compile(f.maker.fgraph)
    assert_matches(cm, [xv, iv], expected)


def test_onnx_mode_runs_through_ptonnx():
    x = pt.vector("x", dtype="float32")
    i = pt.vector("i", dtype="int32")
    outs = [((x * 2) + 3) / 4, i // 2, x > 0, x]
    f = pytensor.function([x, i], outs, mode="ONNX")
    g = pytensor.function([x, i], outs, mode="FAST_COMPILE")
    xv, iv = _values("float32"), _values("int32")
    for a, e in zip(f(xv, iv), g(xv, iv), strict=True):
        assert_same(a, e, computed_in="float32")
    assert isinstance(f.maker.linker, ptonnx.ONNXLinker)
    assert f.maker.linker.compiled.model.graph.node  # it really went through ONNX


def test_onnx_mode_single_scalar_output():
    s = pt.scalar("s", dtype="float64")
    f = pytensor.function([s], s * 2 + 1, mode="onnx")
    assert f(3.0) == 7.0
