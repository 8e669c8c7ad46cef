"""ptonnx/stages.py: the stages run in one declared order, each refusing a graph that breaks what it
requires (naming itself, the node, the user's variable and what to add); `passes=[]` gives
PyTensor's numbers or such a refusal, never a number computed in another dtype."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import ir, stages
from ptonnx.contracts import DECOMPOSED, LEGALISED, UNIFIED
from ptonnx.errors import LoweringError, StageError
from ptonnx.lowering.lower import LOWERING_REQUIRES
from ptonnx.passes import PassResult
from ptonnx.testing import assert_matches_pytensor

F64 = np.array([-1.5, 0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, -2.2e-308, 1e308, -1e-300, 2.5, 7.0])
I64 = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 1, 7, -7, 2**53 + 1, -(2**31), 3, 2**32, 5])


def _bool_times_float():
    b, x = pt.vector("b", dtype="bool"), pt.dvector("x")
    return [b, x], [b * x], [np.arange(12) % 3 == 0, F64]


def _int_by_literal_true_division():
    a = pt.lvector("a")
    return [a], [pt.cast(a, "bool") * ((a * a) / 2)], [I64]


def _bool_arithmetic_into_a_switch():
    v1, v4 = pt.vector("v1", dtype="float32"), pt.vector("v4", dtype="float32")
    v3 = v1 > v4
    chosen = pt.switch(v3 + v3, pt.exp(v1), v4)
    with np.errstate(over="ignore"):  # 1e308 is inf in float32, as meant
        arrays = [F64.astype(np.float32), np.float32(1.0) - F64[::-1].astype(np.float32)]
    return [v1, v4], [chosen, pt.switch(v3, v1, v4) > 1], arrays


MIXED = {"bool * float64": _bool_times_float, "int64 * int8 literal / 2": _int_by_literal_true_division,
         "bool arithmetic into switch and comparison": _bool_arithmetic_into_a_switch}


@pytest.mark.parametrize("case", sorted(MIXED))
def test_mixed_dtypes_without_unify_dtypes_are_refused_by_legalise(case):
    inputs, outputs, arrays = MIXED[case]()
    with pytest.raises(StageError, match=r"(?s)^stage 'legalise' requires the inputs of each node that share a type "
                                         r"variable to have one dtype .*passes run: none.*from PyTensor variable.*"
                                         r"include the 'unify_dtypes' pass"):
        ptonnx.compile_function(inputs, outputs, passes=[])


@pytest.mark.parametrize("passes", [["unify_dtypes"], None], ids=["unify_dtypes", "default"])
@pytest.mark.parametrize("case", sorted(MIXED))
def test_mixed_dtypes_with_unify_dtypes_give_pytensors_numbers(case, passes):
    inputs, outputs, arrays = MIXED[case]()
    assert_matches_pytensor(inputs, outputs, arrays, passes=passes)


def test_a_graph_of_one_dtype_compiles_with_no_passes():
    """No pass needed: legalise still widens what onnxruntime lacks (int8 arithmetic), as NumPy wraps."""
    x, k = pt.dvector("x"), pt.vector("k", dtype="int8")
    edges = np.array([-128, 127, 0, -1, 1, 100, -100, 64, 2, -2, 3, 5], dtype=np.int8)
    cm = assert_matches_pytensor([x, k], [pt.exp(x) * x + pt.log1p(x), k * k + k], [F64, edges], passes=[])
    assert [r.name for r in cm.report.records] == []
    assert list(cm.report.stages) == list(stages.NAMES)


class _Makes:
    """A pass that adds a node of `op` (float64) reading the first input, after decomposition."""

    name = "makes_op"

    def __init__(self, op: str):
        self.op = op

    def run(self, graph):
        if graph.inputs and graph.inputs[0].dtype == "float64":
            made = ir.Builder(graph).op(self.op, graph.inputs[0])
            graph.set_outputs([*graph.outputs[:-1], ir.Builder(graph).op("Add", graph.outputs[-1], made)])
            return PassResult(True, 1)
        return PassResult(False, 0)


def test_a_pass_that_leaves_an_op_to_decompose_is_refused_by_legalise():
    x = pt.dvector("x")
    with pytest.raises(StageError, match=r"(?s)stage 'legalise' requires every op the runtime lacks rewritten.*"
                                         r"passes run: makes_op.*Erf.*IR op 'Erf' is rewritten into other IR ops"):
        ptonnx.compile_function([x], [pt.exp(x)], passes=[_Makes("Erf")])


def _mixed_graph() -> ir.Graph:
    g = ir.Graph("mixed")
    a, b = g.add_input(ir.TensorType("bool", (3,)), "a"), g.add_input(ir.TensorType("float64", (3,)), "b")
    node = ir.Builder(g).node("Mul", [a, b], {}, out_types=[ir.TensorType("float64", (3,))])
    g.set_outputs(node.outputs)
    return g


def test_each_stage_checks_what_it_requires_even_when_started_late():
    """Starting at `legalise` (as a tool that ran its own passes might) does not skip its check."""
    c = stages.Compilation(ptonnx.PassManager([]), graph=_mixed_graph())
    with pytest.raises(StageError, match=r"(?s)stage 'legalise' requires.*input 0 is bool, needs float64"):
        stages.run(c, "legalise", "lower")
    for lower in (lambda: stages.run(stages.Compilation(ptonnx.PassManager([]), graph=_mixed_graph()), "lower", "lower"),
                  lambda: ptonnx.lower(_mixed_graph())):  # lowering's own guard: the same condition
        with pytest.raises(LoweringError, match=r"(?s)cannot be lowered: its inputs that share a type have several dtypes.*unify_dtypes"):
            lower()


def test_the_declared_conditions():
    stage = {s.name: s for s in stages.STAGES}
    assert stages.NAMES == ("lift", "decompose", "passes", "legalise", "lower", "check")
    assert DECOMPOSED in stage["decompose"].ensures and LEGALISED in stage["legalise"].ensures
    assert {DECOMPOSED, UNIFIED, LEGALISED} <= set(stage["lower"].requires)
    assert stage["lower"].requires == LOWERING_REQUIRES  # what check_lowerable refuses by
    g = _mixed_graph()
    assert [n.op for n, _ in UNIFIED.faults(g)] == ["Mul"]
    with pytest.raises(ValueError, match="unknown stage 'optimise'"):
        stages.run(stages.Compilation(ptonnx.PassManager([]), graph=g), "optimise")


def test_verify_each_checks_what_each_stage_ensures():
    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [pt.erf(x) + pt.log1p(x)], passes=["unify_dtypes"], verify_each=True)
    assert cm.report.decomposed and not list(DECOMPOSED.faults(cm.ir)) and not list(LEGALISED.faults(cm.ir))
