from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.errors import LoweringError, PassError, RuntimeMismatchError, StageError
from tests.conftest import REFERENCE_MODE, assert_matches, assert_same


def _graph():
    x = pt.vector("x", dtype="float32")
    i = pt.vector("i", dtype="int32")
    return [x, i], [((x * 2) + 3) / 4, i // 2 + 1, pt.exp(i) + x]


ARRAYS = [np.array([-1.5, 0.0, 2.0], np.float32), np.array([-3, 0, 5], np.int32)]
PASS_NAMES = ["constant_folding", "unify_dtypes", "dce"]


@pytest.mark.parametrize(
    "passes",
    [None, []] + [list(p) for n in (1, 2, 3) for p in itertools.permutations(PASS_NAMES, n)],
    ids=lambda p: "default" if p is None else "+".join(p) or "none",
)
def test_any_pass_list_gives_a_valid_model_or_a_clear_error(passes):
    inputs, outputs = _graph()
    expected = pytensor.function(inputs, outputs, mode=REFERENCE_MODE)(*ARRAYS)
    if passes is not None and "unify_dtypes" not in passes:
        with pytest.raises(StageError, match=r"(?s)stage 'legalise' requires .*dtypes_unified.*include the 'unify_dtypes' pass"):
            ptonnx.compile_function(inputs, outputs, passes)
        return
    cm = ptonnx.compile_function(inputs, outputs, passes, verify_each=True)
    onnx.checker.check_model(cm.model, full_check=True)
    assert_matches(cm, ARRAYS, expected, computed_in="float32")


def test_compiled_model_surface(tmp_path):
    inputs, outputs = _graph()
    cm = ptonnx.compile_function(inputs, outputs)
    assert isinstance(cm.model, onnx.ModelProto) and cm.input_names == ["x", "i"]
    assert [r.name for r in cm.report.records] == list(ptonnx.DEFAULT_PASSES)
    assert set(cm.report.stages) >= {"lift", "passes", "lower", "check"}
    assert "Div" in str(cm.ir) and "graph" in str(cm.ir)
    path = cm.save(tmp_path / "m.onnx")
    assert onnx.load(path).graph.node
    with pytest.raises(RuntimeMismatchError, match="takes 2 inputs"):
        cm(ARRAYS[0])
    with pytest.raises(RuntimeMismatchError, match="does not convert exactly"):
        cm(np.array([0.5, 1, 2]), np.array([0.5, 1, 2]))
    # Python lists and exactly convertible arrays are accepted
    assert cm([1, 2, 3], np.array([1, 2, 3], np.int64))[0].dtype == np.float32


def test_export_from_variables_and_from_a_compiled_function(tmp_path):
    inputs, outputs = _graph()
    cm = ptonnx.export(inputs, tmp_path / "a.onnx", outputs=outputs)
    assert (tmp_path / "a.onnx").exists() and cm.model.graph.output
    f = pytensor.function(inputs, outputs, mode=pytensor.compile.mode.Mode(linker="py", optimizer="fast_run"))
    cm2 = ptonnx.export(f, tmp_path / "b.onnx")
    for a, e in zip(cm2(*ARRAYS), f(*ARRAYS), strict=True):
        assert_same(a, e, computed_in="float32")
    with pytest.raises(TypeError, match="needs the outputs"):
        ptonnx.export(inputs, tmp_path / "c.onnx")


def test_a_pass_that_corrupts_the_graph_never_yields_a_model():
    class Corrupt:
        name = "corrupt"

        def run(self, graph):
            node = next(iter(graph))
            node.outputs[0].type = node.outputs[0].type.with_dtype("int64")
            return ptonnx.passes.PassResult(True, 1)

    inputs, outputs = _graph()
    with pytest.raises(PassError, match=r"stage 'legalise' requires a valid IR graph .*\(passes run: constant_folding, "
                                        r"unify_dtypes, corrupt\) the graph does not"):
        ptonnx.compile_function(inputs, outputs, ["constant_folding", "unify_dtypes", Corrupt()])


def test_onnx_mode_is_registered_and_compiles_with_ptonnx():
    from pytensor.compile.mode import get_mode

    mode = get_mode("onnx")
    assert isinstance(mode.linker, ptonnx.ONNXLinker)
    x = pt.matrix("x", dtype="float64")
    f = pytensor.function([x], [x.T * 2], mode="ONNX")
    arr = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(f(arr)[0], arr.T * 2)


def test_shared_variables_become_constants_and_updates_are_left_out(tmp_path):
    w = pytensor.shared(np.arange(2.0), name="w")
    x = pt.vector("x", dtype="float64")
    cm = ptonnx.compile_function([x], [x * w])
    # (the other initializers check that x's length is w's: PyTensor refuses to broadcast a length-1 x)
    assert cm.input_names == ["x"] and "w" in [t.name for t in cm.model.graph.initializer]
    np.testing.assert_array_equal(cm(np.ones(2))[0], [0.0, 1.0])
    f = pytensor.function([x], x + w, updates={w: w + 1}, mode=pytensor.compile.mode.Mode(linker="py", optimizer="fast_run"))
    exported = ptonnx.export(f, tmp_path / "f.onnx")
    assert exported.input_names == ["x"] and len(exported.output_names) == 1
    np.testing.assert_array_equal(exported(np.ones(2))[0], [1.0, 2.0])


def test_onnx_mode_reads_shared_variables_at_call_time_and_applies_updates():
    w = pytensor.shared(np.arange(2.0), name="w")
    x = pt.vector("x", dtype="float64")
    f = pytensor.function([x], x * w, updates={w: w + 1}, mode="ONNX")
    np.testing.assert_array_equal(f(np.ones(2)), [0.0, 1.0])
    np.testing.assert_array_equal(f(np.ones(2)), [1.0, 2.0])
    assert pytensor.function([], [], mode="ONNX")() == []


def test_inputs_are_checked_against_the_signature():
    x = pt.tensor("x", dtype="float32", shape=(3,))
    cm = ptonnx.compile_function([x], [x * 2])
    with pytest.raises(RuntimeMismatchError, match=r"got shape \(4,\)"):
        cm(np.ones(4, np.float32))
    s = pt.scalar("s", dtype="float32")
    assert ptonnx.compile_function([s], [s + 1])(0.1)[0] == np.float32(0.1) + 1  # a Python float, as PyTensor takes it


def test_a_graph_without_outputs_is_a_clear_error():
    from pytensor.graph.fg import FunctionGraph

    x = pt.vector("x")
    with pytest.raises(LoweringError, match="no outputs"):
        ptonnx.compile(FunctionGraph([x], [], clone=True))
