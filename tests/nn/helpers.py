"""The end-to-end check of tests/nn: PyTensor's evaluation vs onnxruntime, checker, ir.verify."""

from __future__ import annotations

import numpy as np
import onnx
import pytensor
from pytensor.compile.mode import Mode

from ptonnx.testing import REORDERED_SUMS
import ptonnx
from ptonnx import ir
from ptonnx.api import function_graph
from tests.conftest import assert_matches

#: PyTensor's own evaluation: the Ops' perform, no rewrites
EVAL = Mode(linker="py", optimizer=None)
#: float32 results: conv/pool sums are ordered differently in onnxruntime
TOL = REORDERED_SUMS


def assert_close(actual, expected, dtype: str | None = None, context: str = ""):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{context}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{context}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, err_msg=context, **TOL[dtype or expected.dtype.name])
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=context)


def compare(inputs, outputs, arrays, passes=None, tol_dtype: str | None = None, **options):
    """Lift (and verify), compile, check the model, run it, and compare with PyTensor."""
    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    lifted = ptonnx.lift(function_graph(inputs, outputs))
    ir.verify(lifted)
    expected = pytensor.function(inputs, outputs, mode=EVAL)(*arrays)
    cm = ptonnx.compile_function(inputs, outputs, passes, verify_each=True, **options)  # checks what each stage ensures
    onnx.checker.check_model(cm.model, full_check=True)
    assert_matches(cm, arrays, expected, compare=lambda a, e, context: assert_close(a, e, tol_dtype, context))
    return cm


def compare_compiled(inputs, outputs, arrays, mode=None, tol_dtype: str | None = None):
    """Compile a PyTensor function (rewritten graph), export its `f.maker.fgraph`, compare."""
    f = pytensor.function(inputs, outputs, mode=mode or Mode(linker="py", optimizer="fast_run"))
    ir.verify(ptonnx.lift(f.maker.fgraph))
    cm = ptonnx.compile(f.maker.fgraph)
    onnx.checker.check_model(cm.model, full_check=True)
    expected = f(*arrays)
    expected = expected if isinstance(expected, list) else [expected]
    assert_matches(cm, arrays, expected, compare=lambda a, e, context: assert_close(a, e, tol_dtype, context))
    return f, cm


def op_names(fgraph) -> set[str]:
    names = set()
    for node in fgraph.apply_nodes:
        names.add(type(node.op).__name__)
        core = getattr(node.op, "core_op", None)
        if core is not None:
            names.add(f"Blockwise[{type(core).__name__}]")
    return names
