from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.contracts import UNIFIED
from ptonnx.errors import DtypeError
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.passes import UnifyDtypes


def test_int8_literal_becomes_a_float32_constant():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    y = Builder(g).op("Mul", x, Value.constant(np.int8(2)), name="y")
    g.set_outputs([y])
    result = UnifyDtypes().run(g)
    assert result.details == {"constants_converted": 1}
    (y,) = g.outputs
    assert y.name == "y"
    c = y.producer.inputs[1]
    assert c.const.dtype == np.float32 and c.const == 2
    ir.verify(g)
    assert not list(UNIFIED.faults(g))


def test_a_non_constant_gets_one_shared_cast_after_its_definition():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    i = g.add_input(TensorType("int32", (3,)), "i")
    b = Builder(g)
    a = b.op("Add", x, i)  # float32 + int32 -> float64, as PyTensor
    m = b.op("Mul", i, a)
    g.set_outputs([a, m])
    result = UnifyDtypes().run(g)
    assert result.details == {"casts_inserted": 2}
    assert sorted(n.op for n in g) == ["Add", "Cast", "Cast", "Mul"]  # i -> f64 shared by Add and Mul
    a, m = g.outputs
    casts = {n.outputs[0]: n for n in g if n.op == "Cast"}
    assert a.producer.inputs[1] is m.producer.inputs[0] and a.producer.inputs[1] in casts
    ir.verify(g)
    assert not list(UNIFIED.faults(g))


def test_comparison_unifies_to_the_promoted_dtype_and_where_condition_to_bool():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    gt = b.op("Greater", x, Value.constant(np.int8(0)))
    w = b.op("Where", Value.constant(np.float32(2.0)), x, gt)  # nonzero float condition, bool branch
    g.set_outputs([w])
    UnifyDtypes().run(g)
    (w,) = g.outputs
    gt = w.producer.inputs[2].producer.inputs[0]  # the bool branch, cast to float32
    assert w.producer.inputs[2].producer.op == "Cast" and gt.producer.op == "Greater"
    assert gt.producer.inputs[1].const.dtype == np.float32
    assert w.producer.inputs[0].const.dtype == np.bool_ and w.producer.inputs[0].const == True  # noqa: E712
    ir.verify(g)
    assert not list(UNIFIED.faults(g))


def test_a_constant_that_does_not_survive_is_a_clear_error():
    g = Graph()
    x = g.add_input(TensorType("int8", (3,)), "x")
    n = Builder(g).node("Add", [x, Value.constant(np.int32(300))], out_types=[TensorType("int8", (3,))])
    g.set_outputs([n.outputs[0]])
    with pytest.raises(DtypeError, match=r"300.*does not survive conversion to int8"):
        UnifyDtypes().run(g)


@pytest.mark.parametrize("value, dtype", [(np.uint64(2**64 - 1), "int64"), (np.uint8(200), "int8"), (np.int64(-1), "uint64")])
def test_a_constant_that_wraps_between_signed_and_unsigned_is_a_clear_error(value, dtype):
    """A round trip alone misses it: uint64 2**64 - 1 is int64 -1 and back."""
    g = Graph()
    x = g.add_input(TensorType(dtype, (3,)), "x")
    n = Builder(g).node("Add", [x, Value.constant(value)], out_types=[TensorType(dtype, (3,))])
    g.set_outputs([n.outputs[0]])
    with pytest.raises(DtypeError, match=f"does not survive conversion to {dtype}"):
        UnifyDtypes().run(g)


def test_nothing_to_do_is_reported_as_unmodified():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    g.set_outputs([Builder(g).op("Add", x, x)])
    assert not UnifyDtypes().run(g).modified


def test_a_constant_promoted_as_pytensor_promotes_it_converts_even_if_inexact():
    g = Graph()
    x = g.add_input(TensorType("float64", (2,)), "x")
    big = np.int64(2**53 + 1)  # PyTensor's own promotion rounds it to float64 the same way
    y = Builder(g).op("Add", x, Value.constant(big))
    g.set_outputs([y])
    UnifyDtypes().run(g)
    (y,) = g.outputs
    assert y.producer.inputs[1].const == np.float64(big)


# -- text in, text out (tests/passes/text.py) -------------------------------------------------

from tests.passes.text import assert_rewrites  # noqa: E402


def test_text_an_int8_literal_in_a_float32_mul_becomes_a_float32_constant():
    assert_rewrites("unify_dtypes", """
        graph g(%x: f32[3]) {
          %y: f32[3] = Mul(%x, const(2: i8[]))
          %big: i1[3] = Greater(%y, const([-1,0,1]: i8[3]))
          return %y, %big
        }
    """, """
        graph g(%x: f32[3]) {
          %y: f32[3] = Mul(%x, const(2.: f32[]))
          %big: i1[3] = Greater(%y, const([-1.,0.,1.]: f32[3]))
          return %y, %big
        }
    """)


def test_text_a_value_gets_one_cast_before_its_first_user_that_serves_the_others():
    """float32 + int32 is float64, as in PyTensor: both operands are cast, and the Mul reads the
    int32 value's Cast made for the Add."""
    assert_rewrites("unify_dtypes", """
        graph g(%x: f32[3], %i: i32[3]) {
          %a: f64[3] = Add(%x, %i)
          %m: f64[3] = Mul(%i, %a)
          return %a, %m
        }
    """, """
        graph g(%x: f32[3], %i: i32[3]) {
          %x_float64: f64[3] = Cast(%x) {to='float64'}
          %i_float64: f64[3] = Cast(%i) {to='float64'}
          %a: f64[3] = Add(%x_float64, %i_float64)
          %m: f64[3] = Mul(%i_float64, %a)
          return %a, %m
        }
    """)


def test_text_a_where_condition_becomes_bool_by_truthiness_and_a_bool_branch_float():
    assert_rewrites("unify_dtypes", """
        graph g(%x: f32[3]) {
          %gt: i1[3] = Greater(%x, const(0: i8[]))
          %w: f32[3] = Where(const(2.: f32[]), %x, %gt)
          return %w
        }
    """, """
        graph g(%x: f32[3]) {
          %gt: i1[3] = Greater(%x, const(0.: f32[]))
          %gt_float32: f32[3] = Cast(%gt) {to='float32'}
          %w: f32[3] = Where(const(True: i1[]), %x, %gt_float32)
          return %w
        }
    """)
