"""PyTensor's IfElse as a lazy ONNX If: both branches, several outputs, conditions of any
dtype (NaN is true), gradients through it, inside a scan, and laziness: what only the
untaken branch needs is never computed, so a check there cannot fire."""

from __future__ import annotations

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.ifelse import ifelse
from pytensor.link.vm import VMLinker

import ptonnx
from tests.conftest import assert_same, check_like_pytensor, run_at_every_level

#: PyTensor's lazy evaluation (its default VM), in Python: the reference for an ifelse
#: whose untaken branch would fail (the "py" linker evaluates every node)
LAZY_REFERENCE = Mode(linker=VMLinker(lazy=True, use_cloop=False, c_thunks=False), optimizer=None)


@pytest.mark.parametrize("cond", [1.0, -1.0, 0.0, -0.0, np.nan, np.inf])
def test_both_branches_several_outputs(cond):
    a, b = pt.dscalar("a"), pt.dvector("b")
    big, small = ifelse(a > 0, [pt.exp(b).sum(), b * 2], [pt.log(b).sum() * a, b[::-1]])
    check_like_pytensor([a, b], [big, small], [np.float64(cond), np.array([1.0, 2.0, np.inf, 1e-300])])


@pytest.mark.parametrize("cond", [np.float64(np.nan), np.float64(0.0), np.int64(-3), np.int8(0)])
def test_a_condition_of_any_dtype_is_true_when_nonzero(cond):
    c = pt.scalar("c", dtype=cond.dtype)
    x = pt.dvector("x")
    check_like_pytensor([c, x], [ifelse(c, x + 1, x - 1)], [cond, np.array([0.5, -0.0])])


def test_gradients_through_ifelse():
    a, b = pt.dscalar("a"), pt.dvector("b")
    out = ifelse(a > 0, (b ** 2).sum() * a, pt.sin(a) * b.sum())
    for value in (1.5, -1.5):
        check_like_pytensor([a, b], [out, *pytensor.grad(out, [a, b])], [np.float64(value), np.array([1.0, -2.0, 3.0])])


def test_ifelse_inside_a_scan():
    x = pt.dvector("x")
    ys = pytensor.scan(lambda v, acc: ifelse(v > 0, acc + pt.log(v), acc * 0.5), sequences=[x],
                       outputs_info=[pt.zeros(())], return_updates=False)
    check_like_pytensor([x], [ys], [np.array([1.0, -1.0, np.nan, 0.0, 3.0])])


def _if_branches(model: onnx.ModelProto):
    (node,) = [n for n in model.graph.node if n.op_type == "If"]
    return {a.name: [n.op_type for n in a.g.node] for a in node.attribute}


@pytest.mark.parametrize("taken", [True, False])
def test_the_untaken_branch_costs_nothing_and_its_checks_cannot_fire(taken):
    """The else branch reads b[5] of a 2-vector through an Assert: PyTensor's lazy VM never
    evaluates it when the condition holds, and neither does the model, whose If holds the
    indexing, the check and the log inside the else body."""
    a, b = pt.dscalar("a"), pt.dvector("b")
    guarded = pytensor.raise_op.Assert("b is long enough")(b, b.shape[0] > 5)
    out = ifelse(a > 0, pt.exp(b).sum(), pt.log(guarded[5]))
    values = [np.float64(1.0 if taken else -1.0), np.array([1.0, 2.0])]
    cm = ptonnx.compile_function([a, b], [out])
    onnx.checker.check_model(cm.model, full_check=True)
    branches = _if_branches(cm.model)
    assert "Log" in branches["else_branch"] and "Exp" in branches["then_branch"]
    top = [n.op_type for n in cm.model.graph.node]
    assert "Log" not in top and "Exp" not in top
    assert "Gather" in branches["else_branch"]  # the check's Gather: inside the body
    if taken:
        expected = pytensor.function([a, b], out, mode=LAZY_REFERENCE)(*values)
        for level, (got,) in run_at_every_level(cm, *values).items():
            assert_same(got, expected, level)
    else:
        with pytest.raises(AssertionError, match="b is long enough"):
            pytensor.function([a, b], out, mode=LAZY_REFERENCE)(*values)
        with pytest.raises(AssertionError, match="b is long enough"):
            cm(*values)


def test_a_value_both_branches_read_is_computed_once_outside():
    a, b = pt.dscalar("a"), pt.dvector("b")
    shared = pt.exp(b)
    out = ifelse(a > 0, shared.sum(), shared.max())
    raised = check_like_pytensor([a, b], [out], [np.float64(-2.0), np.array([0.5, 3.0])])
    assert raised is None
    compiled = ptonnx.compile_function([a, b], [out])
    assert "Exp" in [n.op_type for n in compiled.model.graph.node]
    assert "Exp" not in sum(_if_branches(compiled.model).values(), [])


#: the branch op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; checked by test_every_branch_op_is_reached_from_pytensor)
REACHED_BY = {"If": ("test_both_branches_several_outputs", "test_a_condition_of_any_dtype_is_true_when_nonzero",
                     "test_the_untaken_branch_costs_nothing_and_its_checks_cannot_fire")}


def test_every_branch_op_is_reached_from_pytensor():
    a, b = pt.dscalar("a"), pt.dvector("b")
    out = ifelse(a > 0, pt.exp(b).sum(), pt.log(b).sum())  # as test_both_branches_several_outputs builds it
    assert "If" in ptonnx.lift(ptonnx.api.function_graph([a, b], [out])).op_counts()
    assert set(REACHED_BY) == {"If"} and all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
