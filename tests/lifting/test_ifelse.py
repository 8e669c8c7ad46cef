"""lifting/ifelse.py: IfElse as the IR's If, lazy as PyTensor's: what only one branch reads moves
into that branch, so the untaken branch's work and checks never run."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.ifelse import ifelse
from pytensor.raise_op import Assert

from ptonnx.ir.core import bodies
from tests.lifting.helpers import check_lift, lazy_reference, ops


def test_ifelse_picks_a_branch_and_reads_the_condition_as_bool():
    c, x, y = pt.dscalar("c"), pt.dvector("x"), pt.dvector("y")
    out = ifelse(c, pt.exp(x), y * 2)
    x0, y0 = np.array([0.0, -0.0, np.inf]), np.array([np.nan, -1.0])
    g = check_lift([c, x, y], [out], *([np.float64(v), x0, y0] for v in (1.0, 0.0, -0.0, np.nan, -np.inf, 5e-324)))
    assert ops(g) == ["Cast", "If"]
    then_body, else_body = bodies(g.outputs[0].producer)
    assert [n.op for n in then_body] == ["Exp"] and "Mul" in [n.op for n in else_body]  # sunk into their branches


def test_the_untaken_branch_does_not_check():
    """x[5] out of bounds, or a failing Assert, in the branch not taken: no error, as in PyTensor."""
    c, x = pt.bscalar("c"), pt.dvector("x")
    guarded = Assert("x must be positive")(x, pt.all(x > 0))
    out = ifelse(c, x[5], guarded.sum())
    g = check_lift([c, x], [out], [np.int8(0), np.arange(1.0, 7.0)], [np.int8(1), np.array([-1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
                   [np.int8(1), np.arange(3.0)], [np.int8(0), np.array([-1.0])], mode=lazy_reference())
    assert ops(g)[-1] == "If" and "Check" not in ops(g)


def test_several_outputs_and_a_value_both_branches_read():
    c, x, n = pt.bscalar("c"), pt.fvector("x"), pt.iscalar("n")
    shared = pt.sqrt(x)
    a, b = ifelse(c, [shared, n], [shared * 2, pt.cast(n * 3, "int32")])
    x0 = np.array([4.0, -0.0, np.inf, -1.0], np.float32)
    g = check_lift([c, x, n], [a, b], [np.int8(1), x0, np.int32(7)], [np.int8(0), x0, np.int32(np.iinfo(np.int32).max)])
    assert "Sqrt" in ops(g)  # read by both branches: stays outside


def test_branches_of_different_shapes():
    c, x = pt.bscalar("c"), pt.dvector("x")
    out = ifelse(c, x[:2], x[1:])
    check_lift([c, x], [out], [np.int8(1), np.arange(5.0)], [np.int8(0), np.arange(5.0)], [np.int8(0), np.zeros(0)])
