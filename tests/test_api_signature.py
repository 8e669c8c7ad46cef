"""What the API takes: graphs or functions, passes in any reasonable form, and the
inputs/outputs `pytensor.function` takes, refused as it refuses them; names kept."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.graph.replace import graph_replace

import ptonnx
from ptonnx import keys
from ptonnx.errors import PassError, PtonnxError, SignatureError
from ptonnx.passes import ConstantFolding, DeadCodeElimination, PassResult, UnifyDtypes
from tests.conftest import REFERENCE_MODE, REWRITTEN_MODE, assert_matches


def _graph():
    x = pt.vector("x", dtype="float32")
    i = pt.vector("i", dtype="int32")
    y = ((x * 2) + 3) / 4
    y.name = "y"
    return [x, i], [y, i // 2 + 1, pt.exp(i) + x]


ARRAYS = [np.array([-1.5, 0.0, 2.0], np.float32), np.array([-3, 0, 5], np.int32)]


def _reference(inputs, outputs, arrays):
    return pytensor.function(inputs, outputs, mode=REFERENCE_MODE)(*arrays)


# -- compile takes a pytensor.function ---------------------------------------------


def test_compile_takes_a_pytensor_function_as_export_does():
    inputs, outputs = _graph()
    f = pytensor.function(inputs, outputs, mode=REWRITTEN_MODE)
    cm = ptonnx.compile(f)
    assert cm.input_names == ["x", "i"] and cm.output_names == ["y", "output_1", "output_2"]
    assert_matches(cm, ARRAYS, _reference(inputs, outputs, ARRAYS), computed_in="float32")
    with pytest.raises(SignatureError, match="takes a FunctionGraph or a pytensor.function, not list.*compile_function"):
        ptonnx.compile(outputs)


# -- passes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "passes",
    ["unify_dtypes", ["unify_dtypes"], UnifyDtypes, [UnifyDtypes], UnifyDtypes(), [ConstantFolding, "unify_dtypes", DeadCodeElimination()]],
    ids=["name", "list-of-name", "class", "list-of-class", "instance", "mixed"],
)
def test_passes_as_a_name_a_class_or_an_instance(passes):
    inputs, outputs = _graph()
    cm = ptonnx.compile_function(inputs, outputs, passes)
    assert "unify_dtypes" in [r.name for r in cm.report.records]
    assert_matches(cm, ARRAYS, _reference(inputs, outputs, ARRAYS), computed_in="float32")


class NeedsArguments:
    name = "needs_arguments"

    def __init__(self, limit):
        self.limit = limit

    def run(self, graph):
        return PassResult(False)


class ReturnsNothing:
    name = "returns_nothing"

    def run(self, graph):
        return None


@pytest.mark.parametrize(
    "passes, message",
    [
        ("fold_everything", "unknown pass 'fold_everything'; known passes: constant_folding"),
        (["unify_dtypes", "fold_everything"], "unknown pass 'fold_everything'"),
        ([object()], r"\(a object\) is not a pass: passes takes pass names \(constant_folding"),
        ([None], r"None \(a NoneType\) is not a pass"),
        ([int], r"<class 'int'> \(a type\) is not a pass"),
        (3, "passes=3 is not a list of pass names or pass objects"),
        ({"unify_dtypes": 1}, "is not a list of pass names"),
        ([NeedsArguments], r"pass class NeedsArguments cannot be made without arguments .*pass an instance"),
        (["unify_dtypes", ReturnsNothing()], "pass 'returns_nothing' returned None; `run.graph.` must return a ptonnx.passes.PassResult"),
    ],
)
def test_wrong_passes_are_a_clear_error(passes, message):
    inputs, outputs = _graph()
    with pytest.raises(PassError, match=message):
        ptonnx.compile_function(inputs, outputs, passes)


def test_the_onnx_mode_takes_passes_in_the_same_forms():
    inputs, outputs = _graph()
    f = pytensor.function(inputs, outputs, mode=ptonnx.onnx_mode([ConstantFolding, "unify_dtypes"]))
    expected = _reference(inputs, outputs, ARRAYS)
    for a, e in zip(f(*ARRAYS), expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-6)
    with pytest.raises(PassError, match="unknown pass 'nope'"):
        ptonnx.onnx_mode("nope")


# -- inputs and outputs pytensor.function refuses --------------------------------------


def _signatures():
    x = pt.vector("x", dtype="float32")
    return {
        "number-output": ([x], [x + 1, 3]),
        "duplicate-input": ([x, x], [x + 1]),
        "constant-input": ([x, pt.constant(np.float32(2))], [x + 1]),
        "input-not-in-a-list": (x, [x + 1]),
        "input-not-a-variable": ([x, 2.0], [x + 1]),
    }


@pytest.mark.parametrize("case", list(_signatures()))
def test_signatures_pytensor_refuses_get_pytensors_exception(case):
    inputs, outputs = _signatures()[case]
    with pytest.raises(Exception) as theirs:
        pytensor.function(inputs, outputs, mode=REFERENCE_MODE)
    with pytest.raises(PtonnxError) as ours:
        ptonnx.compile_function(inputs, outputs)
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)
    shared_words = {
        "number-output": "Outputs must be pytensor Variable or Out instances. Received 3 of type <class 'int'>",
        "duplicate-input": "Variable x is used twice in inputs to",
        "constant-input": "Constants not allowed in param list",
        "input-not-in-a-list": "should be contained in a list, even when there is a single input",
        "input-not-a-variable": "Unknown parameter type: <class 'float'>",
    }[case]
    assert shared_words in str(theirs.value) or shared_words in str(theirs.value.args), theirs.value
    assert shared_words in str(ours.value)


def test_duplicate_input_and_number_output_are_pytensors_exception_types(tmp_path):
    from pytensor.compile import UnusedInputError

    x = pt.vector("x", dtype="float32")
    with pytest.raises(UnusedInputError, match="at indices 0 and 1"):
        ptonnx.export([x, x], tmp_path / "unused.onnx", outputs=[x + 1])
    with pytest.raises(TypeError, match=r"pt.as_tensor\(3\)"):
        ptonnx.compile_function([x], [x + 1, 3])


# -- random variables --------------------------------------------------------------


def _random_graph():
    x = pt.vector("x", dtype="float64")
    rng = pytensor.shared(np.random.default_rng(0), name="my_rng")
    draw = pt.random.normal(size=3, rng=rng)
    return x, draw, draw + x


def test_a_shared_generator_is_a_key_input_named_for_it():
    """Draws compile: the shared generator is a key input after the user's (ptonnx.keys), in a
    graph, in a compiled function's graph and in the ONNX mode; an unnamed one gets a name."""
    x, draw, z = _random_graph()
    cm = ptonnx.compile_function([x], [z])
    assert cm.input_names == ["x", "my_rng"]
    a, b = cm(np.zeros(3), keys.key(1))[0], cm(np.zeros(3), keys.key(2))[0]
    assert a.shape == (3,) and not np.isclose(a, b).any()
    np.testing.assert_array_equal(cm(np.zeros(3), keys.key(1))[0], a)
    exported = ptonnx.compile(pytensor.function([x], z, mode=REWRITTEN_MODE))
    assert exported.input_names == ["x", "my_rng"]
    assert pytensor.function([x], z, mode="ONNX")(np.zeros(3)).shape == (3,)
    unnamed = ptonnx.compile_function([x], [pt.random.normal(size=3) + x])
    assert len(unnamed.input_names) == 2 and unnamed.model.graph.input[1].type.tensor_type.elem_type == 12  # uint32


def test_the_advice_for_random_draws_works():
    x, draw, z = _random_graph()
    noise = pt.tensor("noise", shape=(3,), dtype="float64")
    [replaced] = graph_replace([z], {draw: noise})
    cm = ptonnx.compile_function([x, noise], [replaced])
    arrays = [np.arange(3.0), np.random.default_rng(1).normal(size=3)]
    assert_matches(cm, arrays, _reference([x, noise], [replaced], arrays))


# -- output names --------------------------------------------------------------------


def _named(var, name):
    var.name = name
    return var


def _naming_cases():
    x = pt.vector("x", dtype="float32")
    y = _named(x * 2, "y")
    folded = _named(pt.exp(pt.constant(np.zeros(3, np.float32))), "c")
    return x, {
        "node-result": ([y], ["y"]),
        "folds-to-a-constant": ([y, folded], ["y", "c"]),
        "aliases-the-input": ([x, y], ["x", "y"]),
        "input-twice": ([x, x], ["x", "x_1"]),
        "two-outputs-named-alike": ([y, _named(x + 1, "y")], ["y", "y_1"]),
        "same-variable-twice": ([y, y], ["y", "y_1"]),
        "named-like-the-input": ([_named(pt.exp(x), "x")], ["x_0"]),
        "unnamed": ([x + 1, y, x * 3], ["output_0", "y", "output_2"]),
        "unnamed-named-like-a-default": ([_named(x + 2, "output_1"), x + 1], ["output_1", "output_1_1"]),
    }


@pytest.mark.parametrize("case", list(_naming_cases()[1]))
def test_output_names_are_the_users(case):
    x, cases = _naming_cases()
    outputs, names = cases[case]
    cm = ptonnx.compile_function([x], outputs)
    assert cm.output_names == names
    assert ptonnx.compile_function([x], outputs).output_names == names  # stable
    arrays = [np.array([-1.0, 0.5, 2.0], np.float32)]
    assert_matches(cm, arrays, _reference([x], outputs, arrays))


def test_a_compiled_functions_outputs_keep_the_users_names():
    x = pt.vector("x", dtype="float32")
    y = _named(x * 2, "y")
    f = pytensor.function([x], [y, x, x + 1], mode=REWRITTEN_MODE)
    cm = ptonnx.compile(f)
    assert cm.output_names == ["y", "x", "output_2"]
    arrays = [np.array([1.0, 2.0, 3.0], np.float32)]
    assert_matches(cm, arrays, f(*arrays))
