from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
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
    ir.verify(g, unified=True)


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
    ir.verify(g, unified=True)


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
    ir.verify(g, unified=True)


def test_a_constant_that_does_not_survive_is_a_clear_error():
    g = Graph()
    x = g.add_input(TensorType("int8", (3,)), "x")
    n = Builder(g).node("Add", [x, Value.constant(np.int32(300))], out_types=[TensorType("int8", (3,))])
    g.set_outputs([n.outputs[0]])
    with pytest.raises(DtypeError, match=r"300.*does not survive conversion to int8"):
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
