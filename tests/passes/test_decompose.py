"""`decompose`: the special functions become IR ops before any pass (their iterations the
IR's `Loop`, which the passes then see into), and lowering refuses what was not decomposed."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import ir
from ptonnx.decompositions import DECOMPOSITIONS
from ptonnx.decompositions.expr import Ex, Scope
from ptonnx.decompositions.loop import any_above, iterate
from ptonnx.errors import LoweringError
from ptonnx.ir import Builder, Graph, TensorType
from ptonnx.lowering import lower
from ptonnx.passes.decompose import decompose
from tests.conftest import check_like_pytensor

pytestmark = pytest.mark.one_environment  # ptonnx's decompositions, whichever PyTensor lifted the op

A, X = pt.dvector("a"), pt.dvector("x")
ITERATIVE = {
    "betainc": lambda: pt.betainc(A, X, 0.3), "betaincinv": lambda: pt.betaincinv(A, X, 0.4),
    "gammaincinv": lambda: pt.gammaincinv(A, X), "gammainccinv": lambda: pt.gammainccinv(A, X),
    "hyp2f1": lambda: pt.hyp2f1(A, X, 2.5, 0.3),
}


@pytest.mark.parametrize("name", sorted(ITERATIVE))
def test_iterations_are_one_ir_loop_the_passes_hoist_from(name):
    out = ITERATIVE[name]()
    cm = ptonnx.compile_function([A, X], [out])
    counts = cm.ir.op_counts()
    assert counts.get("Loop") == 1 and not set(counts) & set(DECOMPOSITIONS), counts
    assert cm.report["hoist_loop_invariants"].rewrites > 0
    a = np.array([0.5, 2.0, 30.0, 1e-3, np.nan, np.inf])
    x = np.array([0.7, 0.2, 0.9, 0.5, 0.5, 0.3])
    check_like_pytensor([A, X], [out], [a, x], compare=lambda got, expected, where: np.testing.assert_allclose(
        got, expected, rtol=1e-10, atol=1e-300, err_msg=where))


def test_lowering_refuses_a_special_op_not_decomposed():
    g = Graph()
    x = g.add_input(TensorType("float64", (3,)), "x")
    g.set_outputs([Builder(g).op("GammaLn", x)])
    with pytest.raises(LoweringError, match="run ptonnx.passes.decompose.decompose"):
        lower(g)
    assert decompose(g).keys() - {"Log1p", "Expm1"} == {"GammaLn"}  # and the ops its formula uses that decompose too
    lower(g)  # now it lowers


def test_float32_is_computed_in_float64_but_float32_erf_is_onnxruntimes():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    g.set_outputs([b.op("GammaLn", x), b.op("Erf", x)])
    assert decompose(g).keys() - {"Log1p", "Expm1"} == {"GammaLn"}  # and the ops its formula uses that decompose too
    counts = g.op_counts()
    assert counts["Erf"] == 1 and counts["Cast"] == 2  # to float64 and back, once
    values = np.array([0.5, 3.0, -2.5], np.float32)
    got = ir.interpret(g, values)
    np.testing.assert_allclose(got[0], np.float32([0.5723649, 0.6931472, -0.05624372]), rtol=1e-6)


def test_iterate_carries_what_changes_and_reads_the_rest_as_invariants():
    """A state value the step passes on unchanged is an invariant of the Loop (hoistable)."""
    g = Graph()
    x = g.add_input(TensorType("float64", (4,)), "x")
    scope = Scope(Builder(g))
    total, addend = Ex(scope, x), Ex(scope, g.add_input(TensorType("float64", (4,)), "y"))

    def step(m, state):
        t, d = state
        new = t + d * 0.5
        return [new, d], any_above([10.0 - abs(new)], 0.0)  # until every |t| >= 10: 20 trips

    final, same = iterate([total, addend], step, 50)
    assert same is addend
    g.set_outputs([final.value])
    (loop,) = [n for n in g if n.op == "Loop"]
    assert loop.attrs["n_carried"] == 1 and len(loop.attrs["body"].inputs) == 3
    (got,) = ir.interpret(g, np.array([0.0, 1.0, -3.0, 200.0]), np.array([1.0, 2.0, 4.0, 0.0]))
    np.testing.assert_array_equal(got, [10.0, 21.0, 37.0, 200.0])


def test_repeated_lifted_ops_merge_before_they_are_decomposed():
    """Two norms of one matrix are two SVDs in the lifted graph: `cse` (when it is one of the
    passes) merges them before `decompose`, so one factorisation runs; without it, two do."""
    x = pt.dmatrix("x")
    outs = [pt.linalg.norm(x, 2), pt.linalg.norm(x, "nuc")]
    assert ptonnx.compile_function([x], outs).report.decomposed == {"SingularValues": 1}
    assert ptonnx.compile_function([x], outs, passes=["dce"]).report.decomposed == {"SingularValues": 2}
    a = np.random.default_rng(0).normal(size=(5, 3))
    check_like_pytensor([x], outs, [a], compare=lambda got, want, where: np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=where))


def test_repeated_checked_ops_merge_with_their_checks():
    """eigh's lifting checks its matrix (finite, square): two eighs of one matrix carry two equal
    checks, which merge (same value, conditions, message and class), and so do the eighs."""
    x = pt.dtensor3("x")
    outs = [pt.linalg.eigh(x)[0], pt.linalg.eigh(x)[1]]
    cm = ptonnx.compile_function([x], outs)
    assert cm.report.decomposed == {"Eigh": 1, "Cholesky": 1}  # one Eigh, and its positive definite test
    bad = np.eye(3)[None].copy()
    bad[0, 1, 1] = np.nan
    error = check_like_pytensor([x], outs, [bad])
    assert error is not None  # PyTensor raises on NaN; the one merged check raises as it does
