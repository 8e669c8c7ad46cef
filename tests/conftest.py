"""Shared test helpers: Hypothesis profiles, per-dtype tolerances, the end-to-end check."""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
import pytensor
from hypothesis import HealthCheck, settings
from pytensor.compile.mode import Mode

import ptonnx

# Bounded and deterministic in CI; more examples locally with HYPOTHESIS_PROFILE=dev.
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: The tolerances of every ONNX-vs-PyTensor comparison, stated once per dtype.
#: onnxruntime's vectorised float32 exp/tanh/sigmoid differ from NumPy's in the last bits.
TOLERANCE = {
    "float16": dict(rtol=1e-3, atol=1e-3),
    "float32": dict(rtol=1e-5, atol=1e-6),
    "float64": dict(rtol=1e-12, atol=1e-12),
}

#: PyTensor's own evaluation: the Python implementations, no rewrites.
REFERENCE_MODE = Mode(linker="py", optimizer=None)
#: What a compiled function's graph looks like after PyTensor's rewrites (Composite ops etc.).
REWRITTEN_MODE = Mode(linker="py", optimizer="fast_run").excluding("inplace", "BlasOpt")


def computation_dtype(graph) -> str | None:
    """The least precise float dtype any value of the IR graph is computed in.

    A float64 result computed from float32 intermediates is only float32-accurate,
    so that is the tolerance it is held to.
    """
    dtypes = {v.dtype for v in graph.inputs} | {o.dtype for n in graph for o in n.outputs}
    floats = sorted((d for d in dtypes if d.startswith("float")), key=lambda d: np.dtype(d).itemsize)
    return floats[0] if floats else None


def assert_same(actual: np.ndarray, expected: np.ndarray, context: str = "", computed_in: str | None = None) -> None:
    """Same dtype, same shape, same numbers (within the dtype's tolerance; NaN == NaN)."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, f"{context}: dtype {actual.dtype} != PyTensor's {expected.dtype}"
    assert actual.shape == expected.shape, f"{context}: shape {actual.shape} != PyTensor's {expected.shape}"
    if expected.dtype.kind == "f":
        tol_dtype = min(expected.dtype.name, computed_in or expected.dtype.name, key=lambda d: np.dtype(d).itemsize)
        np.testing.assert_allclose(actual, expected, equal_nan=True, err_msg=context, **TOLERANCE[tol_dtype])
        zeros = (expected == 0) & (actual == 0)  # -0.0 and 0.0 differ after 1/x, log, arctan2...
        np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]), err_msg=f"sign of zero: {context}")
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=context)


def session_options(level: str):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    return options


#: onnxruntime's graph optimisation levels every comparison runs at: none, and what users get.
ORT_LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL")


def run_at_every_level(cm, *arrays):
    """{level: outputs} of the compiled model run at each of `ORT_LEVELS`."""
    return {level: cm.with_session_options(session_options(level))(*arrays) for level in ORT_LEVELS}


def assert_no_miscompiled_pattern(model) -> None:
    """The model holds no pattern an onnxruntime optimiser is known to get wrong.

    `MatMul` with a 1-D operand: onnxruntime 1.32's extended level fuses
    `MatMul(Transpose(A), x)` into a FusedMatMul that computes wrong numbers.
    """
    inferred = onnx.shape_inference.infer_shapes(model)
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in
             list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)
             if v.type.tensor_type.HasField("shape")}
    ranks.update({t.name: len(t.dims) for t in model.graph.initializer})
    for node in model.graph.node:
        if node.op_type == "MatMul":
            assert all(ranks.get(name, 2) >= 2 for name in node.input), f"1-D operand of MatMul {node.name}"


def assert_matches(cm, arrays, expected, computed_in: str | None = None, compare=None):
    """Run `cm` at every onnxruntime level and compare each output with `expected`."""
    assert_no_miscompiled_pattern(cm.model)
    compare = compare or (lambda a, e, context: assert_same(a, e, context, computed_in or computation_dtype(cm.ir)))
    for level, actual in run_at_every_level(cm, *arrays).items():
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            compare(a, e, f"output {i} at {level}\n{cm.ir}")


def check_onnx_matches_pytensor(inputs, outputs, arrays, passes=None, reference=None, **compile_kwargs):
    """Compile with ptonnx, check the model, run it in onnxruntime (every level), compare with PyTensor.

    `reference(*arrays)` replaces PyTensor's Python evaluation only where that departs
    from PyTensor's own C implementation (said at the call).
    """
    outputs = outputs if isinstance(outputs, list | tuple) else [outputs]
    expected = pytensor.function(inputs, list(outputs), mode=REFERENCE_MODE)(*arrays)
    if reference is not None:
        expected = reference(*arrays)
    cm = ptonnx.compile_function(inputs, outputs, passes, **compile_kwargs)
    onnx.checker.check_model(cm.model, full_check=True)
    assert_matches(cm, arrays, expected)
    return cm


def _outcome(fn, values):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*values), None
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return None, exc


def check_like_pytensor(variables, outs, values, message=None, compare=None):
    """The compiled model returns what PyTensor returns, or raises like it: a
    `ptonnx.errors.CheckFailedError` that is also PyTensor's exception class. Checked
    for the plain graph and for the ONNX mode's rewritten graph (each against PyTensor's
    evaluation of that graph), at every onnxruntime level. Returns PyTensor's exception
    on the plain graph, or None. `compare(actual, expected, context)` replaces `assert_same`."""
    from ptonnx.errors import CheckFailedError

    compare = compare or assert_same
    rewritten = pytensor.function(variables, outs, mode=ptonnx.mode.onnx_mode()).maker.fgraph
    graphs = [(ptonnx.api.function_graph(variables, outs), variables, outs), (rewritten, rewritten.inputs, rewritten.outputs)]
    first = None
    for k, (fgraph, ins, graph_outs) in enumerate(graphs):
        expected, raised = _outcome(pytensor.function(ins, graph_outs, mode=REFERENCE_MODE), values)
        first = raised if k == 0 else first
        if isinstance(raised, NotImplementedError):  # PyTensor has no implementation here (e.g. float16): no number to match
            continue
        cm = ptonnx.compile(fgraph)
        onnx.checker.check_model(cm.model, full_check=True)
        for level in ORT_LEVELS:
            actual, failed = _outcome(cm.with_session_options(session_options(level)), values)
            where = f"at {level}\n{cm.ir}"
            if raised is None:
                assert failed is None, f"PyTensor returned; ptonnx raised {failed!r} {where}"
                for a, e in zip(actual, expected, strict=True):
                    compare(a, e, where)
                continue
            assert failed is not None, f"PyTensor raised {raised!r}; ptonnx returned {actual} {where}"
            assert isinstance(failed, CheckFailedError), f"{failed!r} {where}"
            assert isinstance(failed, type(raised)), f"{type(failed).__mro__} is not a {type(raised)} {where}"
            if message is not None:
                assert message in str(failed)
    return first
