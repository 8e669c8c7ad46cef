"""lifting/lift.py: the driver's own rule, OpFromGraph (inlined: a fresh copy of its inner graph,
nested ones too) and random generators as keys."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.compile.builders import OpFromGraph

from ptonnx.api import function_graph
from ptonnx.lifting import lift
from tests.lifting.helpers import F64_EDGES, check_lift, ops


def _softclip():
    a, b = pt.dscalar("a"), pt.dvector("b")
    return OpFromGraph([a, b], [pt.tanh(b / a) * a, b.sum()], name="softclip")


def test_an_op_from_graph_is_inlined():
    a, b = pt.dscalar("a"), pt.dvector("b")
    clipped, total = _softclip()(a, b)
    g = check_lift([a, b], [clipped, total], [np.float64(2.0), F64_EDGES], [np.float64(-0.0), F64_EDGES], [np.float64(1.0), np.zeros(0)])
    assert {"Tanh", "ReduceSum"} <= set(ops(g))


def test_an_op_from_graph_inside_another_sharing_its_inner_inputs():
    """PyTensor gives OpFromGraphs of the same input types the same inner input variables
    (`double.inner_inputs[0] is outer.inner_inputs[0]`): the inner one's binding must not
    outlive its body (lifted, outer(1.0) was 6.0; PyTensor: 5.0)."""
    a0 = pt.dscalar()
    double = OpFromGraph([a0], [a0 * 2])
    x0 = pt.dscalar()
    outer = OpFromGraph([x0], [double(x0 + 1) + x0])
    assert double.inner_inputs[0].type == outer.inner_inputs[0].type
    a = pt.dscalar("a")
    check_lift([a], [outer(a), outer(-a)], [np.float64(1.0)], [np.float64(-0.0)], [np.float64(np.inf)], [np.float64(np.nan)])


def test_nested_op_from_graphs_and_one_used_twice():
    m = pt.fmatrix("m")
    row_sums = OpFromGraph([m], [m.sum(axis=1)], name="row_sums")
    x, y = pt.lscalar("x"), pt.fvector("y")
    outer = OpFromGraph([x, y], [row_sums(pt.outer(y, y)) * x + row_sums(pt.outer(y, 2 * y))], name="outer")
    ints, floats = pt.lscalar("i"), pt.fvector("f")
    g = check_lift([ints, floats], [outer(ints, floats), outer(ints + 1, -floats)],
                   [np.int64(3), np.array([1.0, -0.0, np.inf, 1e-30], np.float32)], [np.int64(-1), np.zeros(0, np.float32)])
    assert ops(g).count("ReduceSum") == 4


def test_a_random_generator_is_a_key_and_a_draw_its_random_op():
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    x = pt.dvector("x")
    draw = pt.random.normal(size=x.shape, rng=rng)
    g = lift(function_graph([x], [x + draw]))
    assert [str(v.type) for v in g.inputs] == ["f64[x_dim0]", "u32[2]"]
    assert ops(g).count("RandomNormal") == 1 and g.outputs[0].shape == ("x_dim0",)


