"""`Check` as a hand-built graph, lowered (lowering/check.py: a Reshape guarded by a Gather
that goes out of range when a condition fails) and run at both onnxruntime levels through
`ptonnx.api.CompiledModel`: passing conditions give the value itself, in every dtype; a
failing one raises `CheckFailedError` (as interpret does) that is also the class the check
names (ptonnx/check_errors.py), with the check's message. Conditions of any rank, size-0
ones (all true), several at once."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import CheckFailedError
from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, dtypes_of, ends, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Check"})


@pytest.mark.parametrize("dtype", dtypes_of("Check"))
def test_a_passing_check_gives_the_value_in_every_dtype(dtype):
    case = compiled(one_node("Check", [T(dtype, (None,)), T("bool", ())], {"message": "x is bad"}))
    case.check(ends(dtype), np.array(True))
    case.check(ends(dtype)[:0], np.array(True))
    case.check_fails(ends(dtype), np.array(False), match="x is bad")


def test_conditions_of_any_rank_and_size_zero_ones():
    case = compiled(one_node("Check", [T("float64", (2, None)), T("bool", (None,)), T("bool", (None, None))],
                             {"message": "shapes differ", "exception": "builtins:ValueError"}))
    x = np.array([[np.nan, -0.0, np.inf], [5e-324, -np.inf, 1.0]])
    for a, b in [([True, True], [[True]]), ([], [[True, True], [True, True]]), ([True], np.zeros((0, 3), bool)), ([], np.zeros((2, 0), bool))]:
        case.check(x, np.array(a, bool).reshape(-1), np.array(b, bool))
    for a, b in [([True, False], [[True]]), ([True], [[True, True], [False, True]]), ([False], np.zeros((0, 1), bool))]:
        case.check_fails(x, np.array(a, bool), np.array(b, bool), exception=ValueError, match="shapes differ")


@pytest.mark.parametrize("exception, raised", [("builtins:AssertionError", AssertionError), ("builtins:IndexError", IndexError),
                                               ("no_such_module:Error", CheckFailedError)])
def test_a_failing_check_raises_the_class_it_names(exception, raised):
    """An exception class of a module not imported is plain CheckFailedError (a model never imports code)."""
    case = compiled(one_node("Check", [T("int64", (3,)), T("bool", (3,))], {"message": "index out of bounds", "exception": exception}))
    case.check(np.array([0, -1, 2**63 - 1]), np.ones(3, bool))
    case.check_fails(np.array([0, -1, 2**63 - 1]), np.array([True, False, True]), exception=raised, match="index out of bounds")


def test_a_check_of_a_constant_condition():
    """A condition known at compile time: true gives the value, false fails every run."""
    case = compiled(one_node("Check", [T("float32", (2,)), np.array(True)], {"message": "never"}))
    case.check(np.array([1.5, np.nan], np.float32))
    case = compiled(one_node("Check", [T("float32", (2,)), np.array([True, False])], {"message": "always fails"}))
    case.check_fails(np.array([1.5, np.nan], np.float32), match="always fails")
